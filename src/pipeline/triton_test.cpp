#include "pipeline/triton.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "runner/sealed.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/memfd.h"
#include "util/strings.h"

namespace kopt::pipeline {
namespace {

namespace fs = std::filesystem;

fs::path examples_dir() {
  auto found = util::find_upwards(util::executable_dir(), "examples/triton_softmax");
  return found.empty() ? fs::path(testing_support::source_dir()) / "examples" : found.parent_path();
}

search::Annotations annotations_of(const fs::path& kernel) {
  auto text = util::read_file(kernel);
  EXPECT_TRUE(text.ok());
  auto ann = read_triton_kernel(*text, kernel.string());
  EXPECT_TRUE(ann.ok()) << ann.error().message;
  return ann.ok() ? *ann : search::Annotations{};
}

TEST(TritonPipeline, KernelsAreRecognisedByTheirExtension) {
  EXPECT_TRUE(is_triton_kernel("a/kernel.py"));
  EXPECT_FALSE(is_triton_kernel("a/kernel.cu"));
  EXPECT_FALSE(is_triton_kernel("a/py"));
}

TEST(TritonPipeline, ConfigOfACandidateMergesConstexprsAndLaunchOptions) {
  search::Candidate c;
  c.constexprs = {{"BLOCK_M", 64}, {"KOPT_GROUPED_LAUNCH_ORDERING", 1}};
  c.launch = {{"num_warps", 8}, {"num_stages", 3}};
  c.defines = {{"IGNORED", "1"}};  // CUDA-only: not an argument of run_kernel
  EXPECT_EQ(triton_config(c), (util::Json{{"BLOCK_M", 64}, {"KOPT_GROUPED_LAUNCH_ORDERING", 1}, {"num_warps", 8},
                                          {"num_stages", 3}}));
}

TEST(TritonPipeline, BaselineConfigOfTheExamples) {
  auto softmax = triton_baseline_config(annotations_of(examples_dir() / "triton_softmax" / "kernel.py"));
  ASSERT_TRUE(softmax.ok());
  EXPECT_EQ(*softmax, (util::Json{{"BLOCK_SIZE", 4096}, {"num_warps", 8}, {"num_stages", 2}, {"KOPT_PERSISTENT_KERNEL", 0}}));
  auto matmul = triton_baseline_config(annotations_of(examples_dir() / "triton_matmul" / "kernel.py"));
  ASSERT_TRUE(matmul.ok());
  EXPECT_EQ(*matmul, (util::Json{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"GROUP_M", 8}, {"num_warps", 4},
                                 {"num_stages", 3}, {"KOPT_GROUPED_LAUNCH_ORDERING", 0}}));
}

TEST(TritonPipeline, LaunchOptionParamsAreKeyedByTheirKindAndOverridesApply) {
  const char* text = R"(# @kopt param STAGES values=2,3,4 kind=num_stages default=3
# @kopt param W values=4,8 kind=num_warps
# @kopt param BLOCK values=64,128
def setup(*, seed, n):
    pass
def run_kernel(**kw):
    pass
)";
  auto ann = read_triton_kernel(text, "k.py");
  ASSERT_TRUE(ann.ok()) << ann.error().message;
  auto c = triton_baseline_config(*ann, {{"BLOCK", "128"}, {"EXTRA", "-3"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, (util::Json{{"num_stages", 3}, {"num_warps", 4}, {"BLOCK", 128}, {"EXTRA", -3}}));
  auto bad = triton_baseline_config(*ann, {{"BLOCK", "12x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
  EXPECT_NE(bad.error().message.find("must be an integer"), std::string::npos);
}

TEST(TritonPipeline, ReadingAKernelChecksItsEntryPointsAndAnnotations) {
  auto no_run = read_triton_kernel("def setup(*, seed):\n    pass\n", "k.py");
  ASSERT_FALSE(no_run.ok());
  EXPECT_NE(no_run.error().message.find("defines no run_kernel"), std::string::npos);
  auto no_setup = read_triton_kernel("def run_kernel(**kw):\n    pass\n", "k.py");
  ASSERT_FALSE(no_setup.ok());
  EXPECT_NE(no_setup.error().message.find("defines no setup"), std::string::npos);
  auto bad = read_triton_kernel("# @kopt parm X values=1\ndef setup(*, seed):\n    pass\ndef run_kernel(**kw):\n    pass\n", "k.py");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("k.py:1"), std::string::npos) << bad.error().message;
}

TEST(TritonPipeline, BindKernelPointsTheRequestAtTheRightChild) {
  Prepared cuda;
  cuda.build.library = "/b/kernel.so";
  runner::RunRequest a;
  bind_kernel(a, cuda);
  EXPECT_EQ(a.libs, std::vector<fs::path>{"/b/kernel.so"});
  EXPECT_TRUE(a.triton_kernel.empty());
  Prepared tri;
  tri.backend = search::Backend::kTriton;
  tri.kernel = "/k/kernel.py";
  tri.triton_config = {{"BLOCK", 64}};
  runner::RunRequest b;
  b.libs = {"stale.so"};
  bind_kernel(b, tri);
  EXPECT_TRUE(b.libs.empty());
  EXPECT_EQ(b.triton_kernel, "/k/kernel.py");
  EXPECT_EQ(b.triton_configs, (std::vector<util::Json>{util::Json{{"BLOCK", 64}}}));
}

TEST(TritonPipeline, CubinsAreReadFromTheResult) {
  util::Json r = {{"status", "ok"}, {"cubins", {{{"file", "/c/a.cubin"}, {"kernel", "a"}}, {{"file", "/c/b.cubin"}}}}};
  EXPECT_EQ(triton_cubins(r), (std::vector<fs::path>{"/c/a.cubin", "/c/b.cubin"}));
  EXPECT_TRUE(triton_cubins(util::Json{{"status", "ok"}}).empty());
  EXPECT_TRUE(triton_cubins(util::Json::array()).empty());
}

TEST(TritonPipeline, TheInstalledImportsOfACheckAreKeptOnceByTheirContent) {
  const fs::path dir = fs::temp_directory_path() / ("kopt-triton-preload-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  util::Json r = {{"status", "ok"}, {"installed_imports", {"xml", "xml.dom", "xml.dom.minidom"}}};
  const fs::path f = keep_triton_preload(r, dir);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(*util::read_file(f), "xml\nxml.dom\nxml.dom.minidom\n");
  EXPECT_EQ(keep_triton_preload(r, dir), f);  // the same list, the same file
  r["installed_imports"] = {"xml"};
  EXPECT_NE(keep_triton_preload(r, dir), f);
  // Nothing to keep: no list, an empty one, or names that are not one line each.
  EXPECT_TRUE(keep_triton_preload(util::Json{{"status", "ok"}}, dir).empty());
  EXPECT_TRUE(keep_triton_preload(util::Json{{"installed_imports", util::Json::array()}}, dir).empty());
  EXPECT_TRUE(keep_triton_preload(util::Json{{"installed_imports", {"a\nb", 3}}}, dir).empty());
  fs::remove_all(dir);
}

// prepare() and the measuring child end to end on the CPU: the real Python harness with a numpy kernel
// (KOPT_TRITON_DEVICE=numpy makes the child keep its buffers in numpy and time with perf_counter).
class TritonPipelineCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kopt-triton-pipeline-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto probe = util::run_process({{toolchain::find_python(), "-c", "import numpy, safetensors"}, "", {}, 60});
    if (!probe.success()) GTEST_SKIP() << "python3 with numpy and safetensors is needed";
    ::setenv("KOPT_TRITON_DEVICE", "numpy", 1);
  }
  void TearDown() override {
    ::unsetenv("KOPT_TRITON_DEVICE");
    fs::remove_all(dir_);
  }
  KernelJob job(const std::string& behaviour) {
    std::string kernel = R"(import numpy as np
# @kopt param BLOCK values=64,128 default=128
# @kopt method persistent_kernel

def setup(*, seed, n):
    rng = np.random.default_rng(seed)
    return {"inputs": {"x": rng.standard_normal(n).astype(np.float32), "out": np.empty(n, np.float32), "n": n},
            "outputs": ["out"]}

def run_kernel(*, x, out, n, BLOCK, KOPT_PERSISTENT_KERNEL):
    assert BLOCK == 128 and KOPT_PERSISTENT_KERNEL == 0
    if KOPT_PERSISTENT_KERNEL:
        pass
    )" + behaviour + "\n";
    EXPECT_TRUE(util::write_file_atomic(dir_ / "kernel.py", kernel).ok());
    EXPECT_TRUE(util::write_file_atomic(dir_ / "ref.py", "def reference(*, x, out, **_):\n    out[:] = 3 * x\n").ok());
    KernelJob j;
    j.kernel = dir_ / "kernel.py";
    j.ref = dir_ / "ref.py";
    j.dims = {{"n", 256}};
    j.seeds = 2;
    return j;
  }
  // A request as kopt's loop makes it for the prepared kernel, its result named after the mode.
  runner::RunRequest request_for(const Prepared& p, runner::RunMode mode) {
    runner::RunRequest req;
    bind_kernel(req, p);
    req.golden_dir = p.golden_dir;
    req.result_json = dir_ / (std::string(runner::run_mode_name(mode)) + ".json");
    req.mode = mode;
    req.tol = p.tol;
    req.max_time_s = 0.3;
    req.timeout_s = 120;
    return req;
  }
  runner::RunOutcome run(const Prepared& p, runner::RunMode mode) {
    util::SystemRunner sys;
    return runner::run_candidate(request_for(p, mode), sys);
  }
  fs::path dir_;
};

TEST_F(TritonPipelineCpu, PrepareMakesGoldenDataAndTheChildMeasures) {
  util::SystemRunner sys;
  std::vector<std::string> said;
  auto p = prepare(job("out[:] = 3 * x"), dir_ / "work", sys, false, [&](const std::string& s) { said.push_back(s); });
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->backend, search::Backend::kTriton);
  EXPECT_EQ(p->triton_config, (util::Json{{"BLOCK", 128}, {"KOPT_PERSISTENT_KERNEL", 0}}));
  EXPECT_EQ(p->manifest["kernel"]["backend"], "triton");
  ASSERT_EQ(p->signature.params.size(), 3u);
  EXPECT_EQ(p->signature.params[1].name, "out");
  EXPECT_FALSE(p->signature.params[1].is_const);
  EXPECT_EQ(p->signature.normalised, "setup(*,seed,n); run_kernel(*,x,out,n,BLOCK,KOPT_PERSISTENT_KERNEL)");
  EXPECT_EQ(p->buffer_dtypes, (std::vector<std::string>{"float32", "float32"}));
  EXPECT_DOUBLE_EQ(p->tol.atol, 1e-4);
  EXPECT_TRUE(fs::exists(p->golden_dir / "seed_1.safetensors"));
  EXPECT_TRUE(p->build.library.empty());  // nothing compiled

  auto checked = run(*p, runner::RunMode::kCheck);
  EXPECT_EQ(checked.status, runner::RunStatus::kOk) << checked.message;
  auto timed = run(*p, runner::RunMode::kTime);
  ASSERT_EQ(timed.status, runner::RunStatus::kOk) << timed.message;
  ASSERT_TRUE(timed.timing.has_value());
  EXPECT_GE(timed.timing->samples, 10);
  EXPECT_EQ(static_cast<int>(timed.samples_ms.size()), timed.timing->samples);
  EXPECT_GT(timed.timing->median_ms, 0);
}

// A check names the installed modules its kernel's import loaded; a child given them (KOPT_TRITON_PRELOAD) comes from
// a fork server that imported them before it forked, and measures as before.
TEST_F(TritonPipelineCpu, TheForkServerGivenACheckInstalledImportsHasThemImportedForTheNextChild) {
  util::SystemRunner sys;
  auto j = job("out[:] = 3 * x");
  auto text = util::read_file(j.kernel);
  ASSERT_TRUE(text.ok());
  const std::string head =
      "import os, sys\n_PRE = 'xml.dom.minidom' in sys.modules\nimport xml.dom.minidom\n"
      "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pre.txt'), 'w').write(str(_PRE))\n";
  ASSERT_TRUE(util::write_file_atomic(j.kernel, head + *text).ok());
  auto p = prepare(j, dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string sockets = "/tmp/kts-" + std::to_string(::getpid());  // a short path: a socket's is at most 108 bytes
  auto request = [&](runner::RunMode mode, const fs::path& preload) {
    runner::RunRequest req = request_for(*p, mode);
    req.env = {{"KOPT_TRITON_FORK_SERVER_DIR", sockets}, {"KOPT_TRITON_FORK_SERVER_IDLE_S", "5"}};
    if (!preload.empty()) req.env[kTritonPreloadEnv] = preload.string();
    return runner::run_candidate(req, sys);
  };
  auto checked = request(runner::RunMode::kCheck, {});
  ASSERT_EQ(checked.status, runner::RunStatus::kOk) << checked.message;
  EXPECT_EQ(*util::read_file(dir_ / "pre.txt"), "False");
  const fs::path preload = keep_triton_preload(checked.details, dir_ / "preload");
  ASSERT_FALSE(preload.empty()) << checked.details.dump();
  EXPECT_NE(util::read_file(preload)->find("xml.dom.minidom\n"), std::string::npos);
  auto timed = request(runner::RunMode::kTime, preload);
  ASSERT_EQ(timed.status, runner::RunStatus::kOk) << timed.message;
  EXPECT_EQ(*util::read_file(dir_ / "pre.txt"), "True");  // imported by the server, before the fork
  EXPECT_GT(timed.timing->median_ms, 0);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sockets, ec))  // stop the test's servers
    if (e.path().extension() == ".pid")
      if (auto pid = util::read_file(e.path()); pid.ok()) ::kill(std::atoi(pid->c_str()), SIGTERM);
  fs::remove_all(sockets, ec);
}

