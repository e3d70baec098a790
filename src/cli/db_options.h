#pragma once
// --db PATH and --no-db of the commands that measure (optimize, bench): where their measurements are recorded
// (docs/DATABASE.md).
#include <CLI/CLI.hpp>
#include <string>

#include "core/result.h"

namespace kopt::cli {

void add_db_record_options(CLI::App& app, std::string& db_path, bool& no_db);
// Both given: an input error naming them.
Status check_db_record_options(const std::string& db_path, bool no_db);

}  // namespace kopt::cli
