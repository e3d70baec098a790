#include "cli/output_options.h"

namespace kopt::cli {

CLI::Option* add_json_option(CLI::App& app, std::string& path, const std::string& what) {
  return app.add_option("--json", path, "write " + what + " as JSON to FILE, or to stdout with --json -")
      ->type_name("FILE|-");
}

CLI::Option* add_csv_option(CLI::App& app, std::string& path, const std::string& what) {
  return app.add_option("--csv", path, "write " + what + " as CSV to FILE, or to stdout with --csv -")
      ->type_name("FILE|-");
}

}  // namespace kopt::cli
