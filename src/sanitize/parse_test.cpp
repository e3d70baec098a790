#include "sanitize/parse.h"

#include <gtest/gtest.h>

namespace kopt::sanitize {

// Reports in the layout of the Compute Sanitizer documentation's examples (the tool's prefix, head lines and
// indented continuations). The real captures from the H200 are tested in parse_capture_test.cpp.

TEST(SanitizerParse, MemcheckOutOfBoundsWritesAreMergedWithTheirCount) {
  const char* out =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at twice(const float *, float *, int)+0x90 in /src/kernel.cu:12\n"
      "=========     by thread (232,0,0) in block (3,0,0)\n"
      "=========     Address 0x7f1a2e000fa0 is out of bounds\n"
      "=========     and is 1 bytes after the nearest allocation at 0x7f1a2e000000 of size 4,000 bytes\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: [0x2e3f40]\n"
      "=========                    in /lib/x86_64-linux-gnu/libcuda.so.1\n"
      "=========\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at twice(const float *, float *, int)+0x90 in /src/kernel.cu:12\n"
      "=========     by thread (233,0,0) in block (3,0,0)\n"
      "=========     Address 0x7f1a2e000fa4 is out of bounds\n"
      "=========\n"
      "n=1000 calls=1 checksum=12.5\n"
      "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call to cudaDeviceSynchronize.\n"
      "=========     Saved host backtrace up to driver entry point at error\n"
      "=========\n"
      "========= ERROR SUMMARY: 3 errors\n";
  auto r = parse_text(Tool::kMemcheck, out);
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.error_summary, 3);
  EXPECT_EQ(r.program_lines, 1);
  ASSERT_EQ(r.findings.size(), 2u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kOutOfBounds);
  EXPECT_EQ(f.memory_space, "__global__");
  EXPECT_EQ(f.access, "write");
  EXPECT_EQ(f.access_size_bytes, 4);
  EXPECT_EQ(f.function, "twice(const float *, float *, int)");
  EXPECT_EQ(f.kernel(), "twice");
  EXPECT_EQ(f.file, "/src/kernel.cu");
  EXPECT_EQ(f.line, 12);
  EXPECT_EQ(f.thread, "(232,0,0)");
  EXPECT_EQ(f.block, "(3,0,0)");
  ASSERT_TRUE(f.address);
  EXPECT_EQ(*f.address, 0x7f1a2e000fa0u);
  EXPECT_EQ(f.count, 2);
  EXPECT_NE(f.detail.find("is out of bounds"), std::string::npos);
  EXPECT_EQ(f.text(), "memcheck: out-of-bounds __global__ write of 4 bytes in twice at /src/kernel.cu:12 (2 times)");
  EXPECT_TRUE(rejects(f.kind, f.warning));
  EXPECT_EQ(r.findings[1].kind, FindingKind::kCudaApiError);
  EXPECT_EQ(r.findings[1].function, "cudaDeviceSynchronize");
  EXPECT_FALSE(rejects(r.findings[1].kind, false));
  EXPECT_EQ(r.rejecting(), 2);
}

TEST(SanitizerParse, MisalignedAndHardwareExceptions) {
  const char* out =
      "========= Invalid __global__ read of size 16 bytes\n"
      "=========     at vec(float4 *)+0x40\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f0000000004 is misaligned\n"
      "=========\n"
      "========= Warp Illegal Address\n"
      "=========     at kernel_x()+0x1230 in x.cu:7\n"
      "=========\n"
      "========= ERROR SUMMARY: 2 errors\n";
  auto r = parse_text(Tool::kMemcheck, out);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::kMisaligned);
  EXPECT_EQ(r.findings[0].file, "");  // no -lineinfo
  EXPECT_EQ(r.findings[0].kernel(), "vec");
  EXPECT_EQ(r.findings[1].kind, FindingKind::kHardwareException);
  EXPECT_EQ(r.findings[1].line, 7);
}

