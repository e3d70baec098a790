#pragma once
// Shared by the search tests: the method registry, and a small declared space (4 x 5 values and a guard; the
// constraint A * B <= 20 removes 6 of the 40 points: 17 configurations per guard value, 34 in all).
#include <gtest/gtest.h>

#include "search/registry.h"

namespace kopt::search::testing {

inline const Registry& test_registry() {
  auto r = registry();
  EXPECT_TRUE(r.ok());
  return r.value();
}

inline constexpr const char* kSmallSpaceKernel = R"(// @kopt param A values=1,2,4,8 default=1
// @kopt param B values=1,2,3,4,5 default=1
// @kopt method vectorized_access
// @kopt constraint A * B <= 20
#if KOPT_VECTORIZED_ACCESS
#endif
extern "C" void solve(const float* x, float* y, int n) {}
)";

}  // namespace kopt::search::testing