// A timed child given another case's golden data (--also-check) checks it after its timing, in the same process, and
// kopt reads each case's verdict back (runner::case_checks_in): right at both sizes, then wrong only at the other.
TEST_F(TritonPipelineCpu, ATimedChildChecksTheOtherCasesGoldenDataAndSaysEachVerdict) {
  util::SystemRunner sys;
  for (const char* behaviour : {"out[:] = 3 * x", "out[:] = 3 * x\n    if n != 256:\n        out[5] = 0.0"}) {
    SCOPED_TRACE(behaviour);
    auto j = job(behaviour);
    auto p = prepare(j, dir_ / "work", sys, false, [](const std::string&) {});
    ASSERT_TRUE(p.ok()) << p.error().message;
    j.dims = {{"n", 200}};
    auto other = prepare(j, dir_ / "work_200", sys, false, [](const std::string&) {});
    ASSERT_TRUE(other.ok()) << other.error().message;
    runner::RunRequest req;
    bind_kernel(req, *p);
    req.golden_dir = p->golden_dir;
    req.result_json = dir_ / "timed.json";
    req.mode = runner::RunMode::kTime;
    req.tol = p->tol;
    req.max_time_s = 0.3;
    req.timeout_s = 120;
    req.also_check = {fs::absolute(other->golden_dir).lexically_normal()};
    auto timed = runner::run_candidate(req, sys);
    ASSERT_EQ(timed.status, runner::RunStatus::kOk) << timed.message;  // right at its own case, and timed
    EXPECT_GT(timed.timing->median_ms, 0);
    const auto cases = runner::case_checks_in(timed.details);
    ASSERT_EQ(cases.size(), 1u) << timed.details.dump();
    EXPECT_EQ(cases[0].golden, req.also_check[0].string());
    if (std::string(behaviour) == "out[:] = 3 * x") {
      EXPECT_EQ(cases[0].status, runner::RunStatus::kOk) << cases[0].message;
    } else {
      EXPECT_EQ(cases[0].status, runner::RunStatus::kWrongResult);
      EXPECT_NE(cases[0].message.find("first bad index 5"), std::string::npos) << cases[0].message;
    }
    fs::remove_all(dir_ / "work");
    fs::remove_all(dir_ / "work_200");
  }
}

