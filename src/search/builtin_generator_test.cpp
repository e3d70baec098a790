#include "search/builtin_generator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "search/testing.h"

#include <filesystem>
#include <set>

#include "util/fs.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

const Registry& reg() { return testing::test_registry(); }

const char* kKernel = R"(// @kopt param THREADS values=64,128,256,512 default=256
// @kopt param ITEMS values=1,2,4,8
// @kopt method vectorized_access
// @kopt method grid_stride_loop
// @kopt method loop_unrolling
// @kopt constraint THREADS * ITEMS <= 2048
#if KOPT_VECTORIZED_ACCESS
#endif
#if KOPT_GRID_STRIDE_LOOP
#endif
#if KOPT_LOOP_UNROLLING
#endif
extern "C" void solve(int n, float a, const float* x, float* y) {}
)";

class BuiltinGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / "kopt_builtin_generator";
    fs::create_directories(dir_);
    source_ = dir_ / "k.cu";
    ASSERT_TRUE(util::write_file_atomic(source_, kKernel).ok());
    auto a = parse_annotations(kKernel, source_.string());
    ASSERT_TRUE(a.ok()) << a.error().message;
    SpaceOptions opts;
    opts.offer_flag_methods = false;  // keep the space to the declared dimensions
    auto s = build_space(a.value(), reg(), opts);
    ASSERT_TRUE(s.ok()) << s.error().message;
    space_ = std::move(s).value();
    Candidate base = baseline_candidate(space_, reg(), source_, kKernel);
    in_.registry = &reg();
    in_.space = &space_;
    in_.baseline_source = source_;
    in_.iteration_dir = dir_;
    in_.k = 4;
    in_.plan.slots = {{Axis::kMemory, 1}, {Axis::kLatency, 1}, {Axis::kCompute, 1}};
    // DRAM-bound, a huge grid of tiny blocks: vectorized access (memory) and grid-stride loops (latency).
    in_.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 85.0},
                   {"launch__waves_per_multiprocessor", 240.0},
                   {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", 30.0}};
    Measurement m{base, CandidateStatus::kOk, 1.0, 0};
    in_.champion = m;
    in_.history = {m};
  }

  fs::path dir_, source_;
  SearchSpace space_;
  GeneratorInput in_;
};

TEST_F(BuiltinGeneratorTest, PicksByEvidenceAndTriesThePicksWithoutImposingThem) {
  BuiltinGenerator gen;
  in_.k = 8;
  auto out = gen.generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  // Strongest evidence first: 240 waves (capped margin) before 85% of DRAM peak.
  EXPECT_EQ(out->selection.ids(), (std::vector<std::string>{"grid_stride_loop", "vectorized_access"}));
  // loop_unrolling is not picked (no latency slot left) but the kernel declares it: the search may use it.
  EXPECT_EQ(out->selection.explorable, (std::vector<std::string>{"grid_stride_loop", "loop_unrolling", "vectorized_access"}));
  ASSERT_EQ(out->candidates.size(), 8u);
  std::set<std::string> guard_values;
  for (const auto& c : out->candidates) {
    // The methods a candidate claims are exactly the guards it switches on.
    std::vector<std::string> on;
    for (const char* m : {"grid_stride_loop", "loop_unrolling", "vectorized_access"})
      if (c.guards.at(m)) on.push_back(m);
    EXPECT_EQ(c.methods, on) << c.id;
    EXPECT_EQ(c.defines.at("KOPT_GRID_STRIDE_LOOP"), c.guards.at("grid_stride_loop") ? "1" : "0") << c.id;
    guard_values.insert(c.defines.at("KOPT_VECTORIZED_ACCESS") + c.defines.at("KOPT_GRID_STRIDE_LOOP"));
    EXPECT_EQ(c.origin, "builtin");
    EXPECT_EQ(c.source, source_);
    EXPECT_LE(c.params.at("THREADS") * c.params.at("ITEMS"), 2048);
  }
  // First: the champion's parameters with both picks on, the cleanest test of the methods.
  EXPECT_EQ(out->candidates[0].params.at("THREADS"), 256);
  EXPECT_EQ(out->candidates[0].params.at("ITEMS"), 1);
  EXPECT_EQ(out->candidates[0].methods, (std::vector<std::string>{"grid_stride_loop", "vectorized_access"}));
  EXPECT_EQ(out->candidates[0].id, "i1c1");
  // The picks are free dimensions, not pinned: the other candidates do not all carry both.
  EXPECT_GT(guard_values.size(), 1u);
  bool unrolled = false;
  for (const auto& c : out->candidates) unrolled = unrolled || c.guards.at("loop_unrolling");
  EXPECT_TRUE(unrolled) << "the initial design covers the unpicked declared method too";
}

