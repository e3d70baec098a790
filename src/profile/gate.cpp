#include "profile/gate.h"

#include <fmt/format.h>

#include "doctor/doctor.h"
#include "profile/metric_names.h"
#include "util/strings.h"

namespace kopt::profile {

std::string_view describe(GateFailure f) {
  switch (f) {
    case GateFailure::kNone: return "passed";
    case GateFailure::kNcuMissing: return "ncu not found";
    case GateFailure::kCounterPermission: return "no permission to read GPU performance counters";
    case GateFailure::kNcuFailed: return "ncu failed";
    case GateFailure::kNoKernel: return "no kernel profiled";
    case GateFailure::kMissingMetrics: return "required metrics missing";
  }
  return "?";
}

std::vector<std::string> required_metrics() {
  std::vector<std::string> out;
  for (auto m : metric::kRequired) out.emplace_back(m);
  return out;
}

namespace {
std::string tail(const std::string& s, size_t n) {
  std::string t = util::trim(s);
  return t.size() > n ? "..." + t.substr(t.size() - n) : t;
}
}  // namespace

GateVerdict evaluate_ncu_gate(const NcuGateInput& in) {
  GateVerdict v;
  auto fail = [&](GateFailure f, std::string msg) {
    v.failure = f;
    v.message = "NCU gate: " + std::string(describe(f)) + ": " + std::move(msg);
    return v;
  };
  if (in.ncu_path.empty())
    return fail(GateFailure::kNcuMissing,
                "install Nsight Compute and put ncu on PATH (or set KOPT_NCU); kopt runs `kopt doctor` to check");
  if (in.run) {
    const std::string out = in.run->stdout_text + "\n" + in.run->stderr_text;
    if (doctor::is_counter_permission_error(out)) return fail(GateFailure::kCounterPermission, doctor::counter_permission_fix());
    if (!in.run->success())
      return fail(GateFailure::kNcuFailed, fmt::format("ncu {} while profiling the runner; its output ends: {}",
                                                       in.run->describe(), tail(out, 600)));
  }
  if (!in.page) return v;
  if (in.page->kernels.empty())
    return fail(GateFailure::kNoKernel,
                "the profiler range caught no kernel: solve() launched no kernel between cuProfilerStart() and "
                "cuProfilerStop() (ncu runs with --profile-from-start off). Check that solve() launches its "
                "kernels on the current device and returns only after they are queued");
  for (const auto& m : in.required_metrics) {
    bool known_somewhere = false;
    for (const auto& k : in.page->kernels)
      if (k.number(m)) known_somewhere = true;
    if (!known_somewhere) v.missing_metrics.push_back(m);
  }
  if (!v.missing_metrics.empty())
    return fail(GateFailure::kMissingMetrics,
                fmt::format("the report has no value for {} (this ncu version or GPU may name them differently; "
                            "run `ncu --query-metrics` and update src/profile/metric_names.h)",
                            util::join(v.missing_metrics, ", ")));
  return v;
}

Status ncu_gate(const NcuGateInput& in) {
  GateVerdict v = evaluate_ncu_gate(in);
  if (v.failure == GateFailure::kNone) return ok_status();
  return gate_error(v.message);
}

}  // namespace kopt::profile
