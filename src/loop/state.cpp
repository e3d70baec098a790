#include "loop/state.h"

#include "record/candidate.h"

namespace kopt::loop {

Result<search::Candidate> candidate_from_json(const util::Json& j) {
  try {
    return record::candidate_of(record::candidate_config_from_json(j));
  } catch (const std::exception& e) {
    return input_error(std::string("bad candidate record in state.json: ") + e.what());
  }
}

// The champions and the measurements go through the run record (record/run_record.h), which writes and reads them.
namespace {
util::Json champion_json(const std::optional<ChampionRecord>& c) {
  if (!c) return nullptr;
  return record::to_json(record::ChampionEntry{record::config_of(c->candidate), c->library, c->median_ms, c->result_json,
                                               c->objective_ms > 0 ? std::optional<double>(c->objective_ms) : std::nullopt});
}
Result<std::optional<ChampionRecord>> champion_from(const util::Json& j, const std::string& where) {
  if (j.is_null()) return std::optional<ChampionRecord>{};
  const record::ChampionEntry e = record::champion_entry_from_json(j, where);
  return std::optional<ChampionRecord>(
      ChampionRecord{record::candidate_of(e.candidate, where + ".candidate"), e.library, e.median_ms, e.result_json, e.objective_ms.value_or(0)});
}

util::Json measurements_json(const std::vector<search::Measurement>& list) {
  util::Json out = util::Json::array();
  for (const auto& m : list)
    out.push_back(record::to_json(record::HistoryEntry{record::config_of(m.candidate), m.status, m.median_ms, m.objective_ms,
                                                       m.iteration, m.search_s, m.compile_ms, m.sass_ms, m.measure_ms, m.cases_ms,
                                                       m.reused, m.unwritten_fraction, m.predicted_infeasible}));
  return out;
}

Result<std::vector<search::Measurement>> measurements_from(const util::Json& list, const std::string& where) {
  std::vector<search::Measurement> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const record::HistoryEntry h = record::history_entry_from_json(list[i], at);
    out.push_back({.candidate = record::candidate_of(h.candidate, at + ".candidate"),
                   .status = h.status,
                   .median_ms = h.median_ms,
                   .iteration = h.iteration,
                   .search_s = h.search_s,
                   .compile_ms = h.compile_ms,
                   .sass_ms = h.sass_ms,
                   .measure_ms = h.measure_ms,
                   .cases_ms = h.cases_ms,
                   .objective_ms = h.objective_ms,
                   .unwritten_fraction = h.unwritten_fraction,
                   .predicted_infeasible = h.predicted_infeasible,
                   .reused = h.reused});
  }
  return out;
}
}  // namespace