// Issue 39 item 2(b): the warm start's points lead the first batch, in order, with their reasons; one invalid in this
// space or measured already is skipped; they need not lie in this iteration's allowed values; the rest of the batch is
// the usual first design. Once measured they are not proposed again.
TEST_F(BuiltinGeneratorTest, WarmStartPointsLeadTheFirstBatchAndAreNotProposedAgain) {
  BuiltinGenerator gen;
  in_.k = 6;
  // Dims: THREADS, ITEMS, then the guards in declaration order (vectorized_access, grid_stride_loop, loop_unrolling).
  ASSERT_EQ(space_.dims.size(), 5u);
  const Config a = {3, 2, 1, 0, 1};    // THREADS 512, ITEMS 4 (2048): valid, loop_unrolling on (not picked)
  const Config bad = {3, 3, 0, 0, 0};  // THREADS 512, ITEMS 8: breaks THREADS * ITEMS <= 2048
  const Config b = {0, 1, 0, 1, 0};    // THREADS 64, ITEMS 2, grid_stride_loop on
  const Config measured = space_.default_config();
  in_.warm_start = {{a, "warm start: from n=1000 (record 7)"}, {bad, "warm start: invalid here"},
                    {measured, "warm start: the baseline"}, {b, "warm start: from n=4000 (record 9)"}};
  auto out = gen.generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 6u);
  EXPECT_EQ(out->candidates[0].config, a);
  EXPECT_EQ(out->candidates[1].config, b);
  for (const auto& c : out->candidates) EXPECT_NE(c.config, bad);
  bool noted = false;
  for (const auto& n : out->notes)
    noted = noted || (n.find("i1c1: THREADS=512,ITEMS=4") != std::string::npos &&
                      n.find("warm start: from n=1000 (record 7)") != std::string::npos);
  EXPECT_TRUE(noted) << "the note names where the point came from";
  // The third candidate on is the usual first design: the incumbent with this iteration's picks.
  EXPECT_EQ(out->candidates[2].methods, (std::vector<std::string>{"grid_stride_loop", "vectorized_access"}));
  // Measured, they lead no later batch.
  for (const auto& c : out->candidates) in_.history.push_back({c, CandidateStatus::kOk, 1.1, 1});
  in_.iteration = 2;
  auto next = gen.generate(in_);
  ASSERT_TRUE(next.ok());
  for (const auto& c : next->candidates) {
    EXPECT_NE(c.config, a);
    EXPECT_NE(c.config, b);
  }
}