// A candidate compiled ahead (loop/triton_precompile.h): its compile-mode child and then its timed child given the same
// Triton cache folder. The kernel stands for Triton's JIT: it "compiles" (writes a cubin into $TRITON_CACHE_DIR and
// says so in a log) only where the folder has none. The compile child compiles, the timed child finds it compiled and
// measures, and the folder is kept; a timed child without the folder compiles into a fresh cache of its own.
TEST_F(TritonPipelineCpu, ACompileModeChildFillsTheCacheThatTheTimedChildThenHits) {
  util::SystemRunner sys;
  const std::string log = (dir_ / "jit.log").string();
  auto p = prepare(job("import os\n"
                       "    cache = os.environ.get('TRITON_CACHE_DIR', '')\n"
                       "    cubin = os.path.join(cache, 'h0', 'k.cubin')\n"
                       "    if cache and not os.path.exists(cubin):\n"
                       "        os.makedirs(os.path.dirname(cubin), exist_ok=True)\n"
                       "        open(cubin, 'wb').write(b'cubin')\n"
                       "        open('" +
                       log +
                       "', 'a').write(cache + '\\n')\n"
                       "    out[:] = 3 * x"),
                   dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const fs::path cache = dir_ / "cand" / "triton_cache";
  auto request = [&](runner::RunMode mode, const fs::path& triton_cache, const fs::path& cubins = {}) {
    runner::RunRequest req = request_for(*p, mode);
    req.dump_cubin_dir = cubins;
    req.triton_dims = {{"n", 256}};
    req.triton_cache_dir = triton_cache;
    return runner::run_candidate(req, sys);
  };
  fs::remove(log);  // whatever prepare()'s own runs compiled
  auto compiled = request(runner::RunMode::kCompile, cache);
  ASSERT_EQ(compiled.status, runner::RunStatus::kOk) << compiled.message;
  EXPECT_TRUE(fs::exists(cache / "h0" / "k.cubin"));
  EXPECT_EQ(*util::read_file(log), fs::absolute(cache).string() + "\n");
  auto timed = request(runner::RunMode::kTime, cache, dir_ / "cubins");
  ASSERT_EQ(timed.status, runner::RunStatus::kOk) << timed.message;
  EXPECT_GT(timed.timing->median_ms, 0);
  EXPECT_EQ(*util::read_file(log), fs::absolute(cache).string() + "\n") << "the timed child compiled again";
  EXPECT_TRUE(fs::exists(cache / "h0" / "k.cubin")) << "the candidate's cache folder is kept";
  // The cubins the SASS check reads are the folder's, which the timed child's kernel ran from.
  EXPECT_EQ(triton_cubins(timed.details), (std::vector<fs::path>{dir_ / "cubins" / "k.cubin"})) << timed.details.dump();
  // Without the folder (its compile child failed): a fresh cache of the timed child's own, compiled there, as before.
  auto fresh = request(runner::RunMode::kTime, {}, dir_ / "cubins_fresh");
  ASSERT_EQ(fresh.status, runner::RunStatus::kOk) << fresh.message;
  auto lines = util::split_lines(*util::read_file(log));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1], fs::absolute(cache).string());
  EXPECT_FALSE(fs::exists(lines[1])) << "a fresh cache is removed when its child ends";
}

