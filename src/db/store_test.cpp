#include "db/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "db/testing.h"

namespace kopt::db {
namespace {

namespace fs = std::filesystem;
using testing::sample_record;

const Dims k4096 = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

Store open_ok(const fs::path& p, const std::vector<std::string>& steps = migrations()) {
  auto s = Store::open(p, steps);
  if (!s) ADD_FAILURE() << s.error().message;
  return std::move(s).value();
}

int64_t count_rows(Store& s) {
  auto st = s.connection().prepare("SELECT count(*) FROM measurements");
  EXPECT_TRUE(st.ok());
  auto row = st->step();
  EXPECT_TRUE(row.ok() && *row);
  return st->integer(0);
}

// Runs `body` in a forked child with its own connection; returns the child's exit status (waitpid's).
template <typename F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = body();
    std::_Exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

const int kCurrent = static_cast<int>(migrations().size());  // the schema version this kopt writes

TEST(DbStore, ANewDatabaseHasTheCurrentSchemaInWalMode) {
  testing::ScratchDb scratch("schema");
  const fs::path& p = scratch.path;
  Store s = open_ok(p);
  auto v = s.schema_version();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, static_cast<int>(migrations().size()));
  auto mode = s.connection().prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->step());
  EXPECT_EQ(mode->text(0), "wal");
  EXPECT_EQ(count_rows(s), 0);
  // Opening it again changes nothing.
  Store again = open_ok(p);
  EXPECT_EQ(*again.schema_version(), static_cast<int>(migrations().size()));
}

TEST(DbStore, ADatabaseFromANewerKoptIsRefusedNamingItsVersion) {
  testing::ScratchDb scratch("newer");
  const fs::path& p = scratch.path;
  {
    Store s = open_ok(p);
    ASSERT_TRUE(s.insert(sample_record()).ok());
    ASSERT_TRUE(s.connection().exec("UPDATE schema_version SET version = 99").ok());
  }
  auto s = Store::open(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kInput);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("newer kopt"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("--db"), std::string::npos) << s.error().message;
  // Refused, not changed: the version and the record are as they were.
  auto c = Connection::open(p);
  ASSERT_TRUE(c.ok());
  auto v = c->prepare("SELECT version FROM schema_version");
  ASSERT_TRUE(v.ok() && *v->step());
  EXPECT_EQ(v->integer(0), 99);
}

TEST(DbStore, AVersion1DatabaseIsUpgradedKeepingItsRecords) {
  testing::ScratchDb scratch("upgrade");
  const fs::path& p = scratch.path;
  {
    // A version-1 file with one record: today's file with versions 3 to 5's tables and version 2's column dropped.
    Store s = open_ok(p);
    ASSERT_TRUE(s.insert(sample_record()).ok());
    ASSERT_TRUE(s.connection()
                    .exec("DROP TABLE proposals; DROP TABLE champions; DROP TABLE method_outcomes; "
                          "ALTER TABLE measurements DROP COLUMN raced_json; "
                          "UPDATE schema_version SET version = 1")
                    .ok());
    EXPECT_EQ(*s.schema_version(), 1);
  }
  Store s = open_ok(p);
  EXPECT_EQ(*s.schema_version(), kCurrent);
  // Version 3's table is there, empty: the strategy memory starts with nothing.
  auto none = s.method_outcomes("NVIDIA H200");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  auto rows = s.query({});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(key_hash(rows->front().key), key_hash(sample_record().key));
  EXPECT_TRUE(rows->front().raced.is_null()) << "a record made before version 2 has no race";
  // A later step runs on top, and a kopt that knows fewer steps refuses the upgraded file.
  std::vector<std::string> later = migrations();
  later.push_back("ALTER TABLE measurements ADD COLUMN comment TEXT NOT NULL DEFAULT 'none'");
  {
    Store s3 = open_ok(p, later);
    EXPECT_EQ(*s3.schema_version(), kCurrent + 1);
    auto c = s3.connection().prepare("SELECT comment FROM measurements");
    ASSERT_TRUE(c.ok() && *c->step());
    EXPECT_EQ(c->text(0), "none");
  }
  EXPECT_FALSE(Store::open(p).ok());
}

