#include "device/gpu_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/json_io.h"

namespace kopt::device {
namespace {

namespace fs = std::filesystem;

DriverInfo h200() {
  DriverInfo d;
  d.driver_version = 13000;
  GpuInfo g;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-1234";
  g.cc_major = 9;
  g.sm_count = 132;
  g.l2_bytes = 60LL << 20;
  g.memory_bytes = 141LL << 30;
  g.sm_clock_khz = 1980000;
  g.mem_clock_khz = 3201000;
  g.mem_bus_width_bits = 6144;
  g.smem_per_block_optin_bytes = 232448;
  d.gpus.push_back(g);
  return d;
}

TEST(GpuCache, TheAnswerRoundTripsAndIsUsedOnlyUnderItsKey) {
  auto back = from_cache_json(util::Json::parse(to_cache_json(h200()).dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(util::Json(to_cache_json(*back)), to_cache_json(h200()));
  EXPECT_FALSE(from_cache_json(util::Json::object()).ok());
  const fs::path file = fs::temp_directory_path() / ("kopt_gpus_" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(util::write_json_atomic(file, "gpus", {{"key", "k1"}, {"answer", to_cache_json(h200())}}).ok());
  bool cached = false;
  auto hit = query_gpus_cached(&cached, file, "k1");
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(cached);
  EXPECT_EQ(hit->gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(hit->driver_version_text(), "13.0");
  // Another key (a new driver, a reboot, other visible devices): the driver is asked.
  auto miss = query_gpus_cached(&cached, file, "k2");
  EXPECT_FALSE(cached);
  if (!miss.ok()) {  // no GPU here: the failure is not cached, the old answer stays
    auto j = util::read_json(file);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ((*j)["key"], "k1");
  }
  // No driver to key by: never cached.
  (void)query_gpus_cached(&cached, file, "");
  EXPECT_FALSE(cached);
  fs::remove(file);
}

}  // namespace
}  // namespace kopt::device
