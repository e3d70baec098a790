#include "runner/triton_child.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kopt::runner {
namespace {

// The value after `flag` in argv, or "" when the flag is absent.
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

RunRequest triton_request() {
  RunRequest req;
  req.triton_kernel = "/k/kernel.py";
  req.golden_dir = "/run/golden";
  req.result_json = "/run/result.json";
  req.mode = RunMode::kTime;
  req.triton_configs = {util::Json{{"BLOCK_SIZE", 1024}, {"num_warps", 8}}};
  req.tol = Tolerance{1e-8, 1e-7};
  req.max_time_s = 2.5;
  return req;
}

TEST(TritonChild, ArgvRunsTheHarnessThroughEnvWithItsPythonPath) {
  auto argv = triton_child_argv(triton_request(), "/usr/bin/python3", "/opt/kopt/python", "/user/site");
  ASSERT_GE(argv.size(), 7u);
  EXPECT_EQ(argv[0], "env");
  EXPECT_EQ(argv[1], "PYTHONPATH=/opt/kopt/python:/user/site");  // the user's path stays (triton may live there)
  EXPECT_EQ(argv[2], "PYTHONUNBUFFERED=1");
  EXPECT_EQ(std::vector<std::string>(argv.begin() + 3, argv.begin() + 7),
            (std::vector<std::string>{"/usr/bin/python3", "-m", "kopt_harness.fork_client", "triton-run"}));
  EXPECT_EQ(after(argv, "--kernel"), "/k/kernel.py");
  EXPECT_EQ(after(argv, "--golden"), "/run/golden");
  EXPECT_EQ(after(argv, "--out"), "/run/result.json");
  EXPECT_EQ(after(argv, "--mode"), "time");
  EXPECT_EQ(after(argv, "--config"), R"({"BLOCK_SIZE":1024,"num_warps":8})");
  EXPECT_EQ(after(argv, "--max-time-s"), "2.5");
  // Tolerances keep every digit: std::to_string would print 1e-8 as 0.000000.
  EXPECT_EQ(std::stod(after(argv, "--atol")), 1e-8);
  EXPECT_EQ(std::stod(after(argv, "--rtol")), 1e-7);
  EXPECT_EQ(after(argv, "--dump-cubin"), "");
  EXPECT_EQ(after(argv, "--dims"), "");
  EXPECT_EQ(after(argv, "--triton-cache"), "");  // Triton's own cache (or a fresh one where cubins are dumped)
}

// A candidate compiled before it is measured: its compile-mode child and its measuring child name the same cache
// folder, absolute (the children run in the harness's working folder, not kopt's).
TEST(TritonChild, TheCandidatesTritonCacheIsPassedAbsoluteInEveryMode) {
  auto req = triton_request();
  req.triton_cache_dir = "run/iter_01/candidates/i1c1/triton_cache";
  for (RunMode mode : {RunMode::kCompile, RunMode::kTime}) {
    req.mode = mode;
    const auto argv = triton_child_argv(req, "python3", "/h");
    EXPECT_EQ(after(argv, "--triton-cache"), std::filesystem::absolute(req.triton_cache_dir).string()) << run_mode_name(mode);
    EXPECT_TRUE(std::filesystem::path(after(argv, "--triton-cache")).is_absolute());
  }
}

TEST(TritonChild, PairedPassesOneConfigPerSlotAndCompileModePassesDims) {
  auto req = triton_request();
  req.mode = RunMode::kPaired;
  req.triton_configs = {util::Json{{"A", 1}}, util::Json{{"A", 2}}, util::Json::object()};
  auto argv = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--config"), 3);
  EXPECT_EQ(argv[1], "PYTHONPATH=/h");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "{}"), argv.end());

  req.mode = RunMode::kCompile;
  req.triton_dims = {{"n_rows", 64}, {"n_cols", 128}};
  req.dump_cubin_dir = "/run/cubins";
  auto c = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(after(c, "--dims"), R"({"n_cols":128,"n_rows":64})");
  EXPECT_EQ(after(c, "--golden"), "");
  EXPECT_EQ(after(c, "--dump-cubin"), "/run/cubins");
}

