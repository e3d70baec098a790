#include "pipeline/db_record.h"

#include "util/hash.h"

namespace kopt::pipeline {

RecordContext record_context(const KernelJob& job, const Prepared& prep, const std::string& kernel_text,
                             const util::MetaInfo& meta, db::Source source, const std::filesystem::path& run_dir) {
  RecordContext c;
  c.kernel_hash = util::content_hash(kernel_text);
  c.kernel_path = job.kernel.string();
  c.dims = job.dims;
  c.dtypes = prep.buffer_dtypes;
  c.gpu_model = meta.gpu;
  c.driver_version = meta.driver;
  c.nvcc_version = meta.nvcc;
  c.compile_flags.push_back("-arch=" + job.arch);
  c.compile_flags.insert(c.compile_flags.end(), job.nvcc_flags.begin(), job.nvcc_flags.end());
  for (const auto& [k, v] : job.defines) c.compile_flags.push_back("-D" + k + "=" + v);
  c.source = source;
  c.run_dir = run_dir.string();
  return c;
}

util::Json config_of(const search::Candidate* c) {
  util::Json j = {{"params", util::Json::object()}, {"guards", util::Json::object()}};
  if (!c) return j;
  j["params"] = c->params;
  j["guards"] = c->guards;
  if (c->origin == "external") j["source_hash"] = c->content_hash;
  return j;
}

db::Verdict verdict_of(runner::RunStatus s) {
  switch (s) {
    case runner::RunStatus::kOk: return db::Verdict::kCorrect;
    case runner::RunStatus::kTimedOut: return db::Verdict::kTimedOut;
    case runner::RunStatus::kCrashed:
    case runner::RunStatus::kCudaError: return db::Verdict::kCrashed;
    default: return db::Verdict::kIncorrect;
  }
}

db::RecordKey make_key(const RecordContext& ctx, const search::Candidate* candidate, const std::string& timing_method,
                       runner::RunMode mode) {
  db::RecordKey k;
  k.kernel_hash = ctx.kernel_hash;
  k.config = config_of(candidate);
  k.dims = ctx.dims;
  k.dtypes = ctx.dtypes;
  k.gpu_model = ctx.gpu_model;
  k.driver_version = ctx.driver_version;
  k.nvcc_version = ctx.nvcc_version;
  k.compile_flags = ctx.compile_flags;
  if (candidate) k.compile_flags.insert(k.compile_flags.end(), candidate->flags.begin(), candidate->flags.end());
  k.timing_method = timing_method;
  k.l2_mode = ctx.l2_mode;
  k.measure_mode = std::string(runner::run_mode_name(mode));
  k.kopt_version = KOPT_VERSION;
  return k;
}

db::Record make_record(const RecordContext& ctx, const search::Candidate* candidate, const runner::RunOutcome& outcome,
                       runner::RunMode mode, db::Verdict verdict, const std::string& note,
                       const std::vector<compile::KernelResources>& resources) {
  db::Record r;
  r.key = make_key(ctx, candidate, outcome.timing_method, mode);
  r.kernel_path = ctx.kernel_path;
  r.source = ctx.source;
  r.verdict = verdict;
  r.run_status = std::string(runner::status_name(outcome.status));
  r.note = verdict == db::Verdict::kCorrect ? std::string() : note;
  if (outcome.timing) {
    r.median_ms = outcome.timing->median_ms;
    r.ci95_low_ms = outcome.timing->ci95_low_ms;
    r.ci95_high_ms = outcome.timing->ci95_high_ms;
  }
  r.samples_ms = outcome.samples_ms;
  r.resources = util::Json::array();
  for (const auto& k : resources) r.resources.push_back(compile::to_json(k));
  r.run_dir = ctx.run_dir;
  return r;
}

}  // namespace kopt::pipeline
