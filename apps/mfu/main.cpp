// mfu: MFU calculator and training-log analyzer. Parses flags, dispatches to a subcommand,
// maps outcomes to exit codes: 0 ok, 1 a gate failed, 2 bad usage or unreadable input.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli_common.hpp"
#include "mfu/error.hpp"
#include "mfu/inputs.hpp"
#include "mfu/version.hpp"
#include "suggest.hpp"

namespace {

void print_error(const mfu::Error& e) {
  std::cerr << "mfu: error: " << e.located_message() << '\n';
  if (!e.hint().empty()) std::cerr << "hint: " << e.hint() << '\n';
}

/// The CLI phrases the library's inputs as the flags that give them.
std::string input_as_flag(mfu::Input i) {
  switch (i) {
    case mfu::Input::kShape: return "--layers/--hidden/--heads";
    case mfu::Input::kModel: return "--model";
    default: return std::string("--") + mfu::input_key(i);
  }
}

}  // namespace

int main(int argc, char** argv) {
  mfu::set_input_phrasing(input_as_flag);
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe (mfu ... | head) is not an error
  auto logger = spdlog::stderr_color_mt("mfu");
  logger->set_pattern("mfu: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);

  mfu::cli::GlobalOptions global;
  CLI::App app{"mfu: model FLOPs utilization calculator and training-log analyzer"};
  app.name("mfu");  // the usage line says mfu, not the binary's path
  app.set_version_flag("--version",
                       std::string("mfu ") + MFU_VERSION + " (commit " + MFU_GIT_COMMIT + ")");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--gpu-db", global.gpu_db,
                 "Extra accelerator database (JSON, layout of data/gpus.json); also MFU_GPU_DB");
  app.add_option("--color", global.color,
                 "Colour on screen: auto, always, never (NO_COLOR is honoured)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("-q,--quiet", global.quiet, "Only errors on stderr");
  app.add_flag("-v,--verbose", global.verbose,
               "Also info messages on stderr: what each input is read as, settings files, "
               "notes of the readers");
  app.footer(
      "Exit codes: 0 ok, 1 a check failed (mfu check), 2 bad usage or unreadable input.\n"
      "Run 'mfu SUBCOMMAND --help' for examples.");

  std::map<std::string, mfu::cli::Runner> runners;
  runners["calc"] = mfu::cli::add_calc(app, global);
  runners["gpus"] = mfu::cli::add_gpus(app, global);
  runners["models"] = mfu::cli::add_models(app, global);
  runners["analyze"] = mfu::cli::add_analyze(app, global);
  runners["check"] = mfu::cli::add_check(app, global);
  runners["whatif"] = mfu::cli::add_whatif(app, global);
  runners["inspect"] = mfu::cli::add_inspect(app, global);
  runners["convert"] = mfu::cli::add_convert(app, global);
  runners["merge"] = mfu::cli::add_merge(app, global);
  runners["fleet"] = mfu::cli::add_fleet(app, global);
  runners["completions"] = mfu::cli::add_completions(app, global);
  runners["man"] = mfu::cli::add_man(app, global);

  // "mfu help [COMMAND]" is "mfu [COMMAND] --help".
  const std::vector<std::string> args = mfu::cli::expand_help(argc, argv);
  global.command_line = mfu::cli::quoted_command_line(args);
  std::vector<char*> arg_ptrs;
  for (const auto& a : args) arg_ptrs.push_back(const_cast<char*>(a.c_str()));
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An unknown first word is an unknown command, whatever CLI11 made of it ("A subcommand
    // is required", "arguments were not expected").
    if (const std::string word = mfu::cli::unknown_command(app, args); !word.empty())
      std::cerr << "mfu: error: unknown command '" << word << "'\n";
    else
      std::cerr << "mfu: error: " << e.what() << '\n';
    const std::string guess = mfu::cli::did_you_mean(app, args);
    std::cerr << "hint: " << (guess.empty() ? "" : guess + " ")
              << "run 'mfu help' or 'mfu help SUBCOMMAND'\n";
    return mfu::cli::kExitError;
  }
  if (global.quiet)
    spdlog::set_level(spdlog::level::err);
  else if (global.verbose)
    spdlog::set_level(spdlog::level::info);

  try {
    for (const auto* sub : app.get_subcommands()) {
      auto it = runners.find(sub->get_name());
      if (it != runners.end()) {
        const int rc = it->second();
        mfu::cli::flush_stdout();  // a failed write (a full disk, /dev/full) is exit 2
        return rc;
      }
    }
    std::cerr << "mfu: error: no subcommand\n";
    return mfu::cli::kExitError;
  } catch (const mfu::Error& e) {
    print_error(e);
    return mfu::cli::kExitError;
  } catch (const mfu::InternalError& e) {
    // Not the user's mistake: a check inside mfu failed (the waterfall does not add up to
    // the measured wall time, a negative part). Its own exit code, so CI can tell it apart.
    std::cerr << "mfu: " << e.what() << '\n'
              << "hint: this is a bug in mfu, not a problem with your input; please report it "
                 "with the input that caused it\n";
    return mfu::cli::kExitBug;
  } catch (const std::bad_alloc&) {
    std::cerr << "mfu: error: out of memory\n";
    return mfu::cli::kExitError;
  } catch (const std::exception& e) {
    std::cerr << "mfu: error: internal error: " << e.what() << '\n'
              << "hint: this is a bug in mfu; please report it with the input that caused it\n";
    return mfu::cli::kExitError;
  }
}
