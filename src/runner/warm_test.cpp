// The warm bench worker (runner/warm.h) without a GPU: the real `kopt __bench-server` relaying to the fake worker
// (python3 -m kopt_harness fake-worker: `die`, `slow` and `broken` libraries behave as a crash, a slow kernel and a
// broken CUDA context do in the real worker).
#include "runner/warm.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "runner/golden_store.h"
#include "runner/worker.h"
#include "testing/counting_runner.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::runner {
namespace {

namespace fs = std::filesystem;

// Whether process `pid` is gone (or a zombie no one reaped: it serves nothing).
bool gone(int pid) {
  auto stat = util::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  auto close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z';
}

bool eventually(const std::function<bool()>& what, double within_s = 8) {
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < within_s) {
    if (what()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return what();
}

class WarmWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string harness = toolchain::python_harness_dir();
    if (harness.empty()) GTEST_SKIP() << "no kopt_harness";
    ::setenv("PYTHONPATH", harness.c_str(), 1);
    static int test = 0;  // short: the socket's path must fit a socket address
    dir_ = fs::temp_directory_path() / ("kopt_warm_" + std::to_string(::getpid()) + "_" + std::to_string(test++));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "s");
    golden_ = testing_support::make_vadd_golden(dir_ / "golden", 64);
    cfg_.dir = dir_ / "s";
    cfg_.kopt_exe = testing_support::kopt_binary();
    cfg_.worker_argv = {toolchain::find_python(), "-m", "kopt_harness", "fake-worker"};
    cfg_.idle_s = 60;
  }
  void TearDown() override {
    for (int pid : servers_)
      if (!gone(pid)) ::kill(pid, SIGTERM);
    ::unsetenv("KOPT_SEAL");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path lib(const std::string& name, double ms = 0.5) {
    std::ofstream(dir_ / name) << "time_ms=" << ms << "\n";
    return dir_ / name;
  }
  RunRequest request(const fs::path& library, const fs::path& golden = {}) {
    RunRequest r;
    r.libs = {library};
    r.golden_dir = golden.empty() ? golden_ : golden;
    r.result_json = dir_ / ("result_" + std::to_string(n_++) + ".json");
    r.mode = RunMode::kTime;
    r.timeout_s = 30;
    return r;
  }
  WarmRun run(const RunRequest& r) {
    auto w = run_warm(r, runner_, cfg_);
    if (w.info.contains("pid")) servers_.push_back(w.info["pid"].get<int>());
    return w;
  }

  fs::path dir_, golden_;
  WarmConfig cfg_;
  testing_support::CountingRunner runner_;
  std::vector<int> servers_;
  int n_ = 0;
};

TEST_F(WarmWorker, OneServerAndOneMeasuringProcessServeCallAfterCall) {
  auto first = run(request(lib("a.so", 0.5)));
  ASSERT_TRUE(first.info.value("used", false)) << first.info.dump();
  EXPECT_EQ(first.outcome.status, RunStatus::kOk) << first.outcome.message;
  ASSERT_TRUE(first.outcome.timing);
  EXPECT_NEAR(first.outcome.timing->median_ms, 0.5, 1e-9);
  EXPECT_FALSE(first.info.value("reused", true));
  EXPECT_FALSE(first.info.value("measuring_process_reused", true));
  // Another bench run's golden folder: links to the same files (the golden cache's), a manifest written anew.
  fs::create_directories(dir_ / "golden2");
  for (const auto& e : fs::directory_iterator(golden_))
    if (e.path().filename() == "manifest.json") fs::copy_file(e.path(), dir_ / "golden2" / "manifest.json");
    else fs::create_hard_link(e.path(), dir_ / "golden2" / e.path().filename());
  auto second = run(request(lib("b.so", 0.25), dir_ / "golden2"));
  EXPECT_EQ(second.outcome.status, RunStatus::kOk) << second.outcome.message;
  EXPECT_NEAR(second.outcome.timing->median_ms, 0.25, 1e-9);
  EXPECT_TRUE(second.info.value("reused", false)) << second.info.dump();
  EXPECT_TRUE(second.info.value("measuring_process_reused", false));
  EXPECT_EQ(second.info.value("requests_served", 0), 2);
  EXPECT_EQ(second.info.value("pid", 0), first.info.value("pid", 1));
  EXPECT_EQ(runner_.runs, 0) << "no one-shot child";
  // The result is the worker's, for this request's library.
  EXPECT_EQ(second.outcome.details["fake_worker"]["libs"][0]["path"], (dir_ / "b.so").string());
}

