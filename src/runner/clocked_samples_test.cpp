#include "runner/clocked_samples.h"

#include <gtest/gtest.h>

namespace kopt::runner {

TEST(ClockedSamples, TheKernelClockKeepsSpansAndTheSwitchTurnsEverySampleToItsEventFigure) {
  ClockedSamples s;
  s.add(true, 0.0050, 0.0070, 0.0049, 1);
  s.add(true, 0.0051, 0.0071, 0.0050, 1);
  EXPECT_EQ(s.gpu_ms, (std::vector<double>{0.0050, 0.0051}));
  EXPECT_EQ(s.event_ms, (std::vector<double>{0.0070, 0.0071}));
  EXPECT_EQ(s.busy_ms.size(), 2u);
  EXPECT_EQ(s.kernels, (std::vector<double>{1, 1}));
  s.to_events();
  s.add(false, 0, 0.0072, 0, 0);
  EXPECT_EQ(s.gpu_ms, (std::vector<double>{0.0070, 0.0071, 0.0072}));
  EXPECT_EQ(s.gpu_ms, s.event_ms);
  EXPECT_TRUE(s.busy_ms.empty());
  EXPECT_TRUE(s.kernels.empty());
  s.clear();
  EXPECT_TRUE(s.gpu_ms.empty() && s.event_ms.empty());
}

}  // namespace kopt::runner