// A file written by a kopt that knows versions 1 and 2 only (main before the strategy memory: reuse, raced_json)
// opens here at the current version, its records and their races as they were; from then on that kopt refuses it.
TEST(DbStore, AVersion2DatabaseIsUpgradedKeepingItsRaces) {
  testing::ScratchDb scratch("upgrade_v2");
  const fs::path& p = scratch.path;
  const std::vector<std::string> v2(migrations().begin(), migrations().begin() + 2);
  Record in = sample_record();
  in.raced = util::Json::parse(
      R"({"against": {"config": {"params": {"TILE": 32}}, "flags": []}, "primary": {"median_ratio": 0.9, "ci95_low": 0.88}})");
  {
    Store s = open_ok(p, v2);
    EXPECT_EQ(*s.schema_version(), 2);
    ASSERT_TRUE(s.insert(in).ok());
    auto t = s.connection().prepare("SELECT count(*) FROM sqlite_master WHERE name = 'method_outcomes'");
    ASSERT_TRUE(t.ok() && *t->step());
    EXPECT_EQ(t->integer(0), 0) << "version 2 has no method_outcomes table";
  }
  {
    Store s = open_ok(p);
    EXPECT_EQ(*s.schema_version(), kCurrent);
    auto rows = s.query({});
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ(key_hash(rows->front().key), key_hash(in.key));
    EXPECT_EQ(rows->front().raced, in.raced) << "version 2's race survives the step to version 3";
    auto none = s.method_outcomes("NVIDIA H200");
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_TRUE(none->empty());
    MethodOutcome m;
    m.gpu_model = "NVIDIA H200";
    m.kernel_hash = in.key.kernel_hash;
    m.run_dir = "kopt_runs/run_a";
    m.position = "memory";
    m.method = "vectorized_access";
    m.verdict = "effective";
    m.outcome = "paid";
    ASSERT_TRUE(s.record_method_outcome(m).ok());
    EXPECT_EQ(s.method_outcomes("NVIDIA H200")->size(), 1u);
  }
  // Opening it again changes nothing; a version-2 kopt refuses the upgraded file, naming version 4.
  EXPECT_EQ(*open_ok(p).schema_version(), kCurrent);
  auto old = Store::open(p, v2);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("schema version " + std::to_string(kCurrent)), std::string::npos) << old.error().message;
}

namespace {
ChampionMark champion_mark(const std::string& run_dir, int64_t at, const Record& r = sample_record()) {
  ChampionMark m;
  m.key_hash = key_hash(r.key);
  m.kernel_hash = r.key.kernel_hash;
  m.run_dir = run_dir;
  m.recorded_unix_s = at;
  return m;
}
}  // namespace

// Issue 39: a file written by a kopt that knows versions 1 to 3 (the strategy memory, no champion marks) opens here
// at version 4, its records and method outcomes as they were, with the champions table, empty.
TEST(DbStore, AVersion3DatabaseGainsTheChampionsTable) {
  testing::ScratchDb scratch("upgrade_v3");
  const fs::path& p = scratch.path;
  const std::vector<std::string> v3(migrations().begin(), migrations().begin() + 3);
  MethodOutcome m;
  m.gpu_model = "NVIDIA H200";
  m.kernel_hash = sample_record().key.kernel_hash;
  m.method = "vectorized_access";
  {
    Store s = open_ok(p, v3);
    EXPECT_EQ(*s.schema_version(), 3);
    ASSERT_TRUE(s.insert(sample_record()).ok());
    ASSERT_TRUE(s.record_method_outcome(m).ok());
    EXPECT_FALSE(s.record_champion(champion_mark("kopt_runs/run_a", 1796256000)).ok()) << "version 3 has no champions table";
  }
  Store s = open_ok(p);
  EXPECT_EQ(*s.schema_version(), kCurrent);
  EXPECT_EQ(count_rows(s), 1);
  EXPECT_EQ(s.method_outcomes("NVIDIA H200")->size(), 1u);
  auto none = s.champion_runs(key_hash(sample_record().key));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  ASSERT_TRUE(s.record_champion(champion_mark("kopt_runs/run_a", 1796256000)).ok());
  EXPECT_EQ(s.champion_runs(key_hash(sample_record().key))->size(), 1u);
  auto old = Store::open(p, v3);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("schema version " + std::to_string(kCurrent)), std::string::npos) << old.error().message;
}

