#include "contract/golden_stream.h"

#include <gtest/gtest.h>

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "contract/safetensors.h"
#include "testing/counting_runner.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/memfd.h"

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

// Started idle (`--preload imports`, a warm run's harness beside the gates: no CUDA until a request), it serves as the
// other does; requests() counts what was sent, never a cached request.
TEST(GoldenStream, AnIdleStartedHarnessServesItsFirstRequestWhenItComes) {
  auto f = fixture("idle");
  if (!f) GTEST_SKIP() << "python3 or the harness not found";
  auto stream = GoldenStream::start(f->root / "stream.log", HarnessPreload::kImports);
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  EXPECT_EQ((*stream)->preload(), HarnessPreload::kImports);
  EXPECT_EQ((*stream)->requests(), 0);
  EXPECT_EQ((*stream)->prefetch({f->request(1000, "idle"), f->request(1001, "idle")}), 2);
  EXPECT_EQ((*stream)->prefetch({f->request(1000, "again")}), 0) << "in the cache: not sent";
  EXPECT_EQ((*stream)->requests(), 2);
  EXPECT_TRUE((*stream)->alive());
  (*stream)->close();
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

// The ephemeral seed (contract/ephemeral_seed.h): made by the run's harness, it comes back as a memfd sealed for
// good; nothing of it is written to any file (only the request's public signature.json, as for golden data); this
// process is not dumpable while it holds it; the stream serves on.
TEST(GoldenStream, TheEphemeralSeedComesBackInMemoryOnly) {
  auto f = fixture("ephemeral");
  if (!f) GTEST_SKIP() << "python3 or the harness not found";
  auto files = [&] {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(f->root))
      if (e.is_regular_file() && e.path().filename() != "stream.log") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
  };
  ::setenv("KOPT_CACHE_DIR", (f->root / "kopt_cache").c_str(), 1);  // the sealed folder, should anything go there
  auto stream = GoldenStream::start(f->root / "stream.log");
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  GoldenRequest req = f->request(1000, "ephemeral");
  std::error_code ec;
  fs::create_directories(req.out_dir, ec);
  const auto before = files();
  {
    auto seed = (*stream)->make_ephemeral(req);
    ASSERT_TRUE(seed.ok()) << seed.error().message;
    EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0) << "not dumpable while it holds the seed";
    ASSERT_TRUE(util::seals_of((*seed)->fd()).ok());
    EXPECT_EQ(*util::seals_of((*seed)->fd()) & util::kFrozenSeals, util::kFrozenSeals);
    auto bytes = util::read_all_at((*seed)->fd());
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes->size(), (*seed)->bytes());
    auto t = parse_safetensors(*bytes);
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_EQ(t->size(), 3u);
    const auto& a = t->at("in.a").data;
    const auto& b = t->at("in.b").data;
    const auto& c = t->at("out.c").data;
    ASSERT_EQ(c.size(), 4000u);
    for (size_t i = 0; i < 1000; i += 97) {
      float x, y, z;
      std::memcpy(&x, a.data() + 4 * i, 4);
      std::memcpy(&y, b.data() + 4 * i, 4);
      std::memcpy(&z, c.data() + 4 * i, 4);
      EXPECT_FLOAT_EQ(z, x + y) << i;
    }
    EXPECT_TRUE((*seed)->to_json()["in_memory_only"].get<bool>());
    auto after = files();
    after.erase(std::remove_if(after.begin(), after.end(), [](const std::string& p) { return p.ends_with("signature.json"); }),
                after.end());
    EXPECT_EQ(after, before) << "no file was written";
  }
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1) << "dumpable again";
  EXPECT_TRUE((*stream)->alive());
  EXPECT_EQ((*stream)->prefetch({f->request(1001, "after")}), 1) << "the stream serves on";
  GoldenRequest triton = req;  // a Triton kernel's (its setup() gives the buffers): one the harness cannot load
  triton.triton_kernel = f->root / "no_such_kernel.py";
  auto refused = (*stream)->make_ephemeral(triton);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ExitCode::kInput);
  EXPECT_NE(refused.error().message.find("no_such_kernel.py"), std::string::npos) << refused.error().message;
  EXPECT_TRUE((*stream)->alive()) << "one request's failure does not end the stream";
  (*stream)->close();
  EXPECT_FALSE((*stream)->make_ephemeral(req).ok()) << "a closed stream makes none";
  ::unsetenv("KOPT_CACHE_DIR");
}

}  // namespace
}  // namespace kopt::contract
