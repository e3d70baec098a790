#include "runner/sealed.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "contract/golden_maker.h"
#include "contract/safetensors.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/memfd.h"

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kopt_sealed_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return fs::canonical(d);
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

bool landlock_available() {
  // The probe seal_away makes first, in a child so that this process stays unsealed.
  pid_t pid = ::fork();
  if (pid == 0) {
    SealState s = seal_away(fs::path(::testing::TempDir()) / ("kopt_sealed_probe_" + std::to_string(::getpid())));
    ::_exit(s.sealed ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Sets KOPT_CACHE_DIR for one test (sealed_root() is beneath it).
struct CacheDir {
  explicit CacheDir(const fs::path& d) { ::setenv("KOPT_CACHE_DIR", d.c_str(), 1); }
  ~CacheDir() { ::unsetenv("KOPT_CACHE_DIR"); }
};

}  // namespace

TEST(SealedSeed, TokensAreFreshAndOnlyWellFormedOnesAreRead) {
  const std::string a = contract::new_sealed_token(), b = contract::new_sealed_token();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(sealed_token({{"sealed", {{"token", a}}}}), a);
  EXPECT_FALSE(sealed_token({{"sealed", {{"token", "../../etc"}}}}).has_value()) << "a token is never a path";
  EXPECT_FALSE(sealed_token({{"sealed", {{"token", a.substr(1)}}}}).has_value());
  EXPECT_FALSE(sealed_token(util::Json::object()).has_value());
}

TEST(SealedSeed, TheCacheKeyIgnoresWhereTheSealedSeedGoes) {
  const fs::path d = temp_dir("key");
  write(d / "ref.py", "def reference(x):\n    pass\n");
  write(d / "signature.json", "{}");
  contract::GoldenRequest r;
  r.ref_py = d / "ref.py";
  r.out_dir = d;
  auto plain = contract::golden_key(contract::harness_argv(r, "python3"));
  r.sealed_token = contract::new_sealed_token();
  auto argv = contract::harness_argv(r, "python3");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--sealed-dir"), argv.end());
  auto sealed = contract::golden_key(argv);
  ASSERT_TRUE(plain.ok() && sealed.ok());
  EXPECT_EQ(*plain, *sealed);
}

TEST(SealedSeed, PruningKeepsTheNewestWithinTheBudget) {
  const fs::path root = temp_dir("prune");
  for (const char* t : {"old", "mid", "new"}) write(root / t / "seed.safetensors", std::string(1000, 'x'));
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(root / "old", now - std::chrono::hours(24 * 30));
  fs::last_write_time(root / "mid", now - std::chrono::hours(1));
  contract::prune_sealed(root, 14, 1500);
  EXPECT_FALSE(fs::exists(root / "old")) << "older than 14 days";
  EXPECT_TRUE(fs::exists(root / "new"));
  EXPECT_FALSE(fs::exists(root / "mid")) << "beyond the byte budget, the oldest goes";
}

// The seal (Landlock): after seal_away(D), nothing beneath D can be read, listed as files' content, changed or
// removed, by this process or one it starts; everything else works as before, symbolic links into D included.
TEST(SealAway, NothingBeneathTheSealedFolderCanBeReadChangedOrRemovedAndEverythingElseCan) {
  if (!landlock_available()) GTEST_SKIP() << "Landlock is not available on this kernel";
  const fs::path d = temp_dir("landlock");
  write(d / "cache" / "sealed" / "t" / "seed.safetensors", "answer");
  write(d / "cache" / "golden" / "seed_0.safetensors", "public");
  write(d / "cache" / "beside.txt", "beside");
  write(d / "work" / "result.json", "{}");
  fs::create_directory_symlink(d / "cache" / "sealed", d / "work" / "link_to_sealed");
  pid_t pid = ::fork();
  if (pid == 0) {
    SealState s = seal_away(d / "cache" / "sealed");
    if (!s.sealed) ::_exit(10);
    auto readable = [](const fs::path& p) { return std::ifstream(p).good(); };
    int bad = 0;
    if (readable(d / "cache" / "sealed" / "t" / "seed.safetensors")) bad |= 1;
    if (readable(d / "work" / "link_to_sealed" / "t" / "seed.safetensors")) bad |= 2;
    if (std::ofstream(d / "cache" / "sealed" / "t" / "planted").good()) bad |= 4;
    std::error_code ec;
    fs::remove(d / "cache" / "sealed" / "t" / "seed.safetensors", ec);
    if (!ec) bad |= 8;
    if (!readable(d / "cache" / "golden" / "seed_0.safetensors") || !readable(d / "cache" / "beside.txt")) bad |= 16;
    if (!std::ofstream(d / "work" / "out.json").good() || !readable(d / "work" / "result.json")) bad |= 32;
    if (!readable("/etc/hostname") && !readable("/etc/passwd")) bad |= 64;
    // A process it starts is sealed too.
    const std::string cat = "cat " + (d / "cache" / "sealed" / "t" / "seed.safetensors").string() + " >/dev/null 2>&1";
    if (std::system(cat.c_str()) == 0) bad |= 128;
    ::_exit(bad);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 read, 2 read through a link, 4 planted, 8 removed, 16 cache beside it "
                                       "unreadable, 32 work folder broken, 64 /etc unreadable, 128 a child read it, "
                                       "10 not sealed";
  EXPECT_TRUE(fs::exists(d / "cache" / "sealed" / "t" / "seed.safetensors"));
}

// The judge: the sealed seed's inputs on request, and a verdict on outputs, without telling any expected value.
TEST(Judge, HandsOutTheSealedInputsAndJudgesOutputsWithoutTellingTheAnswer) {
  const fs::path d = temp_dir("judge");
  CacheDir cache(d / "cache");
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 256, 2, token);
  auto sealed = contract::read_safetensors(contract::sealed_seed_file(token));
  ASSERT_TRUE(sealed.ok()) << sealed.error().message;
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  auto in = (*judge)->inputs(d / "golden");
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ((*in)->size(), 2u);
  EXPECT_EQ((*in)->at("a"), sealed->at("in.a").data);
  EXPECT_EQ((*in)->at("b"), sealed->at("in.b").data);
  EXPECT_EQ((*in)->count("c"), 0u) << "no output is handed out";
  EXPECT_EQ(*(*judge)->inputs(d / "golden"), *in) << "asked once per folder";

  std::map<std::string, std::vector<unsigned char>> out = {{"c", sealed->at("out.c").data}};
  auto right = (*judge)->judge(d / "golden", {1e-5, 1e-5}, out);
  ASSERT_TRUE(right.ok()) << right.error().message;
  EXPECT_EQ(right->status, RunStatus::kOk);
  EXPECT_TRUE(right->outputs["c"]["ok"].get<bool>());

  float wrong_value = 12345.f;
  std::memcpy(out["c"].data() + 4 * 7, &wrong_value, 4);
  auto wrong = (*judge)->judge(d / "golden", {1e-5, 1e-5}, out);
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, RunStatus::kWrongResult);
  EXPECT_NE(wrong->message.find("first bad index 7"), std::string::npos) << wrong->message;
  float expected = 0;
  std::memcpy(&expected, sealed->at("out.c").data.data() + 4 * 7, 4);
  EXPECT_EQ(wrong->message.find("expected"), std::string::npos) << wrong->message;
  EXPECT_EQ(wrong->outputs["c"].count("expected_at_first_bad"), 0u);
  EXPECT_EQ(wrong->outputs["c"]["summary"].get<std::string>().find(std::to_string(expected).substr(0, 6)), std::string::npos);

  std::fill(out["c"].begin(), out["c"].end(), 0xFF);
  auto poisoned = (*judge)->judge(d / "golden", {1e-5, 1e-5}, out);
  ASSERT_TRUE(poisoned.ok());
  EXPECT_EQ(poisoned->status, RunStatus::kUnwrittenOutput);

  out["c"].resize(8);
  EXPECT_FALSE((*judge)->judge(d / "golden", {1e-5, 1e-5}, out).ok()) << "outputs of the wrong size";
}

// Each `kopt bench` run's golden folder holds hard links to one golden cache entry: a measuring process (a warm
// bench worker) and its judge read that golden data's sealed seed once, not once per folder.
TEST(Judge, TheSameGoldenDataUnderAnotherFolderIsReadOnce) {
  const fs::path d = temp_dir("judge_links");
  CacheDir cache(d / "cache");
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 256, 2, token);
  fs::create_directories(d / "run2" / "golden");
  for (const auto& e : fs::directory_iterator(d / "golden")) fs::create_hard_link(e.path(), d / "run2" / "golden" / e.path().filename());
  auto sealed = contract::read_safetensors(contract::sealed_seed_file(token));
  ASSERT_TRUE(sealed.ok()) << sealed.error().message;
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  auto first = (*judge)->inputs(d / "golden");
  ASSERT_TRUE(first.ok()) << first.error().message;
  // Gone from disk: only what the judge and its client kept can answer now.
  fs::remove_all(contract::sealed_seed_file(token).parent_path());
  auto again = (*judge)->inputs(d / "run2" / "golden");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *first) << "the client kept the inputs by the golden data's identity";
  std::map<std::string, std::vector<unsigned char>> out = {{"c", sealed->at("out.c").data}};
  auto right = (*judge)->judge(d / "run2" / "golden", {1e-5, 1e-5}, out);
  ASSERT_TRUE(right.ok()) << right.error().message;
  EXPECT_EQ(right->status, RunStatus::kOk) << "the judge kept the sealed seed by the golden data's identity";
  // Other golden data is another entry: its sealed seed is read (and here, made for it).
  testing_support::make_vadd_golden(d / "other", 128, 2, contract::new_sealed_token());
  auto other = (*judge)->inputs(d / "other");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ((*other)->at("a").size(), 128u * 4);
}