TEST(BuiltinGenerator, WhenTheAllowedConfigurationsAreSpentItExploresTheRestAndSaysSo) {
  fs::path dir = fs::path(::testing::TempDir()) / "kopt_builtin_widen";
  fs::create_directories(dir);
  ASSERT_TRUE(util::write_file_atomic(dir / "k.cu", "extern \"C\" void solve(float* y) {}\n").ok());
  SearchSpace s;
  Dim p;
  p.kind = DimKind::kParam;
  p.name = "P";
  p.values = {1, 2};
  Dim f;  // a compiler-flag method: off unless the profile picks it
  f.kind = DimKind::kFlag;
  f.name = "KOPT_L1_BYPASS_LOADS";
  f.method = "l1_bypass_loads";
  f.values = {0, 1};
  s.dims = {p, f};
  GeneratorInput in;
  in.registry = &reg();
  in.space = &s;
  in.baseline_source = dir / "k.cu";
  in.iteration_dir = dir;
  in.k = 4;
  Candidate base = baseline_candidate(s, reg(), in.baseline_source, "extern \"C\" void solve(float* y) {}\n");
  Measurement m{base, CandidateStatus::kOk, 1.0, 0};
  in.champion = m;
  in.history = {m};
  BuiltinGenerator gen;
  std::vector<std::vector<std::string>> notes;
  std::vector<Config> proposed;
  for (int it = 1; it <= 4; ++it) {
    in.iteration = it;
    auto out = gen.generate(in);
    ASSERT_TRUE(out.ok());
    notes.push_back(out->notes);
    for (const auto& c : out->candidates) {
      proposed.push_back(*c.config);
      in.history.push_back({c, CandidateStatus::kOk, 1.0, it});
    }
  }
  ASSERT_EQ(proposed.size(), 3u) << "P=2 first (the flag off), then the two configurations with the flag on";
  EXPECT_EQ(proposed[0], (Config{1, 0}));
  auto said = [](const std::vector<std::string>& n) {
    return std::any_of(n.begin(), n.end(), [](const std::string& x) { return x.find("exploring the rest") != std::string::npos; });
  };
  EXPECT_FALSE(said(notes[0]));
  EXPECT_TRUE(said(notes[1]));
  EXPECT_EQ(notes[2].back(), "the search space is exhausted: every allowed configuration was measured");
}

TEST(AllowedValues, APickIsFreeAndOnlyAnEffectiveChampionMethodIsPinned) {
  SearchSpace s;
  Dim p;
  p.kind = DimKind::kParam;
  p.name = "T";
  p.values = {64, 128};
  Dim m;
  m.kind = DimKind::kGuard;
  m.name = "KOPT_VECTORIZED_ACCESS";
  m.method = "vectorized_access";
  m.values = {0, 1};
  m.default_index = 0;
  s.dims = {p, m};
  MethodSelection none, pick;
  pick.picks.push_back({});
  pick.picks.back().id = "vectorized_access";
  EXPECT_EQ(allowed_values(s, std::nullopt, none)[1], (std::vector<int>{0}));     // not picked: off
  EXPECT_EQ(allowed_values(s, std::nullopt, pick)[1], (std::vector<int>{0, 1}));  // picked: the search decides
  EXPECT_EQ(allowed_values(s, std::nullopt, none)[0], (std::vector<int>{0, 1}));  // params: every value
  // A declared guard the search may use (explorable: usable here, not judged ineffective) is free without a pick;
  // a compiler-flag method is not: it needs the profile's evidence.
  MethodSelection usable;
  usable.explorable = {"vectorized_access", "l1_bypass_loads"};
  EXPECT_EQ(allowed_values(s, std::nullopt, usable)[1], (std::vector<int>{0, 1}));
  SearchSpace with_flag = s;
  Dim f;
  f.kind = DimKind::kFlag;
  f.name = "KOPT_L1_BYPASS_LOADS";
  f.method = "l1_bypass_loads";
  f.values = {0, 1};
  with_flag.dims.push_back(f);
  EXPECT_EQ(allowed_values(with_flag, std::nullopt, usable)[2], (std::vector<int>{0}));
  Candidate champ;
  champ.guards["vectorized_access"] = true;
  EXPECT_EQ(allowed_values(s, champ, none)[1], (std::vector<int>{0, 1}));  // on, never judged: may be dropped
  std::vector<MethodVerdict> v = {{"vectorized_access", Verdict::kEffective, 1, false, {}}};
  EXPECT_EQ(allowed_values(s, champ, none, v)[1], (std::vector<int>{1}));  // proven: pinned on
  v.push_back({"vectorized_access", Verdict::kIneffective, 2, false, {}});        // the latest verdict counts
  EXPECT_EQ(allowed_values(s, champ, none, v)[1], (std::vector<int>{0, 1}));
  // Unverified (SASS cannot confirm it) but the ablation measured a significant saving: kept on. The H200
  // transpose (check10): smem_padding, no SASS signature, 0.1686 ms with it and 0.3037 ms without.
  v.push_back({"vectorized_access", Verdict::kUnverified, 3, true, {}});
  EXPECT_EQ(allowed_values(s, champ, none, v)[1], (std::vector<int>{1}));
  v.push_back({"vectorized_access", Verdict::kUnverified, 4, false, {}});  // unverified, no measured saving
  EXPECT_EQ(allowed_values(s, champ, none, v)[1], (std::vector<int>{0, 1}));
  v.push_back({"vectorized_access", Verdict::kMeasuredEffective, 5, true, {}});  // effective by measurement: pinned
  EXPECT_EQ(allowed_values(s, champ, none, v)[1], (std::vector<int>{1}));
}

