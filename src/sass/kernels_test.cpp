#include "sass/kernels.h"

#include <gtest/gtest.h>

#include "sass/demangle.h"

namespace kopt::sass {
namespace {

using V = std::vector<std::string>;

TEST(SassKernels, FindsGlobalFunctionNames) {
  const char* src = R"(
#include <cuda_runtime.h>
#define LAUNCH_KERNEL __global__ void not_a_kernel(int)
// __global__ void commented_out(float* x) {}
/* __global__ void also_commented(float* x) {} */
const char* s = "__global__ void in_a_string(";
__global__ void plain(float* x) {}
extern "C" __global__ void __launch_bounds__(256, 2) bounded(const float* __restrict__ a) {}
template <int N>
__global__ void __cluster_dims__(2, 1, 1) templ(float* x);
namespace ns { __global__ static void inside(float*); }
__global__ void ns::qualified(float* x) {}
__global__ void plain(float* x, int n) {}   // an overload: listed once
int n = 1'000'000; __global__ void after_digit_separator() {}
__device__ void helper() {}
)";
  EXPECT_EQ(global_function_names(src),
            (V{"plain", "bounded", "templ", "inside", "qualified", "after_digit_separator"}));
}

TEST(SassKernels, DemangledNamesReduceToSourceNames) {
  EXPECT_EQ(demangle("_ZN4demo6reduceILi1024EEEvPKfPf"), "void demo::reduce<1024>(float const*, float*)");
  EXPECT_EQ(qualified_name("void demo::reduce<1024>(float const*, float*)"), "demo::reduce");
  EXPECT_EQ(base_name("void demo::reduce<1024>(float const*, float*)"), "reduce");
  EXPECT_EQ(base_name("copy4(float4 const*, float4*, int)"), "copy4");
  EXPECT_EQ(base_name("saxpy"), "saxpy");  // extern "C": not mangled
  EXPECT_EQ(demangle("saxpy"), "saxpy");
  EXPECT_EQ(base_name("void (anonymous namespace)::k<float, 4>(float*)"), "k");
  EXPECT_EQ(qualified_name("void cutlass::Kernel2<cutlass::gemm::kernel::Gemm<X, (bool)0> >(Params)"),
            "cutlass::Kernel2");
}

TEST(SassKernels, SelectsOnlyTheWantedFunctions) {
  std::vector<SassFunction> all(3);
  all[0].mangled = "_Z5copy1PKfPfi";
  all[1].mangled = "_ZN4demo6reduceILi1024EEEvPKfPf";
  all[2].mangled = "_ZN4demo6reduceILi1024EEEvPKfPf";
  all[0].arch = all[1].arch = "sm_80";
  all[2].arch = "sm_90";
  for (auto& f : all) f.demangled = demangle(f.mangled);

  auto by_base = select_functions(all, {"reduce", "missing"});
  ASSERT_EQ(by_base.functions.size(), 2u);
  EXPECT_EQ(by_base.unmatched, V{"missing"});

  auto by_arch = select_functions(all, {"demo::reduce"}, "sm_90");
  ASSERT_EQ(by_arch.functions.size(), 1u);
  EXPECT_EQ(by_arch.functions[0]->arch, "sm_90");

  auto by_mangled = select_functions(all, {"_Z5copy1PKfPfi"});
  ASSERT_EQ(by_mangled.functions.size(), 1u);
  EXPECT_EQ(by_mangled.functions[0], &all[0]);

  EXPECT_TRUE(select_functions(all, {"copy"}).functions.empty());  // no partial names
  EXPECT_TRUE(select_functions(all, {}).functions.empty());        // never the whole library
}

}  // namespace
}  // namespace kopt::sass