// Champion marks come back per record key, newest first, are counted in the summary, and go with a prune (by age or
// by kernel) as the kernel's measurements do.
TEST(DbStore, ChampionMarksComeBackPerKeyNewestFirstAndArePrunedWithTheirKernel) {
  testing::ScratchDb scratch("champions");
  Store s = open_ok(scratch.path);
  const int64_t now = 1796256000, day = 86400;
  Record r = sample_record(), other_config = sample_record({{"M", 4096}, {"N", 4096}, {"K", 4096}}, 128),
         other_kernel = sample_record();
  other_kernel.key.kernel_hash = "fedcba9876543210fedcba9876543210";
  for (auto* rec : {&r, &other_config, &other_kernel}) {
    rec->recorded_unix_s = now - day;
    ASSERT_TRUE(s.insert(*rec).ok());
  }
  ASSERT_TRUE(s.record_champion(champion_mark("kopt_runs/run_old", now - 40 * day)).ok());
  ASSERT_TRUE(s.record_champion(champion_mark("kopt_runs/run_new", now - day)).ok());
  ASSERT_TRUE(s.record_champion(champion_mark("kopt_runs/run_tile128", now - day, other_config)).ok());
  ASSERT_TRUE(s.record_champion(champion_mark("kopt_runs/run_other", now - day, other_kernel)).ok());
  auto got = s.champion_runs(key_hash(r.key));
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].run_dir, "kopt_runs/run_new");
  EXPECT_EQ((*got)[0].kernel_hash, r.key.kernel_hash);
  EXPECT_EQ((*got)[0].key_hash, key_hash(r.key));
  EXPECT_EQ((*got)[1].run_dir, "kopt_runs/run_old");
  EXPECT_EQ((*got)[1].recorded_at, "2026-10-24T00:00:00Z");
  EXPECT_GT((*got)[0].id, 0);
  ASSERT_EQ(s.champion_runs(key_hash(other_config.key))->size(), 1u);
  auto sum = s.summary();
  ASSERT_TRUE(sum.ok());
  for (const auto& k : *sum) EXPECT_EQ(k.champions, k.kernel_hash == r.key.kernel_hash ? 3 : 1) << k.kernel_hash;
  // By age: the old mark goes, with nothing else of the kernel (its records are recent).
  ASSERT_EQ(*s.prune_older_than(30, now), 0);
  got = s.champion_runs(key_hash(r.key));
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].run_dir, "kopt_runs/run_new");
  // By kernel: every mark of that kernel goes with its measurements; the other kernel's stay.
  ASSERT_EQ(*s.prune_kernel(r.key.kernel_hash), 2);
  EXPECT_TRUE(s.champion_runs(key_hash(r.key))->empty());
  EXPECT_TRUE(s.champion_runs(key_hash(other_config.key))->empty());
  EXPECT_EQ(s.champion_runs(key_hash(other_kernel.key))->size(), 1u);
}

namespace {
ProposalMark proposal_mark(const std::string& state, const std::string& run_dir, int64_t at, const std::string& kernel) {
  ProposalMark m;
  m.state_hash = state;
  m.kernel_hash = kernel;
  m.run_dir = run_dir;
  m.iteration = 2;
  m.body = {{"candidates", util::Json::array({{{"id", "i2c1"}}})}, {"exploring", false}};
  m.recorded_unix_s = at;
  return m;
}
}  // namespace

