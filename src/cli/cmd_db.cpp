// `kopt db`: the results database (docs/DATABASE.md): list, query, export and prune what kopt optimize and kopt
// bench recorded.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "db/store.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kActions = "list, query, export or prune";

int fail(const Error& e) { return report_failure("db", e); }

void add_db_option(CLI::App& app, std::string& path) {
  app.add_option("--db", path,
                 "the results database (default $KOPT_DB, else $KOPT_CACHE_DIR/results.sqlite3 or "
                 "~/.cache/kopt/results.sqlite3)")
      ->type_name("PATH");
}

// An existing database: the commands here read or prune, they never create one.
Result<db::Store> open_existing(const std::string& flag) {
  auto path = db::resolve_db_path(flag);
  if (!path) return input_error("KOPT_DB is off (no results database): give one with --db PATH");
  std::error_code ec;
  if (!fs::is_regular_file(*path, ec))
    return input_error(path->string() +
                       ": no results database there (kopt optimize and kopt bench create it as they "
                       "measure; --db PATH or KOPT_DB names another)");
  return db::Store::open(*path);
}

bool is_hex32(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) && !std::isupper(c); });
}

Result<std::string> kernel_hash_of(const std::string& kernel, const std::string& hash) {
  if (!kernel.empty() && !hash.empty()) return input_error("give --kernel PATH or --kernel-hash H, not both");
  if (!hash.empty()) {
    if (!is_hex32(hash))
      return input_error("--kernel-hash " + hash + ": a kernel hash is 32 lower-case hex characters (kopt db list shows them)");
    return hash;
  }
  auto text = util::read_file(kernel);
  if (!text) return input_error("--kernel " + kernel + ": cannot read the kernel file (" + text.error().message + ")");
  return util::content_hash(*text);
}

// "M=4096,N=4096" or "M=4096 N=4096".
Result<Dims> parse_dims_list(const std::string& text) {
  Dims dims;
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  for (const auto& item : util::split(spaced, ' ')) {
    auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const bool ident = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                       std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    int64_t value = 0;
    const char* first = eq == std::string::npos ? nullptr : item.data() + eq + 1;
    const char* last = item.data() + item.size();
    auto [end, ec] = first ? std::from_chars(first, last, value) : std::from_chars_result{nullptr, std::errc::invalid_argument};
    if (!ident || !first || ec != std::errc() || end != last || value <= 0)
      return input_error("--dims: '" + item + "' is not NAME=VALUE with a positive integer (e.g. --dims M=4096,N=4096,K=4096)");
    if (dims.count(name)) return input_error("--dims: " + name + " is given twice");
    dims[name] = value;
  }
  if (dims.empty()) return input_error("--dims: give NAME=VALUE pairs, e.g. --dims M=4096,N=4096,K=4096");
  return dims;
}

std::string ms_text(const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : std::string("-"); }

int db_list(const Args& args) {
  CLI::App app{"kopt db list: the kernels in the results database, with how many configurations and shapes each", "kopt db list"};
  std::string db_path, json;
  add_db_option(app, db_path);
  add_json_option(app, json, "the summary");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto store = open_existing(db_path);
  if (!store) return fail(store.error());
  auto sum = store->summary();
  if (!sum) return fail(sum.error());
  std::FILE* out = util::report_stream(json);
  std::fprintf(out, "results database %s: %zu kernel(s)\n", store->path().c_str(), sum->size());
  if (!sum->empty())
    std::fprintf(out, "  %-12s %8s %7s %6s %11s  %-20s  %s\n", "kernel", "records", "configs", "shapes", "best_ms",
                 "last recorded", "kernel path (last run)");
  util::Json kernels = util::Json::array();
  for (const auto& k : *sum) {
    std::fprintf(out, "  %-12s %8lld %7lld %6lld %11s  %-20s  %s (%s)\n", k.kernel_hash.substr(0, 12).c_str(),
                 static_cast<long long>(k.records), static_cast<long long>(k.configurations), static_cast<long long>(k.shapes),
                 ms_text(k.best_median_ms).c_str(), k.last_recorded_at.c_str(), k.kernel_path.c_str(), k.last_run_dir.c_str());
    kernels.push_back({{"kernel_hash", k.kernel_hash},
                       {"kernel_path", k.kernel_path},
                       {"records", k.records},
                       {"configurations", k.configurations},
                       {"shapes", k.shapes},
                       {"best_median_ms", k.best_median_ms ? util::Json(*k.best_median_ms) : util::Json(nullptr)},
                       {"last_recorded_at", k.last_recorded_at},
                       {"last_run_dir", k.last_run_dir},
                       {"champions", k.champions}});
  }
  if (auto st = util::write_json_output(json, "db_list", {{"database", store->path().string()}, {"kernels", kernels}}); !st)
    return fail(st.error());
  return 0;
}

