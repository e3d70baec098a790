#include "util/diff.h"

#include <gtest/gtest.h>

namespace kopt::util {
namespace {

TEST(UnifiedDiff, EqualTextsHaveNoDiff) {
  DiffStats s;
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y", 3, &s), "");
  EXPECT_EQ(s.added + s.removed, 0u);
}

TEST(UnifiedDiff, ChangedDefinesAreOneHunkWithContextAsDiffUPrintsIt) {
  const std::string base = "// kopt baseline\n#define BM 64\n#define BN 64\n#define BK 8\n\nint x;\nint y;\nint z;\nint w;\nint v;\n";
  const std::string champ = "// kopt baseline\n#define BM 128\n#define BN 64\n#define BK 8\n\nint x;\nint y;\nint z;\nint w;\nint v;\n";
  DiffStats s;
  EXPECT_EQ(unified_diff(base, champ, "baseline.cu", "kernel.cu", 3, &s),
            "--- baseline.cu\n+++ kernel.cu\n@@ -1,5 +1,5 @@\n // kopt baseline\n-#define BM 64\n+#define BM 128\n #define BN 64\n"
            " #define BK 8\n \n");
  EXPECT_EQ(s.added, 1u);
  EXPECT_EQ(s.removed, 1u);
  EXPECT_TRUE(s.exact);
}

TEST(UnifiedDiff, DistantChangesAreSeparateHunksAndInsertionsCountFromTheLineBefore) {
  std::string a, b;
  for (int i = 1; i <= 20; ++i) a += std::to_string(i) + "\n";
  b = a;
  b.replace(b.find("2\n"), 2, "two\n");
  b += "21\n";
  EXPECT_EQ(unified_diff(a, b, "a", "b", 1),
            "--- a\n+++ b\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n@@ -20 +20,2 @@\n 20\n+21\n");
  EXPECT_EQ(unified_diff("", "x\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
}

TEST(UnifiedDiff, TooLargeAMiddleIsReplacedWholeAndSaysItIsNotMinimal) {
  DiffStats s;
  auto d = unified_diff("a\nb\nc\nd\n", "a\nx\nc\nd\n", "a", "b", 0, &s, 0);
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(d, "--- a\n+++ b\n@@ -2 +2 @@\n-b\n+x\n");
  auto big = unified_diff("a\nb\nc\nz\n", "a\nx\nc\ny\nz\n", "a", "b", 0, &s, 2);
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.removed, 2u);
  EXPECT_EQ(s.added, 3u);
}

}  // namespace
}  // namespace kopt::util
