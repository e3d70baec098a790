#include "sanitize/verdict_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

#include "util/fs.h"
#include "util/keyed_store.h"

namespace kopt::sanitize {
namespace {

namespace fs = std::filesystem;

ToolRun clean(Tool t) {
  ToolRun r;
  r.tool = t;
  r.outcome = RunOutcome::kClean;
  r.exit_code = 0;
  r.wall_ms = 1200;
  r.report.tool = t;
  if (t == Tool::kRacecheck)
    r.report.race_hazards = r.report.race_errors = r.report.race_warnings = 0;
  else
    r.report.error_summary = 0;
  return r;
}

// Four tools clean, an initcheck note reported, the fill clean: what a passing gate gives.
Verdict passing() {
  Verdict v = judge({clean(Tool::kMemcheck), clean(Tool::kRacecheck), clean(Tool::kSynccheck), clean(Tool::kInitcheck)});
  v.reported.push_back("initcheck: an API error reported only");
  FillRun f;
  f.outcome = FillOutcome::kClean;
  f.status = "ok";
  add_fill(v, f);
  return v;
}

struct Scratch {
  fs::path dir, sanitizer, checker;
  explicit Scratch(const std::string& name) {
    dir = fs::path(::testing::TempDir()) / ("kopt_verdict_cache_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "bin");
    sanitizer = dir / "bin" / "compute-sanitizer";
    checker = dir / "bin" / "kopt";
    EXPECT_TRUE(util::write_file_atomic(sanitizer, "sanitizer v1").ok());
    EXPECT_TRUE(util::write_file_atomic(checker, "kopt v1").ok());
  }
  ~Scratch() { fs::remove_all(dir); }
  VerdictSubject subject() const { return {"code-hash", "golden-identity", sanitizer, checker, "NVIDIA H200", "580.159.04"}; }
};

Request with_fill() {
  Request r;
  r.fill_argv = {"kopt", "__runner", "--smem-fill", kFillPattern};
  return r;
}

TEST(VerdictCache, APassingVerdictIsKeptAndFoundWithWhatDecides) {
  Scratch s("roundtrip");
  const std::string key = verdict_key(s.subject(), with_fill());
  ASSERT_FALSE(key.empty());
  const Verdict v = passing();
  ASSERT_TRUE(keepable(v));
  auto kept = keep_verdict(s.dir / "cache", key, v, "/runs/run_1");
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(*kept);
  auto found = find_verdict(s.dir / "cache", key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->rejected);
  EXPECT_TRUE(found->complete());
  EXPECT_EQ(found->race_safe, RaceSafe::kSafe);
  EXPECT_EQ(found->reported, v.reported);
  ASSERT_EQ(found->runs.size(), 4u);
  EXPECT_EQ(found->runs[1].tool, Tool::kRacecheck);
  EXPECT_EQ(found->runs[1].report.race_errors, 0);
  EXPECT_EQ(race_safety(found->runs), RaceSafe::kSafe) << "the summary counts come back";
  EXPECT_EQ(found->fill.outcome, FillOutcome::kClean);
  EXPECT_NE(found->from_cache.find("/runs/run_1"), std::string::npos) << found->from_cache;
  EXPECT_EQ(to_json(*found).value("from_cache", std::string()), found->from_cache) << "its record says where it came from";
  EXPECT_FALSE(find_verdict(s.dir / "cache", verdict_key(s.subject(), Request{})).has_value()) << "without the fill: another key";
}

TEST(VerdictCache, EveryPartOfWhatWasJudgedIsInTheKey) {
  Scratch s("key");
  const std::string key = verdict_key(s.subject(), with_fill());
  auto changed = [&](auto edit) {
    VerdictSubject sub = s.subject();
    edit(sub);
    return verdict_key(sub, with_fill());
  };
  EXPECT_NE(changed([](VerdictSubject& x) { x.code = "other code"; }), key);
  EXPECT_NE(changed([](VerdictSubject& x) { x.golden = "other inputs"; }), key);
  EXPECT_NE(changed([](VerdictSubject& x) { x.gpu = "NVIDIA H100 80GB HBM3"; }), key);
  EXPECT_NE(changed([](VerdictSubject& x) { x.driver = "590.1"; }), key);
  Request fewer = with_fill();
  fewer.tools = {Tool::kMemcheck};
  EXPECT_NE(verdict_key(s.subject(), fewer), key);
  // A new compute-sanitizer or kopt at the same path: another key.
  ASSERT_TRUE(util::write_file_atomic(s.checker, "kopt v2, longer").ok());
  EXPECT_NE(verdict_key(s.subject(), with_fill()), key);
  // Nothing to key on: no key, nothing kept.
  EXPECT_TRUE(changed([](VerdictSubject& x) { x.golden.clear(); }).empty());
  EXPECT_TRUE(changed([](VerdictSubject& x) { x.sanitizer = "/nonexistent/compute-sanitizer"; }).empty());
  auto none = keep_verdict(s.dir / "cache", "", passing(), "r");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

TEST(VerdictCache, ARejectionAnUnfinishedToolOrAnUndecidedFillIsNeverKept) {
  Scratch s("never");
  const std::string key = verdict_key(s.subject(), with_fill());
  Verdict rejected = passing();
  rejected.rejected = true;
  rejected.reason = "compute-sanitizer: racecheck: race hazard";
  Verdict unfinished = passing();
  unfinished.runs[2].outcome = RunOutcome::kTimedOut;
  Verdict wrong_fill = passing();
  wrong_fill.fill.outcome = FillOutcome::kWrong;
  Verdict undecided_fill = passing();
  undecided_fill.fill.outcome = FillOutcome::kError;
  Verdict read_back = passing();
  read_back.from_cache = "an entry";
  for (const Verdict* v : {&rejected, &unfinished, &wrong_fill, &undecided_fill, &read_back}) {
    EXPECT_FALSE(keepable(*v));
    auto kept = keep_verdict(s.dir / "cache", key, *v, "r");
    ASSERT_TRUE(kept.ok());
    EXPECT_FALSE(*kept);
  }
  EXPECT_FALSE(find_verdict(s.dir / "cache", key).has_value());
  // An entry that says otherwise (edited, or written by another version) is not believed.
  ASSERT_TRUE(util::keep_keyed(s.dir / "cache", key, "sanitizer_verdict", to_json(rejected), "r").ok());
  EXPECT_FALSE(find_verdict(s.dir / "cache", key).has_value());
  ASSERT_TRUE(util::write_file_atomic(s.dir / "cache" / (key + ".json"), "{not json").ok());
  EXPECT_FALSE(find_verdict(s.dir / "cache", key).has_value());
}

TEST(VerdictCache, AVerdictReadsBackFromItsJson) {
  Verdict v = passing();
  auto back = verdict_from_json(to_json(v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(to_json(*back).dump(), [&] {
    util::Json j = to_json(v);
    for (auto& r : j["runs"]) r["report"]["findings"] = util::Json::array();  // findings stay in the JSON it came from
    return j.dump();
  }());
  EXPECT_FALSE(verdict_from_json(util::Json{{"rejected", false}}).ok()) << "no runs";
  EXPECT_FALSE(verdict_from_json(util::Json{{"runs", {{{"tool", "nocheck"}}}}}).ok()) << "an unknown tool";
}

}  // namespace
}  // namespace kopt::sanitize
