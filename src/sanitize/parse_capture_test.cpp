// The parser and the gate on compute-sanitizer 2025.3.1 output captured on an H200 from the kernels of
// tests/data/sanitize/ (scripts/device/capture_sanitizer.sh; what each shows: tests/data/sanitize/README.md).
#include <gtest/gtest.h>

#include "sanitize/parse.h"
#include "sanitize/sanitizer.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::sanitize {

namespace {

const char* kVersion = "compute-sanitizer-2025.3.1.0";
const char* kKernels[] = {"clean", "race_shared", "uninit_shared", "oob_global_write", "uninit_global", "divergent_barrier"};

std::string captured(const std::string& variant, const std::string& kernel, const std::string& ext = ".txt") {
  auto t = util::read_file(testing_support::test_data_dir() + "/sanitize/" + kVersion + "/" + variant + "/" + kernel + ext);
  EXPECT_TRUE(t) << variant << "/" << kernel;
  return t ? *t : std::string();
}

// The finished process a capture came from: its console output and exit code.
util::ProcessResult process(const std::string& variant, const std::string& kernel) {
  util::ProcessResult p;
  p.started = true;
  p.stdout_text = captured(variant, kernel);
  p.exit_code = std::stoi(captured(variant, kernel, ".rc"));
  return p;
}

}  // namespace

TEST(SanitizerCapture, MemcheckOutOfBoundsWrite) {
  auto r = parse_text(Tool::kMemcheck, captured("memcheck", "oob_global_write"));
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.error_summary, 25);  // 24 writes past the end, then the launch failure
  ASSERT_EQ(r.findings.size(), 2u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kOutOfBounds);
  EXPECT_EQ(f.memory_space, "__global__");
  EXPECT_EQ(f.access, "write");
  EXPECT_EQ(f.access_size_bytes, 4);
  EXPECT_EQ(f.function, "twice(const float *, float *, int)");
  EXPECT_EQ(f.kernel(), "twice");
  EXPECT_EQ(f.file, "kernel.cu");
  EXPECT_EQ(f.line, 10);  // y[i] = 2.0f * v;
  EXPECT_EQ(f.thread, "(232,0,0)");
  EXPECT_EQ(f.block, "(3,0,0)");  // n = 1000: block 3 holds 768..1023, thread 232 is element 1000
  ASSERT_TRUE(f.address);
  EXPECT_EQ(*f.address, 0x7f3e2a801fa0u);
  EXPECT_EQ(f.count, 24);
  EXPECT_NE(f.detail.find("is out of bounds; and is 1 bytes after the nearest allocation"), std::string::npos) << f.detail;
  EXPECT_EQ(r.findings[1].kind, FindingKind::kCudaApiError);
  EXPECT_EQ(r.findings[1].function, "cudaDeviceSynchronize");
  EXPECT_EQ(r.rejecting(), 24);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "Target application returned an error");
  EXPECT_EQ(r.program_lines, 1);  // "cudaDeviceSynchronize() failed: unspecified launch failure"

  // Without -lineinfo: the function, no file; without backtraces: the same findings.
  auto plain = parse_text(Tool::kMemcheck, captured("memcheck_nolineinfo", "oob_global_write"));
  ASSERT_FALSE(plain.findings.empty());
  EXPECT_EQ(plain.findings[0].kernel(), "twice");
  EXPECT_EQ(plain.findings[0].file, "");
  EXPECT_EQ(plain.findings[0].count, 24);
  auto nobt = parse_text(Tool::kMemcheck, captured("memcheck_no_backtrace", "oob_global_write"));
  ASSERT_FALSE(nobt.findings.empty());
  EXPECT_EQ(nobt.findings[0].count, 24);
  EXPECT_EQ(nobt.findings[0].line, 10);
  // At n = 1024, a multiple of the tile, nothing is written out of bounds.
  auto aligned = parse_text(Tool::kMemcheck, captured("memcheck_n1024", "oob_global_write"));
  EXPECT_TRUE(aligned.findings.empty());
  EXPECT_EQ(aligned.error_summary, 0);
}

TEST(SanitizerCapture, RacecheckAnalysisModeReportsTheRacingPair) {
  auto r = parse_text(Tool::kRacecheck, captured("racecheck", "race_shared"));
  EXPECT_TRUE(r.finished());
  EXPECT_EQ(r.race_errors, 1);
  EXPECT_EQ(r.race_warnings, 0);
  ASSERT_EQ(r.findings.size(), 1u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kRaceHazard);
  EXPECT_FALSE(f.warning);
  EXPECT_EQ(f.kernel(), "neighbour_sum_racy");
  EXPECT_EQ(f.file, "kernel.cu");
  EXPECT_EQ(f.line, 12);  // s[t] = ...
  EXPECT_EQ(f.access, "Write/Read");
  EXPECT_EQ(f.count, 4000);
  EXPECT_NE(f.detail.find("and Read access at neighbour_sum_racy(const float *, float *, int) in kernel.cu:14"), std::string::npos);
  EXPECT_EQ(f.text(), "racecheck: shared-memory race hazard (Write/Read) in neighbour_sum_racy at kernel.cu:12 (4000 times)");
  EXPECT_EQ(r.rejecting(), 4000);
}