// A dimension the kernel takes as tl.constexpr compiles a kernel a value: the compile-mode child is given every case's
// dims (loop/measure.cpp) and launches once at each, so the timed child's checks of the other cases hit the cache too.
TEST_F(TritonPipelineCpu, ACompileModeChildGivenSeveralDimsLaunchesAtEach) {
  util::SystemRunner sys;
  auto p = prepare(job("import os\n"
                       "    cubin = os.path.join(os.environ.get('TRITON_CACHE_DIR', ''), 'n%d' % x.size, 'k.cubin')\n"
                       "    os.makedirs(os.path.dirname(cubin), exist_ok=True)\n"
                       "    open(cubin, 'wb').write(b'cubin')\n"
                       "    out[:] = 3 * x"),
                   dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const fs::path cache = dir_ / "cand_cases" / "triton_cache";
  runner::RunRequest req = request_for(*p, runner::RunMode::kCompile);
  req.triton_dims = util::Json::array({{{"n", 256}}, {{"n", 192}}, {{"n", 128}}});
  req.triton_cache_dir = cache;
  auto compiled = runner::run_candidate(req, sys);
  ASSERT_EQ(compiled.status, runner::RunStatus::kOk) << compiled.message;
  for (const char* n : {"n256", "n192", "n128"}) EXPECT_TRUE(fs::exists(cache / n / "k.cubin")) << n;
}

TEST_F(TritonPipelineCpu, AWrongKernelIsAWrongResultThroughInterpret) {
  util::SystemRunner sys;
  auto p = prepare(job("out[:] = 3 * x\n    out[17] = 0.0"), dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto o = run(*p, runner::RunMode::kCheck);
  EXPECT_EQ(o.status, runner::RunStatus::kWrongResult);
  EXPECT_NE(o.message.find("first bad index 17"), std::string::npos) << o.message;
  EXPECT_EQ(o.details["seeds"][0]["outputs"]["out"]["first_bad_index"], 17);
}

// Expected outputs out of the kernel's reach (python/kopt_harness/sealed.py, runner/sealed.h): the child kopt starts
// is given kopt's executable, starts the judge and seals itself before it imports the kernel; a kernel that is right
// only on the inputs it knows (the public seeds, which it makes again with its own setup()) is wrong on the sealed one.
TEST_F(TritonPipelineCpu, TheSealedSeedIsJudgedOutOfTheKernelsReach) {
  util::SystemRunner sys;
  auto p = prepare(job("out[:] = 3 * x"), dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE(p->manifest.contains("sealed")) << "golden data made by kopt has a sealed seed";
  auto honest = run(*p, runner::RunMode::kCheck);
  ASSERT_EQ(honest.status, runner::RunStatus::kOk) << honest.message;
  const util::Json& last = honest.details["seeds"].back();
  EXPECT_EQ(last["seed"], -1);
  EXPECT_TRUE(last["sealed"].get<bool>());
  EXPECT_EQ(last["checked_on"], "judge");
  const util::Json& key = honest.details["answer_key"];
  EXPECT_TRUE(key["sealed_seed"].get<bool>()) << key.dump();
  EXPECT_TRUE(key["judge"].get<bool>()) << key.dump();
  EXPECT_EQ(key["out_of_reach"], key["landlock"]["sealed"]) << key.dump();  // sealed wherever Landlock is there

  auto q = prepare(job("for s in (0, 1):\n        if np.array_equal(setup(seed=s, n=n)['inputs']['x'], x):\n"
                       "            out[:] = 3 * x\n            return\n    out[:] = 0"),
                   dir_ / "work2", sys, false, [](const std::string&) {});
  ASSERT_TRUE(q.ok()) << q.error().message;
  auto memo = run(*q, runner::RunMode::kCheck);
  EXPECT_EQ(memo.status, runner::RunStatus::kWrongOnSealedSeed) << memo.message;
  EXPECT_EQ(memo.message.rfind("on the sealed seed: output out: MISMATCH", 0), 0u) << memo.message;
  EXPECT_TRUE(memo.details["seeds"][0]["outputs"]["out"]["ok"].get<bool>()) << "right on the public seeds";
}

// The ephemeral seed of a Triton kernel (docs/GATES.md "The ephemeral seed"): kopt bench's prepare(want_ephemeral)
// has the harness that makes the golden data make it too (a memfd sealed for good, no file); the one-shot check run
// given it, through the fork server's client as kopt runs it, judges it in the sealed seed's place: an honest kernel
// passes (seed -2), one right only on the inputs it knows (the public seeds, made again with its own setup()) is
// wrong_on_ephemeral_seed. Golden data from the cache comes with none.
TEST_F(TritonPipelineCpu, TheEphemeralSeedIsMadeWithTheGoldenDataAndJudgedInTheCheckRun) {
  ::setenv("KOPT_GOLDEN_CACHE", (dir_ / "golden_cache").c_str(), 1);
  ::setenv("KOPT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  ::setenv("KOPT_TRITON_FORK_SERVER_IDLE_S", "10", 1);  // this environment's server leaves soon after the test
  util::SystemRunner sys;
  auto quiet = [](const std::string&) {};
  auto check = [&](const Prepared& p, const std::string& name) {
    runner::RunRequest req;
    bind_kernel(req, p);
    req.golden_dir = p.golden_dir;
    // Beside the golden data: nothing new can be made directly in dir_, an ancestor of the sealed folder (KOPT_CACHE_DIR).
    req.result_json = p.golden_dir.parent_path() / (name + "_ephemeral.json");
    req.mode = runner::RunMode::kCheck;
    req.tol = p.tol;
    req.timeout_s = 120;
    req.ephemeral_fd = p.ephemeral->fd();
    return runner::run_candidate(req, sys);
  };
  {
    auto p = prepare(job("out[:] = 3 * x"), dir_ / "work", sys, false, quiet, true);
    ASSERT_TRUE(p.ok()) << p.error().message;
    ASSERT_TRUE(p->ephemeral) << p->ephemeral_reason;
    EXPECT_EQ(p->ephemeral->about().value("kernel_backend", std::string()), "triton");
    EXPECT_GT(p->ephemeral->bytes(), 2u * 256u * 4u) << "in.x and out.out of 256 floats";
    EXPECT_EQ(*util::seals_of(p->ephemeral->fd()) & util::kFrozenSeals, util::kFrozenSeals);
    EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0) << "not dumpable while it holds the seed";
    EXPECT_TRUE(fs::exists(p->golden_dir / "seed_1.safetensors")) << "the golden data made by the same harness";
    auto honest = check(*p, "honest");
    ASSERT_EQ(honest.status, runner::RunStatus::kOk) << honest.message;
    const util::Json& last = honest.details["seeds"].back();
    EXPECT_EQ(last["seed"], runner::kEphemeralSeedId);
    EXPECT_TRUE(last["ephemeral"].get<bool>());
    EXPECT_EQ(last["checked_on"], "judge");
    EXPECT_EQ(runner::ephemeral_seed_unjudged(honest.details), "");
    EXPECT_TRUE(honest.details["answer_key"]["ephemeral_seed"].get<bool>()) << honest.details["answer_key"].dump();
    EXPECT_TRUE(honest.details["answer_key"]["out_of_reach"].get<bool>()) << honest.details["answer_key"].dump();

    auto q = prepare(job("for s in (0, 1):\n        if np.array_equal(setup(seed=s, n=n)['inputs']['x'], x):\n"
                         "            out[:] = 3 * x\n            return\n    out[:] = 0"),
                     dir_ / "work2", sys, false, quiet, true);
    ASSERT_TRUE(q.ok()) << q.error().message;
    ASSERT_TRUE(q->ephemeral) << q->ephemeral_reason;
    auto memo = check(*q, "memo");
    EXPECT_EQ(memo.status, runner::RunStatus::kWrongOnEphemeralSeed) << memo.message;
    EXPECT_EQ(memo.message.rfind("on the ephemeral seed: output out: MISMATCH", 0), 0u) << memo.message;
    EXPECT_TRUE(memo.details["seeds"][0]["outputs"]["out"]["ok"].get<bool>()) << "right on the public seeds";
  }
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1) << "dumpable again once the seeds are gone";
  auto cached = prepare(job("out[:] = 3 * x"), dir_ / "work3", sys, false, quiet, true);
  ASSERT_TRUE(cached.ok()) << cached.error().message;
  EXPECT_FALSE(cached->ephemeral);
  EXPECT_NE(cached->ephemeral_reason.find("from the cache"), std::string::npos) << cached->ephemeral_reason;
  ::unsetenv("KOPT_GOLDEN_CACHE");
  ::unsetenv("KOPT_CACHE_DIR");
  ::unsetenv("KOPT_TRITON_FORK_SERVER_IDLE_S");
}

TEST_F(TritonPipelineCpu, AContractViolationInSetupIsAnInputError) {
  auto j = job("out[:] = 3 * x");
  ASSERT_TRUE(util::write_file_atomic(j.kernel, "def setup(*, seed, n):\n    return {'inputs': {'n': n}, 'outputs': ['n']}\n"
                                                "def run_kernel(**kw):\n    pass\n").ok());
  util::SystemRunner sys;
  auto p = prepare(j, dir_ / "work", sys, false, [](const std::string&) {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ExitCode::kInput);
  EXPECT_NE(p.error().message.find("output 'n' is int, not a tensor"), std::string::npos) << p.error().message;
}

}  // namespace
}  // namespace kopt::pipeline
