#include "cli/db_options.h"

namespace kopt::cli {

void add_db_record_options(CLI::App& app, std::string& db_path, bool& no_db) {
  app.add_option("--db", db_path,
                 "record every measured configuration in this results database (default $KOPT_DB, else "
                 "$KOPT_CACHE_DIR/results.sqlite3 or ~/.cache/kopt/results.sqlite3; docs/DATABASE.md)")
      ->type_name("PATH");
  app.add_flag("--no-db", no_db, "record nothing in the results database");
}

Status check_db_record_options(const std::string& db_path, bool no_db) {
  if (no_db && !db_path.empty()) return input_error("--db " + db_path + " and --no-db contradict each other: give one");
  return ok_status();
}

}  // namespace kopt::cli