TEST_F(WarmWorker, ACrashIsTheOneShotVerdictAndTheNextCallGetsAFreshMeasuringProcess) {
  auto die = run(request(lib("lib_die.so")));
  EXPECT_EQ(die.outcome.status, RunStatus::kCrashed) << die.outcome.message << die.info.dump();
  // The optimize loop's worker (the same relay) says the same of the same library.
  MeasuringWorker w(dir_ / "direct.log", cfg_.kopt_exe, WorkerSpec{cfg_.worker_argv, {}});
  EXPECT_EQ(w.run(request(dir_ / "lib_die.so")).status, die.outcome.status);
  auto next = run(request(lib("ok.so")));
  EXPECT_EQ(next.outcome.status, RunStatus::kOk) << next.outcome.message;
  EXPECT_TRUE(next.info.value("reused", false));
  EXPECT_FALSE(next.info.value("measuring_process_reused", true));
  EXPECT_EQ(next.info.value("worker_starts", 0), 2);
  auto broken = run(request(lib("lib_broken.so")));
  EXPECT_EQ(broken.outcome.status, RunStatus::kCudaError) << broken.outcome.message;
  auto after = run(request(dir_ / "ok.so"));
  EXPECT_EQ(after.outcome.status, RunStatus::kOk);
  EXPECT_EQ(after.info.value("worker_starts", 0), 3);
}

TEST_F(WarmWorker, AHangIsTimedOutAndTheNextCallGetsAFreshMeasuringProcess) {
  auto r = request(lib("lib_slow.so"));
  r.timeout_s = 0.3;
  auto slow = run(r);
  EXPECT_EQ(slow.outcome.status, RunStatus::kTimedOut) << slow.outcome.message;
  auto next = run(request(lib("ok.so")));
  EXPECT_EQ(next.outcome.status, RunStatus::kOk);
  EXPECT_EQ(next.info.value("worker_starts", 0), 2);
}

TEST_F(WarmWorker, ChangedGoldenDataOrEnvironmentIsAnotherServerAndTheOldOneLeaves) {
  auto first = run(request(lib("a.so")));
  const int pid = first.info.value("pid", 0);
  // Golden data written again in place (a new file, as the harness writes): never served from the old state.
  auto seed = golden_ / "seed_0.safetensors";
  fs::copy_file(seed, dir_ / "seed.tmp");
  fs::rename(dir_ / "seed.tmp", seed);
  auto second = run(request(dir_ / "a.so"));
  EXPECT_EQ(second.outcome.status, RunStatus::kOk);
  EXPECT_FALSE(second.info.value("reused", true)) << second.info.dump();
  EXPECT_NE(second.info.value("pid", 0), pid);
  EXPECT_TRUE(eventually([&] { return gone(pid); })) << "the server of the old golden data leaves";
  // An environment the worker reads (KOPT_SEAL): another server; it retires the previous one of this GPU.
  ::setenv("KOPT_SEAL", "off", 1);
  auto third = run(request(dir_ / "a.so"));
  EXPECT_FALSE(third.info.value("reused", true));
  EXPECT_NE(third.info.value("pid", 0), second.info.value("pid", 0));
  EXPECT_TRUE(eventually([&] { return gone(second.info.value("pid", 0)); })) << "one warm worker per GPU";
}

TEST_F(WarmWorker, ANewKoptExecutableIsAnotherServerAndTheOldOneLeaves) {
  fs::create_symlink(testing_support::kopt_binary(), dir_ / "kopt");
  cfg_.kopt_exe = (dir_ / "kopt").string();
  auto first = run(request(lib("a.so")));
  ASSERT_TRUE(first.info.value("used", false)) << first.info.dump();
  const int pid = first.info.value("pid", 0);
  fs::remove(dir_ / "kopt");  // kopt rebuilt: another file at the same path
  fs::create_symlink(testing_support::kopt_binary(), dir_ / "kopt");
  EXPECT_TRUE(eventually([&] { return gone(pid); })) << "the server notices its executable changed";
  auto second = run(request(dir_ / "a.so"));
  EXPECT_FALSE(second.info.value("reused", true));
  EXPECT_EQ(second.outcome.status, RunStatus::kOk);
}

