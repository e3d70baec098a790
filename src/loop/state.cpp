#include "loop/state.h"

namespace kopt::loop {

Result<search::Candidate> candidate_from_json(const util::Json& j) {
  search::Candidate c;
  try {
    c.id = j.at("id").get<std::string>();
    c.source = j.at("source").get<std::string>();
    c.flags = j.value("flags", std::vector<std::string>{});
    c.defines = j.value("defines", std::map<std::string, std::string>{});
    c.constexprs = j.value("constexprs", std::map<std::string, int64_t>{});
    c.launch = j.value("launch", std::map<std::string, int64_t>{});
    c.params = j.value("params", std::map<std::string, int64_t>{});
    c.guards = j.value("guards", std::map<std::string, bool>{});
    c.methods = j.value("methods", std::vector<std::string>{});
    c.not_ablatable = j.value("not_ablatable", std::vector<std::string>{});
    c.origin = j.value("origin", std::string());
    c.content_hash = j.value("content_hash", std::string());
    if (j.contains("config") && j["config"].is_array()) c.config = j["config"].get<search::Config>();
  } catch (const std::exception& e) {
    return input_error(std::string("bad candidate record in state.json: ") + e.what());
  }
  return c;
}

namespace {
util::Json champion_json(const std::optional<ChampionRecord>& c) {
  if (!c) return nullptr;
  util::Json j = {{"candidate", search::to_json(c->candidate)}, {"library", c->library}, {"median_ms", c->median_ms},
                  {"result_json", c->result_json}};
  if (c->objective_ms > 0) j["objective_ms"] = c->objective_ms;
  return j;
}
Result<std::optional<ChampionRecord>> champion_from(const util::Json& j) {
  if (j.is_null()) return std::optional<ChampionRecord>{};
  ChampionRecord r;
  KOPT_TRY_ASSIGN(r.candidate, candidate_from_json(j.at("candidate")));
  r.library = j.value("library", std::string());
  r.median_ms = j.value("median_ms", 0.0);
  r.objective_ms = j.value("objective_ms", 0.0);
  r.result_json = j.value("result_json", std::string());
  return std::optional<ChampionRecord>(r);
}
}  // namespace

namespace {
util::Json measurements_json(const std::vector<search::Measurement>& list) {
  util::Json out = util::Json::array();
  for (const auto& m : list) {
    util::Json e = {{"candidate", search::to_json(m.candidate)},
                    {"status", search::candidate_status_name(m.status)},
                    {"median_ms", m.median_ms ? util::Json(*m.median_ms) : util::Json(nullptr)},
                    {"iteration", m.iteration},
                    {"search_s", m.search_s},
                    {"cost_ms", {{"compile", m.compile_ms}, {"sass", m.sass_ms}, {"measure", m.measure_ms}, {"cases", m.cases_ms}}}};
    if (m.objective_ms) e["objective_ms"] = *m.objective_ms;
    if (!m.reused.is_null()) e["reused"] = m.reused;
    out.push_back(e);
  }
  return out;
}

Result<std::vector<search::Measurement>> measurements_from(const util::Json& list) {
  std::vector<search::Measurement> out;
  for (const auto& h : list) {
    search::Measurement m;
    KOPT_TRY_ASSIGN(m.candidate, candidate_from_json(h.at("candidate")));
    std::string st = h.value("status", std::string("ok"));
    for (auto cs : {search::CandidateStatus::kOk, search::CandidateStatus::kCompileFailed, search::CandidateStatus::kIncorrect,
                    search::CandidateStatus::kCrashed, search::CandidateStatus::kTimedOut})
      if (search::candidate_status_name(cs) == st) m.status = cs;
    if (h.contains("median_ms") && h["median_ms"].is_number()) m.median_ms = h["median_ms"].get<double>();
    if (h.contains("objective_ms") && h["objective_ms"].is_number()) m.objective_ms = h["objective_ms"].get<double>();
    m.iteration = h.value("iteration", 0);
    m.search_s = h.value("search_s", 0.0);
    if (h.contains("reused") && h["reused"].is_object()) m.reused = h["reused"];
    if (h.contains("cost_ms") && h["cost_ms"].is_object()) {
      m.compile_ms = h["cost_ms"].value("compile", 0.0);
      m.sass_ms = h["cost_ms"].value("sass", 0.0);
      m.measure_ms = h["cost_ms"].value("measure", 0.0);
      m.cases_ms = h["cost_ms"].value("cases", 0.0);
    }
    out.push_back(m);
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
                    {"workload_model", s.stop.workload_model}, {"near_peak", s.stop.near_peak},
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
    KOPT_TRY_ASSIGN(s.champion, champion_from(j.value("champion", util::Json())));
    KOPT_TRY_ASSIGN(s.baseline, champion_from(j.value("baseline", util::Json())));
    for (const auto& c : j.value("superseded", util::Json::array())) {
      KOPT_TRY_ASSIGN(auto r, champion_from(c));
      if (r) s.superseded.push_back(*r);
    }
    s.verified = j.value("verified", std::vector<std::string>{});
    KOPT_TRY_ASSIGN(s.history, measurements_from(j.value("history", util::Json::array())));
    s.raced_again = j.value("raced_again", std::vector<std::string>{});
    for (const auto& p : j.value("warm_start", util::Json::array()))
      if (auto w = warm_start_point_from_json(p)) s.warm_start.push_back(*w);
    s.strategy_memory = j.value("strategy_memory", util::Json(nullptr));
    KOPT_TRY_ASSIGN(s.ablations, measurements_from(j.value("ablations", util::Json::array())));
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
