#include "runner/golden_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "testing/golden_fixture.h"
#include "util/fs.h"
#include "util/json_io.h"

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {
fs::path store_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kopt_golden_store_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST(GoldenStore, EveryCaseDirectoryIsReadOnceWhileTheyFitTheBudget) {
  auto root = store_dir("fit");
  // Three cases of a workload matrix (n = 1000, 750, 500: 3 tensors of 4n bytes per seed, 2 seeds).
  std::vector<fs::path> cases;
  for (int n : {1000, 750, 500}) cases.push_back(testing_support::make_vadd_golden(root / std::to_string(n), n));
  GoldenStore store(int64_t{1} << 20);
  // A candidate raced at the full case, then checked at the two others; then the next candidate, twice over.
  for (int candidate = 0; candidate < 3; ++candidate)
    for (const auto& dir : cases) {
      auto e = store.get(dir);
      ASSERT_TRUE(e.ok()) << e.error().message;
      for (int seed : (*e)->golden().seeds) {
        auto t = (*e)->seed(seed);
        ASSERT_TRUE(t.ok()) << t.error().message;
        EXPECT_EQ((*t)->at("out.c").numel(), (*e)->golden().scalars.at("n"));
      }
      store.trim();
    }
  EXPECT_EQ(store.loads(), 3);  // one read per directory, none per candidate
  EXPECT_EQ(store.directories(), 3u);
  EXPECT_EQ(store.bytes(), 2 * 3 * 4 * (1000 + 750 + 500));
  // The same directory under another spelling is the same entry.
  ASSERT_TRUE(store.get(cases[0] / "." ).ok());
  EXPECT_EQ(store.loads(), 3);
}

TEST(GoldenStore, BeyondTheBudgetTheLeastRecentlyUsedDirectoryGoesAndTheOneInUseStays) {
  auto root = store_dir("evict");
  auto big = testing_support::make_vadd_golden(root / "big", 4096);     // 2 seeds x 3 x 16 KiB = 96 KiB
  auto small = testing_support::make_vadd_golden(root / "small", 1024);  // 24 KiB
  GoldenStore store(100 * 1024);
  auto use = [&](const fs::path& dir) {
    auto e = store.get(dir);
    ASSERT_TRUE(e.ok()) << e.error().message;
    for (int seed : (*e)->golden().seeds) ASSERT_TRUE((*e)->seed(seed).ok());
    store.trim();
  };
  use(big);
  EXPECT_EQ(store.directories(), 1u);
  use(small);  // 120 KiB held: the least recently used (big) goes
  EXPECT_EQ(store.directories(), 1u);
  EXPECT_EQ(store.bytes(), 2 * 3 * 4 * 1024);
  use(big);  // read again
  EXPECT_EQ(store.loads(), 3);
  // A budget smaller than one directory still serves it (it is never evicted while in use).
  GoldenStore tiny(1);
  auto e = tiny.get(big);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->seed(0).ok());
  tiny.trim();
  EXPECT_EQ(tiny.directories(), 1u);
}

TEST(GoldenStore, AMissingDirectoryOrSeedIsAnErrorNamingIt) {
  auto root = store_dir("missing");
  GoldenStore store(int64_t{1} << 20);
  auto none = store.get(root / "nowhere");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("nowhere"), std::string::npos) << none.error().message;
  auto dir = testing_support::make_vadd_golden(root / "g", 64);
  auto e = store.get(dir);
  ASSERT_TRUE(e.ok());
  auto bad = (*e)->seed(7);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("seed_7"), std::string::npos) << bad.error().message;
  EXPECT_EQ((*e)->bytes(), 0);
}

TEST(GoldenStore, TheBudgetCanBeSetInMegabytes) {
  ::setenv("KOPT_GOLDEN_CACHE_MB", "3", 1);
  EXPECT_EQ(default_golden_budget_bytes(), int64_t{3} << 20);
  ::setenv("KOPT_GOLDEN_CACHE_MB", "lots", 1);
  EXPECT_GT(default_golden_budget_bytes(), 0);
  ::unsetenv("KOPT_GOLDEN_CACHE_MB");
  EXPECT_LE(default_golden_budget_bytes(), int64_t{32} << 30);
}

TEST(GoldenStore, FoldersOfLinksToTheSameFilesAreOneEntryAndDataWrittenAgainIsNot) {
  auto root = store_dir("identity");
  auto a = testing_support::make_vadd_golden(root / "a", 256);
  // Another run's golden folder: hard links to the same files (the golden cache's), its manifest written anew
  // with other provenance.
  fs::create_directories(root / "b");
  for (const auto& e : fs::directory_iterator(a))
    if (e.path().filename() != "manifest.json") fs::create_hard_link(e.path(), root / "b" / e.path().filename());
  auto m = util::read_json(a / "manifest.json");
  ASSERT_TRUE(m.ok());
  (*m)["golden_cache"] = {{"hit", true}, {"made", "elsewhere"}};
  ASSERT_TRUE(util::write_file_atomic(root / "b" / "manifest.json", m->dump()).ok());
  EXPECT_EQ(golden_identity(a), golden_identity(root / "b"));
  EXPECT_FALSE(golden_identity(a).empty());
  GoldenStore store(int64_t{1} << 20);
  ASSERT_TRUE(store.get(a).ok());
  auto e = store.get(root / "b");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(store.loads(), 1);
  EXPECT_EQ((*e)->golden().dir, root / "b") << "seeds not read yet come from the folder asked for";
  // A seed written again (a new file renamed over it): other golden data.
  fs::copy_file(a / "seed_0.safetensors", root / "tmp");
  fs::rename(root / "tmp", root / "b" / "seed_0.safetensors");
  EXPECT_NE(golden_identity(a), golden_identity(root / "b"));
  ASSERT_TRUE(store.get(root / "b").ok());
  EXPECT_EQ(store.loads(), 2);
  EXPECT_EQ(golden_identity(root / "nowhere"), "");
}

}  // namespace kopt::runner
