#include "loop/candidate_check.h"

#include <fmt/format.h>

#include "compile/pool.h"
#include "loop/numerics.h"
#include "pipeline/triton.h"
#include "runner/launch.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

compile::CompileRequest candidate_compile_request(const pipeline::KernelJob& job, const search::Candidate& c,
                                                  const fs::path& out_dir) {
  auto req = pipeline::compile_request(job, c.id, c.source, out_dir);
  for (const auto& [k, v] : c.defines) req.defines[k] = v;
  for (const auto& f : c.flags) {
    if (f == "-arch=sm_90a") req.arch = "sm_90a";  // the sm_90a method: the compile module emits -gencode
    else req.extra_flags.push_back(f);
  }
  return req;
}

namespace {

std::string clip(std::string s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars) + fmt::format("\n[... {} more characters]", s.size() - max_chars);
}

}  // namespace

search::CheckFeedback feedback_from_build(const compile::CompileResult& build, size_t max_chars) {
  search::CheckFeedback f;
  f.status = search::CandidateStatus::kCompileFailed;
  // nvcc's "file(line): error: ..." lines and the line after each (the offending code), then the whole log.
  std::string errors;
  auto lines = util::split_lines(build.log_text);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find("error") != std::string::npos) {
      errors += lines[i] + "\n";
      if (i + 1 < lines.size() && lines[i + 1].find("error") == std::string::npos) errors += lines[i + 1] + "\n";
    }
  std::string head = fmt::format("{} ({}){}", compile::describe(build.status), compile::to_string(build.status),
                                 build.log_path.empty() ? "" : " in " + build.log_path.string());
  f.details = clip(errors.empty() ? head + "\n" + build.log_text : head + "\n" + errors + "\n--- the whole log\n" + build.log_text,
                   max_chars);
  return f;
}

search::CheckFeedback feedback_from_run(const runner::RunOutcome& run, size_t max_chars) {
  search::CheckFeedback f;
  switch (run.status) {
    case runner::RunStatus::kOk: f.status = search::CandidateStatus::kOk; return f;
    case runner::RunStatus::kTimedOut: f.status = search::CandidateStatus::kTimedOut; break;
    case runner::RunStatus::kCrashed:
    case runner::RunStatus::kCudaError: f.status = search::CandidateStatus::kCrashed; break;
    default: f.status = search::CandidateStatus::kIncorrect;
  }
  f.details = clip(fmt::format("{}: {}\n{}", runner::status_name(run.status), runner::describe(run.status), run.message), max_chars);
  return f;
}

Result<search::CheckFeedback> LoopChecker::check(const search::Candidate& c) {
  if (!s_.job || !s_.prep || !s_.lab) return internal_error("LoopChecker needs the job, the prepared inputs and a lab");
  const fs::path dir = s_.work_dir / c.id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const bool triton = s_.prep->backend == search::Backend::kTriton;
  runner::RunRequest r;
  if (triton) {  // Triton compiles at the first launch, inside the checking child
    r.triton_kernel = s_.prep->kernel;
    r.triton_configs = {pipeline::triton_config(c)};
  } else {
    auto builds = s_.lab->compile({candidate_compile_request(*s_.job, c, dir)}, s_.compile_jobs, {});
    if (builds.empty()) return internal_error("the compile pool returned nothing");
    if (!builds.front().ok()) return feedback_from_build(builds.front());
    r.libs = {builds.front().library};
  }
  r.golden_dir = s_.prep->golden_dir;
  r.result_json = dir / "check.json";
  r.mode = runner::RunMode::kCheck;
  r.tol = s_.prep->tol;
  r.timeout_s = s_.job->run_timeout_s;
  runner::RunOutcome out = s_.lab->run(r);
  if (out.status == runner::RunStatus::kInterrupted) return Error{ExitCode::kInterrupted, "interrupted"};
  if (out.status == runner::RunStatus::kLoadError && triton) {  // Triton's compile errors surface when it loads
    compile::CompileResult b;
    b.name = c.id;
    b.log_text = out.message;
    return feedback_from_build(b);
  }
  search::CheckFeedback f = feedback_from_run(out);
  if (f.status == search::CandidateStatus::kOk && s_.job->numerics == search::NumericsMode::kStrict && s_.baseline_result) {
    auto v = judge_strict(out.details, *s_.baseline_result);
    if (!v.ok) f = {search::CandidateStatus::kIncorrect, "strict numerics: " + v.reason};
  }
  return f;
}

}  // namespace kopt::loop
