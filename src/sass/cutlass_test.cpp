// Selecting and verifying a CUTLASS library's kernels, on the SASS of examples/cutlass_gemm captured with
// cuobjdump 13.5 (tests/data/sass/cuobjdump-13.5/cutlass_gemm_sm90a.sass.txt). Pure: no nvcc needed.
#include <gtest/gtest.h>

#include <filesystem>

#include "sass/analysis.h"
#include "sass/demangle.h"
#include "sass/kernels.h"
#include "sass/mix.h"
#include "sass/verify.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::sass {
namespace {

namespace fs = std::filesystem;
using V = std::vector<std::string>;

std::vector<SassFunction> captured() {
  auto text = util::read_file(testing_support::test_data_dir() + "/sass/cuobjdump-13.5/cutlass_gemm_sm90a.sass.txt");
  EXPECT_TRUE(text);
  return text ? parse_sass_listing(*text) : std::vector<SassFunction>{};
}

fs::path example_source() {
  return fs::path(testing_support::source_dir()) / "examples/cutlass_gemm/kernel.cu";
}

TEST(SassCutlass, TheExampleSourceAsksForCutlassKernels) {
  fs::path src = example_source();
  ASSERT_TRUE(fs::exists(src)) << src;
  // No __global__ in the source: the kernel is cutlass::device_kernel<...> from the headers.
  EXPECT_EQ(kernel_names_from_source(src), V{kCutlassKernels});
  // A plain CUDA source does not get the CUTLASS pattern unless asked for (--cutlass-include).
  fs::path plain = fs::path(testing_support::source_dir()) / "examples/sgemm_naive/kernel.cu";
  ASSERT_TRUE(fs::exists(plain)) << plain;
  EXPECT_EQ(kernel_names_from_source(plain), V{"sgemm_naive"});
  EXPECT_EQ(kernel_names_from_source(plain, true), (V{"sgemm_naive", kCutlassKernels}));
}

TEST(SassCutlass, SelectsTheDeviceKernelAndFindsHgmma) {
  auto all = captured();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].arch, "sm_90a");
  // GNU's demangler gives up on this name: the outer name stands in for it.
  EXPECT_EQ(all[0].demangled, "cutlass::device_kernel<...>(...)");
  EXPECT_EQ(qualified_name(all[0].demangled), "cutlass::device_kernel");
  EXPECT_EQ(base_name(all[0].demangled), "device_kernel");

  // By source names alone (the contract's solve is host code) nothing is selected: verification would be
  // inconclusive. The CUTLASS pattern selects the GEMM kernel.
  EXPECT_TRUE(select_functions(all, {"solve"}).functions.empty());
  auto sel = select_functions(all, {kCutlassKernels}, "sm_90a");
  ASSERT_EQ(sel.functions.size(), 1u);
  EXPECT_TRUE(sel.unmatched.empty());

  auto v = verify(Signature{{"HGMMA"}, {}, {}, {}}, sel.functions);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->status, VerifyStatus::kPass) << v->message;
  auto hmma = verify(Signature{{"HMMA"}, {}, {}, {}}, sel.functions);  // wgmma, not warp-level mma.sync
  ASSERT_TRUE(hmma);
  EXPECT_EQ(hmma->status, VerifyStatus::kFail);
  auto no_spills = verify(Signature{{}, {}, {"LDL", "STL"}, {}}, sel.functions);
  ASSERT_TRUE(no_spills);
  EXPECT_EQ(no_spills->status, VerifyStatus::kPass) << no_spills->message;

  auto mix = instruction_mix(*sel.functions[0]);
  EXPECT_EQ(mix.count("GMMA"), 8);  // HGMMA.64x128x16.F32.BF16: 4 per k-tile of 64, in two copies of the loop
  EXPECT_GE(mix.count("TMA"), 4);   // UTMALDG (A, B) and UTMASTG (D)
  EXPECT_EQ(mix.count("MMA"), 0);
}

TEST(SassCutlass, OuterNameReadsTheNestedNameOfAMangling) {
  EXPECT_EQ(outer_name("_ZN4demo6reduceILi1024EEEvPKfPf"), "demo::reduce<...>(...)");
  EXPECT_EQ(outer_name("_Z5copy1PKfPfi"), "copy1(...)");
  EXPECT_EQ(outer_name("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE"), "cutlass::Kernel<...>(...)");
  EXPECT_EQ(outer_name("_ZNSt6vectorIiE9push_backEv"), "_ZNSt6vectorIiE9push_backEv");  // St: not a plain name
  EXPECT_EQ(outer_name("_ZN99toolong"), "_ZN99toolong");
  EXPECT_EQ(outer_name("saxpy"), "saxpy");
  // A name GNU's demangler reads is demangled in full, as before.
  EXPECT_EQ(demangle("_ZN4demo6reduceILi1024EEEvPKfPf"), "void demo::reduce<1024>(float const*, float*)");
}

TEST(SassCutlass, PrefixPatternsMatchQualifiedNamesOnly) {
  std::vector<SassFunction> all(4);
  all[0].demangled = "void cutlass::Kernel2<cutlass::gemm::kernel::Gemm<int>>(cutlass::gemm::kernel::Gemm<int>::Params)";
  all[1].demangled = "void my::cutlass::helper<int>(int)";
  all[2].demangled = "void cutlass_like(float*)";
  all[3].demangled = "void mine<cutlass::half_t>(cutlass::half_t*)";
  for (auto& f : all) f.mangled = f.demangled;  // names only matter here
  auto sel = select_functions(all, {kCutlassKernels});
  ASSERT_EQ(sel.functions.size(), 1u);
  EXPECT_EQ(sel.functions[0], &all[0]);
  EXPECT_EQ(select_functions(all, {"my::*"}).functions.size(), 1u);
  EXPECT_TRUE(select_functions(all, {"*"}).functions.empty());  // never the whole library
  auto none = select_functions({all[2], all[3]}, {kCutlassKernels});
  EXPECT_TRUE(none.functions.empty());
  EXPECT_EQ(none.unmatched, V{kCutlassKernels});
}

}  // namespace
}  // namespace kopt::sass
