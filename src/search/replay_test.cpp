#include "search/replay.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "search/testing.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "search/derive.h"
#include "search/measured_table.h"
#include "search/selection.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

const Registry& reg() { return testing::test_registry(); }

// The space kopt derives from a kernel of the repository (flag methods off), its instrumented copy written to TempDir
// as `copy_name`, and the measured table read from tests/data (`table`): what the replays of derived spaces start from.
struct DerivedReplay {
  Result<SearchSpace> space = internal_error("not derived");
  Result<MeasuredTable> table = internal_error("not read");
  std::string source, table_path;
};
DerivedReplay derived_replay(const std::string& kernel, const std::string& copy_name, const std::string& table) {
  DerivedReplay r;
  const fs::path root = fs::path(testing_support::test_data_dir()).parent_path().parent_path();
  auto text = util::read_file(root / kernel);
  if (!text) return r.space = text.error(), r;
  auto d = derive(*text, "kernel.cu");
  if (!d) return r.space = d.error(), r;
  const fs::path source = fs::path(::testing::TempDir()) / copy_name;
  if (auto st = util::write_file_atomic(source, d->instrumented); !st) return r.space = st.error(), r;
  r.source = source.string();
  auto a = parse_annotations(d->instrumented, r.source);
  if (!a) return r.space = a.error(), r;
  SpaceOptions so;
  so.offer_flag_methods = false;
  r.space = build_space(*a, reg(), so);
  r.table_path = (fs::path(testing_support::test_data_dir()) / table).string();
  auto csv = util::read_file(r.table_path);
  if (!csv) return r.table = csv.error(), r;
  r.table = parse_measured_table(*csv, r.table_path);
  return r;
}

const char* const kKernel = testing::kSmallSpaceKernel;

std::vector<Config> all_configs(const SearchSpace& s) {
  std::vector<Config> out;
  Config c = s.default_config();
  std::function<void(size_t)> walk = [&](size_t d) {
    if (d == s.dims.size()) {
      if (s.valid(c)) out.push_back(c);
      return;
    }
    for (size_t i = 0; i < s.dims[d].values.size(); ++i) {
      c[d] = static_cast<int>(i);
      walk(d + 1);
    }
  };
  walk(0);
  return out;
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override { load(kKernel, "k.cu"); }
  void load(const std::string& text, const std::string& name) {
    fs::path dir = fs::path(::testing::TempDir()) / "kopt_replay";
    fs::create_directories(dir);
    source_ = dir / name;
    ASSERT_TRUE(util::write_file_atomic(source_, text).ok());
    auto a = parse_annotations(text, source_.string());
    ASSERT_TRUE(a.ok()) << a.error().message;
    SpaceOptions o;
    o.offer_flag_methods = false;
    auto s = build_space(*a, reg(), o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    space_ = *s;
    configs_ = all_configs(space_);
  }
  void fill(const std::function<std::optional<double>(const Config&)>& ms) {
    table_ = {};
    for (const auto& c : configs_) table_.ms[c] = ms(c);
  }
  int64_t value(const Config& c, const std::string& dim) const {
    int d = space_.dim_index(dim);
    return space_.dims[static_cast<size_t>(d)].values[static_cast<size_t>(c[static_cast<size_t>(d)])];
  }
  Result<ReplayResult> replay(ReplayOptions o) {
    return replay_search({&space_, &reg(), source_, &table_, std::move(o)});
  }
  // Every run's count agrees with the order it evaluated in: the hit is the first configuration within the
  // target, nothing is evaluated twice, and the summary's quantiles are the runs' nearest ranks.
  void expect_consistent(const ReplayResult& r) {
    const double target = r.summary.target_ms;
    std::vector<int> sorted;
    for (const auto& run : r.runs) {
      SCOPED_TRACE(run.seed);
      EXPECT_EQ(static_cast<int>(run.evaluated.size()), run.evaluations);
      EXPECT_EQ(run.evaluated.front(), space_.default_config());
      EXPECT_EQ(std::set<Config>(run.evaluated.begin(), run.evaluated.end()).size(), run.evaluated.size());
      int first = 0;
      for (size_t i = 0; i < run.evaluated.size() && !first; ++i) {
        auto it = table_.ms.find(run.evaluated[i]);
        if (it != table_.ms.end() && it->second && *it->second <= target) first = static_cast<int>(i) + 1;
      }
      EXPECT_EQ(run.hit_evaluation.value_or(0), first);
      sorted.push_back(first ? first : 1 << 30);
    }
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&](double q) {
      int v = sorted[static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1];
      return v == 1 << 30 ? std::optional<int>() : std::optional<int>(v);
    };
    EXPECT_EQ(r.summary.median, rank(0.5));
    EXPECT_EQ(r.summary.p90, rank(0.9));
    EXPECT_EQ(r.summary.max, rank(1.0));
  }

  fs::path source_;
  SearchSpace space_;
  std::vector<Config> configs_;
  SpaceTable table_;
};

