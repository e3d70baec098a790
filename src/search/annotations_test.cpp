#include "search/annotations.h"

#include <gtest/gtest.h>

namespace kopt::search {
namespace {

const char* kGemm = R"(// A tiled GEMM.
// @kopt param BM values=64,128,256 default=128
// @kopt param BN values=64, 128, 256
//   @kopt   param UNROLL range=1..8 step=1
// @kopt param BK range=8..64 step=pow2
// @kopt method vectorized_access guard=KOPT_VECTORIZED_ACCESS
// @kopt method smem_padding
// @kopt constraint BM*BN <= 16384
// @kopt constraint KOPT_SMEM_PADDING == 0 || BK % 16 == 0
#include <cuda_runtime.h>
const char* banner = "// @kopt param NOT_ME values=1";  // inside a string: not an annotation
#if KOPT_VECTORIZED_ACCESS
#define LOAD4 1
#endif
#ifdef KOPT_SMEM_PADDING
#define PAD 1
#endif
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {}
)";

TEST(Annotations, ParsesParamsMethodsAndConstraints) {
  auto r = parse_annotations(kGemm, "gemm.cu");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Annotations& a = r.value();
  EXPECT_EQ(a.language, SourceLanguage::kCuda);
  ASSERT_EQ(a.params.size(), 4u);
  EXPECT_EQ(a.params[0].name, "BM");
  EXPECT_EQ(a.params[0].values, (std::vector<int64_t>{64, 128, 256}));
  EXPECT_EQ(a.params[0].default_value, 128);
  EXPECT_EQ(a.params[0].where, "gemm.cu:2");
  EXPECT_EQ(a.params[0].kind, ParamKind::kDefine);
  EXPECT_EQ(a.params[1].values, (std::vector<int64_t>{64, 128, 256}));  // spaces after commas are fine
  EXPECT_EQ(a.params[1].default_value, 64);                            // first value when no default=
  EXPECT_EQ(a.params[2].name, "UNROLL");
  EXPECT_EQ(a.params[2].values, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(a.params[3].values, (std::vector<int64_t>{8, 16, 32, 64}));
  ASSERT_EQ(a.methods.size(), 2u);
  EXPECT_EQ(a.methods[0].id, "vectorized_access");
  EXPECT_EQ(a.methods[0].guard, "KOPT_VECTORIZED_ACCESS");
  EXPECT_EQ(a.methods[1].guard, "KOPT_SMEM_PADDING");
  EXPECT_EQ(a.methods[1].where, "gemm.cu:7");
  ASSERT_EQ(a.constraints.size(), 2u);
  EXPECT_EQ(a.constraints[0].expr.text(), "BM*BN <= 16384");
  EXPECT_EQ(a.constraints[1].where, "gemm.cu:9");
  EXPECT_TRUE(a.constraints[1].expr.holds({{"KOPT_SMEM_PADDING", 1}, {"BK", 32}}));
}

TEST(Annotations, FollowsNamesWhatAValueScalesWith) {
  auto a = parse_annotations("// @kopt param BLOCK values=0,128,256 default=0 follows=N,vec_size\n", "k.cu");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->params[0].follows, (std::vector<std::string>{"N", "vec_size"}));
  auto bad = parse_annotations("// @kopt param BLOCK values=1 follows=N+1\n", "k.cu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("follows= takes names separated by commas, got 'N+1'"), std::string::npos)
      << bad.error().message;
}

TEST(Annotations, CoversNamesTheDimOneBlockCovers) {
  auto a = parse_annotations("# @kopt param BLOCK_SIZE values=1024,4096 default=4096 kind=constexpr covers=n_cols\n", "k.py");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->params[0].covers, "n_cols");
  auto bad = parse_annotations("// @kopt param BLOCK values=1 covers=n,m\n", "k.cu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("covers= takes one name (a dim), got 'n,m'"), std::string::npos) << bad.error().message;
}

TEST(Annotations, WhenIsAConditionOverDims) {
  auto a = parse_annotations("// @kopt param BM values=64,128 default=128 when=M >= 128 && N >= 128 follows=N\n", "k.cu");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->params[0].when, "M >= 128 && N >= 128");
  EXPECT_EQ(a->params[0].follows, (std::vector<std::string>{"N"}));
  auto bad = parse_annotations("// @kopt param BM values=64,128 when=M >= \n", "k.cu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("k.cu:1: param 'BM': when= takes a condition over dims"), std::string::npos)
      << bad.error().message;
}

TEST(Annotations, TritonUsesHashCommentsAndKinds) {
  const char* py = R"(import triton
import triton.language as tl
# @kopt param BLOCK_M values=64,128 kind=constexpr
# @kopt param BLOCK_K values=32,64
# @kopt param num_warps values=4,8
# @kopt param STAGES values=2,3,4 kind=num_stages
# @kopt method grouped_launch_ordering
# @kopt constraint BLOCK_M * BLOCK_K <= 8192
s = "# @kopt param FAKE values=1"
@triton.jit
def kernel(x, BLOCK_M: tl.constexpr, KOPT_GROUPED_LAUNCH_ORDERING: tl.constexpr):
    if KOPT_GROUPED_LAUNCH_ORDERING:
        pass
def setup(*, seed, M): pass
def run_kernel(x, y, M): pass
)";
  auto r = parse_annotations(py, "k.py");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->language, SourceLanguage::kPython);
  ASSERT_EQ(r->params.size(), 4u);
  EXPECT_EQ(r->params[0].kind, ParamKind::kConstexpr);
  EXPECT_EQ(r->params[1].kind, ParamKind::kConstexpr);  // the Triton default
  EXPECT_EQ(r->params[2].kind, ParamKind::kNumWarps);   // by name
  EXPECT_EQ(r->params[3].kind, ParamKind::kNumStages);  // by kind=
  EXPECT_EQ(r->methods.size(), 1u);
  EXPECT_EQ(r->constraints.size(), 1u);
}

