#include "loop/gate_options.h"

#include <cmath>

namespace kopt::loop {

namespace fs = std::filesystem;

std::string_view champion_gates_name(ChampionGates g) { return g == ChampionGates::kEach ? "each" : "final"; }

std::optional<ChampionGates> parse_champion_gates(std::string_view s) {
  if (s == "final") return ChampionGates::kFinal;
  if (s == "each") return ChampionGates::kEach;
  return std::nullopt;
}

std::string_view baseline_profile_name(BaselineProfile b) {
  switch (b) {
    case BaselineProfile::kGate: return "gate";
    case BaselineProfile::kWhenNeeded: return "when-needed";
    case BaselineProfile::kAfter: return "after";
  }
  return "";
}

std::optional<BaselineProfile> parse_baseline_profile(std::string_view s) {
  for (auto b : {BaselineProfile::kGate, BaselineProfile::kWhenNeeded, BaselineProfile::kAfter})
    if (baseline_profile_name(b) == s) return b;
  return std::nullopt;
}

Status validate(const GateOptions& g, const Dims& user) {
  if (g.max_working_set_mb < 0 || !std::isfinite(g.max_working_set_mb))
    return input_error("--max-working-set-mb must be a positive number of MiB (or 0 for the default from the GPU's memory)");
  if (g.dispatch && g.workload_matrix == workload::MatrixMode::kOff && !g.shapes_file)
    return input_error(
        "--dispatch picks a configuration per case: it needs several cases (--shapes FILE, or the workload "
        "matrix, not --workload-matrix off)");
  if (g.shapes_file) KOPT_TRY(workload::read_shapes_file(*g.shapes_file, user, workload::CaseOrigin::kShapesFile));
  if (g.holdout_shapes_file)
    KOPT_TRY(workload::read_shapes_file(*g.holdout_shapes_file, user, workload::CaseOrigin::kHoldoutFile));
  return ok_status();
}

void add_to_json(const GateOptions& g, util::Json& j) {
  auto path = [](const std::optional<fs::path>& p) { return p ? util::Json(fs::absolute(*p).string()) : util::Json(nullptr); };
  j["workload_matrix"] = workload::matrix_mode_name(g.workload_matrix);
  j["shapes_file"] = path(g.shapes_file);
  j["holdout_shapes_file"] = path(g.holdout_shapes_file);
  j["no_regressions"] = g.no_regressions;
  j["dispatch"] = g.dispatch;
  j["max_working_set_mb"] = g.max_working_set_mb;
  j["sanitize"] = sanitize::policy_name(g.sanitize);
  j["champion_gates"] = champion_gates_name(g.champion_gates);
  j["baseline_profile"] = baseline_profile_name(g.baseline_profile);
}

Result<GateOptions> gate_options_from_json(const util::Json& j) {
  GateOptions g;
  try {
    auto m = workload::parse_matrix_mode(j.value("workload_matrix", std::string("default")));
    if (!m) return input_error("options.json: workload_matrix must be default or off");
    g.workload_matrix = *m;
    if (j.contains("shapes_file") && j["shapes_file"].is_string()) g.shapes_file = j["shapes_file"].get<std::string>();
    if (j.contains("holdout_shapes_file") && j["holdout_shapes_file"].is_string())
      g.holdout_shapes_file = j["holdout_shapes_file"].get<std::string>();
    g.no_regressions = j.value("no_regressions", false);
    g.dispatch = j.value("dispatch", false);
    g.max_working_set_mb = j.value("max_working_set_mb", 0.0);
    auto s = sanitize::parse_policy(j.value("sanitize", std::string("finalists")));
    if (!s) return input_error("options.json: sanitize must be finalists, all or off");
    g.sanitize = *s;
    // A run directory made before 2026-12-02 checked each would-be champion: it resumes doing so.
    auto cg = parse_champion_gates(j.value("champion_gates", std::string("each")));
    if (!cg) return input_error("options.json: champion_gates must be final or each");
    g.champion_gates = *cg;
    // A run directory made before 2026-12-04 profiled its baseline as gate 4: it resumes doing so.
    auto bp = parse_baseline_profile(j.value("baseline_profile", std::string("gate")));
    if (!bp) return input_error("options.json: baseline_profile must be gate, when-needed or after");
    g.baseline_profile = *bp;
  } catch (const std::exception& e) {
    return input_error(std::string("options.json is malformed: ") + e.what());
  }
  return g;
}

}  // namespace kopt::loop