TEST_F(WarmWorker, AnIdleServerLeavesAndTheNextCallStartsAnother) {
  cfg_.idle_s = 1;
  auto first = run(request(lib("a.so")));
  const int pid = first.info.value("pid", 0);
  EXPECT_TRUE(eventually([&] { return gone(pid); }));
  EXPECT_TRUE(eventually([&] {
    for (const auto& e : fs::directory_iterator(dir_ / "s"))
      if (e.path().extension() == ".sock") return false;
    return true;
  })) << "its socket is removed";
  auto second = run(request(dir_ / "a.so"));
  EXPECT_FALSE(second.info.value("reused", true));
  EXPECT_EQ(second.outcome.status, RunStatus::kOk);
}

TEST_F(WarmWorker, TwoConcurrentCallsAreServedOneAfterTheOtherEachWithItsOwnAnswer) {
  run(request(lib("warm.so")));  // the server up first, so both calls below find it
  auto a = request(lib("a_slow.so", 0.5)), b = request(lib("b_slow.so", 0.75));
  WarmRun ra, rb;
  std::thread ta([&] { ra = run_warm(a, runner_, cfg_); });
  std::thread tb([&] { rb = run_warm(b, runner_, cfg_); });
  ta.join();
  tb.join();
  ASSERT_EQ(ra.outcome.status, RunStatus::kOk) << ra.outcome.message;
  ASSERT_EQ(rb.outcome.status, RunStatus::kOk) << rb.outcome.message;
  EXPECT_NEAR(ra.outcome.timing->median_ms, 0.5, 1e-9);
  EXPECT_NEAR(rb.outcome.timing->median_ms, 0.75, 1e-9);
  EXPECT_EQ(ra.outcome.details["fake_worker"]["libs"][0]["path"], a.libs[0].string());
  EXPECT_EQ(rb.outcome.details["fake_worker"]["libs"][0]["path"], b.libs[0].string());
  // Each slow request takes 1 s: the second waited for the first.
  EXPECT_GT(std::max(ra.info.value("lock_wait_s", 0.0), rb.info.value("lock_wait_s", 0.0)), 0.8);
  EXPECT_EQ(ra.info.value("pid", 0), rb.info.value("pid", 1));
}

TEST_F(WarmWorker, WithoutAUsableServerTheCallRunsAsAOneShotChild) {
  cfg_.kopt_exe = (dir_ / "no_kopt_here").string();
  auto r = run_warm(request(lib("a.so")), runner_, cfg_);
  EXPECT_FALSE(r.info.value("used", true));
  EXPECT_EQ(runner_.runs, 1) << "the fresh child";
  RunRequest triton = request(dir_ / "a.so");
  triton.triton_kernel = dir_ / "k.py";
  cfg_.kopt_exe = testing_support::kopt_binary();
  auto t = run_warm(triton, runner_, cfg_);
  EXPECT_FALSE(t.info.value("used", true)) << "Triton runs one-shot";
}

TEST_F(WarmWorker, AFolderMadeBesideTheSealedRootAfterTheWorkerSealedGetsAFreshWorker) {
  // The sealed root beside this test's folder: its ancestors' entries are what the worker's Landlock rules cover
  // (files made directly in an ancestor are out of reach too: the rules give ancestors listing only).
  const fs::path cache = dir_.string() + "c";
  ::setenv("KOPT_CACHE_DIR", cache.c_str(), 1);
  fs::create_directories(cache / "sealed");
  auto first = run(request(lib("a.so")));
  auto again = run(request(dir_ / "a.so"));
  EXPECT_TRUE(again.info.value("measuring_process_reused", false)) << again.info.dump();
  fs::create_directories(cache / "new_run");  // made after the worker sealed: out of its reach
  fs::copy_file(dir_ / "a.so", cache / "new_run" / "a.so");
  auto out_of_reach = run(request(cache / "new_run" / "a.so"));
  ::unsetenv("KOPT_CACHE_DIR");
  fs::remove_all(cache);
  EXPECT_EQ(out_of_reach.outcome.status, RunStatus::kOk) << out_of_reach.outcome.message;
  EXPECT_FALSE(out_of_reach.info.value("measuring_process_reused", true)) << out_of_reach.info.dump();
  EXPECT_EQ(out_of_reach.info.value("worker_starts", 0), 2);
}