// Measuring goes through the fork server's client; a profiled run starts the harness itself, because ncu
// profiles the processes it starts, and a fork server's child is not one of them.
TEST(TritonChild, OnlyTheProfiledRunBypassesTheForkServer) {
  auto req = triton_request();
  for (RunMode mode : {RunMode::kCheck, RunMode::kTime, RunMode::kPaired, RunMode::kCompile}) {
    req.mode = mode;
    auto argv = triton_child_argv(req, "python3", "/h");
    EXPECT_EQ(argv[5], "kopt_harness.fork_client") << run_mode_name(mode);
  }
  req.mode = RunMode::kProfile;
  EXPECT_EQ(triton_child_argv(req, "python3", "/h")[5], "kopt_harness");
}

// The process that imports the kernel starts kopt's judge and seals itself (python/kopt_harness/sealed.py): kopt's
// executable reaches it as KOPT_EXE, in every mode, before the interpreter's name (an environment assignment).
TEST(TritonChild, KoptsExecutableReachesTheHarnessForTheJudge) {
  auto req = triton_request();
  for (RunMode mode : {RunMode::kCheck, RunMode::kTime, RunMode::kPaired, RunMode::kProfile}) {
    req.mode = mode;
    auto argv = triton_child_argv(req, "/usr/bin/python3", "/h", "", "/opt/kopt/bin/kopt");
    auto at = std::find(argv.begin(), argv.end(), "KOPT_EXE=/opt/kopt/bin/kopt");
    auto py = std::find(argv.begin(), argv.end(), "/usr/bin/python3");
    ASSERT_NE(at, argv.end()) << run_mode_name(mode);
    EXPECT_LT(at, py) << "an assignment for env, before the command";
    EXPECT_EQ(*(py + 3), "triton-run");
  }
  auto plain = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(std::count_if(plain.begin(), plain.end(), [](const std::string& a) { return a.rfind("KOPT_EXE=", 0) == 0; }), 0);
}

// The ephemeral seed's memfd (a one-shot check run): named on the harness's command line, where the process that
// imports the kernel takes it (directly, or through the fork server's client); absent unless given.
TEST(TritonChild, TheEphemeralSeedsDescriptorIsNamedOnlyWhenGiven) {
  auto req = triton_request();
  req.mode = RunMode::kCheck;
  auto plain = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "--ephemeral-fd"), plain.end());
  req.ephemeral_fd = 9;
  auto argv = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(after(argv, "--ephemeral-fd"), "9");
  EXPECT_EQ(argv[5], "kopt_harness.fork_client");
  EXPECT_EQ(after(child_argv(req, "/bin/kopt"), "--ephemeral-fd"), "9");
}

// The other cases' golden data go to a timed run only, one --also-check each, in the order given.
TEST(TritonChild, TheOtherCasesAreNamedForATimedRunOnly) {
  auto req = triton_request();
  req.mode = RunMode::kTime;
  req.also_check = {"/run/golden_cases/scale_0.75", "/run/golden_cases/scale_0.5"};
  auto argv = triton_child_argv(req, "python3", "/h");
  std::vector<std::string> named;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--also-check") named.push_back(argv[i + 1]);
  EXPECT_EQ(named, (std::vector<std::string>{"/run/golden_cases/scale_0.75", "/run/golden_cases/scale_0.5"}));
  req.mode = RunMode::kCheck;
  auto check = triton_child_argv(req, "python3", "/h");
  EXPECT_EQ(std::find(check.begin(), check.end(), "--also-check"), check.end());
}

TEST(TritonChild, ChildArgvDispatchesOnTheTritonKernel) {
  auto req = triton_request();
  auto argv = child_argv(req, "/bin/kopt");
  EXPECT_EQ(argv.front(), "env");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "triton-run"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "KOPT_EXE=/bin/kopt"), argv.end()) << "the judge's executable";
  req.triton_kernel.clear();
  req.libs = {"/b/kernel.so"};
  auto cuda = child_argv(req, "/bin/kopt");
  EXPECT_EQ(cuda[0], "/bin/kopt");
  EXPECT_EQ(cuda[1], "__runner");
}

}  // namespace
}  // namespace kopt::runner