TEST_F(ReplayTest, EverythingWithinTheTargetTakesOneEvaluation) {
  ASSERT_EQ(configs_.size(), 34u);
  fill([&](const Config& c) { return 1.0 + 0.001 * value(c, "A"); });  // all within 1% of each other
  ReplayOptions o;
  o.runs = 7;
  auto r = replay(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary.space_size, 34u);
  EXPECT_EQ(r->summary.good, 34u);
  EXPECT_EQ(r->summary.median, 1);
  EXPECT_EQ(r->summary.max, 1);
  EXPECT_EQ(r->summary.reached, 7);
  for (const auto& run : r->runs) EXPECT_EQ(run.end, "reached");
  EXPECT_DOUBLE_EQ(r->summary.random_mean_evaluations, 35.0 / 35.0);
}

TEST_F(ReplayTest, CountsMatchTheEvaluationOrderOnARandomTable) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(1.0, 3.0);
  std::map<Config, double> t;
  for (const auto& c : configs_) t[c] = u(rng);
  t[space_.default_config()] = 3.5;  // a slow baseline
  fill([&](const Config& c) { return t.at(c); });
  for (auto policy : {ReplayPolicy::kLoop, ReplayPolicy::kFree}) {
    SCOPED_TRACE(replay_policy_name(policy));
    ReplayOptions o;
    o.runs = 20;
    o.iterations = 40;
    o.policy = policy;
    o.metrics = metrics_firing(reg(), space_.offered_methods());
    auto r = replay(o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    expect_consistent(*r);
    size_t good = std::count_if(t.begin(), t.end(), [&](const auto& kv) { return kv.second <= r->summary.target_ms; });
    EXPECT_EQ(r->summary.good, good);
    EXPECT_DOUBLE_EQ(r->summary.random_mean_evaluations, 35.0 / static_cast<double>(good + 1));
    EXPECT_EQ(r->summary.target_evaluations, 6);  // floor(20% of 34)
  }
}

TEST_F(ReplayTest, MethodSelectionDecidesWhenAGuardedBestIsReached) {
  // The best needs the method on; every other configuration is 10x slower.
  fill([&](const Config& c) { return value(c, "A") == 4 && value(c, "B") == 5 && value(c, "KOPT_VECTORIZED_ACCESS") == 1 ? 1.0 : 10.0; });
  ReplayOptions o;
  o.runs = 10;
  o.iterations = 40;
  // No evidence: the loop does not pick the method, but the kernel declares it, so the search may switch it on
  // (the profile's silence is no evidence against it): the best is found among the 34 configurations all the same.
  auto none = replay(o);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->summary.reached, 10);
  for (const auto& run : none->runs) {
    ASSERT_TRUE(run.hit_evaluation);
    EXPECT_LE(*run.hit_evaluation, 34);
  }
  // Evidence for it: picked in iteration 1, tried first on the incumbent, then searched as a free dimension
  // (off or on) with the parameters: every run finds the best among the 34 configurations.
  o.metrics = metrics_firing(reg(), space_.offered_methods());
  auto all = replay(o);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->summary.reached, 10);
  EXPECT_EQ(all->notes.front(), "iteration 1 method selection: picked vectorized_access");
  for (const auto& run : all->runs) {
    ASSERT_TRUE(run.hit_evaluation);
    EXPECT_LE(*run.hit_evaluation, 34);
    ASSERT_GE(run.evaluated.size(), 2u);
    EXPECT_EQ(value(run.evaluated[1], "KOPT_VECTORIZED_ACCESS"), 1);  // the first candidate tries the pick
  }
  expect_consistent(*all);
}

