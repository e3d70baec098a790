#include "db/store.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <functional>
#include <string_view>

#include "util/strings.h"

namespace kopt::db {

namespace fs = std::filesystem;

const std::vector<std::string>& migrations() {
  static const std::vector<std::string> steps = {
      // v1: the measured configurations, one row per measurement; the key's fields as columns, key_hash indexed.
      "CREATE TABLE measurements ("
      " id INTEGER PRIMARY KEY,"
      " key_hash TEXT NOT NULL, kernel_hash TEXT NOT NULL, kernel_path TEXT NOT NULL,"
      " config_json TEXT NOT NULL, dims_json TEXT NOT NULL, dtypes_json TEXT NOT NULL,"
      " gpu_model TEXT NOT NULL, driver_version TEXT NOT NULL, nvcc_version TEXT NOT NULL,"
      " compile_flags_json TEXT NOT NULL, timing_method TEXT NOT NULL, l2_mode TEXT NOT NULL,"
      " measure_mode TEXT NOT NULL, kopt_version TEXT NOT NULL,"
      " source TEXT NOT NULL, verdict TEXT NOT NULL, run_status TEXT NOT NULL, note TEXT NOT NULL,"
      " median_ms REAL, ci95_low_ms REAL, ci95_high_ms REAL,"
      " samples_count INTEGER NOT NULL, samples_ms_json TEXT NOT NULL, resources_json TEXT NOT NULL,"
      " recorded_unix_s INTEGER NOT NULL, recorded_at TEXT NOT NULL, run_dir TEXT NOT NULL);"
      "CREATE INDEX measurements_key_hash ON measurements(key_hash);"
      "CREATE INDEX measurements_kernel ON measurements(kernel_hash, recorded_unix_s);"
      "CREATE INDEX measurements_time ON measurements(recorded_unix_s);",
      // v2: a paired measurement's race against the champion of the moment (Record::raced), which a later run reuses.
      "ALTER TABLE measurements ADD COLUMN raced_json TEXT NOT NULL DEFAULT 'null';",
      // v3: what each method came to in a champion, at which roofline position (MethodOutcome): the strategy memory.
      "CREATE TABLE method_outcomes ("
      " id INTEGER PRIMARY KEY,"
      " gpu_model TEXT NOT NULL, kernel_hash TEXT NOT NULL, run_dir TEXT NOT NULL, iteration INTEGER NOT NULL,"
      " position TEXT NOT NULL, method TEXT NOT NULL, verdict TEXT NOT NULL, outcome TEXT NOT NULL,"
      " saved_fraction REAL, recorded_unix_s INTEGER NOT NULL, recorded_at TEXT NOT NULL);"
      "CREATE INDEX method_outcomes_gpu ON method_outcomes(gpu_model, position);",
      // v4: each run's final champion by its record key (ChampionMark): selection's tie-break among equals.
      "CREATE TABLE champions ("
      " id INTEGER PRIMARY KEY,"
      " key_hash TEXT NOT NULL, kernel_hash TEXT NOT NULL, run_dir TEXT NOT NULL,"
      " recorded_unix_s INTEGER NOT NULL, recorded_at TEXT NOT NULL);"
      "CREATE INDEX champions_key_hash ON champions(key_hash);",
      // v5: a generator's proposals by the state it proposed from (ProposalMark): a second identical run's.
      "CREATE TABLE proposals ("
      " id INTEGER PRIMARY KEY,"
      " state_hash TEXT NOT NULL, kernel_hash TEXT NOT NULL, run_dir TEXT NOT NULL, iteration INTEGER NOT NULL,"
      " body_json TEXT NOT NULL, recorded_unix_s INTEGER NOT NULL, recorded_at TEXT NOT NULL);"
      "CREATE INDEX proposals_state_hash ON proposals(state_hash);",
  };
  return steps;
}

fs::path default_db_path() {
  const char* name = "results.sqlite3";
  if (const char* v = std::getenv("KOPT_CACHE_DIR"); v && *v) return fs::path(v) / name;
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return fs::path(v) / "kopt" / name;
  if (const char* v = std::getenv("HOME"); v && *v) return fs::path(v) / ".cache" / "kopt" / name;
  return fs::temp_directory_path() / "kopt-cache" / name;
}

std::optional<fs::path> resolve_db_path(const std::string& flag) {
  if (!flag.empty()) return fs::path(flag);
  if (const char* v = std::getenv("KOPT_DB"); v && *v) {
    const std::string s = util::trim(v);
    if (util::is_off_word(s)) return std::nullopt;
    return fs::path(s);
  }
  return default_db_path();
}

namespace {

// The columns a record is written to and read from, in this order.
constexpr const char* kColumns =
    "id, key_hash, kernel_hash, kernel_path, config_json, dims_json, dtypes_json, gpu_model, driver_version, "
    "nvcc_version, compile_flags_json, timing_method, l2_mode, measure_mode, kopt_version, source, verdict, "
    "run_status, note, median_ms, ci95_low_ms, ci95_high_ms, samples_count, samples_ms_json, resources_json, "
    "recorded_unix_s, recorded_at, run_dir, raced_json";

std::string iso_utc(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int64_t now_unix_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<int> read_version(Connection& c) {
  KOPT_TRY_ASSIGN(auto exists, c.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"));
  KOPT_TRY_ASSIGN(bool row, exists.step());
  if (!row || exists.integer(0) == 0) return 0;
  KOPT_TRY_ASSIGN(auto s, c.prepare("SELECT max(version) FROM schema_version"));
  KOPT_TRY_ASSIGN(row, s.step());
  return row && !s.is_null(0) ? static_cast<int>(s.integer(0)) : 0;
}

Error newer_schema(const fs::path& path, int found, size_t known) {
  return input_error(path.string() + ": the results database is at schema version " + std::to_string(found) +
                     ", newer than this kopt knows (" + std::to_string(known) +
                     "): it was written by a newer kopt. Use that kopt, or another file with --db PATH (or KOPT_DB)");
}

Status migrate(Connection& c, const std::vector<std::string>& steps) {
  KOPT_TRY_ASSIGN(int version, read_version(c));
  if (version > static_cast<int>(steps.size())) return newer_schema(c.path(), version, steps.size());
  if (version == static_cast<int>(steps.size())) return ok_status();
  // Another process may be migrating too: under the write lock, read the version again.
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c));
  KOPT_TRY(c.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  KOPT_TRY_ASSIGN(version, read_version(c));
  if (version > static_cast<int>(steps.size())) return newer_schema(c.path(), version, steps.size());
  for (size_t v = static_cast<size_t>(version); v < steps.size(); ++v) KOPT_TRY(c.exec(steps[v]));
  KOPT_TRY(c.exec("DELETE FROM schema_version"));
  KOPT_TRY_ASSIGN(auto set, c.prepare("INSERT INTO schema_version (version) VALUES (?)"));
  set.bind(1, static_cast<int64_t>(steps.size()));
  KOPT_TRY(set.run());
  return tx.commit();
}

void bind_optional(Statement& s, int i, const std::optional<double>& v) {
  if (v)
    s.bind(i, *v);
  else
    s.bind_null(i);
}

std::optional<double> optional_real(const Statement& s, int col) {
  if (s.is_null(col)) return std::nullopt;
  return s.real(col);
}

Result<Record> read_row(const Statement& s, const fs::path& path) {
  Record r;
  r.id = s.integer(0);
  try {
    auto json = [&](int col) { return util::Json::parse(s.text(col)); };
    r.key.kernel_hash = s.text(2);
    r.kernel_path = s.text(3);
    r.key.config = json(4);
    r.key.dims = json(5).get<Dims>();
    r.key.dtypes = json(6).get<std::vector<std::string>>();
    r.key.gpu_model = s.text(7);
    r.key.driver_version = s.text(8);
    r.key.nvcc_version = s.text(9);
    r.key.compile_flags = json(10).get<std::vector<std::string>>();
    r.key.timing_method = s.text(11);
    r.key.l2_mode = s.text(12);
    r.key.measure_mode = s.text(13);
    r.key.kopt_version = s.text(14);
    r.samples_ms = json(23).get<std::vector<double>>();
    r.resources = json(24);
    r.raced = json(28);
  } catch (const std::exception& e) {
    return internal_error(path.string() + ": record " + std::to_string(r.id) + " is damaged (" + e.what() + ")");
  }
  auto source = parse_source(s.text(15));
  auto verdict = parse_verdict(s.text(16));
  if (!source || !verdict)
    return internal_error(path.string() + ": record " + std::to_string(r.id) + " has an unknown source '" + s.text(15) +
                          "' or verdict '" + s.text(16) + "'");
  r.source = *source;
  r.verdict = *verdict;
  r.run_status = s.text(17);
  r.note = s.text(18);
  r.median_ms = optional_real(s, 19);
  r.ci95_low_ms = optional_real(s, 20);
  r.ci95_high_ms = optional_real(s, 21);
  r.recorded_unix_s = s.integer(25);
  r.recorded_at = s.text(26);
  r.run_dir = s.text(27);
  return r;
}

}  // namespace

Result<Store> Store::open(const fs::path& path, const std::vector<std::string>& steps) {
  KOPT_TRY_ASSIGN(auto c, Connection::open(path));
  // WAL: readers never block the writer and a writer's commit is one append; FULL: a commit is on disk when it
  // returns. The journal mode is the file's (kept across connections); the rest is this connection's.
  KOPT_TRY(c.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"));
  KOPT_TRY(migrate(c, steps));
  return Store(std::move(c));
}

Result<std::unique_ptr<Store>> open_for_recording(bool no_db, const std::string& flag) {
  if (no_db) return std::unique_ptr<Store>();
  auto path = resolve_db_path(flag);
  if (!path) return std::unique_ptr<Store>();
  KOPT_TRY_ASSIGN(auto s, Store::open(*path));
  return std::make_unique<Store>(std::move(s));
}

Result<int> Store::schema_version() { return read_version(c_); }

Status Store::record(const Record& r) {
  KOPT_TRY(insert(r));
  return ok_status();
}

Result<int64_t> Store::insert(const Record& r) {
  const int64_t at = r.recorded_unix_s ? r.recorded_unix_s : now_unix_s();
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c_));
  KOPT_TRY_ASSIGN(auto s, c_.prepare(std::string("INSERT INTO measurements (") + kColumns +
                                     ") VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                     "?, ?, ?, ?, ?, ?)"));
  s.bind(1, key_hash(r.key))
      .bind(2, r.key.kernel_hash)
      .bind(3, r.kernel_path)
      .bind(4, r.key.config.dump())
      .bind(5, util::Json(r.key.dims).dump())
      .bind(6, util::Json(r.key.dtypes).dump())
      .bind(7, r.key.gpu_model)
      .bind(8, r.key.driver_version)
      .bind(9, r.key.nvcc_version)
      .bind(10, util::Json(r.key.compile_flags).dump())
      .bind(11, r.key.timing_method)
      .bind(12, r.key.l2_mode)
      .bind(13, r.key.measure_mode)
      .bind(14, r.key.kopt_version)
      .bind(15, source_name(r.source))
      .bind(16, verdict_name(r.verdict))
      .bind(17, r.run_status)
      .bind(18, r.note);
  bind_optional(s, 19, r.median_ms);
  bind_optional(s, 20, r.ci95_low_ms);
  bind_optional(s, 21, r.ci95_high_ms);
  s.bind(22, static_cast<int64_t>(r.samples_ms.size()))
      .bind(23, util::Json(r.samples_ms).dump())
      .bind(24, r.resources.dump())
      .bind(25, at)
      .bind(26, r.recorded_at.empty() ? iso_utc(at) : r.recorded_at)
      .bind(27, r.run_dir)
      .bind(28, r.raced.dump());
  if (auto st = s.run(); !st) return c_.error("cannot record a measurement: " + st.error().message);
  const int64_t id = c_.last_insert_rowid();
  KOPT_TRY(tx.commit());
  return id;
}

Result<std::vector<Record>> Store::select(const std::string& where, const std::vector<std::string>& args) {
  KOPT_TRY_ASSIGN(auto s, c_.prepare(std::string("SELECT ") + kColumns + " FROM measurements" +
                                     (where.empty() ? "" : " WHERE " + where) + " ORDER BY recorded_unix_s DESC, id DESC"));
  for (size_t i = 0; i < args.size(); ++i) s.bind(static_cast<int>(i + 1), args[i]);
  std::vector<Record> out;
  for (;;) {
    KOPT_TRY_ASSIGN(bool row, s.step());
    if (!row) return out;
    KOPT_TRY_ASSIGN(auto r, read_row(s, path()));
    out.push_back(std::move(r));
  }
}

Result<std::vector<Record>> Store::query(const Query& q) {
  std::string where;
  std::vector<std::string> args;
  auto add = [&](const std::string& clause, std::string value) {
    where += (where.empty() ? "" : " AND ") + clause;
    args.push_back(std::move(value));
  };
  if (q.kernel_hash) add("kernel_hash = ?", *q.kernel_hash);
  if (q.dims) add("dims_json = ?", util::Json(*q.dims).dump());
  return select(where, args);
}

Result<std::vector<Record>> Store::kernel_records(const std::string& kernel_hash) {
  Query q;
  q.kernel_hash = kernel_hash;
  return query(q);
}

Status Store::record_method_outcome(const MethodOutcome& m) {
  const int64_t at = m.recorded_unix_s ? m.recorded_unix_s : now_unix_s();
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c_));
  KOPT_TRY_ASSIGN(auto s, c_.prepare("INSERT INTO method_outcomes (gpu_model, kernel_hash, run_dir, iteration, position, "
                                     "method, verdict, outcome, saved_fraction, recorded_unix_s, recorded_at) "
                                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  s.bind(1, m.gpu_model)
      .bind(2, m.kernel_hash)
      .bind(3, m.run_dir)
      .bind(4, static_cast<int64_t>(m.iteration))
      .bind(5, m.position)
      .bind(6, m.method)
      .bind(7, m.verdict)
      .bind(8, m.outcome);
  bind_optional(s, 9, m.saved_fraction);
  s.bind(10, at).bind(11, m.recorded_at.empty() ? iso_utc(at) : m.recorded_at);
  if (auto st = s.run(); !st) return c_.error("cannot record a method outcome: " + st.error().message);
  KOPT_TRY(tx.commit());
  return ok_status();
}

Result<std::vector<MethodOutcome>> Store::method_outcomes(const std::string& gpu_model) {
  KOPT_TRY_ASSIGN(auto s, c_.prepare("SELECT id, gpu_model, kernel_hash, run_dir, iteration, position, method, verdict, "
                                     "outcome, saved_fraction, recorded_unix_s, recorded_at FROM method_outcomes "
                                     "WHERE gpu_model = ? ORDER BY recorded_unix_s DESC, id DESC"));
  s.bind(1, gpu_model);
  std::vector<MethodOutcome> out;
  for (;;) {
    KOPT_TRY_ASSIGN(bool row, s.step());
    if (!row) return out;
    MethodOutcome m;
    m.id = s.integer(0);
    m.gpu_model = s.text(1);
    m.kernel_hash = s.text(2);
    m.run_dir = s.text(3);
    m.iteration = static_cast<int>(s.integer(4));
    m.position = s.text(5);
    m.method = s.text(6);
    m.verdict = s.text(7);
    m.outcome = s.text(8);
    if (!s.is_null(9)) m.saved_fraction = s.real(9);
    m.recorded_unix_s = s.integer(10);
    m.recorded_at = s.text(11);
    out.push_back(std::move(m));
  }
}

Status Store::record_champion(const ChampionMark& m) {
  const int64_t at = m.recorded_unix_s ? m.recorded_unix_s : now_unix_s();
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c_));
  KOPT_TRY_ASSIGN(auto s, c_.prepare("INSERT INTO champions (key_hash, kernel_hash, run_dir, recorded_unix_s, recorded_at) "
                                     "VALUES (?, ?, ?, ?, ?)"));
  s.bind(1, m.key_hash).bind(2, m.kernel_hash).bind(3, m.run_dir).bind(4, at);
  s.bind(5, m.recorded_at.empty() ? iso_utc(at) : m.recorded_at);
  if (auto st = s.run(); !st) return c_.error("cannot record a champion: " + st.error().message);
  KOPT_TRY(tx.commit());
  return ok_status();
}

