// The only test file that sees the configured absolute paths (KOPT_TEST_DATA, KOPT_BINARY): every other test
// object stays independent of where the tree is checked out, so a compiler cache serves several checkouts.
#include "testing/test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace kopt::testing_support {

bool made_by_process(std::string_view name, long pid) {
  if (name.substr(0, 4) != "kopt") return false;
  const std::string tag = "_" + std::to_string(pid);
  for (size_t at = name.find(tag); at != std::string_view::npos; at = name.find(tag, at + 1)) {
    size_t end = at + tag.size();
    if (end == name.size() || name[end] == '.' || name[end] == '_') return true;
  }
  return false;
}

namespace {

// The tests' folders and files under ::testing::TempDir() carry the test process's pid ("kopt_loop_race_12345",
// "kopt_gates_shapes_12345.txt") and stay while its tests read them; they go when the process ends, so repeated test
// runs do not fill /tmp (with more than 8192 entries around a folder the Python harness's seal grants nothing and
// turns itself off: test_sealed.py then fails on a developer's machine).
class RemoveThisProcessesTempFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    const long pid = static_cast<long>(::getpid());
    for (const auto& e : std::filesystem::directory_iterator(::testing::TempDir(), ec))
      if (made_by_process(e.path().filename().string(), pid)) std::filesystem::remove_all(e.path(), ec);
  }
};

[[maybe_unused]] ::testing::Environment* const kRemoveTempFiles =
    ::testing::AddGlobalTestEnvironment(new RemoveThisProcessesTempFiles);

}  // namespace

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
