#include "contract/golden_stream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "testing/counting_runner.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::contract {
namespace {

namespace fs = std::filesystem;

struct StreamFixture {
  fs::path root;
  GoldenRequest request(int64_t n, const std::string& run, bool time_reference = false) const {
    return testing_support::vadd_example_request(root, n, run, time_reference);
  }
};

std::optional<StreamFixture> fixture(const std::string& name) {
  if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty()) return std::nullopt;
  StreamFixture f;
  f.root = fs::temp_directory_path() / ("kopt_golden_stream_" + name + "_" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(f.root, ec);
  fs::create_directories(f.root);
  return f;
}

TEST(GoldenStream, OneHarnessMakesEveryBatchOfARunAndMakeGoldenPlacesThem) {
  auto f = fixture("batches");
  if (!f) GTEST_SKIP() << "python3 or the harness not found";
  auto stream = GoldenStream::start(f->root / "stream.log");
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  // Three batches over the same process, one with a request the harness fails (it lacks n): the others are made.
  GoldenRequest bad = f->request(1000, "batch");
  bad.dims = {{"m", 7}};
  EXPECT_EQ((*stream)->prefetch({f->request(1000, "batch", true)}), 1);
  EXPECT_EQ((*stream)->prefetch({f->request(1001, "batch"), bad, f->request(1002, "batch")}), 2);
  EXPECT_TRUE((*stream)->alive());
  // What the cache holds is not asked for again.
  EXPECT_EQ((*stream)->prefetch({f->request(1001, "again")}), 0);
  testing_support::CountingRunner runner;
  for (int64_t n : {1001, 1002}) {
    auto m = make_golden(f->request(n, "run"), runner);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_TRUE((*m)["golden_cache"].value("hit", false)) << n;
  }
  auto timed = make_golden(f->request(1000, "run", true), runner);  // the reference timing's request is its own key
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  EXPECT_TRUE((*timed)["golden_cache"].value("hit", false));
  EXPECT_TRUE(timed->contains("reference_timing"));
  EXPECT_EQ(runner.runs, 0) << "every request was made by the stream";
  (*stream)->close();
  EXPECT_FALSE((*stream)->alive());
  EXPECT_EQ((*stream)->prefetch({f->request(1003, "batch")}), 0) << "a closed stream makes nothing";
  auto later = make_golden(f->request(1003, "run"), runner);
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_EQ(runner.runs, 1) << "make_golden makes what the stream did not";
}

TEST(GoldenStream, AbortEndsARequestInFlightAndItsPrefetchReturns) {
  auto f = fixture("abort");
  if (!f) GTEST_SKIP() << "python3 or the harness not found";
  auto stream = GoldenStream::start(f->root / "stream.log");
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  GoldenStream* s = stream->get();
  int made = -1;
  std::thread t([&] { made = s->prefetch({f->request(1 << 20, "big", true)}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  s->abort();
  t.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(made, 0);
  EXPECT_FALSE(s->alive());
  s->close();
}

}  // namespace
}  // namespace kopt::contract
