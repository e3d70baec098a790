// `kopt __search-replay` end to end: the real binary on a small kernel and a synthetic measured table.
#include <gtest/gtest.h>

#include <tuple>
#include <unistd.h>

#include <filesystem>

#include "testing/test_support.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

const char* kKernel = R"(// @kopt param A values=1,2,4 default=1
// @kopt param B values=1,2 default=1
// @kopt method vectorized_access
#if KOPT_VECTORIZED_ACCESS
#endif
extern "C" void solve(const float* x, float* y, int n) {}
)";

class CmdSearchReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kopt-search-replay-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(util::write_file_atomic(dir_ / "k.cu", kKernel).ok());
    // 12 configurations; the best (A=4 B=2, method on) 1 ms, A=4 B=2 off 1.02 ms (within 3%), the rest slower.
    std::string csv = "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms,ci95_low_ms,ci95_high_ms,tflops\n";
    int i = 0;
    for (int a : {1, 2, 4})
      for (int b : {1, 2})
        for (int v : {0, 1}) {
          double ms = a == 4 && b == 2 ? (v ? 1.0 : 1.02) : 2.0 + a + b;
          std::string status = a == 2 && b == 1 && v == 1 ? "wrong_result" : "ok";
          csv += std::to_string(i++) + "," + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(v) + "," + status + "," +
                 (status == "ok" ? std::to_string(ms) : std::string()) + ",,,\n";
        }
    ASSERT_TRUE(util::write_file_atomic(dir_ / "m.csv", csv).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  util::ProcessResult kopt(std::vector<std::string> args) {
    args.insert(args.begin(), {testing_support::kopt_binary(), "__search-replay", "--kernel", (dir_ / "k.cu").string()});
    return util::run_process({args, "", {}, 120});
  }
  fs::path dir_;
};