Result<std::vector<ChampionMark>> Store::champion_runs(const std::string& key_hash) {
  KOPT_TRY_ASSIGN(auto s, c_.prepare("SELECT id, key_hash, kernel_hash, run_dir, recorded_unix_s, recorded_at FROM champions "
                                     "WHERE key_hash = ? ORDER BY recorded_unix_s DESC, id DESC"));
  s.bind(1, key_hash);
  std::vector<ChampionMark> out;
  for (;;) {
    KOPT_TRY_ASSIGN(bool row, s.step());
    if (!row) return out;
    ChampionMark m;
    m.id = s.integer(0);
    m.key_hash = s.text(1);
    m.kernel_hash = s.text(2);
    m.run_dir = s.text(3);
    m.recorded_unix_s = s.integer(4);
    m.recorded_at = s.text(5);
    out.push_back(std::move(m));
  }
}

Result<std::optional<Record>> Store::find_by_key(const RecordKey& key) {
  KOPT_TRY_ASSIGN(auto rows, select("key_hash = ?", {key_hash(key)}));
  return find_reusable(key, rows);
}

Result<std::vector<ShapeNeighbour>> Store::nearest_shapes(const std::string& kernel_hash, const util::Json& config,
                                                          const Dims& dims, size_t k) {
  KOPT_TRY_ASSIGN(auto rows, select("kernel_hash = ? AND config_json = ?", {kernel_hash, config.dump()}));
  return db::nearest_shapes(dims, rows, k);
}