// Issue 39: a generator's proposals (schema v5) come back by their state hash, the newest, and go with a prune (by age
// or by kernel) as the kernel's measurements do. A version-4 file gains the table, empty.
TEST(DbStore, ProposalsComeBackByStateNewestAndArePrunedWithTheirKernel) {
  testing::ScratchDb scratch("proposals");
  const std::vector<std::string> v4(migrations().begin(), migrations().begin() + 4);
  const std::string kernel = sample_record().key.kernel_hash, other = "fedcba9876543210fedcba9876543210";
  const int64_t now = 1796256000, day = 86400;
  {
    Store s = open_ok(scratch.path, v4);
    EXPECT_FALSE(s.record_proposal(proposal_mark("state_a", "kopt_runs/run_a", now, kernel)).ok()) << "version 4 has none";
  }
  Store s = open_ok(scratch.path);
  EXPECT_EQ(*s.schema_version(), kCurrent);
  auto none = s.proposal("state_a");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  Record r = sample_record();
  r.recorded_unix_s = now - day;
  ASSERT_TRUE(s.insert(r).ok());
  ASSERT_TRUE(s.record_proposal(proposal_mark("state_a", "kopt_runs/run_old", now - 40 * day, kernel)).ok());
  ASSERT_TRUE(s.record_proposal(proposal_mark("state_a", "kopt_runs/run_new", now - day, kernel)).ok());
  ASSERT_TRUE(s.record_proposal(proposal_mark("state_b", "kopt_runs/run_other", now - day, other)).ok());
  auto got = s.proposal("state_a");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->run_dir, "kopt_runs/run_new");
  EXPECT_EQ((*got)->iteration, 2);
  EXPECT_EQ((*got)->kernel_hash, kernel);
  EXPECT_EQ((*got)->body["candidates"][0]["id"], "i2c1");
  EXPECT_EQ((*got)->recorded_at, "2026-12-02T00:00:00Z");
  ASSERT_EQ(*s.prune_older_than(30, now), 0);
  EXPECT_EQ((*s.proposal("state_a"))->run_dir, "kopt_runs/run_new") << "the old one went, the new one stays";
  ASSERT_EQ(*s.prune_kernel(kernel), 1);
  EXPECT_FALSE(s.proposal("state_a")->has_value());
  EXPECT_TRUE(s.proposal("state_b")->has_value()) << "another kernel's stay";
}

// Issue 39 item 2(c): the method outcomes (schema v3) come back per GPU model, newest first, and go with a prune.
TEST(DbStore, MethodOutcomesComeBackPerGpuModelAndArePrunedWithTheirKernel) {
  testing::ScratchDb scratch("outcomes");
  Store s = open_ok(scratch.path);
  MethodOutcome m;
  m.gpu_model = "NVIDIA H200";
  m.kernel_hash = sample_record().key.kernel_hash;
  m.run_dir = "kopt_runs/run_a";
  m.iteration = 2;
  m.position = "memory";
  m.method = "vectorized_access";
  m.verdict = "effective";
  m.outcome = "paid";
  m.saved_fraction = 0.12;
  m.recorded_unix_s = 1796256000;
  ASSERT_TRUE(s.record_method_outcome(m).ok());
  MethodOutcome other = m;
  other.gpu_model = "NVIDIA A100";
  ASSERT_TRUE(s.record_method_outcome(other).ok());
  MethodOutcome later = m;
  later.kernel_hash = "ffffffffffffffffffffffffffffffff";
  later.method = "smem_padding";
  later.outcome = "no_gain";
  later.verdict = "ineffective";
  later.saved_fraction.reset();
  later.recorded_unix_s = m.recorded_unix_s + 10;
  ASSERT_TRUE(s.record_method_outcome(later).ok());
  auto got = s.method_outcomes("NVIDIA H200");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].method, "smem_padding");
  EXPECT_FALSE((*got)[0].saved_fraction);
  EXPECT_EQ((*got)[1].method, "vectorized_access");
  EXPECT_EQ((*got)[1].position, "memory");
  EXPECT_EQ((*got)[1].outcome, "paid");
  EXPECT_EQ((*got)[1].iteration, 2);
  EXPECT_EQ((*got)[1].recorded_at, "2026-12-03T00:00:00Z");
  ASSERT_TRUE((*got)[1].saved_fraction);
  EXPECT_DOUBLE_EQ(*(*got)[1].saved_fraction, 0.12);
  ASSERT_TRUE(s.prune_kernel(m.kernel_hash).ok());
  got = s.method_outcomes("NVIDIA H200");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].method, "smem_padding");
}

