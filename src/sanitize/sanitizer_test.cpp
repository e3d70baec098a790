#include "sanitize/sanitizer.h"

#include <gtest/gtest.h>

#include "util/json_io.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

namespace kopt::sanitize {

namespace {

// Answers each tool with a canned console output and exit code, and records the argv it was given.
class FakeSanitizer : public util::CommandRunner {
 public:
  std::map<std::string, std::pair<std::string, int>> by_tool;
  std::vector<std::vector<std::string>> calls;
  std::vector<std::map<std::string, std::string>> envs;
  util::ProcessResult run(const util::ProcessSpec& spec) override {
    calls.push_back(spec.argv);
    envs.push_back(spec.env);
    util::ProcessResult r;
    r.started = true;
    r.wall_ms = 1500;
    std::string tool = spec.argv.size() > 2 ? spec.argv[2] : "";
    auto it = by_tool.find(tool);
    if (it == by_tool.end()) {
      r.timed_out = true;
      return r;
    }
    r.stdout_text = it->second.first;
    r.exit_code = it->second.second;
    return r;
  }
};

const char* kClean = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n";
const char* kRace =
    "========= COMPUTE-SANITIZER\n"
    "========= Error: Race reported between Write access at racy(float *)+0x100 in k.cu:14\n"
    "=========     and Read access at racy(float *)+0x160 in k.cu:16 [28 hazards]\n"
    "=========\n"
    "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
const char* kUninit =
    "========= Uninitialized __global__ memory read of size 4 bytes\n"
    "=========     at acc(float *)+0x70 in k.cu:9\n"
    "=========\n"
    "========= ERROR SUMMARY: 1 error\n";
const std::vector<std::string> kTarget = {"/x/kopt", "__runner", "--lib", "k.so", "--golden", "g", "--out", "r.json", "--mode", "check"};

}  // namespace

TEST(SanitizerGate, TheSharedMemoryFillRejectsWrongOutputsAndDecidesNothingWithoutAResult) {
  util::ProcessResult p;
  p.started = true;
  p.exit_code = 0;
  EXPECT_EQ(interpret_fill(p, util::Json{{"status", "ok"}}).outcome, FillOutcome::kClean);
  auto wrong = interpret_fill(p, util::Json{{"status", "wrong_result"}, {"message", "output y: MISMATCH 7/1000 elements"}});
  EXPECT_EQ(wrong.outcome, FillOutcome::kWrong);
  EXPECT_EQ(interpret_fill(p, util::Json{{"status", "unwritten_output"}}).outcome, FillOutcome::kWrong);
  EXPECT_EQ(interpret_fill(p, util::Json{{"status", "cuda_error"}}).outcome, FillOutcome::kError);
  auto none = interpret_fill(p, std::nullopt);
  EXPECT_EQ(none.outcome, FillOutcome::kError);
  EXPECT_NE(none.message.find("no result"), std::string::npos);

  Verdict clean = judge({});
  add_fill(clean, interpret_fill(p, util::Json{{"status", "ok"}}));
  EXPECT_FALSE(clean.rejected);
  EXPECT_TRUE(clean.reported.empty());
  Verdict v = judge({});
  add_fill(v, wrong);
  EXPECT_TRUE(v.rejected);
  EXPECT_NE(v.reason.find("0xffffffff"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("MISMATCH 7/1000"), std::string::npos) << v.reason;
  EXPECT_EQ(to_json(v)["smem_fill"]["outcome"], "wrong");
  Verdict e = judge({});
  add_fill(e, none);
  EXPECT_FALSE(e.rejected);
  ASSERT_EQ(e.reported.size(), 1u);
}

TEST(SanitizerGate, TheFillRunsTheCheckChildOnceMoreAndReadsItsResult) {
  FakeSanitizer fake;
  fake.by_tool["memcheck"] = {kClean, 0};
  const auto dir = std::filesystem::temp_directory_path() / ("kopt_fill_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Request req;
  req.sanitizer = "compute-sanitizer";
  req.tools = {Tool::kMemcheck};
  req.target_argv = kTarget;
  req.fill_argv = kTarget;
  req.fill_argv.insert(req.fill_argv.end(), {"--smem-fill", kFillPattern});
  req.fill_result = (dir / "fill.json").string();
  // A stale result from an earlier run must not count: the gate removes it first, and the fake child writes none.
  ASSERT_TRUE(util::write_json_atomic(req.fill_result, "runner_result", util::Json{{"status", "ok"}}).ok());
  auto v = run_gate(req, fake);
  ASSERT_EQ(fake.calls.size(), 2u);
  EXPECT_EQ(fake.calls.back().back(), "0xffffffff");
  EXPECT_EQ(v.fill.outcome, FillOutcome::kError) << "no result file: decided nothing";
  std::filesystem::remove_all(dir);
}

TEST(SanitizerGate, PolicyDecidesWhoIsSanitized) {
  EXPECT_TRUE(should_sanitize(Policy::kFinalists, Role::kBaseline));
  EXPECT_TRUE(should_sanitize(Policy::kFinalists, Role::kFinalist));
  EXPECT_FALSE(should_sanitize(Policy::kFinalists, Role::kCandidate));
  EXPECT_TRUE(should_sanitize(Policy::kAll, Role::kCandidate));
  EXPECT_FALSE(should_sanitize(Policy::kOff, Role::kBaseline));
  EXPECT_EQ(parse_policy("finalists"), Policy::kFinalists);
  EXPECT_EQ(parse_policy("off"), Policy::kOff);
  EXPECT_FALSE(parse_policy("some"));
}

TEST(SanitizerGate, ArgvWrapsTheMeasuringChild) {
  auto a = sanitizer_argv("/usr/local/cuda/bin/compute-sanitizer", Tool::kRacecheck, kTarget);
  std::vector<std::string> head = {"/usr/local/cuda/bin/compute-sanitizer", "--tool", "racecheck", "--print-limit", "100",
                                   "--error-exitcode", "99", "--show-backtrace", "no"};
  ASSERT_EQ(a.size(), head.size() + kTarget.size());
  EXPECT_TRUE(std::equal(head.begin(), head.end(), a.begin()));
  EXPECT_EQ(a[head.size()], "/x/kopt");
  EXPECT_EQ(std::find(a.begin(), a.end(), "--racecheck-report"), a.end());  // the default analysis mode
}

TEST(SanitizerGate, ARaceRejectsAndMakesTheRunUnsafe) {
  FakeSanitizer fake;
  fake.by_tool = {{"memcheck", {kClean, 0}}, {"racecheck", {kRace, 99}}, {"synccheck", {kClean, 0}}, {"initcheck", {kUninit, 99}}};
  auto v = run_gate({"cs", kTarget, {Tool::kMemcheck, Tool::kRacecheck, Tool::kSynccheck, Tool::kInitcheck}, 300}, fake);
  ASSERT_EQ(fake.calls.size(), 4u);
  // The measuring child under a tool checks on the host: the runner's own compare kernels are never reported.
  for (const auto& env : fake.envs) EXPECT_EQ(env.count("KOPT_GOLDEN_GPU_MB") ? env.at("KOPT_GOLDEN_GPU_MB") : "", "0");
  EXPECT_TRUE(v.rejected);
  EXPECT_EQ(v.race_safe, RaceSafe::kUnsafe);
  EXPECT_TRUE(v.complete());
  EXPECT_NE(v.reason.find("racecheck: shared-memory race hazard (Write/Read) in racy at k.cu:14 (28 times)"), std::string::npos)
      << v.reason;
  ASSERT_EQ(v.reported.size(), 1u);  // the uninitialised read: reported, not rejecting
  EXPECT_NE(v.reported[0].find("initcheck"), std::string::npos);
  EXPECT_EQ(v.runs[1].outcome, RunOutcome::kFindings);
  EXPECT_EQ(v.runs[0].outcome, RunOutcome::kClean);
  auto j = to_json(v);
  EXPECT_EQ(j["race_safe"], "unsafe");
  EXPECT_EQ(j["runs"][1]["report"]["findings"][0]["kind"], "race_hazard");
}

TEST(SanitizerGate, CleanToolsAreSafeAndAMissingOrHungToolIsUnknown) {
  FakeSanitizer fake;
  fake.by_tool = {{"memcheck", {kClean, 0}}, {"racecheck", {kClean, 0}}, {"synccheck", {kClean, 0}}, {"initcheck", {kClean, 0}}};
  auto clean = run_gate({"cs", kTarget}, fake);
  EXPECT_FALSE(clean.rejected);
  EXPECT_EQ(clean.race_safe, RaceSafe::kSafe);
  EXPECT_TRUE(clean.complete());

  FakeSanitizer hung;  // racecheck times out (no canned answer)
  hung.by_tool = {{"memcheck", {kClean, 0}}};
  auto h = run_gate({"cs", kTarget, {Tool::kMemcheck, Tool::kRacecheck}, 60}, hung);
  EXPECT_FALSE(h.rejected);
  EXPECT_EQ(h.race_safe, RaceSafe::kUnknown);
  EXPECT_FALSE(h.complete());
  EXPECT_EQ(h.runs[1].outcome, RunOutcome::kTimedOut);

  FakeSanitizer unused;
  auto none = run_gate({"", kTarget}, unused);  // no compute-sanitizer
  EXPECT_TRUE(unused.calls.empty());
  EXPECT_EQ(none.race_safe, RaceSafe::kUnknown);
  EXPECT_FALSE(none.rejected);
  EXPECT_NE(none.runs[0].message.find("compute-sanitizer not found"), std::string::npos);
}

// The SystemLab runs the four tools and the fill at once (Request::concurrent): the same verdict, each tool's child
// with its own result file, in the time of the slowest.
TEST(SanitizerGate, ConcurrentToolsGiveTheSameVerdictEachWithItsOwnResultFile) {
  class SlowFake : public FakeSanitizer {
   public:
    std::mutex mu;
    util::ProcessResult run(const util::ProcessSpec& spec) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::lock_guard<std::mutex> lock(mu);
      if (!spec.argv.empty() && spec.argv[0] == "fill") {
        calls.push_back(spec.argv);
        util::ProcessResult r;
        r.started = true;
        return r;
      }
      return FakeSanitizer::run(spec);
    }
  };
  SlowFake fake;
  fake.by_tool = {{"memcheck", {kClean, 0}}, {"racecheck", {kRace, 99}}, {"synccheck", {kClean, 0}}, {"initcheck", {kUninit, 99}}};
  Request req{"cs", kTarget, {Tool::kMemcheck, Tool::kRacecheck, Tool::kSynccheck, Tool::kInitcheck}, 300};
  req.fill_argv = {"fill", "--out", "fill.json"};
  req.fill_result = (std::filesystem::temp_directory_path() / "kopt_no_such_fill_result.json").string();
  req.concurrent = true;
  auto t0 = std::chrono::steady_clock::now();
  auto v = run_gate(req, fake);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 1.0) << "five 0.3 s children at once, not one after another (1.5 s)";
  ASSERT_EQ(fake.calls.size(), 5u);
  EXPECT_TRUE(v.rejected);
  EXPECT_EQ(v.race_safe, RaceSafe::kUnsafe);
  ASSERT_EQ(v.runs.size(), 4u);
  EXPECT_EQ(v.runs[1].tool, Tool::kRacecheck);  // in the tools' order, whichever finished first
  EXPECT_EQ(v.runs[1].outcome, RunOutcome::kFindings);
  EXPECT_EQ(v.fill.outcome, FillOutcome::kError) << "the fake fill wrote no result";
  std::set<std::string> outs;
  for (const auto& c : fake.calls)
    for (size_t i = 0; i + 1 < c.size(); ++i)
      if (c[i] == "--out") outs.insert(c[i + 1]);
  EXPECT_EQ(outs, (std::set<std::string>{"r_memcheck.json", "r_racecheck.json", "r_synccheck.json", "r_initcheck.json", "fill.json"}));
}

TEST(SanitizerGate, OutputWithoutASummaryIsAToolError) {
  util::ProcessResult p;
  p.started = true;
  p.exit_code = 1;
  p.stdout_text = "========= COMPUTE-SANITIZER\n========= Error: Target application terminated before first instrumented API call\n";
  auto r = interpret(Tool::kMemcheck, p);
  EXPECT_EQ(r.outcome, RunOutcome::kToolError);
  EXPECT_NE(r.message.find("without its summary"), std::string::npos);
  util::ProcessResult not_started;
  EXPECT_EQ(interpret(Tool::kMemcheck, not_started).outcome, RunOutcome::kToolError);
}

TEST(SanitizerGate, SmallCaseAndTimeout) {
  auto model = workload::model_from_manifest(util::Json::parse(R"({"dims": {"M": 4096, "N": 4096, "K": 4096},
    "buffers": [{"name": "A", "dtype": "float32", "shape": [4096, 4096], "shape_source": "shapes", "shape_expr": ["M", "K"]},
                {"name": "C", "dtype": "float32", "shape": [4096, 4096], "shape_source": "shapes", "shape_expr": ["M", "N"]}]})"));
  ASSERT_TRUE(model);
  auto d = sanitize_dims(*model, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  ASSERT_TRUE(d);
  auto ws = workload::estimate(*model, *d);
  ASSERT_TRUE(ws);
  EXPECT_LE(ws->bytes, kSanitizeWorkingSetBytes);
  EXPECT_EQ(d->at("M") % 256, 0);  // the user's alignment kept
  EXPECT_EQ(d->at("M"), 512);      // 2 x 512^2 x 4 B = 2 MiB; 768 would be 4.5 MiB
  EXPECT_DOUBLE_EQ(sanitize_timeout_s(0), 120);
  EXPECT_DOUBLE_EQ(sanitize_timeout_s(3000), 420);
  EXPECT_DOUBLE_EQ(sanitize_timeout_s(1e7), 1800);
}

}  // namespace kopt::sanitize
