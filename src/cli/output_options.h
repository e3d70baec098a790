#pragma once
// The one definition of --json FILE|- and --csv FILE|- for every subcommand (util/output.h writes them).
#include <CLI/CLI.hpp>
#include <string>

namespace kopt::cli {

// `what` completes "write ... as JSON" ("the results", "the report").
CLI::Option* add_json_option(CLI::App& app, std::string& path, const std::string& what);
CLI::Option* add_csv_option(CLI::App& app, std::string& path, const std::string& what);

}  // namespace kopt::cli