// The best point is the best "method on" point with the method off. Its ablation measures it, and a measured
// ablation variant is never proposed again: only adopting the faster variant, as the loop does
// (Optimizer::adopt_faster_variants), makes it an evaluation of the run.
TEST_F(ReplayTest, AnAblationVariantFasterThanTheChampionIsAdoptedAndCountsAsAnEvaluation) {
  fill([&](const Config& c) -> std::optional<double> {
    if (value(c, "A") == 4 && value(c, "B") == 5) return value(c, "KOPT_VECTORIZED_ACCESS") == 1 ? 2.0 : 1.0;
    return value(c, "KOPT_VECTORIZED_ACCESS") == 1 ? 5.0 : 10.0;
  });
  ReplayOptions o;
  o.runs = 10;
  o.iterations = 40;
  o.metrics = metrics_firing(reg(), space_.offered_methods());
  auto adopted = replay(o);
  ASSERT_TRUE(adopted.ok()) << adopted.error().message;
  EXPECT_EQ(adopted->summary.reached, 10);
  int via_ablation = 0;
  for (const auto& run : adopted->runs) {
    ASSERT_TRUE(run.hit_evaluation);
    const Config& hit = run.evaluated[static_cast<size_t>(*run.hit_evaluation - 1)];
    EXPECT_EQ(value(hit, "KOPT_VECTORIZED_ACCESS"), 0);
    // The point with the method on was measured first: the hit is its ablation's variant, adopted.
    const bool on_first = std::any_of(run.evaluated.begin(), run.evaluated.begin() + (*run.hit_evaluation - 1), [&](const Config& c) {
      return value(c, "A") == 4 && value(c, "B") == 5 && value(c, "KOPT_VECTORIZED_ACCESS") == 1;
    });
    via_ablation += on_first;
  }
  EXPECT_GT(via_ablation, 0);
  expect_consistent(*adopted);
  o.promote_ablations = false;
  auto kept = replay(o);
  ASSERT_TRUE(kept.ok());
  EXPECT_LT(kept->summary.reached, adopted->summary.reached) << "a variant the ablation measured is not proposed again";
}

TEST_F(ReplayTest, ConfigurationsMissingFromTheTableCountAsFailedEvaluations) {
  size_t i = 0;
  for (const auto& c : configs_)
    if (i++ % 2 == 0 || c == space_.default_config()) table_.ms[c] = 2.0 - 0.01 * static_cast<double>(i);
  table_.missing = configs_.size() - table_.ms.size();
  ReplayOptions o;
  o.runs = 10;
  o.iterations = 40;
  o.policy = ReplayPolicy::kFree;
  auto r = replay(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary.space_size, 34u);
  int unknown = 0;
  for (const auto& run : r->runs) {
    int absent = static_cast<int>(std::count_if(run.evaluated.begin(), run.evaluated.end(), [&](const Config& c) { return !table_.ms.count(c); }));
    EXPECT_EQ(run.unknown, absent);
    unknown += absent;
  }
  EXPECT_GT(unknown, 0);
  expect_consistent(*r);
}

TEST_F(ReplayTest, PatienceStopsARunWithoutProgress) {
  // A flat table with one far, fast corner: the champion never improves until that corner is found.
  fill([&](const Config& c) { return value(c, "A") == 8 && value(c, "B") == 2 ? 0.5 : 1.0; });
  ReplayOptions o;
  o.runs = 10;
  o.iterations = 40;
  o.patience = 1;
  o.policy = ReplayPolicy::kFree;
  auto r = replay(o);
  ASSERT_TRUE(r.ok());
  for (const auto& run : r->runs) {
    if (run.hit_evaluation) continue;
    EXPECT_EQ(run.end, "patience");
    EXPECT_EQ(run.evaluations, 1 + o.branches);  // one iteration without a faster champion, then the stop
  }
  expect_consistent(*r);
}

TEST_F(ReplayTest, AFailedBaselineIsAnError) {
  fill([&](const Config& c) { return c == space_.default_config() ? std::nullopt : std::optional<double>(1.0); });
  auto r = replay({});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("failed in the table"), std::string::npos) << r.error().message;
}