Result<std::vector<KernelSummary>> Store::summary() {
  auto newest = [](const char* column) {
    return std::string(" (SELECT ") + column +
           " FROM measurements n WHERE n.kernel_hash = m.kernel_hash ORDER BY recorded_unix_s DESC, id DESC LIMIT 1)";
  };
  KOPT_TRY_ASSIGN(auto s, c_.prepare("SELECT kernel_hash, count(*), count(DISTINCT key_hash), count(DISTINCT dims_json),"
                                     " min(CASE WHEN verdict = 'correct' THEN median_ms END)," +
                                     newest("kernel_path") + "," + newest("recorded_at") + "," + newest("run_dir") +
                                     ", (SELECT count(*) FROM champions c WHERE c.kernel_hash = m.kernel_hash)"
                                     " FROM measurements m GROUP BY kernel_hash"
                                     " ORDER BY max(recorded_unix_s) DESC, max(id) DESC"));
  std::vector<KernelSummary> out;
  for (;;) {
    KOPT_TRY_ASSIGN(bool row, s.step());
    if (!row) return out;
    KernelSummary k;
    k.kernel_hash = s.text(0);
    k.records = s.integer(1);
    k.configurations = s.integer(2);
    k.shapes = s.integer(3);
    k.best_median_ms = optional_real(s, 4);
    k.kernel_path = s.text(5);
    k.last_recorded_at = s.text(6);
    k.last_run_dir = s.text(7);
    k.champions = s.integer(8);
    out.push_back(std::move(k));
  }
}

