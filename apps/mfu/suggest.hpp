#pragma once
// Help for mistyped command lines: "mfu help [COMMAND]", and "did you mean" for an unknown
// subcommand or flag.
#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::cli {

/// The candidates nearest to `word` (edit distance at most 2, or a third of its length), all
/// of them when several are as near; empty when none is.
[[nodiscard]] std::vector<std::string> closest(std::string_view word,
                                               const std::vector<std::string>& candidates);

/// The first word of the command line when it is not a subcommand ("analyse"), else "".
[[nodiscard]] std::string unknown_command(const CLI::App& app,
                                          const std::vector<std::string>& args);

/// The arguments with "mfu help" and "mfu help COMMAND" rewritten as "--help" requests.
[[nodiscard]] std::vector<std::string> expand_help(int argc, char** argv);

/// For a command line CLI11 refused: "did you mean 'analyze'?" for an unknown subcommand, or
/// "did you mean --gpus?" for an unknown flag of the subcommand given; "" when no guess.
[[nodiscard]] std::string did_you_mean(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace mfu::cli
