#include "loop/warm_start.h"

#include <gtest/gtest.h>

#include <cmath>

#include "db/testing.h"
#include "search/testing.h"

namespace kopt::loop {
namespace {

search::Dim param(const std::string& name, std::vector<int64_t> values) {
  search::Dim d;
  d.name = name;
  d.values = std::move(values);
  return d;
}

// TILE {16,32,64,128} x UNROLL {1,2,4} x vectorized_access {0,1}, TILE * UNROLL <= 256.
search::SearchSpace tile_space() {
  search::SearchSpace s;
  s.dims = {param("TILE", {16, 32, 64, 128}), param("UNROLL", {1, 2, 4})};
  search::Dim g;
  g.name = "KOPT_VECTORIZED_ACCESS";
  g.kind = search::DimKind::kGuard;
  g.method = "vectorized_access";
  g.values = {0, 1};
  s.dims.push_back(g);
  auto e = search::Expr::parse("TILE * UNROLL <= 256");
  EXPECT_TRUE(e.ok());
  s.constraints = {{std::move(e).value(), "test:1"}};
  return s;
}

int64_t next_id = 1;
db::Record rec(const Dims& dims, int64_t tile, int64_t unroll, bool vec, double median_ms, int64_t at_s = 100) {
  db::Record r = db::testing::sample_record(dims);
  r.id = next_id++;
  r.key.config = {{"params", {{"TILE", tile}, {"UNROLL", unroll}}}, {"guards", {{"vectorized_access", vec}}}};
  r.median_ms = median_ms;
  r.recorded_unix_s = at_s;
  r.recorded_at = "2026-12-03T10:00:00Z";
  return r;
}

WarmStartContext context(const Dims& dims) {
  db::Record r = db::testing::sample_record(dims);
  return {r.key.kernel_hash, dims, r.key.dtypes, r.key.gpu_model};
}

const Dims kA = {{"n", 1 << 20}};
const Dims kB = {{"n", 1 << 22}};  // 4x A
const Dims kC = {{"n", 1 << 16}};  // A / 16

TEST(WarmStart, AStoredConfigurationMapsIntoTheSpaceOrIsDropped) {
  const auto s = tile_space();
  const util::Json ok = {{"params", {{"TILE", 64}, {"UNROLL", 2}}}, {"guards", {{"vectorized_access", true}}}};
  EXPECT_EQ(config_in_space(ok, s), (search::Config{2, 1, 1}));
  // A method the record does not name is off.
  EXPECT_EQ(config_in_space({{"params", {{"TILE", 16}, {"UNROLL", 1}}}, {"guards", util::Json::object()}}, s),
            (search::Config{0, 0, 0}));
  struct Row {
    const char* what;
    util::Json config;
  };
  const std::vector<Row> dropped = {
      {"a value this space does not have", {{"params", {{"TILE", 48}, {"UNROLL", 2}}}, {"guards", util::Json::object()}}},
      {"a param missing", {{"params", {{"TILE", 64}}}, {"guards", util::Json::object()}}},
      {"breaks a constraint", {{"params", {{"TILE", 128}, {"UNROLL", 4}}}, {"guards", util::Json::object()}}},
      {"a generator's candidate", {{"params", {{"TILE", 64}, {"UNROLL", 2}}}, {"guards", util::Json::object()}, {"source_hash", "ab"}}},
      {"the kernel as given (bench)", util::Json::object()},
      {"not an object", util::Json::array()},
  };
  for (const auto& r : dropped) EXPECT_FALSE(config_in_space(r.config, s)) << r.what;
  // Params of another space (an extra one) are ignored: the mapping reads this space's dimensions.
  util::Json extra = ok;
  extra["params"]["STAGES"] = 3;
  EXPECT_EQ(config_in_space(extra, s), (search::Config{2, 1, 1}));
}

// A block size the launcher computes from d (`follows=d`): a stored 128 at d = 4096 is 256 at d = 8192, to the nearest
// value of the set in log scale; 0 (the launcher's own) and params that follow no dim that changed stay as stored.
TEST(WarmStart, AParamThatFollowsADimIsScaledByItsRatio) {
  search::SearchSpace s;
  s.dims = {param("VEC", {1, 2, 4, 8, 16}), param("BLOCK", {0, 32, 64, 128, 256, 512, 1024})};
  s.dims[1].follows = {"d", "VEC"};  // VEC is no dim: ignored
  auto cfg = [](int64_t vec, int64_t block) {
    return util::Json{{"params", {{"VEC", vec}, {"BLOCK", block}}}, {"guards", util::Json::object()}};
  };
  const Dims from = {{"batch", 8192}, {"d", 4096}}, wider = {{"batch", 4096}, {"d", 8192}},
             more_rows = {{"batch", 16384}, {"d", 4096}};
  std::string scaled;
  EXPECT_EQ(config_in_space(cfg(8, 128), s, nullptr, &from, &wider, &scaled), (search::Config{3, 4})) << "BLOCK 256";
  EXPECT_EQ(scaled, "BLOCK 128 -> 256");
  scaled.clear();
  EXPECT_EQ(config_in_space(cfg(8, 128), s, nullptr, &from, &more_rows, &scaled), (search::Config{3, 3})) << "d kept: 128";
  EXPECT_TRUE(scaled.empty());
  EXPECT_EQ(config_in_space(cfg(8, 0), s, nullptr, &from, &wider), (search::Config{3, 0})) << "the launcher's own scales itself";
  const Dims three_quarters = {{"batch", 8192}, {"d", 3072}};  // 512 * 0.75 = 384: 512 is nearer than 256 in log scale
  EXPECT_EQ(config_in_space(cfg(2, 512), s, nullptr, &from, &three_quarters), (search::Config{1, 5}));
  EXPECT_EQ(config_in_space(cfg(8, 1024), s, nullptr, &from, &wider), (search::Config{3, 6})) << "capped at the set's largest";
  EXPECT_EQ(config_in_space(cfg(8, 128), s), (search::Config{3, 3})) << "without dims: as stored";
}

TEST(WarmStart, ValuedFlagMethodsMapThroughTheRegistrysFlagParam) {
  const auto& reg = search::testing::test_registry();
  const search::Method* valued = nullptr;
  for (const auto& m : reg.methods())
    if (m.flag_param && !m.flag_param->values.empty()) valued = &m;
  ASSERT_NE(valued, nullptr);
  search::SearchSpace s;
  search::Dim f;
  f.name = valued->id;
  f.kind = search::DimKind::kFlag;
  f.method = valued->id;
  f.values = {0};
  for (int64_t v : valued->flag_param->values) f.values.push_back(v);
  s.dims = {f};
  const int64_t v = valued->flag_param->values.back();
  util::Json on = {{"params", {{valued->flag_param->name, v}}}, {"guards", {{valued->id, true}}}};
  EXPECT_EQ(config_in_space(on, s, &reg), (search::Config{static_cast<int>(f.values.size()) - 1}));
  EXPECT_FALSE(config_in_space(on, s)) << "without the registry the value is unknown";
  EXPECT_EQ(config_in_space({{"params", util::Json::object()}, {"guards", {{valued->id, false}}}}, s), (search::Config{0}));
}

// The table: which records a run at kB takes, from which shapes, in which order.
TEST(WarmStart, TheNearestShapesBestConfigurationsInOrder) {
  const auto s = tile_space();
  std::vector<db::Record> records = {
      // At A (distance ln 4 = 1.386 from B): four configurations, one measured twice (its newest record counts).
      rec(kA, 16, 1, false, 1.92), rec(kA, 64, 2, true, 0.90), rec(kA, 32, 2, false, 1.20), rec(kA, 64, 2, false, 1.00),
      rec(kA, 32, 2, false, 0.80, 50) /* older: its newest (1.20) counts */,
      // At C (distance ln 64 = 4.16): farther.
      rec(kC, 128, 1, true, 0.10), rec(kC, 64, 2, true, 0.20),
      // At B itself: reuse's business, not the warm start's.
      rec(kB, 128, 2, true, 0.01),
  };
  // Left out whatever its median: another GPU model, kernel, dtype, an incorrect record, dims of other names.
  db::Record gpu = rec(kA, 128, 1, false, 0.01);
  gpu.key.gpu_model = "NVIDIA A100";
  db::Record kernel = rec(kA, 128, 1, false, 0.01);
  kernel.key.kernel_hash = "ffffffffffffffffffffffffffffffff";
  db::Record dtype = rec(kA, 128, 1, false, 0.01);
  dtype.key.dtypes = {"float16", "float16", "float16"};
  db::Record wrong = rec(kA, 128, 1, false, 0.01);
  wrong.verdict = db::Verdict::kIncorrect;
  db::Record other_dims = rec({{"m", 1 << 20}}, 128, 1, false, 0.01);
  for (auto* r : {&gpu, &kernel, &dtype, &wrong, &other_dims}) records.push_back(*r);

  auto pts = warm_start_points(records, context(kB), s);
  ASSERT_EQ(pts.size(), 4u);
  // A first (nearest), its three fastest by median (not its fourth); then C's fastest.
  EXPECT_EQ(pts[0].key, "TILE=64,UNROLL=2,KOPT_VECTORIZED_ACCESS=1");
  EXPECT_EQ(pts[1].key, "TILE=64,UNROLL=2,KOPT_VECTORIZED_ACCESS=0");
  EXPECT_EQ(pts[2].key, "TILE=32,UNROLL=2,KOPT_VECTORIZED_ACCESS=0");
  EXPECT_DOUBLE_EQ(pts[2].median_ms, 1.20) << "a configuration's newest record at a shape counts";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(pts[i].from_dims, kA);
    EXPECT_NEAR(pts[i].distance, std::log(4.0), 1e-12);
    EXPECT_EQ(pts[i].rank, i + 1);
  }
  EXPECT_EQ(pts[3].key, "TILE=128,UNROLL=1,KOPT_VECTORIZED_ACCESS=1");
  EXPECT_EQ(pts[3].from_dims, kC);
  EXPECT_NEAR(pts[3].distance, std::log(64.0), 1e-12);
  // C's second (TILE 64, UNROLL 2, vec) was taken from A already: not twice.
  // One shape only: A's three.
  WarmStartOptions one;
  one.shapes = 1;
  EXPECT_EQ(warm_start_points(records, context(kB), s, nullptr, one).size(), 3u);
}

TEST(WarmStart, OptionsBoundTheShapesAndPointsAndIllegalPointsArePassedOver) {
  const auto s = tile_space();
  std::vector<db::Record> records = {rec(kA, 128, 4, false, 0.5) /* breaks the constraint here */,
                                     rec(kA, 48, 2, false, 0.6) /* not a value here */, rec(kA, 64, 2, false, 0.7),
                                     rec(kA, 32, 1, false, 0.8), rec(kC, 16, 2, false, 0.1)};
  WarmStartOptions o;
  o.shapes = 1;
  o.per_shape = 1;
  auto pts = warm_start_points(records, context(kB), s, nullptr, o);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].key, "TILE=64,UNROLL=2,KOPT_VECTORIZED_ACCESS=0");
  EXPECT_EQ(pts[0].rank, 3) << "the third fastest there: the two before it do not map into this space";
  EXPECT_NE(pts[0].reason().find("warm start: 3rd fastest at n=1048576 (distance 1.39), 0.7 ms there (record"),
            std::string::npos)
      << pts[0].reason();
  // Equal distances: the newest shape first (A = B / 4 and D = B * 4 are both ln 4 away).
  const Dims kD = {{"n", 1 << 24}};
  records = {rec(kA, 64, 2, false, 0.7, 100), rec(kD, 32, 2, false, 0.9, 200)};
  pts = warm_start_points(records, context(kB), s, nullptr, o);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].from_dims, kD);
  // Nothing stored: nothing to start from.
  EXPECT_TRUE(warm_start_points({}, context(kB), s).empty());
}

TEST(WarmStart, APointRoundTripsThroughJsonAndBecomesASuggestion) {
  WarmStartPoint p;
  p.config = {2, 1, 1};
  p.key = "TILE=64,UNROLL=2,KOPT_VECTORIZED_ACCESS=1";
  p.from_dims = kA;
  p.distance = 1.386;
  p.rank = 1;
  p.median_ms = 0.9;
  p.record_id = 12;
  p.run_dir = "kopt_runs/run_x";
  p.candidate_id = "i1c1";
  auto back = warm_start_point_from_json(to_json(p));
  ASSERT_TRUE(back);
  EXPECT_EQ(to_json(*back), to_json(p));
  EXPECT_FALSE(warm_start_point_from_json(util::Json::object()));
  auto sug = suggestions({p});
  ASSERT_EQ(sug.size(), 1u);
  EXPECT_EQ(sug[0].config, p.config);
  EXPECT_EQ(sug[0].reason, p.reason());
}

}  // namespace
}  // namespace kopt::loop
