// The instruction-cache flush's PTX (runner/code_flush.h): its shape here, and ptxas's view of it where ptxas is
// installed (the SASS must stay as long as the PTX says: nothing folded away). It runs on the GPU in
// RunnerGpu.TheDiscardAndCodeFlushesRunAndOnlySolvesKernelIsInTheSpan.
#include "runner/code_flush.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace kopt::runner {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

TEST(CodeFlush, ThePtxHasOneEntryAndSixInstructionsAStep) {
  const std::string ptx = code_flush_ptx(100);
  EXPECT_EQ(count(ptx, ".entry kopt_code_flush("), 1);
  EXPECT_EQ(count(ptx, "\tshl.b32"), 200);
  EXPECT_EQ(count(ptx, "\tshr.u32"), 100);
  EXPECT_EQ(count(ptx, "\txor.b32"), 301);  // three a step and the thread index
  EXPECT_EQ(ptx.find('\0'), std::string::npos);
  EXPECT_GT(code_flush_ptx().size(), 200'000u);  // the default: far more code than an SM's instruction caches
}

TEST(CodeFlush, PtxasKeepsEveryStep) {
  std::string ptxas;
  for (const char* c : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (std::filesystem::exists(c)) ptxas = c;
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas";
  const auto dir = std::filesystem::temp_directory_path() / ("kopt_code_flush_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "f.ptx") << code_flush_ptx(2000);
  const std::string cmd = ptxas + " -arch=sm_90 -v " + (dir / "f.ptx").string() + " -o " + (dir / "f.cubin").string() + " > " +
                          (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  // 2000 steps of at least two SASS instructions (a shift, an xor; or one fused) at 16 bytes each: the cubin's text
  // holds them all when it is above 2000 x 3 x 16 bytes, i.e. nothing was folded.
  EXPECT_GT(std::filesystem::file_size(dir / "f.cubin"), 96'000u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kopt::runner
