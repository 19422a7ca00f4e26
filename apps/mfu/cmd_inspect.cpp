// `mfu inspect LOG...`: what mfu reads from a log (format, records, fields, metadata,
// diagnostics), and `mfu convert LOG -o run.jsonl`.
#include <fmt/format.h>

#include <memory>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/ingest.hpp"
#include "mfu/units.hpp"
#include "progress.hpp"

namespace mfu::cli {

void add_ingest_flags(CLI::App* cmd, IngestFlags& f) {
  cmd->add_option("--format", f.format,
                  "Force the input format instead of detecting it (see 'mfu inspect --formats')")
      ->group("Input");
  cmd->add_option("--pattern", f.pattern,
                  "Read step lines with this regular expression (ECMAScript) and its named "
                  "groups: (?<step>...) and any of time_s, time_ms, elapsed_s, tokens, "
                  "tokens_per_s, samples, samples_per_s, tflops_per_gpu, mfu (percent), loss. "
                  "Example: --pattern 'step (?<step>\\d+) .*step-time (?<time_s>[\\d.]+) sec'")
      ->group("Input");
  cmd->add_flag("--strict", f.strict,
                "A record line that does not parse is an error, not a warning (mfu check: also "
                "fail a regression "
                "inside the noise)")
      ->group("Input");
  cmd->add_option("--max-warnings", f.max_warnings, "Most diagnostics kept (default 20)")
      ->group("Input");
  cmd->add_flag("--force-merge", f.force_merge,
                "Merge several inputs even when their metadata says they are different jobs "
                "(model shape, GPU count, GPU type, format)")
      ->group("Input");
}

IngestOptions ingest_options(const IngestFlags& f, const GlobalOptions& g) {
  IngestOptions o;
  o.format = f.format;
  if (!f.pattern.empty()) {
    if (!f.format.empty() && f.format != "pattern")
      throw Error(
          fmt::format("--pattern reads the lines itself; it cannot be combined with "
                      "--format {}",
                      f.format));
    o.format = "pattern";
    o.pattern = f.pattern;
  }
  o.strict = f.strict;
  o.max_diagnostics = f.max_warnings;
  o.force_merge = f.force_merge;
  if (!g.quiet) o.on_progress = [](const std::string& m) { info(m); };
  return o;
}

void print_diagnostics(const Run& run, const GlobalOptions& g) {
  if (g.quiet) return;
  for (const auto& d : run.diagnostics) {
    const std::string where =
        d.line ? fmt::format("{}:{}: ", d.file, d.line) : (d.file.empty() ? "" : d.file + ": ");
    if (d.severity == Diagnostic::Severity::kInfo)
      info(where + d.message);
    else
      warn(where + d.message);
  }
  if (run.suppressed_diagnostics > 0)
    warn(fmt::format("{} more warnings not shown", run.suppressed_diagnostics));
}

Runner add_inspect(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    std::vector<std::string> inputs;
    IngestFlags ingest;
    bool formats = false;
    std::string output = "text";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Show what mfu reads from a log: format, records, fields, metadata");
  cmd->footer(
      "Examples:\n"
      "  mfu inspect train.log\n"
      "  mfu inspect logs/               # a directory: one log per rank or the pieces of a "
      "restarted job\n"
      "  zcat run.log.gz | mfu inspect -\n"
      "  mfu inspect --formats");
  cmd->add_option("inputs", f->inputs, "Log files, directories, or - for stdin");
  add_ingest_flags(cmd, f->ingest);
  cmd->add_flag("--formats", f->formats, "List the formats mfu reads");
  cmd->add_option("--output", f->output, "text or json")->capture_default_str();
  return [f, &g]() {
    if (f->formats) {
      for (const auto& fi : known_formats())
        std::cout << fmt::format("{:<18} {}\n", fi.name, fi.description);
      return kExitOk;
    }
    if (f->inputs.empty()) throw Error("mfu inspect needs a log", "mfu inspect train.log");
    const Run run = ingest_with_progress(f->inputs, ingest_options(f->ingest, g), g);
    print_diagnostics(run, g);
    render_inspect(run, parse_output_format(f->output), std::cout);
    return kExitOk;
  };
}

Runner add_convert(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    std::vector<std::string> inputs;
    IngestFlags ingest;
    std::string out_file;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd =
      app.add_subcommand("convert", "Write any supported log as mfu's native JSON Lines");
  cmd->footer(
      "Examples:\n"
      "  mfu convert megatron.log -o run.jsonl\n"
      "  mfu convert trainer_state.json > run.jsonl\n"
      "Converting the result back gives the same run.");
  cmd->add_option("inputs", f->inputs, "Log files, directories, or - for stdin")->required();
  add_ingest_flags(cmd, f->ingest);
  cmd->add_option("-o,--output-file", f->out_file, "Write to FILE instead of stdout");
  return [f, &g]() {
    Output out(f->out_file, f->inputs);
    const Run run = ingest_with_progress(f->inputs, ingest_options(f->ingest, g), g);
    print_diagnostics(run, g);
    write_native(run, out.stream());
    out.commit();
    return kExitOk;
  };
}

}  // namespace mfu::cli
