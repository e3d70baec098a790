#pragma once
// A measured configuration as the results database keeps it (db/record.h, docs/DATABASE.md), made from what the
// commands that measure have: the job, its prepared contract, the candidate and the runner's outcome. Pure.
#include <filesystem>
#include <string>
#include <vector>

#include "compile/resources.h"
#include "db/record.h"
#include "pipeline/prepare.h"
#include "runner/launch.h"
#include "runner/outcome.h"
#include "search/candidate.h"
#include "util/json_io.h"

namespace kopt::pipeline {

// What every record of one run shares.
struct RecordContext {
  std::string kernel_hash;  // util::content_hash of the kernel file's text
  std::string kernel_path;
  Dims dims;
  std::vector<std::string> dtypes;
  std::string gpu_model, driver_version, nvcc_version;
  std::vector<std::string> compile_flags;  // the job's: -arch, its flags, its -D defines
  std::string l2_mode = "cold";
  db::Source source = db::Source::kOptimize;
  std::string run_dir;
};

// `kernel_text`: the kernel file as the user gave it (not a derived, instrumented copy).
RecordContext record_context(const KernelJob& job, const Prepared& prep, const std::string& kernel_text,
                             const util::MetaInfo& meta, db::Source source, const std::filesystem::path& run_dir);

// The configuration part of the key: the candidate's params and guards, and the content hash of its source when a
// generator wrote it (origin "external": its params do not say what it is). nullptr: the kernel as given.
util::Json config_of(const search::Candidate* c);

db::Verdict verdict_of(runner::RunStatus s);

// The key a measurement of `candidate` (nullptr: the kernel as given) gets in `mode`, timed with `timing_method`:
// make_record's key, and what a run looks up before measuring (issue 39 item 2).
db::RecordKey make_key(const RecordContext& ctx, const search::Candidate* candidate, const std::string& timing_method,
                       runner::RunMode mode);

// One record. `candidate` may be nullptr (the kernel as given); `mode` is how the outcome was measured (time, or
// paired: raced against the champion); `note`: why, when the verdict is not correct.
db::Record make_record(const RecordContext& ctx, const search::Candidate* candidate, const runner::RunOutcome& outcome,
                       runner::RunMode mode, db::Verdict verdict, const std::string& note,
                       const std::vector<compile::KernelResources>& resources);

}  // namespace kopt::pipeline