TEST(Annotations, UnannotatedSourceIsEmpty) {
  auto r = parse_annotations("extern \"C\" void solve(float* x, int n) {}\n// @koptimal is not a directive\n", "a.cu");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

std::string error_of(const std::string& text, const std::string& file = "k.cu") {
  auto r = parse_annotations(text, file);
  return r.ok() ? "" : r.error().message;
}

TEST(Annotations, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("int x;\n// @kopt parm BM values=1\n"),
            "k.cu:2: unknown @kopt directive 'parm' (expected param, method or constraint)");
  EXPECT_EQ(error_of("// @kopt param BM\n"), "k.cu:1: param 'BM' needs exactly one of values= or range=");
  EXPECT_EQ(error_of("// @kopt param BM values=1,2 range=1..4\n"), "k.cu:1: param 'BM' needs exactly one of values= or range=");
  EXPECT_EQ(error_of("// @kopt param BM values=64,abc\n"), "k.cu:1: value 'abc' is not an integer");
  EXPECT_EQ(error_of("// @kopt param BM values=64,64\n"), "k.cu:1: param 'BM' lists a value twice");
  EXPECT_EQ(error_of("// @kopt param BM values=64 default=32\n"), "k.cu:1: param 'BM': default 32 is not one of its values");
  EXPECT_EQ(error_of("// @kopt param BM range=8..4\n"), "k.cu:1: range 8..4 is empty (start above end)");
  EXPECT_EQ(error_of("// @kopt param BM range=1..8 step=0\n"), "k.cu:1: step 0 must be positive (or pow2)");
  EXPECT_EQ(error_of("// @kopt param BM range=0..8 step=pow2\n"), "k.cu:1: step=pow2 needs a range starting at 1 or more");
  EXPECT_EQ(error_of("// @kopt param BM values=1 step=2\n"), "k.cu:1: param 'BM': step= goes with range=");
  EXPECT_EQ(error_of("// @kopt param BM values=1 colour=red\n"),
            "k.cu:1: param 'BM': unknown key 'colour' (values, range, step, kind, default, follows, covers, when)");
  EXPECT_EQ(error_of("// @kopt param 9BM values=1\n"), "k.cu:1: param needs a name (an identifier), got '9BM'");
  EXPECT_EQ(error_of("// @kopt param KOPT_X values=1\n"), "k.cu:1: 'KOPT_X': names starting with KOPT_ are method guards");
  EXPECT_EQ(error_of("// @kopt param BM values=1\n\n// @kopt param BM values=2\n"),
            "k.cu:3: param 'BM' already declared at k.cu:1");
  EXPECT_EQ(error_of("// @kopt param BM values=1 kind=constexpr\n"),
            "k.cu:1: param 'BM': kind constexpr is for Triton kernels; CUDA parameters are -D macros (kind=define)");
  EXPECT_EQ(error_of("# @kopt param BM values=1 kind=define\n", "k.py"),
            "k.py:1: param 'BM': Triton parameters are constexpr, num_warps or num_stages, not define");
  EXPECT_EQ(error_of("# @kopt param W values=4 kind=num_warps\n# @kopt param num_warps values=8\n", "k.py"),
            "k.py:2: param 'num_warps': num_warps is already set by 'W' at k.py:1");
  EXPECT_EQ(error_of("// @kopt param BM range=1..5000\n"), "k.cu:1: param 'BM' has more than 1024 values");
}

TEST(Annotations, MethodAndConstraintErrors) {
  EXPECT_EQ(error_of("// @kopt method vectorized_access\n"),
            "k.cu:1: method 'vectorized_access': its guard KOPT_VECTORIZED_ACCESS is not used in any #if/#ifdef/#elif of the source");
  // A guard mentioned only in a comment or in ordinary code does not count.
  EXPECT_NE(error_of("// @kopt method smem_padding\n// #if KOPT_SMEM_PADDING\nint KOPT_SMEM_PADDING = 1;\n").find("not used"),
            std::string::npos);
  EXPECT_EQ(error_of("// @kopt method smem_padding guard=PADDING\n#if PADDING\n#endif\n"),
            "k.cu:1: method 'smem_padding': the guard must be KOPT_SMEM_PADDING (kopt defines it 0 or 1), not 'PADDING'");
  EXPECT_EQ(error_of("// @kopt method smem_padding\n#if KOPT_SMEM_PADDING\n#endif\n// @kopt method smem_padding\n"),
            "k.cu:4: method 'smem_padding' already declared at k.cu:1");
  EXPECT_EQ(error_of("// @kopt constraint BM * <= 4\n"),
            "k.cu:1: constraint 'BM * <= 4': column 6: expected a value, found '<='");
  EXPECT_EQ(error_of("// @kopt param BM values=1\n\n// @kopt constraint BM * BX <= 4\n"),
            "k.cu:3: constraint 'BM * BX <= 4' uses unknown name 'BX' (known: BM)");
  EXPECT_EQ(error_of("# @kopt method split_k\n", "k.py"),
            "k.py:1: method 'split_k': its guard KOPT_SPLIT_K is not used in any if statement of the source");
}

}  // namespace
}  // namespace kopt::search