// The warm start's points (ReplayOptions::suggested) lead the first batch in their order, right after the baseline,
// each an evaluation; a point that breaks a constraint of the space is passed over; the hit among them is marked.
TEST_F(ReplayTest, SuggestedPointsAreMeasuredFirstAndCountAsEvaluations) {
  fill([&](const Config& c) { return value(c, "A") == 4 && value(c, "B") == 5 && value(c, "KOPT_VECTORIZED_ACCESS") == 1 ? 1.0 : 10.0; });
  auto point = [&](int64_t a, int64_t b, int64_t v) {
    Config c = space_.default_config();
    auto set = [&](const std::string& name, int64_t x) {
      const auto& d = space_.dims[static_cast<size_t>(space_.dim_index(name))];
      c[static_cast<size_t>(space_.dim_index(name))] = static_cast<int>(std::find(d.values.begin(), d.values.end(), x) - d.values.begin());
    };
    set("A", a), set("B", b), set("KOPT_VECTORIZED_ACCESS", v);
    return c;
  };
  const Config broken = point(8, 5, 0);  // A * B = 40 > 20
  ASSERT_FALSE(space_.valid(broken));
  for (auto policy : {ReplayPolicy::kLoop, ReplayPolicy::kFree}) {
    SCOPED_TRACE(replay_policy_name(policy));
    ReplayOptions o;
    o.runs = 5;
    o.policy = policy;
    o.metrics = metrics_firing(reg(), space_.offered_methods());
    o.suggested = {{point(2, 2, 0), "warm start: first"}, {broken, "warm start: broken"}, {point(4, 5, 1), "warm start: best"}};
    o.suggested_source = "old.csv at N=4096";
    auto r = replay(o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    for (const auto& run : r->runs) {
      ASSERT_GE(run.evaluated.size(), 3u);
      EXPECT_EQ(run.evaluated[1], point(2, 2, 0));
      EXPECT_EQ(run.evaluated[2], point(4, 5, 1));
      EXPECT_EQ(run.hit_evaluation, 3);
      EXPECT_TRUE(run.hit_suggested);
      EXPECT_EQ(run.suggested_evaluated, 2);
    }
    expect_consistent(*r);
    ASSERT_EQ(r->suggested.size(), 3u);
    EXPECT_FALSE(r->suggested[1].in_table);
    EXPECT_TRUE(r->suggested[2].within_target);
    const std::string text = format_replay(*r, o);
    EXPECT_NE(text.find("warm start: 3 point(s) from old.csv at N=4096"), std::string::npos) << text;
    EXPECT_NE(text.find("A=8,B=5,KOPT_VECTORIZED_ACCESS=0  (warm start: broken); here: not in the table"), std::string::npos) << text;
    EXPECT_NE(text.find("1:3w 2:3w 3:3w 4:3w 5:3w"), std::string::npos) << text;
    const auto j = to_json(*r, o);
    EXPECT_EQ(j["warm_start"]["points"].size(), 3u);
    EXPECT_EQ(j["runs"][0]["hit_suggested"], true);
  }
}

TEST(Replay, RandomSearchFormulas) {
  // 5 configurations, 2 good: the first good draw is 1st with p 2/5, 2nd 3/10, 3rd 1/5, 4th 1/10: mean 2.
  EXPECT_DOUBLE_EQ(random_mean_draws(5, 2), 2.0);
  EXPECT_NEAR(random_hit_probability(5, 2, 1), 0.4, 1e-12);
  EXPECT_NEAR(random_hit_probability(5, 2, 2), 0.7, 1e-12);
  EXPECT_NEAR(random_hit_probability(5, 2, 4), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(random_hit_probability(5, 0, 5), 0.0);
}

TEST(Replay, MetricsFiringMakesEveryMethodEligible) {
  for (const auto& m : reg().methods()) {
    auto metrics = metrics_firing(reg(), {m.id});
    if (m.evidence.empty()) continue;
    EXPECT_FALSE(fired_evidence(m, metrics).empty()) << m.id;
  }
}

// The example's real space: 496 configurations, and the three declared methods all picked at once.
TEST(Replay, SgemmTunableSpace) {
  fs::path kernel = fs::path(testing_support::test_data_dir()).parent_path().parent_path() / "examples/sgemm_tunable/kernel.cu";
  auto text = util::read_file(kernel);
  ASSERT_TRUE(text.ok());
  auto a = parse_annotations(*text, kernel.string());
  ASSERT_TRUE(a.ok());
  SpaceOptions so;
  so.offer_flag_methods = false;
  auto s = build_space(*a, reg(), so);
  ASSERT_TRUE(s.ok());
  auto configs = all_configs(*s);
  ASSERT_EQ(configs.size(), 496u);
  SpaceTable t;
  for (const auto& c : configs) {
    double ms = 1;
    for (size_t d = 0; d < c.size(); ++d) ms += 0.1 * std::abs(c[d] - 1) * static_cast<double>(d + 1);
    t.ms[c] = ms;
  }
  ReplayOptions o;
  o.runs = 3;
  o.metrics = metrics_firing(reg(), s->offered_methods());
  auto r = replay_search({&*s, &reg(), kernel, &t, o});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary.space_size, 496u);
  ASSERT_FALSE(r->notes.empty());
  for (const char* m : {"cp_async_pipeline", "smem_padding", "vectorized_access"})
    EXPECT_NE(r->notes.front().find(m), std::string::npos) << r->notes.front();
  for (const auto& run : r->runs) EXPECT_EQ(run.evaluations, static_cast<int>(run.evaluated.size()));
}

// The derived space of a plain SGEMM (examples/plain/sgemm_tiled, no @kopt lines) on its exhaustive H200 table:
// only 4 of the 132 points with at most 64 accumulators a thread are within 5% of the best, and the one-step start reaches one in a few evaluations (the
// space-filling start alone needed a median of 30, max 70).
TEST(Replay, TheDerivedSgemmSpaceOnItsH200TableIsSearchedFromTheKernelsOwnConstants) {
  auto dr = derived_replay("examples/plain/sgemm_tiled/kernel.cu", "kopt_replay_sgemm_tiled.cu",
                          "perf/h200-2026-12-01/sgemm_tiled_2000_measurements.csv");
  auto& s = dr.space;
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto& parsed = dr.table;
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const fs::path source = dr.source, csv_path = dr.table_path;
  // The table measured the derivation of its day (a band of values around each constant); today's spans the legal
  // range. The replay runs on the part of today's space the table measured: each dimension's values cut to the
  // table's, and the rows today's constraints exclude (more than 64 accumulators a thread, TM * TN > 64) left out.
  for (auto& dim : s->dims) {
    int col = -1;
    for (size_t i = 0; i < parsed->dims.size(); ++i)
      if (parsed->dims[i] == dim.name) col = static_cast<int>(i);
    if (col < 0) continue;
    int64_t def = dim.values[static_cast<size_t>(dim.default_index)];
    std::erase_if(dim.values, [&](int64_t v) {
      return std::none_of(parsed->rows.begin(), parsed->rows.end(), [&](const MeasuredRow& r) { return r.values[static_cast<size_t>(col)] == v; });
    });
    dim.default_index = static_cast<int>(std::find(dim.values.begin(), dim.values.end(), def) - dim.values.begin());
  }
  size_t before = parsed->rows.size();
  std::erase_if(parsed->rows, [&](const MeasuredRow& r) {
    Config c = s->default_config();
    for (size_t i = 0; i < parsed->dims.size(); ++i) {
      auto& dim = s->dims[static_cast<size_t>(s->dim_index(parsed->dims[i]))];
      c[static_cast<size_t>(s->dim_index(parsed->dims[i]))] =
          static_cast<int>(std::find(dim.values.begin(), dim.values.end(), r.values[i]) - dim.values.begin());
    }
    return !s->valid(c);
  });
  EXPECT_EQ(before - parsed->rows.size(), 81u) << "rows with TM * TN > 64";
  auto table = map_onto_space(*parsed, *s, csv_path.string());
  ASSERT_TRUE(table.ok()) << table.error().message;
  ReplayOptions o;
  o.runs = 30;
  o.within_pct = 5;
  o.metrics = metrics_firing(reg(), s->offered_methods());
  auto r = replay_search({&*s, &reg(), source, &*table, o});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary.space_size, 132u);
  EXPECT_EQ(r->summary.good, 4u);
  ASSERT_TRUE(r->summary.median && r->summary.max) << "every run gets there";
  std::printf("[replay] sgemm_tiled 2000^3, within 5%%: median %d, p90 %d, max %d evaluations of 132\n", *r->summary.median,
              r->summary.p90.value_or(-1), *r->summary.max);
  EXPECT_LE(*r->summary.median, 12);
  EXPECT_LE(*r->summary.max, 24) << "a live run's two iterations of 8 and the baseline, with room";
}

