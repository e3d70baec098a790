#include "toolchain/cutlass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::toolchain {

namespace fs = std::filesystem;

namespace {

// Sets (or unsets, with nullopt) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fake CUTLASS tree: <root>/include/cutlass/{cutlass.h, version.h}.
fs::path fake_tree(const std::string& tag) {
  fs::path root = fs::temp_directory_path() / ("kopt-cutlass-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "include" / "cutlass");
  EXPECT_TRUE(util::write_file_atomic(root / "include" / "cutlass" / "cutlass.h", "#pragma once\n"));
  EXPECT_TRUE(util::write_file_atomic(root / "include" / "cutlass" / "version.h",
                                      "#define CUTLASS_MAJOR 3\n#define CUTLASS_MINOR 9\n#define CUTLASS_PATCH 2\n"));
  return root;
}

// The installed nvidia-cutlass version, asked from pip's metadata (independently of find_cutlass_include).
std::string installed_wheel_version() {
  std::string py = find_python();
  if (py.empty()) return "";
  auto r = util::run_process({{py, "-c", "import importlib.metadata as m; print(m.version('nvidia-cutlass'))"}, "", {}, 60});
  return r.success() ? util::trim(r.stdout_text) : "";
}

}  // namespace

TEST(CutlassHeaders, ParsesTheVersionOfARealVersionHeader) {
  auto text = util::read_file(testing_support::test_data_dir() + "/tools/cutlass_4.2.0_version.h");
  ASSERT_TRUE(text);
  EXPECT_EQ(parse_cutlass_version(*text), "4.2.0");
  EXPECT_EQ(parse_cutlass_version("#define CUTLASS_MAJOR\t3\n#define  CUTLASS_MINOR 5\n#define CUTLASS_PATCH 1 // x\n"),
            "3.5.1");
  EXPECT_FALSE(parse_cutlass_version("#define CUTLASS_MAJOR 3\n#define CUTLASS_MINOR 5\n"));  // no patch
  EXPECT_FALSE(parse_cutlass_version("#define CUTLASS_MAJOR X\n#define CUTLASS_MINOR 5\n#define CUTLASS_PATCH 1\n"));
}

TEST(CutlassHeaders, IncludeDirOfATreeOrOfAnIncludeFolder) {
  fs::path root = fake_tree("dirof");
  std::string inc = (root / "include").lexically_normal().string();
  EXPECT_EQ(cutlass_include_dir_of(root.string()), inc);                    // a tree (CUTLASS_PATH)
  EXPECT_EQ(cutlass_include_dir_of((root / "include").string()), inc);      // its include folder
  EXPECT_EQ(cutlass_include_dir_of((root / "include/cutlass").string()), "");  // one level too deep
  EXPECT_EQ(cutlass_include_dir_of(""), "");
  EXPECT_EQ(cutlass_include_among({"/nonexistent", (root / "include").string()}), (root / "include").string());
  EXPECT_EQ(cutlass_include_among({root.string()}), "");  // -I dirs are taken as they are
  fs::remove_all(root);
}

TEST(CutlassHeaders, WheelCandidatesLiveUnderCutlassLibrary) {
  auto c = cutlass_wheel_include_candidates({"/a/site-packages", "/b"});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], "/a/site-packages/cutlass_library/source/include");
  EXPECT_EQ(c[1], "/b/cutlass_library/source/include");
}

TEST(CutlassHeaders, CutlassPathWinsAndAWrongOneIsReportedNotReplaced) {
  fs::path root = fake_tree("env");
  {
    ScopedEnv env("CUTLASS_PATH", root.string());
    auto inc = find_cutlass_include();
    ASSERT_TRUE(inc.found()) << inc.problem;
    EXPECT_EQ(inc.dir, (root / "include").lexically_normal().string());
    EXPECT_EQ(inc.origin, "CUTLASS_PATH");
    EXPECT_EQ(inc.version, "3.9.2");
  }
  {
    ScopedEnv env("CUTLASS_PATH", (root / "nowhere").string());
    auto inc = find_cutlass_include();
    EXPECT_FALSE(inc.found());
    EXPECT_NE(inc.problem.find("nowhere"), std::string::npos) << inc.problem;
    EXPECT_NE(inc.problem.find("include/cutlass/cutlass.h"), std::string::npos) << inc.problem;
  }
  fs::remove_all(root);
}

TEST(CutlassHeaders, FindsTheNvidiaCutlassWheel) {
  std::string version = installed_wheel_version();
  if (version.empty()) GTEST_SKIP() << "the nvidia-cutlass wheel is not installed (scripts/setup.sh installs it)";
  ScopedEnv env("CUTLASS_PATH", std::nullopt);
  auto inc = find_cutlass_include();
  ASSERT_TRUE(inc.found()) << inc.problem;
  EXPECT_EQ(inc.origin, "nvidia-cutlass wheel");
  EXPECT_EQ(fs::path(inc.dir).parent_path().parent_path().filename(), "cutlass_library") << inc.dir;
  EXPECT_EQ(fs::path(inc.dir).filename(), "include") << inc.dir;
  EXPECT_TRUE(fs::is_regular_file(fs::path(inc.dir) / "cute" / "tensor.hpp")) << "the wheel carries CuTe too";
  // "4.2.0.0" (the wheel) starts with "4.2.0" (cutlass/version.h).
  EXPECT_TRUE(util::starts_with(version, inc.version + ".") || version == inc.version) << version << " vs " << inc.version;
}

}  // namespace kopt::toolchain