TEST_F(BuiltinGeneratorTest, NeverProposesWhatWasMeasuredAndUsesTheHistory) {
  BuiltinGenerator gen;
  std::set<std::string> hashes = {in_.history[0].candidate.content_hash};
  for (int it = 1; it <= 6; ++it) {
    in_.iteration = it;
    auto out = gen.generate(in_);
    ASSERT_TRUE(out.ok()) << out.error().message;
    if (out->candidates.empty()) break;  // all 15 configurations with the methods on are measured
    for (const auto& c : out->candidates) {
      EXPECT_TRUE(hashes.insert(c.content_hash).second) << "re-proposed " << space_.key(*c.config);
      // A synthetic timing: more items per thread and 128 threads are best.
      double ms = 1.0 / static_cast<double>(c.params.at("ITEMS")) + (c.params.at("THREADS") == 128 ? 0 : 0.3);
      in_.history.push_back({c, CandidateStatus::kOk, ms, it});
    }
    // The champion (with its methods on) is the fastest so far.
    auto best = std::min_element(in_.history.begin(), in_.history.end(),
                                 [](const Measurement& a, const Measurement& b) { return *a.median_ms < *b.median_ms; });
    in_.champion = *best;
  }
  EXPECT_EQ(in_.champion->candidate.params.at("ITEMS"), 8);
  EXPECT_EQ(in_.champion->candidate.params.at("THREADS"), 128);
}

// A proven method is pinned on, but its proof holds at the champion it was ablated on: one candidate of each batch
// is chosen with the pins released (the H200 sgemm_tunable seed that never left cp_async_pipeline on, check15).
// The ablation's own variant is a measurement: never proposed again.
TEST_F(BuiltinGeneratorTest, OneCandidateABatchIsFreeOfThePinsAndAblationsAreNotProposedAgain) {
  const int vd = space_.method_dim("vectorized_access");
  ASSERT_GE(vd, 0);
  Config on = space_.default_config();
  on[static_cast<size_t>(vd)] = 1;
  on[static_cast<size_t>(space_.dim_index("THREADS"))] = 1;  // 128, not the baseline's 256
  Candidate champ = candidate_from_config(space_, reg(), on, source_, kKernel, "builtin");
  champ.id = "i1c1";
  in_.champion = Measurement{champ, CandidateStatus::kOk, 0.5, 1};
  in_.history.push_back(*in_.champion);
  in_.verdicts = {{"vectorized_access", Verdict::kEffective, 1, true, in_.metrics}};
  Config off = on;
  off[static_cast<size_t>(vd)] = 0;
  Candidate ablated = candidate_from_config(space_, reg(), off, source_, kKernel, "ablation");
  ASSERT_NE(ablated.content_hash, in_.history[0].candidate.content_hash) << "the baseline differs from the ablation point";
  in_.ablations = {{ablated, CandidateStatus::kOk, 0.9, 1}};
  // Iteration 1 also measured the method off at more items per thread, nearly as fast as the champion: off may pay
  // there, which the pinned candidates can never find out.
  Config far = off;
  far[static_cast<size_t>(space_.dim_index("ITEMS"))] = 3;
  in_.history.push_back({candidate_from_config(space_, reg(), far, source_, kKernel, "builtin"), CandidateStatus::kOk, 0.55, 1});
  BuiltinGenerator gen;
  int released_total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    GeneratorInput in = in_;
    in.iteration = 2;
    in.seed = seed;
    auto out = gen.generate(in);
    ASSERT_TRUE(out.ok()) << out.error().message;
    ASSERT_EQ(out->candidates.size(), 4u);
    int released = 0, said = 0;
    for (const auto& c : out->candidates) {
      EXPECT_NE(c.content_hash, ablated.content_hash) << "re-proposed the ablation's variant";
      EXPECT_NE(*c.config, off);
      released += !c.guards.at("vectorized_access");
    }
    for (const auto& n : out->notes) said += n.find("(pins released: ") != std::string::npos;
    EXPECT_EQ(said, 1) << "seed " << seed << ": one candidate a batch is chosen with the pins released";
    EXPECT_LE(released, 1) << "seed " << seed << ": only that one may switch the pinned method off";
    released_total += released;
  }
  EXPECT_GE(released_total, 1) << "the released candidate switches the pinned method off in some seeds";

  // Without a pin nothing is released: every candidate comes from the evidence's own space.
  in_.verdicts.clear();
  auto free = gen.generate(in_);
  ASSERT_TRUE(free.ok());
  for (const auto& n : free->notes) EXPECT_EQ(n.find("pins released"), std::string::npos) << n;
}