TEST(DbStore, ARecordComesBackAsItWasStored) {
  testing::ScratchDb scratch("roundtrip");
  const fs::path& p = scratch.path;
  Store s = open_ok(p);
  Record in = sample_record();
  in.recorded_unix_s = 1796256000;  // 2026-12-03T00:00:00Z
  in.note = "a note";
  in.raced = util::Json::parse(
      R"({"against": {"config": {"params": {"TILE": 32}}, "flags": []}, "primary": {"median_ratio": 0.9, "ci95_low": 0.88}})");
  auto id = s.insert(in);
  ASSERT_TRUE(id.ok()) << id.error().message;
  Record untimed = sample_record({{"M", 128}, {"N", 128}, {"K", 128}});
  untimed.verdict = Verdict::kIncorrect;
  untimed.run_status = "wrong_result";
  untimed.median_ms = untimed.ci95_low_ms = untimed.ci95_high_ms = std::nullopt;
  untimed.samples_ms.clear();
  ASSERT_TRUE(s.insert(untimed).ok());
  auto rows = s.query({.kernel_hash = in.key.kernel_hash, .dims = k4096});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const Record& out = rows->front();
  EXPECT_EQ(out.id, *id);
  EXPECT_EQ(canonical_key(out.key), canonical_key(in.key));
  EXPECT_EQ(out.kernel_path, in.kernel_path);
  EXPECT_EQ(out.source, Source::kOptimize);
  EXPECT_EQ(out.verdict, Verdict::kCorrect);
  EXPECT_EQ(out.run_status, "ok");
  EXPECT_EQ(out.note, "a note");
  EXPECT_EQ(out.median_ms, 1.25);
  EXPECT_EQ(out.ci95_low_ms, 1.2);
  EXPECT_EQ(out.ci95_high_ms, 1.3);
  EXPECT_EQ(out.samples_ms, in.samples_ms);
  EXPECT_EQ(out.resources, in.resources);
  EXPECT_EQ(out.recorded_unix_s, 1796256000);
  EXPECT_EQ(out.recorded_at, "2026-12-03T00:00:00Z");
  EXPECT_EQ(out.run_dir, in.run_dir);
  EXPECT_EQ(out.raced, in.raced);
  auto small = s.query({.dims = Dims{{"M", 128}, {"N", 128}, {"K", 128}}});
  ASSERT_TRUE(small.ok());
  ASSERT_EQ(small->size(), 1u);
  EXPECT_FALSE(small->front().median_ms);
  EXPECT_EQ(small->front().verdict, Verdict::kIncorrect);
  EXPECT_TRUE(s.query({.kernel_hash = std::string("nope")})->empty());
  EXPECT_EQ(s.query({})->size(), 2u);
}

TEST(DbStore, FindByKeyAndNearestShapesReadTheStore) {
  testing::ScratchDb scratch("reuse");
  const fs::path& p = scratch.path;
  Store s = open_ok(p);
  for (int64_t m : {1024, 2048, 8192}) {
    Record r = sample_record({{"M", m}, {"N", 4096}, {"K", 4096}});
    r.recorded_unix_s = 1000 + m;
    ASSERT_TRUE(s.insert(r).ok());
  }
  ASSERT_TRUE(s.insert(sample_record({{"M", 4096}, {"N", 4096}, {"K", 4096}}, 128)).ok());  // another configuration
  auto none = s.find_by_key(sample_record(k4096).key);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  auto hit = s.find_by_key(sample_record({{"M", 2048}, {"N", 4096}, {"K", 4096}}).key);
  ASSERT_TRUE(hit.ok() && *hit);
  EXPECT_EQ((*hit)->key.dims.at("M"), 2048);
  const Record base = sample_record();
  auto near = s.nearest_shapes(base.key.kernel_hash, base.key.config, k4096, 2);
  ASSERT_TRUE(near.ok()) << near.error().message;
  ASSERT_EQ(near->size(), 2u);
  EXPECT_EQ((*near)[0].record.key.dims.at("M"), 8192);  // ln 2, newer than 2048's
  EXPECT_EQ((*near)[1].record.key.dims.at("M"), 2048);
}

