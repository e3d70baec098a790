#include "contract/golden_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "contract/golden_maker.h"
#include "testing/counting_runner.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::contract {
namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kopt_golden_cache_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

ino_t inode(const fs::path& p) {
  struct stat s{};
  return ::stat(p.c_str(), &s) == 0 ? s.st_ino : 0;
}

TEST(GoldenCache, AnEntryIsFoundPlacedAsLinksAndTheLeastRecentlyUsedIsEvicted) {
  const fs::path root = fresh("lru");
  GoldenCache cache{root / "cache", 100};
  auto make = [&](const std::string& name, size_t bytes) {
    fs::path d = root / name;
    fs::create_directories(d);
    put(d / "manifest.json", "{}");
    put(d / "seed_1.safetensors", std::string(bytes, 'x'));
    return d;
  };
  EXPECT_FALSE(find_golden(cache, "a"));
  auto a = store_golden(cache, "a", make("out_a", 40), {{"what", "a"}});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(*a);
  auto hit = find_golden(cache, "a");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->record.value("bytes", 0), 42);
  EXPECT_EQ(hit->record["about"].value("what", ""), "a");

  // Placed into a run's folder over a stale file of the same name: the same inode as the entry's (a link).
  const fs::path run = root / "run" / "golden";
  fs::create_directories(run);
  put(run / "seed_1.safetensors", "stale");
  ASSERT_TRUE(place_golden(*hit, run).ok());
  EXPECT_EQ(util::read_file(run / "seed_1.safetensors").value(), std::string(40, 'x'));
  EXPECT_EQ(inode(run / "seed_1.safetensors"), inode(hit->entry / "seed_1.safetensors"));

  // An entry larger than the cache is not stored; storing b (42 bytes) and then c evicts a, the least recently used.
  auto big = store_golden(cache, "big", make("out_big", 200), {});
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE(*big);
  EXPECT_FALSE(find_golden(cache, "big"));
  ASSERT_TRUE(store_golden(cache, "b", make("out_b", 40), {}).ok());
  EXPECT_TRUE(find_golden(cache, "a"));
  EXPECT_TRUE(find_golden(cache, "b"));
  // a used again now: b is the older, so c pushes b out.
  fs::last_write_time(cache.root / "b" / "used", fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(cache.root / "a" / "used", fs::file_time_type::clock::now() - std::chrono::hours(1));
  ASSERT_TRUE(store_golden(cache, "c", make("out_c", 40), {}).ok());
  EXPECT_TRUE(find_golden(cache, "a"));
  EXPECT_FALSE(find_golden(cache, "b"));
  EXPECT_TRUE(find_golden(cache, "c"));
  // The run's linked file outlives the evicted entry, and a damaged entry (a file of the wrong size) is a miss.
  EXPECT_EQ(util::read_file(run / "seed_1.safetensors").value(), std::string(40, 'x'));
  put(cache.root / "c" / "seed_1.safetensors", "short");
  EXPECT_FALSE(find_golden(cache, "c"));
  EXPECT_FALSE(fs::exists(cache.root / "tmp") && !fs::is_empty(cache.root / "tmp"));
}

TEST(GoldenCache, TheEnvironmentTurnsItOffMovesItAndBoundsIt) {
  struct Env {
    const char* name;
    std::string saved;
    bool had;
    explicit Env(const char* n) : name(n), had(std::getenv(n) != nullptr) {
      if (had) saved = std::getenv(n);
    }
    ~Env() { had ? ::setenv(name, saved.c_str(), 1) : ::unsetenv(name); }
  } e1("KOPT_GOLDEN_CACHE"), e2("KOPT_GOLDEN_CACHE_GB"), e3("KOPT_CACHE_DIR");
  ::setenv("KOPT_GOLDEN_CACHE", "off", 1);
  auto off = golden_cache_from_env();
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->has_value());
  ::setenv("KOPT_GOLDEN_CACHE", "/somewhere/golden", 1);
  ::setenv("KOPT_GOLDEN_CACHE_GB", "1.5", 1);
  auto at = golden_cache_from_env();
  ASSERT_TRUE(at.ok() && at->has_value());
  EXPECT_EQ((*at)->root, fs::path("/somewhere/golden"));
  EXPECT_EQ((*at)->max_bytes, 3ULL << 29);
  ::unsetenv("KOPT_GOLDEN_CACHE");
  ::setenv("KOPT_CACHE_DIR", "/c", 1);
  ::setenv("KOPT_GOLDEN_CACHE_GB", "lots", 1);
  auto bad = golden_cache_from_env();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
  EXPECT_NE(bad.error().message.find("KOPT_GOLDEN_CACHE_GB=lots"), std::string::npos) << bad.error().message;
  ::unsetenv("KOPT_GOLDEN_CACHE_GB");
  EXPECT_EQ(golden_cache_from_env().value()->root, fs::path("/c/golden"));
}