TEST(Judge, GoldenDataWithoutASealedSeedIsNamed) {
  const fs::path d = temp_dir("judge_none");
  CacheDir cache(d / "cache");
  testing_support::make_vadd_golden(d / "golden", 64, 2);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok());
  auto in = (*judge)->inputs(d / "golden");
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.error().message.find("has no sealed seed"), std::string::npos) << in.error().message;
}

// The ephemeral seed (contract/ephemeral_seed.h): a judge given its memfd serves it in the sealed seed's place, for
// golden data with or without a sealed seed; it reads only a memfd sealed for good, and only one made for that data.
TEST(Judge, ServesTheEphemeralSeedFromItsDescriptorInTheSealedSeedsPlace) {
  const fs::path d = temp_dir("judge_ephemeral");
  CacheDir cache(d / "cache");
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 256, 2, token);
  testing_support::make_vadd_golden(d / "plain", 256, 2);  // no sealed seed
  testing_support::make_vadd_golden(d / "other", 128, 2, contract::new_sealed_token());
  auto sealed = contract::read_safetensors(contract::sealed_seed_file(token));
  ASSERT_TRUE(sealed.ok());
  auto seed = testing_support::make_vadd_ephemeral(256);
  ASSERT_TRUE(seed);
  auto expected = contract::parse_safetensors(*util::read_all_at(seed->fd()));
  ASSERT_TRUE(expected.ok());
  auto judge = JudgeClient::spawn(testing_support::kopt_binary(), seed->fd());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  for (const char* golden : {"golden", "plain"}) {
    auto in = (*judge)->inputs(d / golden);
    ASSERT_TRUE(in.ok()) << golden << ": " << in.error().message;
    EXPECT_EQ((*in)->at("a"), expected->at("in.a").data) << "the ephemeral seed's inputs, not the sealed seed's";
    EXPECT_NE((*in)->at("a"), sealed->at("in.a").data);
    std::map<std::string, std::vector<unsigned char>> right = {{"c", expected->at("out.c").data}};
    auto v = (*judge)->judge(d / golden, {1e-5, 1e-5}, right);
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(v->status, RunStatus::kOk) << v->message;
    // The sealed seed's answer (what a kernel that read the sealed file would give) is wrong here.
    std::map<std::string, std::vector<unsigned char>> found = {{"c", sealed->at("out.c").data}};
    auto w = (*judge)->judge(d / golden, {1e-5, 1e-5}, found);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->status, RunStatus::kWrongResult);
    EXPECT_EQ(w->outputs["c"].count("expected_at_first_bad"), 0u);
  }
  auto other = (*judge)->inputs(d / "other");
  ASSERT_FALSE(other.ok()) << "made for other golden data";
  EXPECT_NE(other.error().message.find("the ephemeral seed"), std::string::npos) << other.error().message;

  // An unsealed memfd (its bytes could still change under the judge) is refused: every request says why.
  const int unsealed = testing_support::unsealed_vadd_ephemeral_fd(256);
  auto refusing = JudgeClient::spawn(testing_support::kopt_binary(), unsealed);
  ::close(unsealed);
  ASSERT_TRUE(refusing.ok());
  auto in = (*refusing)->inputs(d / "golden");
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.error().message.find("not sealed for good"), std::string::npos) << in.error().message;
}

// A check run given the ephemeral seed counts as judged there only when its result holds that seed's record.
TEST(EphemeralSeedUnjudged, OnlyTheSeedsOwnRecordCounts) {
  const util::Json judged = {{"seeds", {{{"seed", 0}}, {{"seed", kEphemeralSeedId}, {"ephemeral", true}}}}};
  EXPECT_EQ(ephemeral_seed_unjudged(judged), "");
  const util::Json sealed = {{"seeds", {{{"seed", 0}}, {{"seed", kSealedSeedId}, {"sealed", true}}}},
                             {"answer_key", {{"reason", "no judge process: cannot start the judge"}}}};
  EXPECT_EQ(ephemeral_seed_unjudged(sealed),
            "the check run's result has no record of the ephemeral seed (no judge process: cannot start the judge)");
  EXPECT_EQ(ephemeral_seed_unjudged({{"seeds", {{{"seed", kEphemeralSeedId}}}}}),
            "the check run's result has no record of the ephemeral seed")
      << "the seed number without its flag is not the record";
  EXPECT_NE(ephemeral_seed_unjudged(util::Json()), "");
}

}  // namespace kopt::runner
