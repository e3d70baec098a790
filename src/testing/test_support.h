#pragma once
// Paths for tests that work both in the build tree and in a copied tree on a GPU machine: the kopt binary
// beside the test binary, and tests/data found upwards from it (falling back to the configured paths).
#include <filesystem>
#include <string>

#include "util/fs.h"

namespace kopt::testing_support {

inline std::string kopt_binary() {
  auto beside = util::executable_dir() / "kopt";
  std::error_code ec;
  return std::filesystem::exists(beside, ec) ? beside.string() : std::string(KOPT_BINARY);
}

inline std::string test_data_dir() {
  auto found = util::find_upwards(util::executable_dir(), "tests/data");
  return found.empty() ? std::string(KOPT_TEST_DATA) : found.string();
}

}  // namespace kopt::testing_support