TEST(GoldenCache, RefPyRunsOnceForTheSameRequestAndAgainWhenWhatItMayImportChanges) {
  if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty()) GTEST_SKIP() << "python3 or the harness not found";
  const fs::path root = fresh("harness");
  // The example copied, so a file beside ref.py can be changed.
  fs::create_directories(root / "ex");
  fs::copy_file(fs::path(testing_support::source_dir()) / "examples/vector_add/ref.py", root / "ex" / "ref.py");
  auto text = util::read_file(fs::path(testing_support::source_dir()) / "examples/vector_add/kernel.cu");
  ASSERT_TRUE(text.ok());
  auto sig = parse_solve_signature(*text, "kernel.cu");
  ASSERT_TRUE(sig.ok());
  GoldenRequest g;
  g.ref_py = root / "ex" / "ref.py";
  g.signature = *sig;
  g.dims = {{"n", 1000}};
  g.seeds = 2;
  g.time_reference = false;
  g.timeout_s = 300;
  g.cache = GoldenCache{root / "cache"};
  testing_support::CountingRunner runner;

  g.out_dir = root / "run1" / "golden";
  auto first = make_golden(g, runner);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(runner.runs, 1);
  EXPECT_FALSE((*first)["golden_cache"].value("hit", true));
  EXPECT_TRUE((*first)["golden_cache"].value("stored", false));

  g.out_dir = root / "run2" / "golden";
  auto second = make_golden(g, runner);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(runner.runs, 1) << "the same request ran ref.py again";
  EXPECT_TRUE((*second)["golden_cache"].value("hit", false));
  EXPECT_EQ((*second)["golden_cache"].value("key", ""), (*first)["golden_cache"].value("key", "x"));
  for (const char* f : {"manifest.json", "seed_0.safetensors", "seed_1.safetensors", "signature.json"})
    EXPECT_EQ(util::read_file(root / "run2" / "golden" / f).value(), util::read_file(root / "run1" / "golden" / f).value()) << f;

  // Other seeds, other dims, a module beside ref.py that it could import: each is another key, so ref.py runs.
  g.out_dir = root / "run3" / "golden";
  g.seeds = 3;
  ASSERT_TRUE(make_golden(g, runner).ok());
  EXPECT_EQ(runner.runs, 2);
  g.dims = {{"n", 1001}};
  ASSERT_TRUE(make_golden(g, runner).ok());
  EXPECT_EQ(runner.runs, 3);
  put(root / "ex" / "helpers.py", "SCALE = 2\n");
  ASSERT_TRUE(make_golden(g, runner).ok());
  EXPECT_EQ(runner.runs, 4);
  // Without a cache it always runs.
  g.cache.reset();
  ASSERT_TRUE(make_golden(g, runner).ok());
  EXPECT_EQ(runner.runs, 5);
}

TEST(GoldenCache, APrefetchMakesSeveralRequestsInOneHarnessProcessAndMakeGoldenPlacesThem) {
  if (toolchain::find_python().empty() || toolchain::python_harness_dir().empty()) GTEST_SKIP() << "python3 or the harness not found";
  const fs::path root = fresh("batch");
  auto request = [&](int64_t n, const std::string& run) { return testing_support::vadd_example_request(root, n, run); };
  // The middle request fails in the harness (it lacks the dimension n): the others are made all the same.
  GoldenRequest bad = request(1000, "batch");
  bad.dims = {{"m", 7}};
  // The tensors' bytes (a safetensors file: an 8-byte header length, the JSON header, the data; the header's metadata
  // order may differ between processes).
  auto tensor_bytes = [](const fs::path& f) {
    const std::string s = util::read_file(f).value();
    if (s.size() < 8) return std::string();
    // Byte by byte through data(): s.at(i) here is a maybe-uninitialized false positive of GCC 12 at -O3 (Release).
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | p[i];
    return s.substr(8 + n);
  };
  testing_support::CountingRunner runner;
  auto made = prefetch_golden({request(1000, "batch"), bad, request(1001, "batch")}, runner);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(*made, 2);
  EXPECT_EQ(runner.runs, 1) << "one harness process for the batch";

  // make_golden finds both in the cache: no further run, the same bytes as a request made alone; in the folder the
  // batch made them in (as the loop asks) as well as in another.
  for (const char* run : {"batch", "run"})
    for (int64_t n : {1000, 1001}) {
      auto m = make_golden(request(n, run), runner);
      ASSERT_TRUE(m.ok()) << m.error().message;
      EXPECT_TRUE((*m)["golden_cache"].value("hit", false)) << n;
      EXPECT_EQ((*m)["dims"].value("n", int64_t{0}), n);
      EXPECT_EQ(tensor_bytes(root / run / std::to_string(n) / "seed_1.safetensors").size(), 3u * n * 4) << run;
    }
  EXPECT_EQ(runner.runs, 1);
  GoldenRequest alone = request(1001, "alone");
  alone.cache.reset();
  ASSERT_TRUE(make_golden(alone, runner).ok());
  EXPECT_EQ(runner.runs, 2);
  for (const char* f : {"seed_0.safetensors", "seed_1.safetensors"}) {
    const auto batched = tensor_bytes(root / "run" / "1001" / f);
    EXPECT_EQ(batched.size(), 3u * 1001 * 4) << f;
    EXPECT_TRUE(batched == tensor_bytes(root / "alone" / "1001" / f)) << f << ": the batch made other values";
  }
  // The failed request is made alone by make_golden, which reports the harness's error.
  auto failed = make_golden(bad, runner);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("dimension 'n', which was not given"), std::string::npos) << failed.error().message;
  // What the cache holds is not asked for again; without a cache nothing is prefetched.
  const int before = runner.runs;
  EXPECT_EQ(prefetch_golden({request(1000, "again"), request(1001, "again")}, runner).value(), 0);
  GoldenRequest nocache = request(1002, "nocache");
  nocache.cache.reset();
  EXPECT_EQ(prefetch_golden({nocache}, runner).value(), 0);
  EXPECT_EQ(runner.runs, before);
}

}  // namespace
}  // namespace kopt::contract
