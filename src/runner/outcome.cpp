#include "runner/outcome.h"

#include <array>

namespace kopt::runner {

namespace {
struct Row {
  RunStatus s;
  std::string_view name, text;
};
constexpr std::array<Row, 15> kRows = {{
    {RunStatus::kOk, "ok", "correct"},
    {RunStatus::kWrongResult, "wrong_result", "an output differs from the reference beyond tolerance"},
    {RunStatus::kUnwrittenOutput, "unwritten_output", "an output element was never written (still poisoned)"},
    {RunStatus::kInputModified, "input_modified", "an input buffer was modified by the kernel"},
    {RunStatus::kWrongOnFreshInputs, "wrong_on_fresh_inputs",
     "wrong outputs on a timed call whose inputs it had not seen (memoised or stale outputs)"},
    {RunStatus::kWrongOnSealedSeed, "wrong_on_sealed_seed",
     "wrong on the sealed seed, whose expected outputs no process the candidate runs in can read"},
    {RunStatus::kWrongOnEphemeralSeed, "wrong_on_ephemeral_seed",
     "wrong on the ephemeral seed, made during the run and never written to any file"},
    {RunStatus::kOutputsChangedAfterReturn, "outputs_changed_after_return",
     "the outputs changed after solve() returned and the device was synchronised (work finished later)"},
    {RunStatus::kThreadsLeftRunning, "threads_left_running", "solve() or its library left host threads running"},
    {RunStatus::kCudaError, "cuda_error", "a CUDA error occurred during the call"},
    {RunStatus::kCrashed, "crashed", "the measuring process crashed"},
    {RunStatus::kTimedOut, "timed_out", "the kernel did not return in time (killed)"},
    {RunStatus::kLoadError, "load_error", "the kernel library or the golden data could not be loaded"},
    {RunStatus::kInterrupted, "interrupted", "interrupted"},
    {RunStatus::kInternal, "internal_error", "internal error in the runner"},
}};
static_assert(kRows.size() == static_cast<size_t>(RunStatus::kInternal) + 1, "one row per status");
}  // namespace

std::string_view describe(RunStatus s) { return kRows[static_cast<size_t>(s)].text; }
std::string_view status_name(RunStatus s) { return kRows[static_cast<size_t>(s)].name; }
std::optional<RunStatus> parse_status(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.s;
  return std::nullopt;
}
bool is_correct(RunStatus s) { return s == RunStatus::kOk; }

util::Json to_json(const RunOutcome& o) {
  util::Json j = {{"status", status_name(o.status)}, {"message", o.message}, {"wall_ms", o.wall_ms}};
  if (o.timing) j["timing"] = to_json(*o.timing);
  if (o.call) j["call"] = to_json(*o.call);
  if (!o.timing_method.empty()) j["timing_method"] = o.timing_method;
  j["details"] = o.details;
  return j;
}

std::vector<CaseCheckResult> case_checks_in(const util::Json& details) {
  std::vector<CaseCheckResult> out;
  if (!details.is_object() || !details.contains("cases") || !details["cases"].is_array()) return out;
  for (const auto& c : details["cases"]) {
    if (!c.is_object()) continue;
    CaseCheckResult r;
    r.golden = c.value("golden", std::string());
    r.status = parse_status(c.value("status", std::string())).value_or(RunStatus::kInternal);
    r.message = c.value("message", std::string());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kopt::runner