TEST(WarmKey, EachInputIsPartOfTheKeyAndOnlyTheGpuPartGroupsServers) {
  WarmKeyInputs base{"kopt|1", "golden-1", "driver 580|boot", {{"KOPT_SEAL", "on"}}, {"kopt", "__worker"}};
  const std::string k = warm_key(base);
  auto changed = [&](auto edit) {
    WarmKeyInputs in = base;
    edit(in);
    return warm_key(in);
  };
  EXPECT_NE(changed([](auto& in) { in.kopt_identity = "kopt|2"; }), k);
  EXPECT_NE(changed([](auto& in) { in.golden_identity = "golden-2"; }), k);
  EXPECT_NE(changed([](auto& in) { in.gpu_identity = "driver 590|boot"; }), k);
  EXPECT_NE(changed([](auto& in) { in.env["KOPT_L2_FLUSH"] = "off"; }), k);
  EXPECT_NE(changed([](auto& in) { in.worker_argv.push_back("--x"); }), k);
  WarmKeyInputs other_golden = base;
  other_golden.golden_identity = "golden-2";
  EXPECT_EQ(warm_gpu_key(other_golden), warm_gpu_key(base));
  WarmKeyInputs other_gpu = base;
  other_gpu.env["CUDA_VISIBLE_DEVICES"] = "1";
  EXPECT_NE(warm_gpu_key(other_gpu), warm_gpu_key(base));
}

TEST(WarmKey, TheEnvironmentKeptIsWhatTheWorkerReads) {
  std::vector<std::string> vars = {"KOPT_SEAL=off", "KOPT_BENCH_WORKER_IDLE_S=5", "CUDA_VISIBLE_DEVICES=0",
                                   "TERM=xterm", "PATH=/bin", "LD_PRELOAD=x.so", "PWD=/x"};
  std::vector<char*> env;
  for (auto& v : vars) env.push_back(v.data());
  env.push_back(nullptr);
  auto kept = warm_env(env.data());
  EXPECT_EQ(kept, (std::map<std::string, std::string>{
                      {"CUDA_VISIBLE_DEVICES", "0"}, {"KOPT_SEAL", "off"}, {"LD_PRELOAD", "x.so"}, {"PATH", "/bin"}}));
}

TEST(WarmKey, KoptBenchWorkerOffTurnsItOff) {
  ::setenv("KOPT_BENCH_WORKER", "off", 1);
  EXPECT_TRUE(warm_worker_off_by_env());
  ::setenv("KOPT_BENCH_WORKER", "on", 1);
  EXPECT_FALSE(warm_worker_off_by_env());
  ::unsetenv("KOPT_BENCH_WORKER");
  EXPECT_FALSE(warm_worker_off_by_env());
  ::setenv("KOPT_BENCH_WORKER_IDLE_S", "7.5", 1);
  EXPECT_EQ(warm_config_from_env().idle_s, 7.5);
  ::setenv("KOPT_BENCH_WORKER_IDLE_S", "x", 1);
  EXPECT_EQ(warm_config_from_env().idle_s, 600);
  ::unsetenv("KOPT_BENCH_WORKER_IDLE_S");
}

TEST(WarmKey, AProcessResultCrossesTheWireUnchanged) {
  util::ProcessResult p;
  p.started = true;
  p.exit_code = 3;
  p.term_signal = 11;
  p.timed_out = true;
  p.interrupted = true;
  p.stderr_text = "boom";
  p.wall_ms = 12.5;
  auto q = process_result_from_json(util::Json::parse(process_result_to_json(p).dump()));
  EXPECT_EQ(q.describe(), p.describe());
  EXPECT_EQ(q.stderr_text, "boom");
  EXPECT_EQ(q.wall_ms, 12.5);
  EXPECT_TRUE(q.interrupted);
}

}  // namespace
}  // namespace kopt::runner
