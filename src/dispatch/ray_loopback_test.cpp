// Issue 21 end to end on a real Ray cluster on this machine's loopback, CPU only: the dispatcher hands requests to
// two slots, each kopt's own MeasuringWorker speaking to the Ray bridge (runner::ray_worker_spec, the command
// `optimize --ray` starts), whose actor runs the fake worker (python -m kopt_harness fake-worker) on the custom
// resource fake_gpu; kopt's interpret() reads the results the bridge brought back. Run by
// python/tests/test_ray_cluster.py, which starts the cluster and sets KOPT_TEST_RAY_ADDRESS; skipped elsewhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "dispatch/dispatcher.h"
#include "runner/launch.h"
#include "runner/worker.h"
#include "toolchain/tools.h"

namespace kopt::dispatch {
namespace {

namespace fs = std::filesystem;

TEST(RayLoopback, TwoSlotsMeasureThroughTheBridgeAndALostWorkersJobIsRetriedOnTheOther) {
  const char* address = std::getenv("KOPT_TEST_RAY_ADDRESS");
  if (!address || !*address) GTEST_SKIP() << "no Ray cluster (python/tests/test_ray_cluster.py starts one and sets KOPT_TEST_RAY_ADDRESS)";
  const fs::path run = fs::path(::testing::TempDir()) / ("kopt_ray_loopback_" + std::to_string(::getpid()));
  fs::remove_all(run);
  fs::create_directories(run / "golden");
  std::ofstream(run / "golden" / "manifest.json") << R"({"version": 1, "seeds": [0]})";
  std::ofstream(run / "golden" / "seed0.safetensors") << std::string(4096, '\0');
  // Eight fake candidates with known times; one whose worker dies wherever it runs (a GPU fault, twice).
  std::vector<fs::path> libs;
  for (int k = 0; k < 8; ++k) {
    const fs::path lib = run / (k == 5 ? "cand5_will_die.so" : "cand" + std::to_string(k) + ".so");
    std::ofstream(lib) << "fake library\ntime_ms=" << 0.125 * (k + 1) << "\n";
    libs.push_back(lib);
  }
  const std::string fake = toolchain::find_python() + " -m kopt_harness fake-worker";
  std::vector<std::unique_ptr<runner::MeasuringWorker>> workers;
  for (int s = 0; s < 2; ++s)
    workers.push_back(std::make_unique<runner::MeasuringWorker>(
        run / ("worker_" + std::to_string(s) + ".log"), "",
        runner::ray_worker_spec(address, s, {"--resource", "fake_gpu", "--ship", "always", "--start-timeout-s", "60", "--worker-cmd", fake})));
  Dispatcher d({2, 2});
  std::mutex mu;
  std::map<size_t, runner::RunOutcome> outcomes;
  std::map<size_t, std::vector<int>> slots_of;
  std::set<int> pids;
  size_t next = 0;
  d.run(
      [&]() -> std::optional<size_t> {
        if (next >= libs.size()) return std::nullopt;
        return next++;
      },
      [&](size_t j, int slot, int attempt) {
        runner::RunRequest r;
        r.libs = {libs[j]};
        r.golden_dir = run / "golden";
        r.result_json = run / ("result_" + std::to_string(j) + "_" + std::to_string(attempt) + ".json");
        r.mode = runner::RunMode::kTime;
        r.max_time_s = 1;
        r.timeout_s = 90;  // the first request of a bridge waits for its actor
        auto o = workers[static_cast<size_t>(slot)]->run(r);
        std::lock_guard<std::mutex> lock(mu);
        slots_of[j].push_back(slot);
        outcomes[j] = o;
        if (o.details.contains("fake_worker")) pids.insert(o.details["fake_worker"].value("pid", 0));
        return runner::lost_worker(o) ? Attempt::kWorkerLost : Attempt::kDone;
      });
  for (size_t j = 0; j < libs.size(); ++j) {
    const auto& o = outcomes[j];
    if (j == 5) {
      EXPECT_EQ(o.status, runner::RunStatus::kCrashed) << o.message;
      ASSERT_EQ(slots_of[j].size(), 2u);
      EXPECT_NE(slots_of[j][0], slots_of[j][1]) << "retried on the other slot";
      EXPECT_TRUE(d.jobs()[j].second.lost);
      continue;
    }
    ASSERT_EQ(o.status, runner::RunStatus::kOk) << "job " << j << ": " << o.message;
    ASSERT_TRUE(o.timing.has_value());
    EXPECT_DOUBLE_EQ(o.timing->median_ms, 0.125 * static_cast<double>(j + 1)) << "job " << j;
    EXPECT_EQ(slots_of[j].size(), 1u);
  }
  EXPECT_EQ(d.slots()[0].jobs + d.slots()[1].jobs, 9);  // eight jobs, one retried
  EXPECT_GT(d.slots()[0].jobs, 0);
  EXPECT_GT(d.slots()[1].jobs, 0);
  EXPECT_GE(pids.size(), 2u) << "two actors, two workers (and a fresh one after each death)";
  // The dying candidate killed the worker of each slot once: each slot's next request gets a fresh bridge and actor.
  for (size_t s = 0; s < 2; ++s) {
    runner::RunRequest r;
    r.libs = {libs[0]};
    r.golden_dir = run / "golden";
    r.result_json = run / ("after_" + std::to_string(s) + ".json");
    r.mode = runner::RunMode::kCheck;
    r.timeout_s = 90;
    auto o = workers[s]->run(r);
    EXPECT_EQ(o.status, runner::RunStatus::kOk) << o.message;
    EXPECT_EQ(workers[s]->starts(), 2) << "slot " << s << ": its bridge died once and was started again";
  }
  fs::remove_all(run);
}

}  // namespace
}  // namespace kopt::dispatch