int db_query(const Args& args) {
  CLI::App app{"kopt db query: the measurements of one kernel (and shape), newest first", "kopt db query"};
  std::string db_path, json, kernel, hash, dims_text;
  add_db_option(app, db_path);
  app.add_option("--kernel", kernel, "the kernel file: its content's hash selects its records")->type_name("PATH");
  app.add_option("--kernel-hash", hash, "a kernel hash as kopt db list shows it (32 hex characters)")->type_name("H");
  app.add_option("--dims", dims_text, "only this shape, e.g. M=4096,N=4096,K=4096 (every dim of the kernel)")
      ->type_name("NAME=VALUE,...");
  add_json_option(app, json, "the records");
  app.footer("Example: kopt db query --kernel examples/sgemm_tunable/kernel.cu --dims M=4096,N=4096,K=4096");
  if (auto rc = parse_args(app, args); rc) return *rc;
  db::Query q;
  if (!kernel.empty() || !hash.empty()) {
    auto h = kernel_hash_of(kernel, hash);
    if (!h) return fail(h.error());
    q.kernel_hash = *h;
  }
  if (!dims_text.empty()) {
    auto d = parse_dims_list(dims_text);
    if (!d) return fail(d.error());
    q.dims = *d;
  }
  auto store = open_existing(db_path);
  if (!store) return fail(store.error());
  auto rows = store->query(q);
  if (!rows) return fail(rows.error());
  std::FILE* out = util::report_stream(json);
  std::fprintf(out, "%zu record(s)\n", rows->size());
  util::Json records = util::Json::array();
  for (const auto& r : *rows) {
    std::fprintf(out, "  #%-6lld %-9s %11s [%s, %s]  %-26s %s  %s  %s\n", static_cast<long long>(r.id),
                 std::string(db::verdict_name(r.verdict)).c_str(), ms_text(r.median_ms).c_str(), ms_text(r.ci95_low_ms).c_str(),
                 ms_text(r.ci95_high_ms).c_str(), format_dims(r.key.dims).c_str(), r.key.config.dump().c_str(),
                 r.key.gpu_model.c_str(), r.recorded_at.c_str());
    records.push_back(db::to_json(r));
  }
  if (auto st = util::write_json_output(json, "db_query", {{"database", store->path().string()}, {"records", records}}); !st)
    return fail(st.error());
  return 0;
}

std::string records_csv(const std::vector<db::Record>& rows) {
  const std::vector<std::string> columns = {
      "id",           "key_hash",       "kernel_hash",  "kernel_path",   "config",        "dims",      "dtypes",
      "gpu_model",    "driver_version", "nvcc_version", "compile_flags", "timing_method", "l2_mode",   "measure_mode",
      "kopt_version", "source",         "verdict",      "run_status",    "note",          "median_ms", "ci95_low_ms",
      "ci95_high_ms", "samples",        "samples_ms",   "resources",     "recorded_at",   "run_dir"};
  std::string csv = util::join(columns, ",") + "\n";
  for (const auto& r : rows) {
    util::Json j = db::to_json(r);
    std::vector<std::string> cells;
    for (const auto& c : columns) {
      const util::Json& v = j[c];
      cells.push_back(util::csv_cell(v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump()));
    }
    csv += util::join(cells, ",") + "\n";
  }
  return csv;
}

