#include "doctor/doctor.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "testing/test_support.h"
#include "toolchain/cutlass.h"

#include "device/cuda_driver.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::doctor {

TEST(Doctor, RecognisesTheCounterPermissionError) {
  // The message Nsight Compute prints when counters are restricted to admin users.
  std::string out =
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
      "on the target device 0. For instructions on enabling permissions and to get more information see "
      "https://developer.nvidia.com/ERR_NVGPUCTRPERM";
  EXPECT_TRUE(is_counter_permission_error(out));
  EXPECT_FALSE(is_counter_permission_error("==PROF== Disconnected from process 749"));
  EXPECT_NE(counter_permission_fix().find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
}

TEST(Doctor, ReportFailsWhenARequiredCheckFails) {
  Report r;
  r.checks.push_back({"gpu", CheckStatus::kFail, true, "no GPU"});
  r.checks.push_back({"cutlass", CheckStatus::kWarn, false, "not set"});
  r.checks.push_back({"nvcc", CheckStatus::kPass, true, "ok"});
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.failed_required(), std::vector<std::string>{"gpu"});
  auto j = to_json(r);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["checks"][1]["status"], "warn");
  EXPECT_NE(format_table(r).find("FAILED — missing or broken: gpu"), std::string::npos);
}

TEST(Doctor, OnAMachineWithoutAGpuExitsThreeNamingTheGpu) {
  if (device::query_gpus().ok()) GTEST_SKIP() << "this machine has a GPU";
  auto r = util::run_process({{testing_support::kopt_binary(), "doctor", "--no-counters"}, "", {}, 300});
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("FAIL  gpu"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("missing or broken: gpu"), std::string::npos) << r.stdout_text;
}

TEST(DoctorGpu, PassesEveryRequiredCheckOnAGpuMachine) {
  if (!device::query_gpus().ok()) GTEST_SKIP() << "no GPU on this machine";
  auto report = run_doctor({});
  EXPECT_TRUE(report.passed()) << format_table(report);
  ASSERT_FALSE(report.gpus.empty());
  EXPECT_GT(report.gpus[0].sm_count, 0);
  EXPECT_FALSE(report.gpus[0].uuid.empty());
  // The optimize gate's doctor leaves the counters probe to counters_check(), run beside the baseline's checks.
  Options deferred;
  deferred.defer_ncu_counters = true;
  deferred.cache_dir = (std::filesystem::path(::testing::TempDir()) / "kopt_doctor_deferred").string();
  auto rep = run_doctor(deferred);
  for (const auto& c : rep.checks) EXPECT_NE(c.name, "ncu_counters");
  Check counters = counters_check(rep, deferred);
  EXPECT_EQ(counters.name, "ncu_counters");
  EXPECT_EQ(counters.status, CheckStatus::kPass) << counters.summary;
}

TEST(Doctor, TheDeferredCountersProbeIsLeftOutOfTheReport) {
  Options o;
  o.defer_ncu_counters = true;
  o.import_python_modules = false;
  auto rep = run_doctor(o);
  for (const auto& c : rep.checks) EXPECT_NE(c.name, "ncu_counters") << "counters_check() runs it";
  Options asked = o;
  asked.defer_ncu_counters = false;
  bool listed = false;
  for (const auto& c : run_doctor(asked).checks) listed = listed || c.name == "ncu_counters";
  EXPECT_TRUE(listed) << "without the deferral the report lists it (skipped where there is no GPU)";
  // Alone, on this machine's report: a check of that name (skipped without a GPU, as run_doctor's would be).
  EXPECT_EQ(counters_check(rep, o).name, "ncu_counters");
}

// Each check says how long it took (gates/hardware.json): the gate waits on the slowest, and a run's whole-wall
// accounting names it. nvcc runs twice and Python once, so neither took zero; the JSON carries the figure.
TEST(Doctor, EachCheckRecordsItsSeconds) {
  Options o;
  o.defer_ncu_counters = true;
  o.import_python_modules = false;
  auto rep = run_doctor(o);
  double total = 0;
  for (const auto& c : rep.checks) {
    EXPECT_GE(c.seconds, 0) << c.name;
    EXPECT_LT(c.seconds, 120) << c.name;
    if (c.name == "nvcc" || c.name == "python3") {
      EXPECT_GT(c.seconds, 0) << c.name << " ran a process";
    }
    total += c.seconds;
  }
  EXPECT_GT(total, 0);
  auto j = to_json(rep);
  for (const auto& c : j["checks"]) EXPECT_TRUE(c.contains("seconds")) << c.dump();
}

