#include "search/source_scan.h"

#include <gtest/gtest.h>

namespace kopt::search {
namespace {

TEST(SourceScan, ExtractsAndNormalisesSolve) {
  auto a = extract_entry_signature("extern \"C\" void solve(const float* A, float* C, int n) { }", SourceLanguage::kCuda);
  auto b = extract_entry_signature(R"(
// extern "C" void solve(int wrong);   a comment does not count
/* extern "C" void solve(double nor_this); */
extern "C"
void
solve(const float *A,   // input
      float *C,         /* output */
      int n)
{ })",
                                   SourceLanguage::kCuda);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, "void solve(const float*A,float*C,int n)");
  EXPECT_EQ(*a, *b);
  auto c = extract_entry_signature("extern \"C\" { void solve(const float* __restrict__ A, int n); }", SourceLanguage::kCuda);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, "void solve(const float*__restrict__ A,int n)");
  auto changed = extract_entry_signature("extern \"C\" void solve(const float* A, float* C, long n) {}", SourceLanguage::kCuda);
  ASSERT_TRUE(changed);
  EXPECT_NE(*a, *changed);
  EXPECT_FALSE(extract_entry_signature("void solve(float* x) {}", SourceLanguage::kCuda));      // not extern "C"
  EXPECT_FALSE(extract_entry_signature("extern \"C\" void resolve(float* x) {}", SourceLanguage::kCuda));
}

TEST(SourceScan, ExtractsTritonEntryPoints) {
  auto s = extract_entry_signature(
      "def setup(*, seed, M):\n    pass\n# def run_kernel(no)\ndef run_kernel(x, y,\n               M):\n    pass\n",
      SourceLanguage::kPython);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, "setup(*,seed,M); run_kernel(x,y,M)");
  EXPECT_FALSE(extract_entry_signature("def setup(*, seed): pass\n", SourceLanguage::kPython));
}

TEST(SourceScan, GuardsMustSitInConditionals) {
  const char* cu = "#if KOPT_X\n#endif\n#  ifdef KOPT_Y\n#endif\n#elif defined(KOPT_Z) && 1\nint KOPT_W = 0;\n// #if KOPT_V\n"
                   "#if KOPT_XY\n";
  EXPECT_TRUE(guard_in_conditional(cu, "KOPT_X", SourceLanguage::kCuda));
  EXPECT_TRUE(guard_in_conditional(cu, "KOPT_Y", SourceLanguage::kCuda));
  EXPECT_TRUE(guard_in_conditional(cu, "KOPT_Z", SourceLanguage::kCuda));
  EXPECT_FALSE(guard_in_conditional(cu, "KOPT_W", SourceLanguage::kCuda));  // not a conditional
  EXPECT_FALSE(guard_in_conditional(cu, "KOPT_V", SourceLanguage::kCuda));  // commented out
  EXPECT_FALSE(guard_in_conditional("#if KOPT_XY\n", "KOPT_X", SourceLanguage::kCuda));  // whole words only
  const char* py = "def k(KOPT_A: tl.constexpr):\n    if KOPT_A:\n        pass\n    y = 1 if KOPT_B else 0\n    # if KOPT_C:\n";
  EXPECT_TRUE(guard_in_conditional(py, "KOPT_A", SourceLanguage::kPython));
  EXPECT_TRUE(guard_in_conditional(py, "KOPT_B", SourceLanguage::kPython));
  EXPECT_FALSE(guard_in_conditional(py, "KOPT_C", SourceLanguage::kPython));
}

TEST(SourceScan, StripCommentsKeepsStringsAndLines) {
  EXPECT_EQ(strip_comments("a // b\n\"// c\" /* d\ne */ f", SourceLanguage::kCuda), "a \n\"// c\" \n  f");
  EXPECT_EQ(strip_comments("x = '#' # c\ny = \"\"\"# d\"\"\"", SourceLanguage::kPython), "x = '#' \ny = \"\"\"# d\"\"\"");
  EXPECT_EQ(language_of("k.py"), SourceLanguage::kPython);
  EXPECT_EQ(language_of("k.cu"), SourceLanguage::kCuda);
}

}  // namespace
}  // namespace kopt::search