TEST_F(BuiltinGeneratorTest, IneffectiveMethodsStayOffAndFailuresCountAsMeasured) {
  in_.verdicts = {{"vectorized_access", Verdict::kIneffective, 1, false, in_.metrics}};
  BuiltinGenerator gen;
  auto out = gen.generate(in_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->selection.ids(), std::vector<std::string>{"grid_stride_loop"});
  for (const auto& c : out->candidates) EXPECT_EQ(c.defines.at("KOPT_VECTORIZED_ACCESS"), "0");

  // A configuration that failed to compile is never proposed again either.
  GeneratorInput in = in_;
  in.history.push_back({out->candidates[0], CandidateStatus::kCompileFailed, std::nullopt, 1});
  auto again = gen.generate(in);
  ASSERT_TRUE(again.ok());
  for (const auto& c : again->candidates) EXPECT_NE(c.content_hash, out->candidates[0].content_hash);
}

TEST_F(BuiltinGeneratorTest, ExhaustedSpaceGivesNoCandidatesAndSaysSo) {
  // Only 1 method slot and a tiny space: measure everything, then ask again.
  in_.plan.slots = {};
  BuiltinGenerator gen;
  for (int it = 1; it < 80; ++it) {
    in_.iteration = it;
    auto out = gen.generate(in_);
    ASSERT_TRUE(out.ok());
    if (out->candidates.empty()) {
      EXPECT_EQ(out->notes.back(), "the search space is exhausted: every allowed configuration was measured");
      // Once the methods the evidence allows are spent, the rest of the space is explored too (methods the profile
      // did not pick, compiler flags): the search ends with every valid configuration of the whole space measured.
      size_t valid = 0;
      Config c(space_.dims.size(), 0);
      while (true) {
        valid += space_.valid(c);
        size_t d = 0;
        while (d < c.size() && ++c[d] == static_cast<int>(space_.dims[d].values.size())) c[d++] = 0;
        if (d == c.size()) break;
      }
      EXPECT_EQ(in_.history.size(), valid);
      EXPECT_GT(valid, 15u) << "more than the 15 parameter points (4 THREADS x 4 ITEMS, 512 x 8 over 2048)";
      ASSERT_TRUE(out->outlook);
      EXPECT_EQ(out->outlook->remaining, 0);
      return;
    }
    for (const auto& c : out->candidates) in_.history.push_back({c, CandidateStatus::kOk, 1.0, it});
  }
  FAIL() << "the space never ran out";
}

TEST_F(BuiltinGeneratorTest, MissingSourceIsAnError) {
  in_.baseline_source = dir_ / "missing.cu";
  BuiltinGenerator gen;
  EXPECT_FALSE(gen.generate(in_).ok());
}

}  // namespace
}  // namespace kopt::search
