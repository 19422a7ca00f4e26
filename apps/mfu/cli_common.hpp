#pragma once
// Flag groups shared by several subcommands, and the output plumbing. Parsing and printing
// only: every number is computed by the library.

#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "mfu/analysis.hpp"
#include "mfu/calc.hpp"
#include "mfu/flops.hpp"
#include "mfu/gpu.hpp"
#include "mfu/ingest.hpp"
#include "mfu/model.hpp"
#include "mfu/report.hpp"
#include "mfu/units.hpp"
#include "output.hpp"

namespace mfu::cli {

/// Exit codes (ripgrep's convention).
inline constexpr int kExitOk = 0;
inline constexpr int kExitGateFailed = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitBug = 3;  ///< an internal check failed: a bug in mfu

/// Options every subcommand can see.
struct GlobalOptions {
  std::string gpu_db;  ///< --gpu-db FILE
  std::string color = "auto";
  bool quiet = false;
  bool verbose = false;      ///< -v: info messages too
  std::string command_line;  ///< how mfu was called, shell-quoted (for report footers)
};

/// --model and the shape flags, kept as text so the library parses units and reports errors.
struct ModelFlags {
  std::string model, params, layers, hidden, heads, kv_heads, head_dim, ffn, vocab, experts, top_k,
      seq_len;
  bool swiglu = false;
  std::string convention;
  std::string recompute;
  /// True when any model flag was given.
  [[nodiscard]] bool any() const;
};

/// --gpu, --gpus, --dtype, --peak.
struct HardwareFlags {
  std::string gpu, gpus, dtype, peak;
};

/// --tokens-per-step, --batch, --flops, --micro-batches, --warmup, --price-per-gpu-hour.
struct WorkFlags {
  std::string tokens_per_step, batch, flops, micro_batches, warmup, price;
};

void add_model_flags(CLI::App* app, ModelFlags& flags);
void add_work_flags(CLI::App* app, WorkFlags& flags);
/// The analysis options the flags describe (units parsed, errors named).
[[nodiscard]] AnalyzeOptions analyze_options(const ModelFlags& m, const HardwareFlags& h,
                                             const WorkFlags& w);
void add_hardware_flags(CLI::App* app, HardwareFlags& flags);

/// Builds the model from --model plus shape overrides; nullopt when no model flag was given.
[[nodiscard]] std::optional<ModelShape> build_model(const ModelFlags& flags);

/// Optional numeric flag parsed with the library's quantity parser.
[[nodiscard]] std::optional<double> quantity(const std::string& text, Quantity kind);

[[nodiscard]] GpuDatabase load_gpu_db(const GlobalOptions& g);

/// Whether to colour stdout: --color always/never, else a terminal without NO_COLOR.
[[nodiscard]] bool use_color(const GlobalOptions& g);

/// Rendering options for a report going to stdout or a file: colour and the terminal's width
/// on a terminal (100 columns otherwise), the command line and the time for footers (UTC;
/// SOURCE_DATE_EPOCH, when set, fixes it for reproducible reports).
[[nodiscard]] RenderOptions render_options(const GlobalOptions& g, bool to_stdout);

/// "mfu analyze 'my run.log'": the arguments shell-quoted where they need it.
[[nodiscard]] std::string quoted_command_line(const std::vector<std::string>& args);

// Output (where a report goes) is in output.hpp.

/// --format, --strict, --max-warnings.
struct IngestFlags {
  std::string format;
  std::string pattern;
  bool strict = false;
  std::size_t max_warnings = 20;
  bool force_merge = false;
};
void add_ingest_flags(CLI::App* cmd, IngestFlags& flags);
[[nodiscard]] IngestOptions ingest_options(const IngestFlags& flags, const GlobalOptions& g);
/// Prints the run's diagnostics to stderr as warnings (info lines only when not quiet).
void print_diagnostics(const Run& run, const GlobalOptions& g);

/// Prints "mfu: warning: ..." to stderr (through spdlog).
void warn(const std::string& message);
void info(const std::string& message);

/// A subcommand: registers its flags on `app` and returns the function that runs it.
using Runner = std::function<int()>;
Runner add_calc(CLI::App& app, GlobalOptions& g);
Runner add_gpus(CLI::App& app, GlobalOptions& g);
Runner add_models(CLI::App& app, GlobalOptions& g);
Runner add_inspect(CLI::App& app, GlobalOptions& g);
Runner add_analyze(CLI::App& app, GlobalOptions& g);
Runner add_check(CLI::App& app, GlobalOptions& g);
Runner add_whatif(CLI::App& app, GlobalOptions& g);
/// `mfu analyze --follow`: re-reads the log every `interval` seconds until Ctrl-C.
int follow_log(const std::vector<std::string>& inputs, const AnalyzeOptions& opt,
               const GpuDatabase& db, const IngestFlags& ingest, OutputFormat format,
               const std::string& out_file, double interval, const GlobalOptions& g);
Runner add_convert(CLI::App& app, GlobalOptions& g);
/// `mfu completions SHELL` and `mfu man`, generated from `app`'s definitions (cmd_shell.cpp).
Runner add_completions(CLI::App& app, GlobalOptions& g);
Runner add_man(CLI::App& app, GlobalOptions& g);
/// `mfu merge` and `mfu fleet`: job summaries added up, many jobs analysed (cmd_fleet.cpp).
Runner add_merge(CLI::App& app, GlobalOptions& g);
Runner add_fleet(CLI::App& app, GlobalOptions& g);

}  // namespace mfu::cli
