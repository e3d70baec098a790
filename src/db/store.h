#pragma once
// The results database (docs/DATABASE.md): one SQLite file of measured configurations, shared by every kopt run on
// the machine. WAL mode and a busy timeout let several processes write at once; every insert is one transaction,
// so a killed writer loses nothing already committed and leaves nothing half-written.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "core/result.h"
#include "db/record.h"
#include "db/reuse.h"
#include "db/sqlite.h"

namespace kopt::db {

// The schema's steps: step i upgrades a database at version i to version i + 1, in one transaction. The schema's
// version is the number of steps; a database at a higher version than a kopt knows is refused, never changed.
const std::vector<std::string>& migrations();

// Where the database is: `flag` (--db PATH) when given, else $KOPT_DB, else default_db_path(). nullopt when
// KOPT_DB is "off" (no database; the tests' setting) and no --db is given.
std::optional<std::filesystem::path> resolve_db_path(const std::string& flag);
// $KOPT_CACHE_DIR/results.sqlite3, else $XDG_CACHE_HOME/kopt/results.sqlite3, else ~/.cache/kopt/results.sqlite3:
// the cache root the build cache (compile/cache.h) uses.
std::filesystem::path default_db_path();

// What `kopt db query` selects: every field given must match.
struct Query {
  std::optional<std::string> kernel_hash;
  std::optional<Dims> dims;
};

// One kernel's line in `kopt db list`.
struct KernelSummary {
  std::string kernel_hash;
  std::string kernel_path;       // the newest record's
  int64_t records = 0;           // measurements
  int64_t configurations = 0;    // distinct keys
  int64_t shapes = 0;            // distinct dims
  std::string last_recorded_at;  // ISO-8601 UTC
  std::string last_run_dir;
  std::optional<double> best_median_ms;  // the fastest correct measurement, any shape
  int64_t champions = 0;                 // runs' final champions marked (ChampionMark), any shape
};

// Where the commands that measure put each measured configuration: Store, or a test's list.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual Status record(const Record& r) = 0;
  // What a method came to in a champion (the strategy memory's input). Default: not kept.
  virtual Status record_method_outcome(const MethodOutcome&) { return ok_status(); }
  // A run's final champion (selection's tie-break in later runs). Default: not kept.
  virtual Status record_champion(const ChampionMark&) { return ok_status(); }
  // A generator's proposals at one iteration (a later identical run's). Default: not kept.
  virtual Status record_proposal(const ProposalMark&) { return ok_status(); }
};

// Where a run looks up what was measured before (issue 39 item 2, docs/DATABASE.md "Reuse"): Store, or a test's list.
class RecordLookup {
 public:
  virtual ~RecordLookup() = default;
  // The newest record measured under exactly `key` (reuse.h find_reusable), or nullopt.
  virtual Result<std::optional<Record>> find_by_key(const RecordKey& key) = 0;
  // Every record of one kernel, newest first: what the warm start and the strategy memory read.
  virtual Result<std::vector<Record>> kernel_records(const std::string& kernel_hash) = 0;
  // Every method outcome recorded on this GPU model, any kernel, newest first (the strategy memory). Default: none.
  virtual Result<std::vector<MethodOutcome>> method_outcomes(const std::string& gpu_model) {
    (void)gpu_model;
    return std::vector<MethodOutcome>{};
  }
  // The runs that ended with the configuration of this record key (key_hash) as their champion, newest first.
  // Default: none.
  virtual Result<std::vector<ChampionMark>> champion_runs(const std::string& key_hash) {
    (void)key_hash;
    return std::vector<ChampionMark>{};
  }
  // The newest proposals recorded under this state hash (ProposalMark). Default: none.
  virtual Result<std::optional<ProposalMark>> proposal(const std::string& state_hash) {
    (void)state_hash;
    return std::optional<ProposalMark>{};
  }
};

class Store final : public RecordSink, public RecordLookup {
 public:
  // Opens or creates the database and brings its schema up to `steps` (migrations(); tests pass others).
  static Result<Store> open(const std::filesystem::path& path, const std::vector<std::string>& steps = migrations());

  Status record(const Record& r) override;
  Result<int64_t> insert(const Record& r);  // the new row's id
  Result<int> schema_version();
  Result<std::vector<Record>> query(const Query& q);  // newest first
  Result<std::optional<Record>> find_by_key(const RecordKey& key) override;
  Result<std::vector<Record>> kernel_records(const std::string& kernel_hash) override;
  Status record_method_outcome(const MethodOutcome& m) override;
  Result<std::vector<MethodOutcome>> method_outcomes(const std::string& gpu_model) override;
  Status record_champion(const ChampionMark& c) override;
  Result<std::vector<ChampionMark>> champion_runs(const std::string& key_hash) override;
  Status record_proposal(const ProposalMark& p) override;
  Result<std::optional<ProposalMark>> proposal(const std::string& state_hash) override;
  // The k nearest shapes at which this kernel's configuration `config` was measured (reuse.h nearest_shapes).
  Result<std::vector<ShapeNeighbour>> nearest_shapes(const std::string& kernel_hash, const util::Json& config, const Dims& dims,
                                                     size_t k);
  Result<std::vector<KernelSummary>> summary();  // newest kernel first
  // Deletes records older than `days` days before now_unix_s, or every record of one kernel; the count deleted (of
  // measurements; the method outcomes, champion marks and proposals of the same age or kernel go with them).
  Result<int64_t> prune_older_than(int64_t days, int64_t now_unix_s);
  Result<int64_t> prune_kernel(const std::string& kernel_hash);
  // PRAGMA integrity_check's answer: "ok" for a sound file.
  Result<std::string> integrity_check();
  Connection& connection() { return c_; }
  const std::filesystem::path& path() const { return c_.path(); }

 private:
  explicit Store(Connection c) : c_(std::move(c)) {}
  Result<std::vector<Record>> select(const std::string& where, const std::vector<std::string>& args);
  Result<int64_t> prune_where(const std::string& where, const std::function<void(Statement&)>& bind);
  Connection c_;
};

// The database a command that measures records into: nullptr with --no-db (`no_db`) or KOPT_DB=off; an error when
// it cannot be opened, which the command says as a warning and goes on without recording.
Result<std::unique_ptr<Store>> open_for_recording(bool no_db, const std::string& flag);

}  // namespace kopt::db
