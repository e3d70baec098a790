#include "pipeline/db_record.h"

#include <gtest/gtest.h>

#include "util/hash.h"

namespace kopt::pipeline {
namespace {

KernelJob job() {
  KernelJob j;
  j.kernel = "examples/sgemm_tunable/kernel.cu";
  j.dims = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  j.arch = "sm_90a";
  j.nvcc_flags = {"-O3"};
  j.defines = {{"USE_X", "1"}};
  return j;
}

TEST(DbRecordOfARun, TheKeyComesFromTheJobTheCandidateAndTheOutcome) {
  Prepared prep;
  prep.buffer_dtypes = {"float32", "float16"};
  util::MetaInfo meta{"NVIDIA H200", "580.95.05", "13.0.88", "2025.3.1"};
  auto ctx = record_context(job(), prep, "kernel text", meta, db::Source::kOptimize, "kopt_runs/run_1");
  search::Candidate c;
  c.params = {{"TILE", 64}};
  c.guards = {{"vec4", true}};
  c.flags = {"-maxrregcount=128"};
  c.origin = "builtin";
  runner::RunOutcome o;
  o.status = runner::RunStatus::kOk;
  o.timing = runner::compute_stats({1.0, 1.1, 1.2, 1.0, 1.1, 1.05});
  o.samples_ms = {1.0, 1.1, 1.2, 1.0, 1.1, 1.05};
  o.timing_method = "blocking";
  compile::KernelResources res;
  res.name = "_Z4gemmv";
  res.registers = 96;
  auto r = make_record(ctx, &c, o, runner::RunMode::kPaired, db::Verdict::kCorrect, "ignored when correct", {res});
  EXPECT_EQ(r.key.kernel_hash, util::content_hash("kernel text"));
  EXPECT_EQ(r.key.config, (util::Json{{"params", {{"TILE", 64}}}, {"guards", {{"vec4", true}}}}));
  EXPECT_EQ(r.key.dims, job().dims);
  EXPECT_EQ(r.key.dtypes, prep.buffer_dtypes);
  EXPECT_EQ(r.key.gpu_model, "NVIDIA H200");
  EXPECT_EQ(r.key.driver_version, "580.95.05");
  EXPECT_EQ(r.key.nvcc_version, "13.0.88");
  EXPECT_EQ(r.key.compile_flags, (std::vector<std::string>{"-arch=sm_90a", "-O3", "-DUSE_X=1", "-maxrregcount=128"}));
  EXPECT_EQ(r.key.timing_method, "blocking");
  EXPECT_EQ(r.key.l2_mode, "cold");
  EXPECT_EQ(r.key.measure_mode, "paired");
  EXPECT_EQ(r.key.kopt_version, KOPT_VERSION);
  EXPECT_EQ(r.run_status, "ok");
  EXPECT_TRUE(r.note.empty());
  ASSERT_TRUE(r.median_ms);
  EXPECT_DOUBLE_EQ(*r.median_ms, o.timing->median_ms);
  EXPECT_DOUBLE_EQ(*r.ci95_low_ms, o.timing->ci95_low_ms);
  EXPECT_EQ(r.samples_ms.size(), 6u);
  ASSERT_EQ(r.resources.size(), 1u);
  EXPECT_EQ(r.resources[0]["registers"], 96);
  EXPECT_EQ(r.run_dir, "kopt_runs/run_1");

  // A generator's own source: its content hash is part of the configuration.
  c.origin = "external";
  c.content_hash = "abcd";
  EXPECT_EQ(config_of(&c)["source_hash"], "abcd");
  EXPECT_NE(db::key_hash(make_record(ctx, &c, o, runner::RunMode::kPaired, db::Verdict::kCorrect, "", {}).key),
            db::key_hash(r.key));
  // The kernel as given (bench): an empty configuration; a failed run keeps its note and has no time.
  runner::RunOutcome bad;
  bad.status = runner::RunStatus::kCudaError;
  bad.message = "illegal address";
  auto b = make_record(ctx, nullptr, bad, runner::RunMode::kTime, verdict_of(bad.status), bad.message, {});
  EXPECT_EQ(b.key.config, (util::Json{{"params", util::Json::object()}, {"guards", util::Json::object()}}));
  EXPECT_EQ(b.verdict, db::Verdict::kCrashed);
  EXPECT_EQ(b.note, "illegal address");
  EXPECT_FALSE(b.median_ms);
  EXPECT_EQ(b.key.measure_mode, "time");
}

TEST(DbRecordOfARun, RunnerStatusesMapToVerdicts) {
  EXPECT_EQ(verdict_of(runner::RunStatus::kOk), db::Verdict::kCorrect);
  EXPECT_EQ(verdict_of(runner::RunStatus::kWrongResult), db::Verdict::kIncorrect);
  EXPECT_EQ(verdict_of(runner::RunStatus::kWrongOnFreshInputs), db::Verdict::kIncorrect);
  EXPECT_EQ(verdict_of(runner::RunStatus::kCrashed), db::Verdict::kCrashed);
  EXPECT_EQ(verdict_of(runner::RunStatus::kCudaError), db::Verdict::kCrashed);
  EXPECT_EQ(verdict_of(runner::RunStatus::kTimedOut), db::Verdict::kTimedOut);
}

}  // namespace
}  // namespace kopt::pipeline