TEST(DbStore, TheSummaryCountsRecordsConfigurationsAndShapesPerKernel) {
  testing::ScratchDb scratch("summary");
  const fs::path& p = scratch.path;
  Store s = open_ok(p);
  Record a = sample_record(), b = sample_record(k4096, 128), c = sample_record({{"M", 1}, {"N", 1}, {"K", 1}});
  b.median_ms = 0.9;
  c.verdict = Verdict::kIncorrect;
  c.median_ms = 0.1;  // not correct: not the best
  c.run_dir = "last_run";
  Record other = sample_record();
  other.key.kernel_hash = "fedcba9876543210fedcba9876543210";
  other.recorded_unix_s = 10;
  a.recorded_unix_s = 100;
  b.recorded_unix_s = 200;
  c.recorded_unix_s = 300;
  for (const auto* r : {&a, &a, &b, &c, &other}) ASSERT_TRUE(s.insert(*r).ok());
  auto sum = s.summary();
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  ASSERT_EQ(sum->size(), 2u);
  const auto& k = sum->front();
  EXPECT_EQ(k.kernel_hash, a.key.kernel_hash);
  EXPECT_EQ(k.records, 4);
  EXPECT_EQ(k.configurations, 3);
  EXPECT_EQ(k.shapes, 2);
  EXPECT_EQ(k.best_median_ms, 0.9);
  EXPECT_EQ(k.last_run_dir, "last_run");
  EXPECT_EQ(k.last_recorded_at, "1970-01-01T00:05:00Z");
  EXPECT_EQ((*sum)[1].records, 1);
}

TEST(DbStore, PruneDeletesOldRecordsOrOneKernels) {
  testing::ScratchDb scratch("prune");
  const fs::path& p = scratch.path;
  Store s = open_ok(p);
  const int64_t now = 1796256000, day = 86400;
  Record old = sample_record(), recent = sample_record(), other = sample_record();
  old.recorded_unix_s = now - 40 * day;
  recent.recorded_unix_s = now - 2 * day;
  other.key.kernel_hash = "fedcba9876543210fedcba9876543210";
  other.recorded_unix_s = now - day;
  for (const auto* r : {&old, &recent, &other}) ASSERT_TRUE(s.insert(*r).ok());
  auto n = s.prune_older_than(30, now);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(count_rows(s), 2);
  auto k = s.prune_kernel(other.key.kernel_hash);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, 1);
  auto left = s.query({});
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ(left->front().recorded_unix_s, recent.recorded_unix_s);
}