TEST(Doctor, CutlassCheckFindsTheHeadersOrSaysHowToGetThem) {
  const char* old = std::getenv("CUTLASS_PATH");
  std::string saved = old ? old : "";
  ::setenv("CUTLASS_PATH", "/nonexistent/cutlass", 1);
  Check bad = check_cutlass();
  EXPECT_EQ(bad.status, CheckStatus::kWarn);
  EXPECT_FALSE(bad.required);  // only CUTLASS kernels need it
  EXPECT_NE(bad.summary.find("/nonexistent/cutlass"), std::string::npos) << bad.summary;
  EXPECT_NE(bad.fix.find("nvidia-cutlass"), std::string::npos) << bad.fix;
  if (old) ::setenv("CUTLASS_PATH", saved.c_str(), 1);
  else ::unsetenv("CUTLASS_PATH");

  auto found = toolchain::find_cutlass_include();
  if (!found.found()) GTEST_SKIP() << "no CUTLASS headers here: " << found.problem;
  Check c = check_cutlass();
  EXPECT_EQ(c.status, CheckStatus::kPass) << c.summary;  // the wheel carries CuTe
  EXPECT_NE(c.summary.find(found.dir), std::string::npos) << c.summary;
  EXPECT_NE(c.summary.find("CUTLASS " + found.version), std::string::npos) << c.summary;
  EXPECT_EQ(c.details["include_dir"], found.dir);
  EXPECT_EQ(c.details["cute"], true);
}

}  // namespace kopt::doctor

namespace kopt::doctor {

TEST(Doctor, CountersCacheKeyChangesWithWhatCouldTakeThePermissionAway) {
  namespace fs = std::filesystem;
  const fs::path ncu = fs::temp_directory_path() / "kopt_doctor_test_ncu";
  ASSERT_TRUE(util::write_file_atomic(ncu, "#!/bin/sh\n").ok());
  Report r;
  device::GpuInfo g;
  g.uuid = "GPU-1";
  g.cc_major = 9;
  r.gpus.push_back(g);
  r.driver_version = "580.1";
  const std::string k = counters_cache_key(r, ncu.string(), "boot-a", "RmProfilingAdminOnly: 0\n");
  ASSERT_FALSE(k.empty());
  EXPECT_EQ(k, counters_cache_key(r, ncu.string(), "boot-a", "RmProfilingAdminOnly: 0\n"));
  EXPECT_NE(k, counters_cache_key(r, ncu.string(), "boot-b", "RmProfilingAdminOnly: 0\n"));  // a reboot
  EXPECT_NE(k, counters_cache_key(r, ncu.string(), "boot-a", "RmProfilingAdminOnly: 1\n"));  // the restriction
  Report other = r;
  other.driver_version = "580.2";
  EXPECT_NE(k, counters_cache_key(other, ncu.string(), "boot-a", "RmProfilingAdminOnly: 0\n"));
  other = r;
  other.gpus.front().uuid = "GPU-2";
  EXPECT_NE(k, counters_cache_key(other, ncu.string(), "boot-a", "RmProfilingAdminOnly: 0\n"));
  ASSERT_TRUE(util::write_file_atomic(ncu, "#!/bin/sh\n# another ncu\n").ok());  // a new ncu in place
  EXPECT_NE(k, counters_cache_key(r, ncu.string(), "boot-a", "RmProfilingAdminOnly: 0\n"));
  // Nothing to key on: no key, so nothing is reused.
  EXPECT_TRUE(counters_cache_key(r, ncu.string(), "", "").empty());
  EXPECT_TRUE(counters_cache_key(Report{}, ncu.string(), "boot-a", "").empty());
  EXPECT_TRUE(counters_cache_key(r, (ncu.string() + ".missing"), "boot-a", "").empty());
  fs::remove(ncu);
}

TEST(Doctor, TheGatesLighterDoctorReadsPythonModulesWithoutImportingThem) {
  Options o;
  o.check_ncu_counters = false;
  o.import_python_modules = false;
  auto rep = run_doctor(o);
  bool saw_python = false;
  for (const auto& c : rep.checks) {
    EXPECT_NE(c.name, "python:torch_cuda") << "asked only when torch is imported";
    if (c.name == "python3" && c.status == CheckStatus::kPass) {
      saw_python = true;
      EXPECT_FALSE(c.details.value("imported", true));
    }
    if (c.name == "python:numpy" && saw_python) {
      EXPECT_EQ(c.status, CheckStatus::kPass) << c.summary;  // setup.sh installs it
    }
  }
  EXPECT_TRUE(saw_python);
  // The table's order does not depend on which check ended first.
  std::vector<std::string> names;
  for (const auto& c : rep.checks) names.push_back(c.name);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(names[0], "gpu");
  EXPECT_EQ(names[1], "nvcc");
  EXPECT_EQ(names[2], "ncu");
  EXPECT_EQ(names[3], "cuobjdump");
  EXPECT_EQ(names[4], "nvdisasm");
  EXPECT_EQ(names[5], "python3");
}

}  // namespace kopt::doctor
