#include "dispatch/gpus.h"

#include <gtest/gtest.h>

namespace kopt::dispatch {
namespace {

device::GpuInfo gpu(int i, std::string name = "NVIDIA H200") {
  device::GpuInfo g;
  g.index = i;
  g.name = std::move(name);
  g.uuid = "GPU-0000000" + std::to_string(i);
  g.cc_major = 9;
  return g;
}

TEST(Gpus, ParsesAllAListAndARayCount) {
  EXPECT_EQ(parse_gpus("", false).value().kind, GpuSelection::Kind::kDefault);
  EXPECT_EQ(parse_gpus("all", false).value().kind, GpuSelection::Kind::kAll);
  auto l = parse_gpus("0, 2,3", false).value();
  EXPECT_EQ(l.kind, GpuSelection::Kind::kList);
  EXPECT_EQ(l.list, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(l.text(), "0,2,3");
  auto r = parse_gpus("8", true).value();
  EXPECT_EQ(r.kind, GpuSelection::Kind::kCount);
  EXPECT_EQ(r.count, 8);
}

TEST(Gpus, RefusesWhatIsNoSelectionNamingTheOption) {
  for (const char* bad : {"0,0", "gpu1", "1-3", "-1"}) {
    auto s = parse_gpus(bad, false);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("--gpus"), std::string::npos) << s.error().message;
  }
  EXPECT_FALSE(parse_gpus("0", true).ok());  // a Ray count is at least 1
}

TEST(Gpus, TheDefaultAndAllOnOneGpuAreTodaysPath) {
  for (const char* t : {"", "all", "0"}) {
    auto slots = resolve_gpus(parse_gpus(t, false).value(), {gpu(0)}).value();
    ASSERT_EQ(slots.size(), 1u) << t;
    EXPECT_EQ(slots[0].visible_devices, "") << t;  // the worker keeps kopt's environment
    EXPECT_EQ(slots[0].name, "GPU 0 (NVIDIA H200)");
  }
}

TEST(Gpus, EverySelectedGpuGetsAWorkerPinnedByUuid) {
  auto all = resolve_gpus(parse_gpus("all", false).value(), {gpu(0), gpu(1), gpu(2)}).value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].visible_devices, "GPU-00000002");
  auto one = resolve_gpus(parse_gpus("2", false).value(), {gpu(0), gpu(1), gpu(2)}).value();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].visible_devices, "GPU-00000002");  // not the first: pinned
}

TEST(Gpus, RefusesAMissingOrdinalAndMixedModels) {
  auto missing = resolve_gpus(parse_gpus("0,4", false).value(), {gpu(0), gpu(1)});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no GPU 4 (it has 0, 1"), std::string::npos) << missing.error().message;
  auto mixed = resolve_gpus(parse_gpus("all", false).value(), {gpu(0), gpu(1, "NVIDIA H100 80GB HBM3")});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("select GPUs of one model with --gpus LIST"), std::string::npos);
  EXPECT_TRUE(resolve_gpus(parse_gpus("0", false).value(), {gpu(0), gpu(1, "NVIDIA H100 80GB HBM3")}).ok());
  EXPECT_FALSE(resolve_gpus(parse_gpus("3", true).value(), {gpu(0)}).ok());  // a count needs --ray
}

}  // namespace
}  // namespace kopt::dispatch
