#include "loop/optimize.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "device/gpu_info.h"
#include "loop/decisions.h"
#include "search/replay.h"
#include "testing/test_support.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::loop {

namespace fs = std::filesystem;

TEST(OptimizeOptions, RoundTripThroughOptionsJson) {
  OptimizeOptions o;
  o.job.kernel = "/x/k.cu";
  o.job.ref = "/x/ref.py";
  o.job.dims = {{"M", 64}, {"N", 32}};
  o.job.numerics = search::NumericsMode::kStrict;
  o.job.atol = 1e-3;
  o.iterations = 5;
  o.branches = 6;
  o.generator = {GeneratorKind::kCommand, "python3 agent.py"};
  o.near_peak_efficiency = 0.95;
  auto back = options_from_json(options_to_json(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->job.dims.at("M"), 64);
  EXPECT_EQ(back->job.numerics, search::NumericsMode::kStrict);
  EXPECT_DOUBLE_EQ(*back->job.atol, 1e-3);
  EXPECT_FALSE(back->job.rtol);
  EXPECT_EQ(back->iterations, 5);
  EXPECT_EQ(back->branches, 6);
  EXPECT_EQ(back->generator, (GeneratorChoice{GeneratorKind::kCommand, "python3 agent.py"}));
  EXPECT_DOUBLE_EQ(back->near_peak_efficiency, 0.95);  // a resumed run keeps the user's threshold
  EXPECT_FALSE(options_from_json({{"kernel", 1}}).ok());
}

TEST(OptimizeGates, WithoutAGpuTheHardwareGateStopsTheRunBeforeAnyRunDirectory) {
  if (device::query_gpus().ok()) GTEST_SKIP() << "this machine has a GPU";
  fs::path out = fs::path(::testing::TempDir()) / ("kopt_opt_gate_" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string root = fs::path(testing_support::test_data_dir()).parent_path().parent_path().string();
  auto r = util::run_process({{testing_support::kopt_binary(), "optimize", root + "/examples/vector_add/kernel.cu", "--ref",
                               root + "/examples/vector_add/ref.py", "--n=4096", "--out-dir", out.string()},
                              "", {}, 300});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("stopped at the hardware gate: missing or broken: "), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("gpu"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("no run directory was made"), std::string::npos) << r.stderr_text;
  EXPECT_FALSE(fs::exists(out / "kopt_runs")) << "a try without a GPU leaves nothing behind";
  fs::remove_all(out);
}

TEST(OptimizeInputs, BadInputsFailBeforeAnyGpuWork) {
  std::string root = fs::path(testing_support::test_data_dir()).parent_path().parent_path().string();
  auto r = util::run_process({{testing_support::kopt_binary(), "optimize", root + "/examples/vector_add/kernel.cu", "--ref",
                               "/nonexistent/ref.py", "--n=4096"}, "", {}, 60});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("reference file /nonexistent/ref.py not found"), std::string::npos) << r.stderr_text;
  auto bad_mode = util::run_process({{testing_support::kopt_binary(), "optimize", root + "/examples/vector_add/kernel.cu", "--ref",
                                      root + "/examples/vector_add/ref.py", "--n=4096", "--numerics-mode", "loose"}, "", {}, 60});
  EXPECT_EQ(bad_mode.exit_code, 4);
  EXPECT_NE(bad_mode.stderr_text.find("--numerics-mode"), std::string::npos);
  auto resume = util::run_process({{testing_support::kopt_binary(), "optimize", "--resume", "/nonexistent/run"}, "", {}, 60});
  EXPECT_EQ(resume.exit_code, 4);
  EXPECT_NE(resume.stderr_text.find("not a run directory"), std::string::npos);
}

}  // namespace kopt::loop

namespace kopt::loop {
namespace {

TEST(OptimizeOptions, DurationsReadAsACommandLineWritesThem) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("300"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("5m"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*parse_duration_s("0"), 0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("none"), 0);
  for (const char* bad : {"", "abc", "5 m", "-3", "5d", "m"}) {
    auto r = parse_duration_s(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ExitCode::kInput);
    EXPECT_NE(r.error().message.find("5m"), std::string::npos) << "the message shows how to write one";
  }
}

TEST(OptimizeOptions, GeneratorNamesAreKindsAndAnyOtherTextIsACommand) {
  for (auto k : {GeneratorKind::kBuiltin, GeneratorKind::kLlm, GeneratorKind::kManual}) {
    auto back = parse_generator(generator_text({k, ""}));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->kind, k);
  }
  EXPECT_EQ(generator_text({}), "builtin") << "the default";
  auto cmd = parse_generator("python3 agent.py --fast");
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->kind, GeneratorKind::kCommand);
  EXPECT_EQ(cmd->command, "python3 agent.py --fast");
  EXPECT_EQ(generator_text(*cmd), "python3 agent.py --fast");
  EXPECT_FALSE(parse_generator("").ok());
  EXPECT_FALSE(parse_generator("  ").ok());
  OptimizeOptions o;
  o.job.kernel = "/x/k.cu";
  o.job.ref = "/x/ref.py";
  auto j = options_to_json(o);
  EXPECT_EQ(j["generator"], "builtin");
  j["generator"] = "";
  EXPECT_FALSE(options_from_json(j).ok()) << "options.json names no generator";
}

// The search's replay (kopt __search-replay) runs as optimize does with the built-in generator: its defaults are those
// of the loop, not a copy that could drift.
TEST(OptimizeOptions, TheReplaysDefaultsAreTheLoops) {
  const search::ReplayOptions replay;
  EXPECT_EQ(replay.branches, kAutoBranchesBuiltin);
  EXPECT_EQ(replay.explore_patience, StopState::kExplorePatience);
  EXPECT_EQ(replay.first_seed, OptimizeOptions{}.seed);
}

TEST(OptimizeOptions, AutoBranchesAndPatienceDependOnTheGenerator) {
  OptimizeOptions o;
  EXPECT_EQ(branches_for(o), 12) << "docs/SEARCH.md: the replay and the batch model at the H200's costs";
  EXPECT_EQ(patience_for(o), 0) << "the built-in generator's model decides when nothing is left";
  o.generator = {GeneratorKind::kCommand, "python3 agent.py"};
  EXPECT_EQ(branches_for(o), 4);
  EXPECT_EQ(patience_for(o), kAutoPatienceCommand);
  EXPECT_EQ(kAutoPatienceCommand, 2);
  o.branches = 3;
  o.patience = 5;
  EXPECT_EQ(branches_for(o), 3);
  EXPECT_EQ(patience_for(o), 5);
  o.job.kernel = "/x/k.cu";
  o.job.ref = "/x/ref.py";
  EXPECT_DOUBLE_EQ(options_from_json(options_to_json(o))->time_budget_s, 300);
  auto old = options_to_json(o);
  old.erase("time_budget_s");
  EXPECT_DOUBLE_EQ(options_from_json(old)->time_budget_s, 0) << "a run started before budgets existed resumes without one";
}

}  // namespace
}  // namespace kopt::loop