util::Json to_json(const RunState& s) {
  util::Json verdicts = util::Json::array();
  for (const auto& v : s.verdicts)
  {
    util::Json e = {{"method", v.method}, {"verdict", search::verdict_name(v.verdict)}, {"iteration", v.iteration},
                    {"measured_gain", v.measured_gain}, {"metrics", v.metrics}};
    if (v.saved_ms) e["saved_ms"] = {{"median", *v.saved_ms}, {"ci95_low", *v.saved_ci95_low_ms}, {"ci95_high", *v.saved_ci95_high_ms}};
    verdicts.push_back(e);
  }
  util::Json param_ablations = util::Json::array();
  for (const auto& p : s.param_ablations) param_ablations.push_back(to_json(p));
  util::Json superseded = util::Json::array();
  for (const auto& c : s.superseded) superseded.push_back(champion_json(c));
  util::Json warm_start = util::Json::array();
  for (const auto& p : s.warm_start) warm_start.push_back(to_json(p));
  return {{"version", kStateVersion},
          {"gates_passed", s.gates_passed},
          {"iterations_done", s.iterations_done},
          {"champion", champion_json(s.champion)},
          {"baseline", champion_json(s.baseline)},
          {"superseded", superseded},
          {"verified", s.verified},
          {"history", measurements_json(s.history)},
          {"raced_again", s.raced_again},
          {"warm_start", warm_start},
          {"strategy_memory", s.strategy_memory},
          {"ablations", measurements_json(s.ablations)},
          {"verdicts", verdicts},
          {"param_ablations", param_ablations},
          {"stop", {{"iterations_done", s.stop.iterations_done}, {"max_iterations", s.stop.max_iterations},
                    {"patience", s.stop.patience}, {"iterations_without_gain", s.stop.iterations_without_gain},
                    {"workload_model", s.stop.workload_model}, {"near_peak", s.stop.near_peak}, {"at_roof", s.stop.at_roof},
                    {"generator_exhausted", s.stop.generator_exhausted}, {"time_budget_s", s.stop.time_budget_s},
                    {"search_s", s.stop.search_s}, {"no_gain_predictions", s.stop.no_gain_predictions},
                    {"exploring_without_gain", s.stop.exploring_without_gain}}},
          {"last_profile", s.last_profile},
          {"ablated_methods", s.ablated_methods ? util::Json(*s.ablated_methods) : util::Json(nullptr)},
          {"stop_reason", std::string(stop_reason_text(s.stop_reason))},
          {"stop_detail", s.stop_detail},
          {"phase_seconds", s.phase_seconds},
          {"wall", to_json(s.wall)},
          {"timeline", s.timeline},
          {"profile_plan", s.profile_plan},
          {"metrics", s.metrics},
          {"roofline", s.roofline},
          {"frontier", s.frontier},
          {"reference_ms", s.reference_ms},
          {"race_safe", sanitize::race_safe_name(s.race_safe)},
          {"gate_records", s.gate_records}, {"measuring", s.measuring}};
}

Result<RunState> state_from_json(const util::Json& j) {
  RunState s;
  try {
    if (j.value("version", 0) != kStateVersion)
      return input_error("state.json has version " + std::to_string(j.value("version", 0)) + "; this kopt reads version " +
                         std::to_string(kStateVersion));
    s.gates_passed = j.value("gates_passed", false);
    s.iterations_done = j.value("iterations_done", 0);
    KOPT_TRY_ASSIGN(s.champion, champion_from(j.value("champion", util::Json()), "champion"));
    KOPT_TRY_ASSIGN(s.baseline, champion_from(j.value("baseline", util::Json()), "baseline"));
    for (const auto& c : j.value("superseded", util::Json::array())) {
      KOPT_TRY_ASSIGN(auto r, champion_from(c, "superseded"));
      if (r) s.superseded.push_back(*r);
    }
    s.verified = j.value("verified", std::vector<std::string>{});
    KOPT_TRY_ASSIGN(s.history, measurements_from(j.value("history", util::Json::array()), "history"));
    s.raced_again = j.value("raced_again", std::vector<std::string>{});
    for (const auto& p : j.value("warm_start", util::Json::array()))
      if (auto w = warm_start_point_from_json(p)) s.warm_start.push_back(*w);
    s.strategy_memory = j.value("strategy_memory", util::Json(nullptr));
    KOPT_TRY_ASSIGN(s.ablations, measurements_from(j.value("ablations", util::Json::array()), "ablations"));
    for (const auto& v : j.value("verdicts", util::Json::array())) {
      search::MethodVerdict mv;
      mv.method = v.at("method").get<std::string>();
      auto parsed = search::parse_verdict(v.value("verdict", std::string()));
      if (!parsed) return input_error("state.json: unknown verdict for " + mv.method);
      mv.verdict = *parsed;
      mv.iteration = v.value("iteration", 0);
      mv.measured_gain = v.value("measured_gain", false);
      mv.metrics = v.value("metrics", std::map<std::string, double>{});
      if (v.contains("saved_ms") && v["saved_ms"].is_object()) {
        mv.saved_ms = v["saved_ms"].value("median", 0.0);
        mv.saved_ci95_low_ms = v["saved_ms"].value("ci95_low", 0.0);
        mv.saved_ci95_high_ms = v["saved_ms"].value("ci95_high", 0.0);
      }
      s.verdicts.push_back(mv);
    }
    for (const auto& p : j.value("param_ablations", util::Json::array())) {
      KOPT_TRY_ASSIGN(auto pa, param_ablation_from_json(p));
      s.param_ablations.push_back(std::move(pa));
    }
    const auto& st = j.at("stop");
    s.stop.iterations_done = st.value("iterations_done", 0);
    s.stop.max_iterations = st.value("max_iterations", 3);
    s.stop.patience = st.value("patience", 1);
    s.stop.iterations_without_gain = st.value("iterations_without_gain", 0);
    s.stop.workload_model = st.value("workload_model", false);
    s.stop.near_peak = st.value("near_peak", false);
    s.stop.at_roof = st.value("at_roof", false);
    s.stop.generator_exhausted = st.value("generator_exhausted", false);
    s.stop.time_budget_s = st.value("time_budget_s", 0.0);
    s.stop.search_s = st.value("search_s", 0.0);
    s.stop.no_gain_predictions = st.value("no_gain_predictions", 0);
    s.stop.exploring_without_gain = st.value("exploring_without_gain", 0);
    if (j.contains("last_profile")) s.last_profile = j["last_profile"];
    if (j.contains("ablated_methods") && j["ablated_methods"].is_array())
      s.ablated_methods = j["ablated_methods"].get<std::vector<std::string>>();
    auto stop_reason = stop_reason_from_text(j.value("stop_reason", std::string()));
    if (!stop_reason) return input_error("state.json: unknown stop_reason '" + j.value("stop_reason", std::string()) + "'");
    s.stop_reason = *stop_reason;
    s.stop_detail = j.value("stop_detail", std::string());
    s.phase_seconds = j.value("phase_seconds", std::map<std::string, double>{});
    s.wall = wall_from_json(j.value("wall", util::Json::object()));
    s.timeline = j.value("timeline", util::Json::array());
    s.profile_plan = j.value("profile_plan", util::Json());
    s.metrics = j.value("metrics", std::map<std::string, double>{});
    s.roofline = j.value("roofline", util::Json());
    s.frontier = j.value("frontier", util::Json::array());
    s.reference_ms = j.value("reference_ms", 0.0);
    s.race_safe = sanitize::parse_race_safe(j.value("race_safe", std::string("unknown")));
    s.gate_records = j.value("gate_records", util::Json::object());
    s.measuring = j.value("measuring", util::Json::object());
  } catch (const std::exception& e) {
    return input_error(std::string("state.json is malformed: ") + e.what());
  }
  return s;
}

