// `mfu check LOG... [thresholds]`: the CI gate. Exit 0 when every check passes, 1 when one
// fails, 2 on bad usage or input.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/gate.hpp"
#include "mfu/units.hpp"
#include "progress.hpp"

namespace mfu::cli {
namespace {

namespace fs = std::filesystem;

/// mfu.toml or .mfu.json in the working directory or a parent, up to the repository root.
std::string find_settings() {
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  while (!ec && !dir.empty()) {
    for (const char* name : {"mfu.toml", ".mfu.json"}) {
      if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
    }
    if (fs::exists(dir / ".git", ec) || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

}  // namespace

Runner add_check(CLI::App& app, GlobalOptions& g) {
  struct Flags {
    std::vector<std::string> inputs;
    ModelFlags model;
    HardwareFlags hw;
    WorkFlags work;
    IngestFlags ingest;
    std::string min_mfu, max_step_time, min_tokens, min_goodput, baseline,
        max_regression = "5%", config, junit, output = "text", out_file, min_steps = "5",
        mfu_scope = "steady";
    std::vector<std::string> max_bucket, allow_different;
    bool strict = false, allow_partial = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("check", "CI gate: fail (exit 1) when training got slower");
  cmd->footer(
      "Thresholds compare the steady state (warm-up excluded). With --baseline, steady MFU and\n"
      "tokens/s per GPU (the step time when neither is known for both) must not drop more than\n"
      "--max-regression beyond the per-step noise (a bootstrap interval of the ratio of medians);\n"
      "a baseline from other hardware, another model, convention or dtype is refused unless\n"
      "--allow-different names the difference. Settings can live in mfu.toml or .mfu.json\n"
      "(keys = long flag names).\n\n"
      "Examples:\n"
      "  mfu check run.log --min-mfu 40%\n"
      "  mfu check run.log --baseline baseline.json --max-regression 5% --junit mfu-junit.xml\n"
      "  mfu check run.log --max-bucket comm=15% --max-bucket io=5% --min-tokens-per-sec 1.2M\n"
      "Exit codes: 0 passed, 1 a check failed, 2 bad usage, unreadable input, or a run that "
      "cannot be judged\n(too few steady steps, only warm-up, the gated number unknown, a cut-off "
      "or "
      "mostly unreadable log,\na baseline that is invalid or from other hardware or another "
      "model).");
  cmd->add_option("inputs", f->inputs, "Log files, directories, or - for stdin")->required();
  add_model_flags(cmd, f->model);
  add_hardware_flags(cmd, f->hw);
  add_work_flags(cmd, f->work);
  add_ingest_flags(cmd, f->ingest);
  cmd->add_option("--min-mfu", f->min_mfu, "Fail below this MFU, e.g. 40%")->group("Thresholds");
  cmd->add_option("--mfu-scope", f->mfu_scope,
                  "MFU gated: steady (default, warm-up excluded) or whole")
      ->check(CLI::IsMember({"steady", "whole"}))
      ->group("Thresholds");
  cmd->add_option("--max-step-time", f->max_step_time,
                  "Fail above this median step time, e.g. 350ms")
      ->group("Thresholds");
  cmd->add_option("--min-tokens-per-sec", f->min_tokens, "Fail below this throughput, e.g. 1.2M")
      ->group("Thresholds");
  cmd->add_option("--max-bucket", f->max_bucket,
                  "Fail when a bucket takes more, e.g. comm=15% (repeatable)")
      ->group("Thresholds");
  cmd->add_option("--min-goodput", f->min_goodput, "Fail below this goodput, e.g. 90%")
      ->group("Thresholds");
  cmd->add_option("--baseline", f->baseline, "A report saved by 'mfu analyze --output json'")
      ->group("Baseline");
  cmd->add_option("--max-regression", f->max_regression,
                  "Largest MFU/throughput drop allowed (default 5%)")
      ->group("Baseline");
  cmd->add_option("--allow-different", f->allow_different,
                  "Differences from the baseline that are intended: gpu, gpus, model, convention, "
                  "dtype (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gpu", "gpus", "model", "convention", "dtype"}))
      ->group("Baseline");
  cmd->add_flag("--allow-partial", f->allow_partial,
                "Judge a truncated input (a job that died) instead of refusing it");
  cmd->add_option("--min-steps", f->min_steps,
                  "Fewest steady step records to judge a run (default 5)")
      ->group("Thresholds");
  cmd->add_option("--config", f->config,
                  "Settings file (default: mfu.toml or .mfu.json found upwards)");
  cmd->add_option("--junit", f->junit, "Write a JUnit XML file (one testcase per check)");
  cmd->add_option("--output", f->output,
                  "text, json, markdown or html (the verdict over the whole report, the baseline "
                  "drawn over the run)")
      ->capture_default_str();
  cmd->add_option("-o,--output-file", f->out_file, "Write the verdict to FILE instead of stdout");

  return [f, cmd, &g]() {
    // Settings fill every flag the command line leaves unset.
    const std::string settings = f->config.empty() ? find_settings() : f->config;
    if (!settings.empty()) {
      // A setting is a flag of this command by its long name: the flag's own definition
      // parses and checks it, and the command line wins over the file.
      for (const auto& [key, values] : load_settings(settings)) {
        CLI::Option* opt = cmd->get_option_no_throw("--" + key);
        if (opt == nullptr || key == "config")
          throw Error(fmt::format("{}: unknown setting '{}'", settings, key),
                      "settings are the long flags of mfu check without the dashes (mfu check "
                      "--help), e.g. min-mfu, gpu, baseline, max-bucket");
        if (opt->count() > 0) continue;
        for (const auto& v : values) opt->add_result(v);
        opt->run_callback();
      }
      if (!g.quiet) info(fmt::format("settings from {}", settings));
    }
    GateOptions o;
    if (!f->min_mfu.empty()) o.min_mfu = parse_ratio(f->min_mfu);
    o.whole_run_mfu = f->mfu_scope == "whole";
    if (!f->max_step_time.empty()) o.max_step_time_s = parse_duration(f->max_step_time);
    if (!f->min_tokens.empty()) o.min_tokens_per_s = parse_rate(f->min_tokens);
    if (!f->min_goodput.empty()) o.min_goodput = parse_ratio(f->min_goodput);
    for (const auto& mb : f->max_bucket) {
      const std::size_t eq = mb.find('=');
      if (eq == std::string::npos)
        throw Error(fmt::format("--max-bucket '{}' needs NAME=LIMIT", mb),
                    "e.g. --max-bucket comm=15%");
      o.max_bucket[mb.substr(0, eq)] = parse_ratio(mb.substr(eq + 1));
    }
    o.max_regression = parse_ratio(f->max_regression);
    // --strict (from the input flags) also makes the baseline comparison strict.
    o.strict = f->strict || f->ingest.strict;
    o.min_steady_steps = static_cast<std::size_t>(parse_count(f->min_steps));
    o.allow_different = f->allow_different;
    o.allow_partial = f->allow_partial;
    if (!f->baseline.empty()) o.baseline = load_baseline(f->baseline);
    const OutputFormat format = parse_output_format(f->output);
    const AnalyzeOptions opt = analyze_options(f->model, f->hw, f->work);
    std::vector<std::string> read = f->inputs;
    if (!f->baseline.empty()) read.push_back(f->baseline);
    Output out(f->out_file, read);
    IngestOptions io = ingest_options(f->ingest, g);
    io.keep_loss = false;  // no report of a gate lists the records
    const Run run = ingest_with_progress(f->inputs, io, g);
    print_diagnostics(run, g);
    const Analysis a = analyze(run, opt, load_gpu_db(g));
    GateResult r = evaluate_gate(a, run, o);
    r.notes.push_back(settings.empty()
                          ? std::string("settings: none (no mfu.toml or .mfu.json found)")
                          : "settings: " + settings);
    if (format == OutputFormat::kHtml)
      render_gate_html(r, a, o.baseline ? &*o.baseline : nullptr,
                       render_options(g, out.to_stdout()), out.stream());
    else
      render_gate(r, a, format, out.to_stdout() && use_color(g), out.stream());
    out.commit();
    if (!f->junit.empty()) {
      Output junit(f->junit, read);
      render_junit(r, a, junit.stream());
      junit.commit();
    }
    if (const char* gha = std::getenv("GITHUB_ACTIONS");
        gha != nullptr && std::string(gha) == "true") {
      // Annotations go to stderr: stdout holds only the report asked for.
      render_github_annotations(r, std::cerr);
      if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
          summary != nullptr && *summary != '\0') {
        std::ofstream s(summary, std::ios::app);
        render_gate(r, a, OutputFormat::kMarkdown, false, s);
        render_analysis(a, run, OutputFormat::kMarkdown, RenderOptions{}, s);
      }
    }
    if (!r.cannot_judge.empty()) return kExitError;  // no verdict: neither pass nor fail
    return r.passed ? kExitOk : kExitGateFailed;
  };
}

}  // namespace mfu::cli
