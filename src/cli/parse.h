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

// Parses, with --dim NAME=VALUE (added here) and unknown --NAME=VALUE arguments as dims (cli/dims.h). `kernel`, bound
// to the command's KERNEL option, is read once parsed: a short-form name the kernel takes as a dimension that is also a
// kernel command's option is an input error. Returns an exit code on error or help.
std::optional<int> parse_args_with_dims(CLI::App& app, const std::vector<std::string>& args, Dims& dims,
                                        const std::string& kernel);

}  // namespace kopt::cli