int db_export(const Args& args) {
  CLI::App app{"kopt db export: every record of the results database as CSV or JSON", "kopt db export"};
  std::string db_path, format, out = "-";
  add_db_option(app, db_path);
  app.add_option("--format", format, "csv (one row per measurement) or json (the records with their samples)")
      ->type_name("csv|json")
      ->required();
  app.add_option("--out", out, "write to FILE; - (the default) prints to stdout")->type_name("FILE|-");
  if (auto rc = parse_args(app, args); rc) return *rc;
  if (format != "csv" && format != "json") return fail(input_error("--format must be csv or json, not '" + format + "'"));
  if (out.empty()) return fail(input_error("--out needs a file name, or - for stdout"));
  auto store = open_existing(db_path);
  if (!store) return fail(store.error());
  auto rows = store->query({});
  if (!rows) return fail(rows.error());
  if (format == "csv") {
    if (auto st = util::write_text_output(out, records_csv(*rows)); !st) return fail(st.error());
  } else {
    util::Json records = util::Json::array();
    for (const auto& r : *rows) records.push_back(db::to_json(r));
    if (auto st = util::write_json_output(out, "db_export", {{"database", store->path().string()}, {"records", records}}); !st)
      return fail(st.error());
  }
  if (!util::is_stdout_path(out)) std::fprintf(stderr, "kopt db export: %zu record(s) to %s\n", rows->size(), out.c_str());
  return 0;
}

int db_prune(const Args& args) {
  CLI::App app{"kopt db prune: delete old records, or every record of one kernel", "kopt db prune"};
  std::string db_path, json, hash;
  int64_t days = -1;
  add_db_option(app, db_path);
  auto* days_opt = app.add_option("--older-than-days", days, "delete records made more than N days ago")->type_name("N");
  app.add_option("--kernel-hash", hash, "delete every record of this kernel (kopt db list shows the hashes)")->type_name("H");
  add_json_option(app, json, "what was deleted");
  if (auto rc = parse_args(app, args); rc) return *rc;
  const bool by_age = days_opt->count() > 0;
  if (by_age == !hash.empty())
    return fail(input_error("say what to delete: --older-than-days N or --kernel-hash H (one of them)"));
  if (by_age && days < 0) return fail(input_error("--older-than-days must be 0 or more, not " + std::to_string(days)));
  if (!hash.empty() && !is_hex32(hash))
    return fail(
        input_error("--kernel-hash " + hash + ": a kernel hash is 32 lower-case hex characters (kopt db list shows them)"));
  auto store = open_existing(db_path);
  if (!store) return fail(store.error());
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto n = by_age ? store->prune_older_than(days, now) : store->prune_kernel(hash);
  if (!n) return fail(n.error());
  std::fprintf(util::report_stream(json), "kopt db prune: deleted %lld record(s) from %s\n", static_cast<long long>(*n),
               store->path().c_str());
  if (auto st = util::write_json_output(json, "db_prune", {{"database", store->path().string()}, {"deleted", *n}}); !st)
    return fail(st.error());
  return 0;
}

std::string db_help() {
  return "kopt db: the results database, every configuration kopt optimize and kopt bench measured (docs/DATABASE.md)\n"
         "Usage: kopt db ACTION [options]   (kopt db ACTION --help: its options)\n\n"
         "Actions:\n"
         "  list     the kernels recorded: records, configurations, shapes, best time, last run\n"
         "  query    one kernel's records (--kernel PATH | --kernel-hash H) [--dims M=..,N=..]\n"
         "  export   every record: --format csv|json [--out FILE|-]\n"
         "  prune    delete records: --older-than-days N | --kernel-hash H\n\n"
         "Every action takes --db PATH (default $KOPT_DB, else $KOPT_CACHE_DIR/results.sqlite3, else\n"
         "~/.cache/kopt/results.sqlite3).\n";
}

}  // namespace

int cmd_db(const Args& args) {
  if (args.empty()) {
    std::fputs(db_help().c_str(), stderr);
    return fail(input_error(std::string("say what to do: kopt db ") + kActions));
  }
  const std::string& action = args[0];
  if (action == "--help" || action == "-h" || action == "help") {
    std::fputs(db_help().c_str(), stdout);
    return 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (action == "list") return db_list(rest);
  if (action == "query") return db_query(rest);
  if (action == "export") return db_export(rest);
  if (action == "prune") return db_prune(rest);
  return fail(input_error("unknown action '" + action + "': give " + kActions + " (kopt db --help)"));
}

}  // namespace kopt::cli