TEST(SanitizerParse, RacecheckAnalysisAndHazardRecords) {
  const char* out =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at neighbour_sum_racy(const float *, float *, int)+0x100 in kernel.cu:14\n"
      "=========     and Read access at neighbour_sum_racy(const float *, float *, int)+0x160 in kernel.cu:16 [28 hazards]\n"
      "=========\n"
      "========= Error: Potential RAW hazard detected at __shared__ 0x80 in block (1,0,0) :\n"
      "=========     Write Thread (32,0,0) at neighbour_sum_racy(const float *, float *, int)+0x100 in kernel.cu:14\n"
      "=========     Read Thread (31,0,0) at neighbour_sum_racy(const float *, float *, int)+0x160 in kernel.cu:16\n"
      "=========     Current Value : 0, Incoming Value : 1065353216\n"
      "=========\n"
      "========= Warning: Race reported between Write access at f()+0x10 in w.cu:3\n"
      "=========     and Write access at f()+0x10 in w.cu:3 [2 hazards]\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)\n";
  auto r = parse_text(Tool::kRacecheck, out);
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.race_hazards, 3);
  EXPECT_EQ(r.race_errors, 2);
  EXPECT_EQ(r.race_warnings, 1);
  ASSERT_EQ(r.findings.size(), 3u);
  const auto& pair = r.findings[0];
  EXPECT_EQ(pair.kind, FindingKind::kRaceHazard);
  EXPECT_FALSE(pair.warning);
  EXPECT_EQ(pair.kernel(), "neighbour_sum_racy");
  EXPECT_EQ(pair.file, "kernel.cu");
  EXPECT_EQ(pair.line, 14);
  EXPECT_EQ(pair.access, "Write/Read");
  EXPECT_EQ(pair.count, 28);
  EXPECT_NE(pair.detail.find("and Read access at neighbour_sum_racy(const float *, float *, int) in kernel.cu:16"), std::string::npos)
      << pair.detail;
  const auto& hz = r.findings[1];
  EXPECT_EQ(hz.hazard, "RAW");
  EXPECT_EQ(hz.memory_space, "__shared__");
  ASSERT_TRUE(hz.address);
  EXPECT_EQ(*hz.address, 0x80u);
  EXPECT_EQ(hz.block, "(1,0,0)");
  EXPECT_EQ(hz.thread, "(32,0,0)");
  EXPECT_EQ(hz.line, 14);
  EXPECT_EQ(hz.access, "Write/Read");
  EXPECT_TRUE(rejects(hz.kind, hz.warning));
  EXPECT_TRUE(r.findings[2].warning);
  EXPECT_FALSE(rejects(r.findings[2].kind, true));
  EXPECT_EQ(r.rejecting(), 29);
}

TEST(SanitizerParse, InitcheckAndSynccheck) {
  const char* init =
      "========= Uninitialized __global__ memory read of size 4 bytes\n"
      "=========     at accumulate(const float *, float *, int)+0x70 in kernel.cu:16\n"
      "=========     by thread (0,0,0) in block (0,0,0)\n"
      "=========     Address 0x7f4acce00000\n"
      "=========\n"
      "========= ERROR SUMMARY: 1000 errors\n";
  auto ri = parse_text(Tool::kInitcheck, init);
  ASSERT_EQ(ri.findings.size(), 1u);
  EXPECT_EQ(ri.findings[0].kind, FindingKind::kUninitializedRead);
  EXPECT_EQ(ri.findings[0].access, "read");
  EXPECT_EQ(ri.findings[0].kernel(), "accumulate");
  EXPECT_EQ(ri.rejecting(), 0);  // reported, not rejecting
  const char* sync =
      "========= Barrier error detected. Divergent thread(s) in warp\n"
      "=========     at half_barrier(const float *, float *, int)+0x90 in kernel.cu:14\n"
      "=========     by thread (1,0,0) in block (0,0,0)\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n";
  auto rs = parse_text(Tool::kSynccheck, sync);
  ASSERT_EQ(rs.findings.size(), 1u);
  EXPECT_EQ(rs.findings[0].kind, FindingKind::kBarrierError);
  EXPECT_EQ(rs.findings[0].line, 14);
  EXPECT_EQ(rs.rejecting(), 1);
  EXPECT_EQ(rs.error_summary, 1);
}

TEST(SanitizerParse, CleanRunsNotesAndUnfinishedOutput) {
  auto clean = parse_text(Tool::kMemcheck, "========= COMPUTE-SANITIZER\nn=1000 calls=1 checksum=1.0\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(clean.finished());
  EXPECT_TRUE(clean.findings.empty());
  EXPECT_EQ(clean.error_summary, 0);
  auto noted = parse_text(Tool::kMemcheck,
                          "========= COMPUTE-SANITIZER\n========= Target application returned an error\n========= ERROR SUMMARY: 0 errors\n");
  ASSERT_EQ(noted.notes.size(), 1u);
  EXPECT_TRUE(noted.findings.empty());
  auto cut = parse_text(Tool::kRacecheck, "========= COMPUTE-SANITIZER\nsome output\n");
  EXPECT_FALSE(cut.finished());
  auto odd = parse_text(Tool::kMemcheck, "========= Something new happened\n=========     at f()+0x1\n========= ERROR SUMMARY: 1 error\n");
  ASSERT_EQ(odd.findings.size(), 1u);  // never dropped
  EXPECT_EQ(odd.findings[0].kind, FindingKind::kOther);
  EXPECT_EQ(odd.findings[0].head, "Something new happened");
  auto j = to_json(odd);
  EXPECT_EQ(j["findings"][0]["kind"], "other");
  EXPECT_EQ(j["error_summary"], 1);
}

TEST(SanitizerParse, NamesRoundTrip) {
  for (Tool t : kAllTools) EXPECT_EQ(parse_tool(tool_name(t)), t);
  EXPECT_FALSE(parse_tool("leakcheck"));
  EXPECT_EQ(parse_kind("race_hazard"), FindingKind::kRaceHazard);
  EXPECT_EQ(kind_name(FindingKind::kBarrierError), "barrier_error");
}

}  // namespace kopt::sanitize
