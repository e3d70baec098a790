#pragma once
// Shared helpers for subcommands' option parsing (CLI11).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/dims.h"

namespace kopt::cli {

// An old option name kept for `current`: bound to the same value, hidden from --help; using it prints a note
// naming the new one (parse_args). Its description is "deprecated: " + current.
template <typename T>
CLI::Option* add_deprecated_alias(CLI::App& app, const std::string& old_name, const std::string& current, T& value) {
  return app.add_option(old_name, value, "deprecated: " + current)->group("");
}

// Parses args into app. Returns an exit code when parsing ended the command (help shown: 0; error: 4).
std::optional<int> parse_args(CLI::App& app, const std::vector<std::string>& args);

// Parses, with --dim NAME=VALUE (added here) and unknown --NAME=VALUE arguments as dims (cli/dims.h). `kernel`, bound
// to the command's KERNEL option, is read once parsed: a short-form name the kernel takes as a dimension that is also a
// kernel command's option is an input error. Returns an exit code on error or help.
std::optional<int> parse_args_with_dims(CLI::App& app, const std::vector<std::string>& args, Dims& dims,
                                        const std::string& kernel);

}  // namespace kopt::cli
