#pragma once
// Test-only helpers: the captured ncu output under tests/data/profile/.
#include <string>

#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::profile::testing {

// Real Nsight Compute 2025.3.1 output captured on an H200.
inline std::string ncu_capture(const std::string& name) {
  return util::read_file(testing_support::test_data_dir() + "/profile/ncu-2025.3.1/" + name).value();
}
// Fixtures assembled from those captures (tests/data/profile/assembled/README.md).
inline std::string assembled(const std::string& name) {
  return util::read_file(testing_support::test_data_dir() + "/profile/assembled/" + name).value();
}

}  // namespace kopt::profile::testing