TEST(SanitizerCapture, RacecheckHazardModeShowsOnlyWarningsWithinThePrintLimit) {
  for (const char* variant : {"racecheck_report_all", "racecheck_report_hazard", "racecheck_nolineinfo"}) {
    auto r = parse_text(Tool::kRacecheck, captured(variant, "race_shared"));
    EXPECT_TRUE(r.finished()) << variant;
    EXPECT_EQ(r.race_hazards, 100) << variant;
    EXPECT_GT(r.race_errors.value_or(0), 100) << variant;  // counted, never displayed
    ASSERT_FALSE(r.findings.empty()) << variant;
    for (const auto& f : r.findings) {
      EXPECT_TRUE(f.warning) << variant;
      EXPECT_EQ(f.hazard, "RAW");
      EXPECT_EQ(f.memory_space, "__shared__");
      EXPECT_TRUE(f.address.has_value());
    }
    EXPECT_EQ(r.rejecting(), 0) << variant;
    // The gate still rejects, from the summary's error count.
    auto v = judge({interpret(Tool::kRacecheck, process(variant, "race_shared"))});
    EXPECT_TRUE(v.rejected) << variant;
    EXPECT_NE(v.reason.find("at error level (not displayed)"), std::string::npos) << v.reason;
    EXPECT_EQ(v.race_safe, RaceSafe::kUnsafe);
  }
}

TEST(SanitizerCapture, InitcheckUninitialisedWorkspace) {
  auto r = parse_text(Tool::kInitcheck, captured("initcheck", "uninit_global"));
  EXPECT_EQ(r.error_summary, 1000);  // every element of the workspace
  EXPECT_EQ(r.errors_not_printed, 900);
  ASSERT_EQ(r.findings.size(), 1u);
  const auto& f = r.findings[0];
  EXPECT_EQ(f.kind, FindingKind::kUninitializedRead);
  EXPECT_EQ(f.memory_space, "__global__");
  EXPECT_EQ(f.kernel(), "accumulate");
  EXPECT_EQ(f.line, 13);  // ws[i] += x[i]
  EXPECT_EQ(f.count, 100);  // printed records (--print-limit 100)
  EXPECT_TRUE(f.address.has_value());
  EXPECT_EQ(r.rejecting(), 0);
}

TEST(SanitizerCapture, SynccheckDivergentBarrier) {
  auto r = parse_text(Tool::kSynccheck, captured("synccheck", "divergent_barrier"));
  EXPECT_EQ(r.error_summary, 512);
  EXPECT_EQ(r.errors_not_printed, 412);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, FindingKind::kBarrierError);
  EXPECT_EQ(r.findings[0].kernel(), "half_barrier");
  EXPECT_EQ(r.findings[0].line, 13);
  EXPECT_EQ(r.findings[0].count, 100);
  EXPECT_EQ(r.findings[0].head, "Barrier error detected. Divergent thread(s) in warp.");
}

TEST(SanitizerCapture, EveryToolOnEveryKernelGivesTheExpectedGateVerdict) {
  struct Expect {
    const char* kernel;
    bool rejected;
    RaceSafe race;
    const char* reason;    // a fragment of the rejection, or of what is reported
  };
  const Expect expect[] = {
      {"clean", false, RaceSafe::kSafe, ""},
      {"race_shared", true, RaceSafe::kUnsafe, "racecheck: shared-memory race hazard"},
      {"oob_global_write", true, RaceSafe::kSafe, "memcheck: out-of-bounds __global__ write of 4 bytes in twice at kernel.cu:10"},
      {"divergent_barrier", true, RaceSafe::kSafe, "synccheck: Barrier error detected"},
      {"uninit_global", false, RaceSafe::kSafe, "initcheck: read of uninitialised __global__ memory"},
      {"uninit_shared", false, RaceSafe::kSafe, ""},  // no tool tracks shared-memory initialisation
  };
  for (const auto& e : expect) {
    std::vector<ToolRun> runs;
    for (Tool t : kAllTools) runs.push_back(interpret(t, process(std::string(tool_name(t)), e.kernel)));
    for (const auto& r : runs) EXPECT_NE(r.outcome, RunOutcome::kToolError) << e.kernel << " " << tool_name(r.tool) << ": " << r.message;
    auto v = judge(runs);
    EXPECT_TRUE(v.complete()) << e.kernel;
    EXPECT_EQ(v.rejected, e.rejected) << e.kernel << ": " << v.reason;
    EXPECT_EQ(v.race_safe, e.race) << e.kernel;
    if (e.rejected) {
      EXPECT_NE(v.reason.find(e.reason), std::string::npos) << e.kernel << ": " << v.reason;
    } else if (*e.reason) {
      ASSERT_FALSE(v.reported.empty()) << e.kernel;
      EXPECT_NE(v.reported[0].find(e.reason), std::string::npos) << e.kernel << ": " << v.reported[0];
    } else {
      EXPECT_TRUE(v.reported.empty()) << e.kernel;
      for (const auto& r : runs) EXPECT_EQ(r.outcome, RunOutcome::kClean) << e.kernel << " " << tool_name(r.tool);
    }
  }
  EXPECT_EQ(sizeof(kKernels) / sizeof(kKernels[0]), sizeof(expect) / sizeof(expect[0]));
}

TEST(SanitizerCapture, ARefusedOptionIsAToolError) {
  auto p = process("initcheck_track_unused", "clean");
  EXPECT_EQ(p.exit_code, 255);
  auto r = interpret(Tool::kInitcheck, p);
  EXPECT_EQ(r.outcome, RunOutcome::kToolError);
  EXPECT_NE(r.message.find("extra yes detected"), std::string::npos) << r.message;
  auto v = judge({r});
  EXPECT_FALSE(v.rejected);
  EXPECT_FALSE(v.complete());
}

TEST(SanitizerCapture, VersionLine) {
  auto text = util::read_file(testing_support::test_data_dir() + "/sanitize/" + kVersion + "/version.txt");
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("Version 2025.3.1.0 (build 36400806)"), std::string::npos);
}

}  // namespace kopt::sanitize