Status Store::record_proposal(const ProposalMark& p) {
  const int64_t at = p.recorded_unix_s ? p.recorded_unix_s : now_unix_s();
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c_));
  KOPT_TRY_ASSIGN(auto s, c_.prepare("INSERT INTO proposals (state_hash, kernel_hash, run_dir, iteration, body_json, "
                                     "recorded_unix_s, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  s.bind(1, p.state_hash).bind(2, p.kernel_hash).bind(3, p.run_dir).bind(4, static_cast<int64_t>(p.iteration));
  s.bind(5, p.body.dump()).bind(6, at).bind(7, p.recorded_at.empty() ? iso_utc(at) : p.recorded_at);
  if (auto st = s.run(); !st) return c_.error("cannot record proposals: " + st.error().message);
  KOPT_TRY(tx.commit());
  return ok_status();
}

Result<std::optional<ProposalMark>> Store::proposal(const std::string& state_hash) {
  KOPT_TRY_ASSIGN(auto s, c_.prepare("SELECT id, state_hash, kernel_hash, run_dir, iteration, body_json, recorded_unix_s, "
                                     "recorded_at FROM proposals WHERE state_hash = ? ORDER BY recorded_unix_s DESC, id DESC "
                                     "LIMIT 1"));
  s.bind(1, state_hash);
  KOPT_TRY_ASSIGN(bool row, s.step());
  if (!row) return std::optional<ProposalMark>{};
  ProposalMark p;
  p.id = s.integer(0);
  p.state_hash = s.text(1);
  p.kernel_hash = s.text(2);
  p.run_dir = s.text(3);
  p.iteration = static_cast<int>(s.integer(4));
  p.body = util::Json::parse(s.text(5), nullptr, false);
  if (p.body.is_discarded()) return c_.error("proposals row " + std::to_string(p.id) + ": body_json is not JSON");
  p.recorded_unix_s = s.integer(6);
  p.recorded_at = s.text(7);
  return std::optional<ProposalMark>(std::move(p));
}

// Deletes the rows of measurements WHERE `where` (one bound value), then those of the tables that go with them
// (method outcomes, champion marks, proposals): the count of measurements deleted.
Result<int64_t> Store::prune_where(const std::string& where, const std::function<void(Statement&)>& bind) {
  KOPT_TRY_ASSIGN(auto tx, Transaction::begin(c_));
  int64_t n = 0;
  for (const char* table : {"measurements", "method_outcomes", "champions", "proposals"}) {
    KOPT_TRY_ASSIGN(auto s, c_.prepare(std::string("DELETE FROM ") + table + " WHERE " + where));
    bind(s);
    KOPT_TRY(s.run());
    if (std::string_view(table) == "measurements") n = c_.changes();
  }
  KOPT_TRY(tx.commit());
  return n;
}

Result<int64_t> Store::prune_older_than(int64_t days, int64_t now) {
  return prune_where("recorded_unix_s < ?", [&](Statement& s) { s.bind(1, now - days * 86400); });
}

Result<int64_t> Store::prune_kernel(const std::string& kernel_hash) {
  return prune_where("kernel_hash = ?", [&](Statement& s) { s.bind(1, kernel_hash); });
}

Result<std::string> Store::integrity_check() {
  KOPT_TRY_ASSIGN(auto s, c_.prepare("PRAGMA integrity_check"));
  KOPT_TRY_ASSIGN(bool row, s.step());
  if (!row) return internal_error(path().string() + ": integrity_check returned nothing");
  return s.text(0);
}

}  // namespace kopt::db
