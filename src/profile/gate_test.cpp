#include "profile/gate.h"

#include <gtest/gtest.h>

#include "profile/test_data.h"

namespace kopt::profile {

namespace {
util::ProcessResult exited(int code, std::string out) {
  util::ProcessResult r;
  r.started = true;
  r.exit_code = code;
  r.stdout_text = std::move(out);
  return r;
}
}  // namespace

TEST(NcuGate, PassesOnTheRealSaxpyReport) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  auto run = exited(0, "==PROF== Connected to process 696 (/tmp/k)\n==PROF== Disconnected from process 696\n");
  EXPECT_TRUE(ncu_gate({"/usr/local/cuda/bin/ncu", &run, &*page, required_metrics()}));
}

TEST(NcuGate, NcuMissing) {
  Status s = ncu_gate({"", nullptr, nullptr, {}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ExitCode::kGate);
  EXPECT_NE(s.error().message.find("ncu not found"), std::string::npos);
}

TEST(NcuGate, CounterPermission) {
  auto run = exited(1,
                    "==PROF== Connected to process 812 (/usr/bin/kopt)\n"
                    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
                    "Counters on the target device 0. For instructions on enabling permissions and to get more "
                    "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n");
  GateVerdict v = evaluate_ncu_gate({"ncu", &run, nullptr, {}});
  EXPECT_EQ(v.failure, GateFailure::kCounterPermission);
  EXPECT_NE(v.message.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);  // doctor's fix
  Status s = ncu_gate({"ncu", &run, nullptr, {}});
  ASSERT_FALSE(s);
  EXPECT_EQ(to_int(s.error().code), 3);
}

TEST(NcuGate, NcuFailedOtherwise) {
  auto run = exited(1, "==ERROR== Failed to find metric nope__metric\n");
  GateVerdict v = evaluate_ncu_gate({"ncu", &run, nullptr, {}});
  EXPECT_EQ(v.failure, GateFailure::kNcuFailed);
  EXPECT_NE(v.message.find("Failed to find metric nope__metric"), std::string::npos);
  EXPECT_NE(v.message.find("exit 1"), std::string::npos);
}

TEST(NcuGate, EmptyReportSaysTheRangeCaughtNoKernel) {
  std::string text = testing::ncu_capture("ncu_raw.csv");
  auto page = parse_raw_page(text.substr(0, text.rfind("\"0\",\"696\"")));
  ASSERT_TRUE(page);
  GateVerdict v = evaluate_ncu_gate({"ncu", nullptr, &*page, required_metrics()});
  EXPECT_EQ(v.failure, GateFailure::kNoKernel);
  EXPECT_NE(v.message.find("the profiler range caught no kernel"), std::string::npos);
}

TEST(NcuGate, MissingRequiredMetric) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  page->kernels[0].metrics.erase("launch__registers_per_thread");
  std::vector<std::string> required = required_metrics();
  required.push_back("derived__local_spilling_requests_pct");  // present in the report, but "no data"
  GateVerdict v = evaluate_ncu_gate({"ncu", nullptr, &*page, required});
  EXPECT_EQ(v.failure, GateFailure::kMissingMetrics);
  EXPECT_EQ(v.missing_metrics,
            (std::vector<std::string>{"launch__registers_per_thread", "derived__local_spilling_requests_pct"}));
  EXPECT_NE(v.message.find("launch__registers_per_thread"), std::string::npos);
}

}  // namespace kopt::profile
