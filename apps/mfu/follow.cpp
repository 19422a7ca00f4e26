// `mfu analyze --follow`: a log still being written, re-read every few seconds (like tail -f),
// the headline and buckets redrawn on a terminal; Ctrl-C ends with the final report.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <sstream>
#include <thread>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/units.hpp"

namespace mfu::cli {
namespace {

std::atomic<bool> g_stop{false};

void on_sigint(int) {
  g_stop = true;
}

}  // namespace

int follow_log(const std::vector<std::string>& inputs, const AnalyzeOptions& opt,
               const GpuDatabase& db, const IngestFlags& ingest_flags, OutputFormat format,
               const std::string& out_file, double interval, const GlobalOptions& g) {
  if (inputs.size() != 1 || inputs.front() == "-")
    throw Error("--follow watches one log file", "mfu analyze --follow train.log");
  if (!(interval > 0)) throw Error("--interval must be positive");
  Output out(out_file, inputs);  // a bad path is said now, not after Ctrl-C
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  const bool tty = ::isatty(STDOUT_FILENO) == 1 && out_file.empty();
  IngestOptions io = ingest_options(ingest_flags, g);
  io.on_progress = nullptr;
  std::optional<Run> last_run;
  std::optional<Analysis> last;
  std::string last_error;
  // Reads only what was appended since the last update.
  LogFollower follower(inputs.front(), io);
  bool first = true;
  while (!g_stop) {
    try {
      const bool grew = follower.poll();
      if (!grew && !first) {
        for (double waited = 0; waited < interval && !g_stop; waited += 0.1)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      first = false;
      Run run = follower.snapshot();
      Analysis a = analyze(run, opt, db);
      if (tty) {
        std::ostringstream screen;
        const RenderOptions ro = render_options(g, true);
        render_analysis(a, run, OutputFormat::kText, ro, screen);
        std::cout << "\x1b[H\x1b[2J"
                  << fmt::format("following {} (every {} s, Ctrl-C to stop)\n\n", inputs.front(),
                                 interval)
                  << screen.str() << std::flush;
      } else {
        std::cerr << fmt::format("mfu: {} iterations, MFU {}\n", a.iterations_total,
                                 a.mfu ? format_percent(*a.mfu) : std::string("unknown"));
      }
      last_run = std::move(run);
      last = std::move(a);
      last_error.clear();
    } catch (const Error& e) {
      // The log may not have its first iteration yet: keep waiting.
      if (e.what() != last_error) std::cerr << "mfu: waiting: " << e.what() << '\n';
      last_error = e.what();
    }
    for (double waited = 0; waited < interval && !g_stop; waited += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::signal(SIGINT, SIG_DFL);
  // The final report includes what was written since the last update.
  try {
    if (follower.poll() || !last) {
      Run run = follower.snapshot();
      Analysis a = analyze(run, opt, db);
      last_run = std::move(run);
      last = std::move(a);
    }
  } catch (const Error&) {
    // Keep the last good analysis.
  }
  if (!last) {
    std::cerr << "mfu: error: no iteration was read before the end\n";
    return kExitError;
  }
  const RenderOptions ro = render_options(g, out.to_stdout());
  if (tty) std::cout << "\x1b[H\x1b[2J";
  render_analysis(*last, *last_run, format, ro, out.stream());
  out.commit();
  return kExitOk;
}

}  // namespace mfu::cli