TEST(DbStore, AKilledWriterLosesNothingCommittedAndLeavesNoPartialRow) {
  testing::ScratchDb scratch("killed");
  const fs::path& p = scratch.path;
  {
    Store s = open_ok(p);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(s.insert(sample_record()).ok());
  }
  // A child that begins a transaction, inserts, and exits without committing.
  int status = in_child([&] {
    auto s = Store::open(p);
    if (!s) return 2;
    auto tx = Transaction::begin(s->connection());
    if (!tx) return 3;
    const std::string cols =
        "key_hash, kernel_hash, kernel_path, config_json, dims_json, dtypes_json, gpu_model, driver_version, "
        "nvcc_version, compile_flags_json, timing_method, l2_mode, measure_mode, kopt_version, source, verdict, "
        "run_status, note, median_ms, ci95_low_ms, ci95_high_ms, samples_count, samples_ms_json, resources_json, "
        "recorded_unix_s, recorded_at, run_dir";
    for (int i = 0; i < 5; ++i)
      if (!s->connection().exec("INSERT INTO measurements (" + cols + ") SELECT " + cols + " FROM measurements LIMIT 1"))
        return 4;
    std::_Exit(0);  // killed mid-transaction: no commit, no rollback, no close
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // A child killed by SIGKILL in the middle of a run of committed inserts: every commit before it is kept.
  status = in_child([&] {
    auto s = Store::open(p);
    if (!s) return 2;
    for (int i = 0; i < 50; ++i) {
      if (i == 20) raise(SIGKILL);
      if (!s->insert(sample_record({{"M", 100 + i}, {"N", 1}, {"K", 1}}))) return 3;
    }
    return 0;
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  Store s = open_ok(p);
  EXPECT_EQ(count_rows(s), 3 + 20);
  EXPECT_EQ(*s.integrity_check(), "ok");
  auto rows = s.query({});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  for (const auto& r : *rows) EXPECT_EQ(r.samples_ms.size(), 3u);  // every row whole
  // And the file takes new writes.
  EXPECT_TRUE(s.insert(sample_record()).ok());
}

TEST(DbStore, TwoConcurrentWritersEachInsert200RowsAndAllAreThere) {
  testing::ScratchDb scratch("concurrent");
  const fs::path& p = scratch.path;
  { Store s = open_ok(p); }
  std::vector<pid_t> pids;
  for (int w = 0; w < 2; ++w) {
    pid_t pid = fork();
    if (pid == 0) {
      auto s = Store::open(p);
      if (!s) std::_Exit(2);
      for (int i = 0; i < 200; ++i) {
        Record r = sample_record({{"M", 1 + i}, {"N", 1 + w}, {"K", 1}});
        if (!s->insert(r)) std::_Exit(3);
      }
      std::_Exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  Store s = open_ok(p);
  EXPECT_EQ(count_rows(s), 400);
  EXPECT_EQ(*s.integrity_check(), "ok");
  for (int w = 0; w < 2; ++w) {
    auto st = s.connection().prepare("SELECT count(DISTINCT dims_json) FROM measurements WHERE dims_json LIKE ?");
    ASSERT_TRUE(st.ok());
    st->bind(1, std::string("%\"N\":") + std::to_string(1 + w) + "}");
    ASSERT_TRUE(*st->step());
    EXPECT_EQ(st->integer(0), 200) << "writer " << w;
  }
}

TEST(DbStore, ResolvingThePathFollowsTheFlagThenKoptDbThenTheCacheRoot) {
  const char* saved = std::getenv("KOPT_DB");
  std::string keep = saved ? saved : "";
  ::setenv("KOPT_DB", "/x/y.sqlite3", 1);
  EXPECT_EQ(resolve_db_path("/a/b.sqlite3"), fs::path("/a/b.sqlite3"));
  EXPECT_EQ(resolve_db_path(""), fs::path("/x/y.sqlite3"));
  ::setenv("KOPT_DB", "off", 1);
  EXPECT_FALSE(resolve_db_path(""));
  EXPECT_EQ(resolve_db_path("/a/b.sqlite3"), fs::path("/a/b.sqlite3"));
  ::unsetenv("KOPT_DB");
  const char* cache = std::getenv("KOPT_CACHE_DIR");
  std::string keep_cache = cache ? cache : "";
  ::setenv("KOPT_CACHE_DIR", "/c", 1);
  EXPECT_EQ(resolve_db_path(""), fs::path("/c/results.sqlite3"));
  if (cache)
    ::setenv("KOPT_CACHE_DIR", keep_cache.c_str(), 1);
  else
    ::unsetenv("KOPT_CACHE_DIR");
  if (saved) ::setenv("KOPT_DB", keep.c_str(), 1);
}

}  // namespace
}  // namespace kopt::db