// CUTLASS's layernorm as kopt derives it (examples/corpus/cutlass_layernorm: items per thread T2, the block, 0 being
// the launcher's own) on its H200 sweep (2026-12-04, M=8192 N=4096, tests/data/perf/h200-2026-12-04/corpus_bench):
// 28 points, 14 of which leave part of each row unwritten (T2 * BLOCK * 4 < N), each with the share it left. With
// that share the feasibility model (search/feasibility.h) leaves them out, and the search reaches the sweep's best
// (T2=2, BLOCK=512) within a budget the search without it does not; the model never leaves out a correct point.
TEST(Replay, TheLayernormSpaceOnItsH200SweepLeavesOutWhatTheFailuresRuleOut) {
  auto dr = derived_replay("examples/corpus/cutlass_layernorm/kernel.cu", "kopt_replay_cutlass_layernorm.cu",
                          "perf/h200-2026-12-04/corpus_bench/cutlass_layernorm_measurements.csv");
  auto& s = dr.space;
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto& parsed = dr.table;
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const fs::path source = dr.source, csv_path = dr.table_path;
  auto table = map_onto_space(*parsed, *s, csv_path.string());
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->ms.size(), 28u);
  ASSERT_EQ(table->failed(), 14u);
  ASSERT_EQ(table->unwritten.size(), 14u);
  SpaceTable without = *table;  // today's signal-less failures: the model has nothing to learn from
  without.unwritten.clear();

  struct Case {
    int branches;
    double within_pct;
    int budget;  // evaluations, the baseline included
  };
  for (const Case& k : {Case{12, 0, 17}, Case{8, 3, 12}}) {
    SCOPED_TRACE(fmt::format("branches {}, within {}%", k.branches, k.within_pct));
    ReplayOptions o;
    o.runs = 30;
    o.branches = k.branches;
    o.within_pct = k.within_pct;
    o.iterations = 10;
    o.metrics = metrics_firing(reg(), s->offered_methods());
    auto with_model = replay_search({&*s, &reg(), source, &*table, o});
    auto before = replay_search({&*s, &reg(), source, &without, o});
    ASSERT_TRUE(with_model.ok()) << with_model.error().message;
    ASSERT_TRUE(before.ok()) << before.error().message;
    EXPECT_EQ(with_model->summary.best_key,
              "LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_T2=2,LAYERNORM_TWOPASSALGO_STORED_LOCALLY_E4_BLOCK=512");
    int within_budget = 0, within_budget_before = 0;
    size_t skipped = 0;
    for (const auto& run : with_model->runs) {
      within_budget += run.hit_evaluation && *run.hit_evaluation <= k.budget;
      skipped += run.skipped.size();
      for (const auto& c : run.skipped) EXPECT_FALSE(table->ms.at(c)) << "a correct point left out: " << s->key(c);
    }
    for (const auto& run : before->runs) {
      within_budget_before += run.hit_evaluation && *run.hit_evaluation <= k.budget;
      EXPECT_TRUE(run.skipped.empty());
    }
    std::printf(
        "[replay] cutlass_layernorm H200, %d a batch, within %g%%: median %d, max %d evaluations (without the model %d, %d); "
        "%d/30 within %d (without %d/30); %.1f built and not measured a run\n",
        k.branches, k.within_pct, with_model->summary.median.value_or(-1), with_model->summary.max.value_or(-1),
        before->summary.median.value_or(-1), before->summary.max.value_or(-1), within_budget, k.budget, within_budget_before,
        static_cast<double>(skipped) / 30);
    EXPECT_EQ(within_budget, 30) << "every run reaches it within the budget";
    EXPECT_LT(within_budget_before, 15) << "most runs without the model do not";
    EXPECT_GT(skipped, 0u);
  }
}

}  // namespace
}  // namespace kopt::search
