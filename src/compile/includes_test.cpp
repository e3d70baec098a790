#include "compile/includes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/fs.h"

namespace kopt::compile {
namespace {

namespace fs = std::filesystem;

TEST(CompileIncludes, Directives) {
  auto d = include_directives(R"(
#include "a.h"
  #  include <cuda_runtime.h>
// #include "commented.h"
/* #include "block.h" */
#include MACRO_HEADER
#include "sub/b.h"  // trailing comment
#define S "#include \"not.h\""
)");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "a.h");
  EXPECT_FALSE(d[0].angle);
  EXPECT_EQ(d[1].name, "cuda_runtime.h");
  EXPECT_TRUE(d[1].angle);
  EXPECT_EQ(d[2].name, "sub/b.h");
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("kopt-includes-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& rel, const std::string& text) const {
    ASSERT_TRUE(util::write_file_atomic(path_ / rel, text).ok());
  }

 private:
  fs::path path_;
};

TEST(CompileIncludes, FollowsLocalHeadersRecursively) {
  TempDir t;
  t.write("k/kernel.cu", "#include \"tile.h\"\n#include <own.h>\n#include <cuda_runtime.h>\n#include \"missing.h\"\n");
  t.write("k/tile.h", "#pragma once\n#include \"detail/impl.h\"\n#include \"lib.h\"\n");
  t.write("k/detail/impl.h", "#include \"../tile.h\"\n");  // a cycle back to tile.h
  t.write("k/own.h", "// found by <> in the source's folder\n");
  t.write("inc/lib.h", "#include \"lib_detail.h\"\n");
  t.write("inc/lib_detail.h", "int x;\n");
  auto h = collect_local_headers(t.path() / "k/kernel.cu", {(t.path() / "inc").string()});
  ASSERT_TRUE(h.ok()) << h.error().message;
  std::vector<std::string> names;
  for (const auto& x : *h) names.push_back(x.path.lexically_relative(t.path()).string());
  EXPECT_EQ(names, (std::vector<std::string>{"inc/lib.h", "inc/lib_detail.h", "k/detail/impl.h", "k/own.h",
                                             "k/tile.h"}));
  EXPECT_EQ((*h)[1].text, "int x;\n");
}

TEST(CompileIncludes, MissingSourceIsAnError) {
  TempDir t;
  EXPECT_FALSE(collect_local_headers(t.path() / "nope.cu", {}).ok());
}

TEST(CompileIncludes, TooManyHeadersIsAnError) {
  TempDir t;
  t.write("k.cu", "#include \"a.h\"\n");
  t.write("a.h", "#include \"b.h\"\n");
  t.write("b.h", "\n");
  EXPECT_TRUE(collect_local_headers(t.path() / "k.cu", {}, 2).ok());
  EXPECT_FALSE(collect_local_headers(t.path() / "k.cu", {}, 1).ok());
}

}  // namespace
}  // namespace kopt::compile
