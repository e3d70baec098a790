#pragma once
// Shared helpers for subcommands' option parsing (CLI11).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/dims.h"

namespace kopt::cli {

// Parses args into app. Returns an exit code when parsing ended the command (help shown: 0; error: 4).
std::optional<int> parse_args(CLI::App& app, const std::vector<std::string>& args);

// Parses, allowing unknown --NAME=VALUE arguments, which become dims. Returns an exit code on error or help.
std::optional<int> parse_args_with_dims(CLI::App& app, const std::vector<std::string>& args, Dims& dims);

}  // namespace kopt::cli
