#include "db/reuse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "db/testing.h"

namespace kopt::db {
namespace {

Record stored(int64_t id, int64_t at, const Dims& dims, int64_t tile = 64) {
  Record r = testing::sample_record(dims, tile);
  r.id = id;
  r.recorded_unix_s = at;
  return r;
}

const Dims k4096 = {{"M", 4096}, {"N", 4096}, {"K", 4096}};

TEST(DbReuse, TheNewestRecordUnderTheSameKeyIsReused) {
  std::vector<Record> rows = {stored(1, 100, k4096), stored(2, 300, k4096), stored(3, 200, k4096), stored(4, 400, k4096, 128)};
  auto r = find_reusable(testing::sample_record(k4096).key, rows);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 2);  // id 4 is newer but another configuration
}

TEST(DbReuse, NothingIsReusedWhenAnyKeyFieldDiffers) {
  std::vector<Record> rows = {stored(1, 100, k4096)};
  RecordKey k = testing::sample_record(k4096).key;
  k.driver_version = "575.51.03";
  EXPECT_FALSE(find_reusable(k, rows));
  EXPECT_FALSE(find_reusable(testing::sample_record(k4096).key, {}));
}

// Issue 39 item 2: a change to any one field of the key is another key, so nothing measured before is reused.
TEST(DbReuse, EveryKeyFieldInvalidatesAReuse) {
  const std::vector<Record> rows = {stored(1, 100, k4096)};
  const RecordKey base = testing::sample_record(k4096).key;
  ASSERT_TRUE(find_reusable(base, rows));
  const std::vector<std::pair<std::string, std::function<void(RecordKey&)>>> changes = {
      {"kernel_hash", [](RecordKey& k) { k.kernel_hash = "fedcba9876543210fedcba9876543210"; }},
      {"config (a parameter)", [](RecordKey& k) { k.config["params"]["UNROLL"] = 4; }},
      {"config (a guard)", [](RecordKey& k) { k.config["guards"]["vec4"] = false; }},
      {"config (a generator's source)", [](RecordKey& k) { k.config["source_hash"] = "00ff"; }},
      {"dims", [](RecordKey& k) { k.dims["K"] = 2048; }},
      {"dtypes", [](RecordKey& k) { k.dtypes[0] = "float16"; }},
      {"gpu_model", [](RecordKey& k) { k.gpu_model = "NVIDIA H100 80GB HBM3"; }},
      {"driver_version", [](RecordKey& k) { k.driver_version = "575.51.03"; }},
      {"nvcc_version", [](RecordKey& k) { k.nvcc_version = "12.8.93"; }},
      {"compile_flags (another)", [](RecordKey& k) { k.compile_flags.push_back("-lineinfo"); }},
      {"compile_flags (order)", [](RecordKey& k) { std::swap(k.compile_flags[0], k.compile_flags[1]); }},
      {"timing_method", [](RecordKey& k) { k.timing_method = "events_default_stream"; }},
      {"l2_mode", [](RecordKey& k) { k.l2_mode = "warm"; }},
      {"measure_mode", [](RecordKey& k) { k.measure_mode = "time"; }},
      {"kopt_version", [](RecordKey& k) { k.kopt_version = "0.2.0"; }},
  };
  for (const auto& [what, change] : changes) {
    RecordKey k = base;
    change(k);
    EXPECT_NE(key_hash(k), key_hash(base)) << what;
    EXPECT_FALSE(find_reusable(k, rows)) << what << " changed, yet the record was reused";
  }
}

TEST(DbReuse, ShapeDistanceIsTheNormOfTheDimsLogRatios) {
  Dims a = {{"M", 4096}, {"N", 1024}}, b = {{"M", 2048}, {"N", 4096}};
  ASSERT_TRUE(shape_distance(a, b));
  EXPECT_NEAR(*shape_distance(a, b), std::sqrt(std::log(2.0) * std::log(2.0) + std::log(4.0) * std::log(4.0)), 1e-12);
  EXPECT_DOUBLE_EQ(*shape_distance(a, b), *shape_distance(b, a));
  EXPECT_DOUBLE_EQ(*shape_distance(a, a), 0);
  // Halving and doubling are equally far.
  EXPECT_DOUBLE_EQ(*shape_distance({{"M", 2048}}, {{"M", 4096}}), *shape_distance({{"M", 8192}}, {{"M", 4096}}));
  EXPECT_FALSE(shape_distance({{"M", 1}}, {{"N", 1}}));
  EXPECT_FALSE(shape_distance({{"M", 1}}, {{"M", 1}, {"N", 1}}));
}

TEST(DbReuse, NearestShapesAreOrderedByDistanceOnePerShape) {
  Dims asked = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  std::vector<Record> rows = {
      stored(1, 100, {{"M", 8192}, {"N", 4096}, {"K", 4096}}),  // ln 2
      stored(2, 100, {{"M", 1024}, {"N", 4096}, {"K", 4096}}),  // ln 4
      stored(3, 100, {{"M", 4096}, {"N", 2048}, {"K", 4096}}),  // ln 2, same distance as id 1
      stored(4, 200, {{"M", 4096}, {"N", 2048}, {"K", 4096}}),  // same shape as id 3, newer
      stored(5, 100, {{"M", 4096}, {"N", 4096}}),               // other dim names: not comparable
      stored(6, 100, {{"M", 4096}, {"N", 4096}, {"K", 4096}}),  // the same shape: distance 0
  };
  auto n = nearest_shapes(asked, rows, 3);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].record.id, 6);
  EXPECT_DOUBLE_EQ(n[0].distance, 0);
  EXPECT_EQ(n[1].record.id, 4);  // ln 2, the newer of the two at that distance, and the newest at its shape
  EXPECT_EQ(n[2].record.id, 1);
  EXPECT_NEAR(n[2].distance, std::log(2.0), 1e-12);
  EXPECT_EQ(nearest_shapes(asked, rows, 10).size(), 4u);  // ids 6, 4, 1, 2: one per shape, id 5 left out
  EXPECT_TRUE(nearest_shapes(asked, rows, 0).empty());
}

}  // namespace
}  // namespace kopt::db