TEST_F(CmdSearchReplay, ReportsTheDistributionAndWritesJson) {
  auto r = kopt({"--table", (dir_ / "m.csv").string(), "--runs", "5", "--json", (dir_ / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("space: 12 configurations, 11 measured ok; true best 1.0000 ms (A=4,B=2,KOPT_VECTORIZED_ACCESS=1)"),
            std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("target: within 3% of the best (<= 1.0300 ms): 2 configuration(s)"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("picked vectorized_access"), std::string::npos) << r.stdout_text;
  auto j = util::read_json(dir_ / "r.json");
  ASSERT_TRUE(j.ok());
  const auto& s = (*j)["summary"];
  EXPECT_EQ(s["space_size"], 12);
  EXPECT_EQ(s["good"], 2);
  EXPECT_DOUBLE_EQ(s["random_mean_evaluations"].get<double>(), 13.0 / 3.0);
  EXPECT_EQ((*j)["runs"].size(), 5u);
  EXPECT_EQ((*j)["options"]["policy"], "loop");
  EXPECT_EQ((*j)["meta"]["kind"], "search_replay");
}

TEST_F(CmdSearchReplay, ATableOfAnotherSpaceIsAnInputError) {
  ASSERT_TRUE(util::write_file_atomic(dir_ / "bad.csv", "A,B,status,median_ms\n1,1,ok,1\n").ok());
  auto r = kopt({"--table", (dir_ / "bad.csv").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("no column for the dimension 'KOPT_VECTORIZED_ACCESS'"), std::string::npos) << r.stderr_text;
  r = kopt({"--table", (dir_ / "m.csv").string(), "--policy", "greedy"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("--policy must be loop or free"), std::string::npos) << r.stderr_text;
}

// The warm start (--warm-from): another shape's table, whose fastest configuration (A=8) this kernel does not declare
// (passed over, as the loop passes over a stored configuration outside its space), whose 2nd fastest is this shape's
// best. Taken as the loop takes it (loop/warm_start.h: 3 configurations of the nearest shape), measured first: every
// run is within 3% at evaluation 2 (the baseline being 1), where from scratch takes more.
TEST_F(CmdSearchReplay, TheWarmStartIsMeasuredFirstAndReachesTheTargetAtEvaluationTwo) {
  std::string old = "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n0,8,2,1,ok,0.5\n1,4,2,1,ok,0.6\n2,1,2,0,ok,0.7\n"
                    "3,2,2,0,ok,0.8\n4,4,1,0,ok,0.9\n5,2,1,1,wrong_result,\n6,1,1,0,ok,2.0\n";
  ASSERT_TRUE(util::write_file_atomic(dir_ / "old.csv", old).ok());
  const std::vector<std::string> common = {"--table", (dir_ / "m.csv").string(), "--runs", "5", "--dims", "N=1024"};
  auto scratch = kopt({"--table", (dir_ / "m.csv").string(), "--runs", "5", "--json", (dir_ / "s.json").string()});
  ASSERT_EQ(scratch.exit_code, 0) << scratch.stderr_text;
  EXPECT_NE(scratch.stdout_text.find("warm start: none (from scratch)"), std::string::npos) << scratch.stdout_text;
  std::vector<std::string> args = common;
  args.insert(args.end(), {"--warm-from", (dir_ / "old.csv").string(), "--warm-from-dims", "N=4096", "--json", (dir_ / "w.json").string()});
  auto warm = kopt(args);
  ASSERT_EQ(warm.exit_code, 0) << warm.stdout_text << warm.stderr_text;
  EXPECT_NE(warm.stdout_text.find("warm start: 3 point(s) from " + (dir_ / "old.csv").string() + " at N=4096"), std::string::npos)
      << warm.stdout_text;
  EXPECT_NE(warm.stdout_text.find("A=4,B=2,KOPT_VECTORIZED_ACCESS=1  (warm start: 2nd fastest at N=4096 (distance 1.39), 0.6 ms "
                                  "there (record 3)); here: 1.0000 ms (+0.0% of the best, within the target)"),
            std::string::npos) << warm.stdout_text;
  EXPECT_NE(warm.stdout_text.find("per run (seed:evaluation; w: a warm-start point): 1:2w 2:2w 3:2w 4:2w 5:2w"), std::string::npos)
      << warm.stdout_text;
  auto w = util::read_json(dir_ / "w.json");
  auto s = util::read_json(dir_ / "s.json");
  ASSERT_TRUE(w.ok() && s.ok());
  const auto& points = (*w)["warm_start"]["points"];
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0]["key"], "A=4,B=2,KOPT_VECTORIZED_ACCESS=1");
  EXPECT_EQ(points[1]["key"], "A=1,B=2,KOPT_VECTORIZED_ACCESS=0");
  EXPECT_EQ(points[2]["key"], "A=2,B=2,KOPT_VECTORIZED_ACCESS=0");
  for (const auto& p : points) EXPECT_EQ(p["key"].get<std::string>().find("A=8"), std::string::npos);
  for (const auto& run : (*w)["runs"]) {
    EXPECT_EQ(run["hit_evaluation"], 2);
    EXPECT_TRUE(run["hit_suggested"].get<bool>());
    EXPECT_EQ(run["suggested_evaluated"], 3);
  }
  EXPECT_EQ((*w)["summary"]["median_evaluations"], 2);
  EXPECT_GT((*s)["summary"]["median_evaluations"].get<int>(), 2) << scratch.stdout_text;
  EXPECT_EQ((*s)["warm_start"]["points"].size(), 0u);
}

TEST_F(CmdSearchReplay, BadWarmFromInputNamesWhatToFix) {
  ASSERT_TRUE(util::write_file_atomic(dir_ / "old.csv", "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n0,4,2,1,ok,0.6\n").ok());
  ASSERT_TRUE(util::write_file_atomic(dir_ / "none.csv", "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n0,8,2,1,ok,0.6\n").ok());
  ASSERT_TRUE(util::write_file_atomic(dir_ / "bad.csv", "index,A,B,status,median_ms\n0,4,x,ok,0.6\n").ok());
  const std::string old = (dir_ / "old.csv").string(), table = (dir_ / "m.csv").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--warm-from", old, "--warm-from-dims", "N=4096"}, "--warm-from needs --dims"},
      {{"--warm-from", old, "--dims", "N=1024"}, "--warm-from needs one --warm-from-dims per table"},
      {{"--warm-from-dims", "N=4096", "--dims", "N=1024"}, "--warm-from-dims without --warm-from"},
      {{"--warm-from", old, "--warm-from-dims", "N=4096", "--dims", "N=4096"}, "are --dims: the warm start takes other shapes"},
      {{"--warm-from", old, "--warm-from-dims", "M=4096", "--dims", "N=1024"}, "do not name the same dimensions as --dims N=1024"},
      {{"--warm-from", old, "--warm-from-dims", "N=four", "--dims", "N=1024"}, "--warm-from-dims 'N=four': dimension N='four' is not an integer"},
      {{"--warm-from", old, "--warm-from-dims", "N=4096", "--dims", ""}, "--warm-from needs --dims"},
      {{"--warm-from", (dir_ / "missing.csv").string(), "--warm-from-dims", "N=4096", "--dims", "N=1024"}, "missing.csv"},
      {{"--warm-from", (dir_ / "bad.csv").string(), "--warm-from-dims", "N=4096", "--dims", "N=1024"}, "bad.csv:2"},
      {{"--warm-from", (dir_ / "none.csv").string(), "--warm-from-dims", "N=4096", "--dims", "N=1024"},
       "no configuration of those tables maps into the space of --kernel"},
  };
  for (const auto& [extra, want] : cases) {
    std::vector<std::string> args = {"--table", table};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = kopt(args);
    EXPECT_EQ(r.exit_code, 4) << want << "\n" << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(want), std::string::npos) << want << "\n" << r.stderr_text;
  }
  // Two tables, each with its dims: both shapes are taken (the loop's two nearest).
  ASSERT_TRUE(util::write_file_atomic(dir_ / "far.csv", "index,A,B,KOPT_VECTORIZED_ACCESS,status,median_ms\n0,1,2,1,ok,0.6\n").ok());
  auto r = kopt({"--table", table, "--dims", "N=1024", "--warm-from", (dir_ / "far.csv").string(), "--warm-from", old,
                 "--warm-from-dims", "N=65536", "--warm-from-dims", "N=4096", "--runs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto near = r.stdout_text.find("A=4,B=2,KOPT_VECTORIZED_ACCESS=1  (warm start: 1st fastest at N=4096");
  const auto far = r.stdout_text.find("A=1,B=2,KOPT_VECTORIZED_ACCESS=1  (warm start: 1st fastest at N=65536");
  EXPECT_NE(near, std::string::npos) << r.stdout_text;
  EXPECT_NE(far, std::string::npos) << r.stdout_text;
  EXPECT_LT(near, far) << "the nearest shape first";
}

}  // namespace
}  // namespace kopt::cli

namespace kopt::cli {
namespace {

// `kopt __search-replay` on a stored H200 table (tests/data/perf/TABLE) of an example's space with these extra
// arguments: its JSON summary.
util::Json replay_table(const std::string& tag, const std::string& example, const std::string& table,
                        std::vector<std::string> extra, std::string* output, util::Json* runs = nullptr) {
  const auto dir = std::filesystem::temp_directory_path() / ("kopt-replay-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv = {testing_support::kopt_binary(), "__search-replay", "--kernel",
                                   testing_support::test_data_dir() + "/../../examples/" + example + "/kernel.cu", "--table",
                                   testing_support::test_data_dir() + "/perf/" + table, "--json", (dir / "r.json").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = util::run_process({argv, "", {}, 120});
  *output = r.stdout_text + r.stderr_text;
  auto j = util::read_json(dir / "r.json");
  std::filesystem::remove_all(dir);
  if (runs && j.ok() && j->contains("runs")) *runs = (*j)["runs"];
  EXPECT_EQ(r.exit_code, 0) << *output;
  return j.ok() && j->contains("summary") ? (*j)["summary"] : util::Json::object();
}

util::Json replay_sgemm_table(const std::string& tag, std::vector<std::string> extra, std::string* output) {
  return replay_table(tag, "sgemm_tunable", "h200-2026-11-30/sgemm_tunable_4096_measurements.csv", std::move(extra), output);
}

// The real table: all 496 configurations of examples/sgemm_tunable measured at 4096^3 on the H200
// (scripts/perf/search_efficiency.sh, 2026-11-30; tests/data/perf/h200-2026-11-30/). The issue's target:
// within 3% of the best in at most 20% of the space's evaluations. The built-in loop must meet it in every
// run, and beat uniform random search's mean (55.2 evaluations here) at the median.
TEST(CmdSearchReplayH200, TheBuiltinLoopMeetsTheSearchTargetOnTheMeasuredSgemmSpace) {
  std::string out;
  auto s = replay_sgemm_table("h200", {"--runs", "50", "--iterations", "124", "--within", "3", "--target-share", "20"}, &out);
  EXPECT_EQ(s["space_size"], 496);
  EXPECT_EQ(s["good"], 8);
  EXPECT_EQ(s["reached_within_target"], 50) << out;
  ASSERT_TRUE(s["max_evaluations"].is_number()) << out;
  EXPECT_LE(s["max_evaluations"].get<int>(), s["target_evaluations"].get<int>());
  EXPECT_LT(s["median_evaluations"].get<double>(), s["random_mean_evaluations"].get<double>());
}

// The live H200 runs of 2026-12-01 (check15) found a seed that never got within 3% in its 34 candidates: a method
// the ablation proved at the iteration-1 champion (cp_async_pipeline) was pinned on, and it costs 27% once
// vectorized_access is on. With one candidate a batch chosen with the pins released, and the ablations' variants
// learnt from, no seed of 200 needs more than 41 evaluations (the budget of a 68.5 s live run at 1.7 s each;
// before: 15 of 200 seeds needed 71-88).
TEST(CmdSearchReplayH200, NoSeedStaysBehindAPinnedMethod) {
  std::string out;
  auto s = replay_sgemm_table("pins", {"--runs", "200"}, &out);
  EXPECT_EQ(s["reached"], 200) << out;
  ASSERT_TRUE(s["max_evaluations"].is_number()) << out;
  EXPECT_LE(s["max_evaluations"].get<int>(), 41) << out;
}

// The live loop offers the compiler-flag methods too (l1_cache_loads, l1_bypass_loads, register_cap, sm90a_target): 72
// flag combinations a configuration. --flag-methods neutral replays over that space, each flag changing no time: the
// live space's size without its flags' (unmeasured) effects. With every method's evidence firing, its tail is what the
// live sgemm seeds showed (2026-12-06: 7 of 13 live seeds past 40 s; this replay, 50 seeds: 43 within 26 evaluations,
// 7 at 38 or more, one never; with no evidence at most 33: docs/SEARCH.md).
TEST(CmdSearchReplayH200, NeutralFlagMethodsReplayTheLiveSpacesSize) {
  std::string out;
  auto s = replay_sgemm_table("flags", {"--runs", "4", "--flag-methods", "neutral"}, &out);
  EXPECT_EQ(s["space_size"], 496 * 72) << out;
  EXPECT_EQ(s["good"], 8 * 72) << out;
  EXPECT_NE(out.find("KOPT_REGISTER_CAP"), std::string::npos) << out;
  auto bad = util::run_process(
      {{testing_support::kopt_binary(), "__search-replay", "--kernel",
        testing_support::test_data_dir() + "/../../examples/sgemm_tunable/kernel.cu", "--table",
        testing_support::test_data_dir() + "/perf/h200-2026-11-30/sgemm_tunable_4096_measurements.csv", "--flag-methods", "some"},
       "",
       {},
       60});
  EXPECT_EQ(bad.exit_code, 4) << bad.stderr_text;
  EXPECT_NE(bad.stderr_text.find("--flag-methods must be off or neutral"), std::string::npos) << bad.stderr_text;
}

// The live loop ablates the new champion's parameters too (each reverted alone to the baseline's value: issue 37) and
// promotes a faster variant; --param-ablation replays that. Over the live space's size with every method's evidence
// firing (session 33, 50 seeds): every seed reaches within 3%, 45 by evaluation 27 (p90 27, max 134), against 49 of
// 50 and a p90 of 62 with methods alone; the ablation builds double (6.6 -> 13.2 a run, not counted as evaluations).
TEST(CmdSearchReplayH200, ParameterAblationAsTheLiveLoopDoesIt) {
  std::string out_off, out_on;
  auto off = replay_sgemm_table("pa_off", {"--runs", "50", "--flag-methods", "neutral"}, &out_off);
  auto on = replay_sgemm_table("pa_on", {"--runs", "50", "--flag-methods", "neutral", "--param-ablation"}, &out_on);
  EXPECT_NE(out_on.find("methods and parameters"), std::string::npos) << out_on;
  EXPECT_NE(out_off.find("methods only"), std::string::npos) << out_off;
  EXPECT_EQ(on["reached"], 50) << out_on;
  ASSERT_TRUE(on["p90_evaluations"].is_number() && off["p90_evaluations"].is_number()) << out_on << out_off;
  EXPECT_LE(on["p90_evaluations"].get<int>(), 27) << out_on;
  EXPECT_LT(on["p90_evaluations"].get<int>(), off["p90_evaluations"].get<int>()) << out_on << out_off;
  EXPECT_EQ(on["median_evaluations"], off["median_evaluations"]) << "the first iterations are the same";
}

// The other two spaces of issue 16, swept on the H200 on 2026-12-02 (tests/data/perf/h200-2026-12-02): a live run
// with a budget of 25% of the sweep's wall (14 s) has time for two iterations of 12 at most, so every replayed seed
// must get within 3% of the best within 24 evaluations. Their good points are two or three methods away from the
// kernels' defaults; with the picks held on across the first design (docs/SEARCH.md, "The picks' design") nearly
// every seed gets there in the first batch (the baseline and 12 candidates): 48-49 of these 50, 197-198 of 200.
// With one-step moves from the defaults it was 3 and 18 of 100 (median 15-16 and 14 evaluations).
TEST(CmdSearchReplayH200, TransposeAndReductionAreReachedInTheFirstIteration) {
  for (const auto& [example, table, good] : {std::tuple<std::string, std::string, int>{"transpose", "transpose_8192_measurements.csv", 4},
                                             {"reduction", "reduction_2e26_measurements.csv", 16}}) {
    std::string out;
    util::Json runs;
    auto s = replay_table(example, example, "h200-2026-12-02/" + table, {"--runs", "50"}, &out, &runs);
    EXPECT_EQ(s["good"], good) << example;
    EXPECT_EQ(s["reached"], 50) << example << "\n" << out;
    ASSERT_TRUE(s["max_evaluations"].is_number()) << out;
    EXPECT_LE(s["max_evaluations"].get<int>(), 24) << example << "\n" << out;
    EXPECT_LE(s["median_evaluations"].get<int>(), 8) << example << "\n" << out;
    int first_batch = 0;
    ASSERT_TRUE(runs.is_array()) << out;
    for (const auto& r : runs)
      if (r["hit_iteration"].is_number() && r["hit_iteration"].get<int>() <= 1) ++first_batch;
    EXPECT_EQ(s["reached_first_iteration"], first_batch);
    EXPECT_GE(first_batch, 45) << example << ": seeds within 3% in the first batch\n" << out;
  }
}

// The reduction's live profile on the H200 picked none of its declared methods (only the register_cap flag;
// docs/history/PERFORMANCE-2026-11-30-to-2026-12-02.md §6, tenth session): the first batch is then spread over the whole space, methods included,
// instead of moving one parameter at a time from the defaults (55 of 200 seeds in the first batch; now 115 of 200).
TEST(CmdSearchReplayH200, ADeclaredSpaceWithNoMethodPickedIsSpreadOverFromTheFirstBatch) {
  std::string out;
  util::Json runs;
  auto s = replay_table("reduction", "reduction", "h200-2026-12-02/reduction_2e26_measurements.csv",
                        {"--runs", "50", "--evidence", "none"}, &out, &runs);
  EXPECT_EQ(s["reached"], 50) << out;
  EXPECT_LE(s["median_evaluations"].get<int>(), 11) << out;
  EXPECT_GE(s["reached_first_iteration"].get<int>(), 25) << out;  // 31 of 50; the one-step start: 14 of 50
  EXPECT_NE(out.find("nothing picked"), std::string::npos) << out;
}

// The warm start on the stored sgemm table, from itself at other dims (a smoke test of the figure of docs/DATABASE.md
// "Measured by replay"; the real one warm-starts from another shape's table): its first point is the table's best,
// so every run is within 3% at evaluation 2, where from scratch takes more.
TEST(CmdSearchReplayH200, TheSgemmTableWarmStartedFromItselfAtOtherDimsHitsAtEvaluationTwo) {
  const std::string table = testing_support::test_data_dir() + "/perf/h200-2026-11-30/sgemm_tunable_4096_measurements.csv";
  std::string out;
  util::Json runs;
  auto warm = replay_table("warm", "sgemm_tunable", "h200-2026-11-30/sgemm_tunable_4096_measurements.csv",
                           {"--runs", "5", "--dims", "M=2048,N=2048,K=2048", "--warm-from", table, "--warm-from-dims",
                            "M=4096,N=4096,K=4096"},
                           &out, &runs);
  EXPECT_NE(out.find("BM=128,BN=128,BK=8,TM=8,TN=8,STAGES=2,KOPT_VECTORIZED_ACCESS=1,KOPT_CP_ASYNC_PIPELINE=0,KOPT_SMEM_PADDING=0  "
                     "(warm start: 1st fastest at K=4096,M=4096,N=4096"),
            std::string::npos) << out;
  EXPECT_EQ(warm["median_evaluations"], 2) << out;
  EXPECT_EQ(warm["max_evaluations"], 2) << out;
  for (const auto& r : runs) EXPECT_TRUE(r["hit_suggested"].get<bool>());
  auto scratch = replay_sgemm_table("scratch", {"--runs", "5"}, &out);
  EXPECT_GT(scratch["median_evaluations"].get<int>(), 2) << out;
}

}  // namespace
}  // namespace kopt::cli
