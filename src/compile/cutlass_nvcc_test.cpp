// examples/cutlass_gemm compiled with the real nvcc and the CUTLASS headers, through the same path the
// kernel commands use (pipeline::compile_request -> compile::compile_batch), and its SASS read with the real
// cuobjdump. Skips when nvcc, cuobjdump or the CUTLASS headers are missing. Two configurations, compiled in
// one batch into the default build cache: the first run takes minutes on 2 cores, later runs hit the cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "compile/cutlass.h"
#include "compile/pool.h"
#include "pipeline/prepare.h"
#include "sass/analysis.h"
#include "sass/demangle.h"
#include "sass/kernels.h"
#include "sass/mix.h"
#include "testing/test_support.h"
#include "toolchain/cutlass.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::compile {
namespace {

namespace fs = std::filesystem;

using testing_support::executable;

TEST(CutlassNvcc, ExampleCompilesInTwoConfigsWithHgmmaInTheCutlassKernel) {
  if (!testing_support::sass_tools_present())
    GTEST_SKIP() << "nvcc or cuobjdump not found";
  auto headers = toolchain::find_cutlass_include();
  if (!headers.found()) GTEST_SKIP() << "no CUTLASS headers: " << headers.problem;
  fs::path src = fs::path(testing_support::source_dir()) / "examples/cutlass_gemm/kernel.cu";
  ASSERT_TRUE(fs::exists(src)) << src;
  fs::path out = fs::temp_directory_path() / ("kopt-cutlass-nvcc-" + std::to_string(::getpid()));
  fs::remove_all(out);

  pipeline::KernelJob job;  // what `kopt bench examples/cutlass_gemm/kernel.cu ...` builds: arch sm_90 asked
  job.kernel = src;
  std::vector<CompileRequest> reqs;
  reqs.push_back(pipeline::compile_request(job, "default", src, out / "default"));
  job.defines = {{"TILE_N", "256"}, {"CLUSTER_M", "2"}, {"STAGES", "4"}};  // 128x256x64, 2x1 cluster, 4 stages
  reqs.push_back(pipeline::compile_request(job, "wide", src, out / "wide"));
  for (auto& r : reqs) {
    // The pipeline's plumbing: a CUTLASS request, sized for --compile-jobs auto, for sm_90a, with the headers.
    EXPECT_TRUE(r.cutlass);
    EXPECT_EQ(r.est_mem_bytes, kCutlassJobMemBytes);
    EXPECT_EQ(r.arch, "sm_90a");
    EXPECT_EQ(toolchain::cutlass_include_among(r.include_dirs), headers.dir);
    r.timeout_s = 560;
  }

  util::SystemRunner runner;
  auto results = compile_batch(reqs, {0, ""}, runner);  // auto jobs, default build cache
  ASSERT_EQ(results.size(), 2u);
  for (const auto& res : results) {
    ASSERT_TRUE(res.ok()) << res.name << ":\n" << res.log_text.substr(0, 6000);
    ASSERT_FALSE(res.resources.empty()) << res.name;
    for (const auto& k : res.resources)
      if (k.entry) {
        EXPECT_EQ(k.arch, "sm_90a") << k.name;
        EXPECT_FALSE(k.spills()) << res.name << ": " << k.name;
      }
    // The log must not carry ptxas's "wgmma serialized" warning (C7510): -DNDEBUG keeps assert() out.
    EXPECT_EQ(res.log_text.find("C7510"), std::string::npos) << res.name;

    auto a = sass::analyze(res.library, sass::kernel_names_from_source(src), "sm_90a", runner);
    ASSERT_TRUE(a.tool_error.empty()) << a.tool_error;
    ASSERT_EQ(a.selected.size(), 1u) << res.name;
    const auto& f = a.functions[a.selected[0]];
    EXPECT_EQ(sass::qualified_name(f.demangled), "cutlass::device_kernel") << f.demangled.substr(0, 200);
    auto v = sass::verify_method(a, sass::Signature{{"HGMMA", "HMMA"}, {}, {}, {}});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->status, sass::VerifyStatus::kPass) << v->message;
    auto mix = sass::instruction_mix(f);
    EXPECT_GT(mix.count("GMMA"), 0) << res.name;
    EXPECT_GT(mix.count("TMA"), 0) << res.name;
  }
  // The wide tile's wgmma is 64 x 256 per warp group.
  auto wide = sass::analyze(results[1].library, {sass::kCutlassKernels}, "sm_90a", runner);
  ASSERT_EQ(wide.selected.size(), 1u);
  auto n256 = sass::verify_method(wide, sass::Signature{{"HGMMA.64x256x16"}, {}, {}, {}});
  ASSERT_TRUE(n256);
  EXPECT_EQ(n256->status, sass::VerifyStatus::kPass) << n256->message;

  // `kopt sass` on the same source, as the pipeline built it: a build-cache hit, the CUTLASS kernel selected
  // without --kernel-name. Then the registry's CUTLASS method on that library (`--methods` would add
  // -DKOPT_<ID>=1 to a compile, another build).
  std::string kopt = testing_support::kopt_binary();
  if (executable(kopt)) {
    auto r = util::run_process({{kopt, "sass", src.string()}, "", {}, 560});
    EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
    EXPECT_NE(r.stdout_text.find("(build cache hit)"), std::string::npos) << r.stdout_text.substr(0, 2000);
    EXPECT_NE(r.stdout_text.find("kernels looked for: cutlass::*\n"), std::string::npos) << r.stdout_text.substr(0, 2000);
    EXPECT_NE(r.stdout_text.find("kernel cutlass::device_kernel<...>(...)  [sm_90a]"), std::string::npos);
    EXPECT_NE(r.stdout_text.find("GMMA"), std::string::npos);
    auto m = util::run_process({{kopt, "sass", "--lib", results[0].library.string(), "--kernel-name", "cutlass::*",
                                 "--arch", "sm_90a", "--methods", "wgmma_tensor_cores"},
                                "", {}, 120});
    EXPECT_EQ(m.exit_code, 0) << m.stdout_text << m.stderr_text;
    EXPECT_NE(m.stdout_text.find("found HGMMA"), std::string::npos) << m.stdout_text.substr(0, 3000);
  }
  fs::remove_all(out);
}

}  // namespace
}  // namespace kopt::compile
