// The only test file that sees the configured absolute paths (KOPT_TEST_DATA, KOPT_BINARY): every other test
// object stays independent of where the tree is checked out, so a compiler cache serves several checkouts.
#include "testing/test_support.h"

namespace kopt::testing_support {

std::string kopt_binary() {
  auto beside = util::executable_dir() / "kopt";
  std::error_code ec;
  return std::filesystem::exists(beside, ec) ? beside.string() : std::string(KOPT_BINARY);
}

std::string test_data_dir() {
  auto found = util::find_upwards(util::executable_dir(), "tests/data");
  return found.empty() ? std::string(KOPT_TEST_DATA) : found.string();
}

std::string source_dir() { return std::filesystem::path(test_data_dir()).parent_path().parent_path().string(); }

std::string build_dir() {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(KOPT_BUILD_DIR) / "cmake_install.cmake", ec) ? std::string(KOPT_BUILD_DIR) : std::string();
}

std::string cmake_command() { return KOPT_CMAKE; }

}  // namespace kopt::testing_support