util::Json to_json(const ParamAblation& p) {
  util::Json j = {{"iteration", p.iteration}, {"champion_id", p.champion_id}, {"param", p.param},
                  {"champion_value", p.champion_value}, {"baseline_value", p.baseline_value}, {"variant_id", p.variant_id},
                  {"effect", param_effect_name(p.effect)}, {"effect_text", describe(p.effect)}};
  if (p.saved) j["saved_ms"] = {{"median", p.saved->median_ms}, {"ci95_low", p.saved->ci95_low_ms}, {"ci95_high", p.saved->ci95_high_ms}};
  if (!p.note.empty()) j["note"] = p.note;
  return j;
}

Result<ParamAblation> param_ablation_from_json(const util::Json& j) {
  ParamAblation p;
  try {
    p.iteration = j.value("iteration", 0);
    p.champion_id = j.value("champion_id", std::string());
    p.param = j.at("param").get<std::string>();
    p.champion_value = j.value("champion_value", int64_t{0});
    p.baseline_value = j.value("baseline_value", int64_t{0});
    p.variant_id = j.value("variant_id", std::string());
    auto e = parse_param_effect(j.value("effect", std::string()));
    if (!e) return input_error("state.json: parameter ablation of " + p.param + " has an unknown effect '" + j.value("effect", std::string()) + "'");
    p.effect = *e;
    if (j.contains("saved_ms") && j["saved_ms"].is_object())
      p.saved = Attribution{j["saved_ms"].value("median", 0.0), j["saved_ms"].value("ci95_low", 0.0), j["saved_ms"].value("ci95_high", 0.0)};
    p.note = j.value("note", std::string());
  } catch (const std::exception& e) {
    return input_error(std::string("state.json: a parameter ablation is malformed: ") + e.what());
  }
  return p;
}

}  // namespace kopt::loop
