#include "record/run_record.h"

#include "compile/request.h"
#include <concepts>

#include "record/fields.h"
#include "record/summary_sections.h"  // ParamAblationRecord's fields
#include "util/fs.h"

namespace kopt::record {

using util::Json;

std::optional<CandidateStatus> parse_candidate_status(std::string_view s) {
  for (auto cs : {CandidateStatus::kOk, CandidateStatus::kCompileFailed, CandidateStatus::kIncorrect, CandidateStatus::kCrashed,
                  CandidateStatus::kTimedOut})
    if (search::candidate_status_name(cs) == s) return cs;
  return std::nullopt;
}

using namespace fields;

// ---- the records whose fields map one to one onto their JSON: each named once (fields.h) --------------------------

KOPT_RECORD_FIELDS(Wall, whole_s, gates_s, first_candidate_s, champion_s)
bool null_when_absent(const Wall&) { return true; }  // {"first_candidate_s": null}: not yet
KOPT_RECORD_FIELDS(CandidateConfig, id, source, origin, content_hash, params, constexprs, launch, guards, defines, methods, flags,
                   not_ablatable, config)
KOPT_RECORD_FIELDS(ChampionEntry, candidate, library, median_ms, result_json, objective_ms)
KOPT_RECORD_FIELDS(KernelResources, entry, arch, registers, shared_bytes, stack_frame_bytes, spill_store_bytes, spill_load_bytes)
KOPT_RECORD_FIELDS(BuildRecord, status, compile_ms, resources)
KOPT_RECORD_FIELDS(Timing, median_ms, ci95_low_ms, ci95_high_ms, ci95_rel_halfwidth, robust_cv, min_ms, max_ms, samples, stability)
bool null_when_absent(const Timing&) { return true; }  // as the runner writes a timing: every figure, null when none
KOPT_RECORD_FIELDS(RunResult, status, timing, samples_ms, message)  // and meta.time
KOPT_RECORD_FIELDS(SelectionEntry, finalist, decision, reason, incumbent, error, comparison)
KOPT_RECORD_FIELDS(MethodAblation, method, verdict, sass, attribution_ms, comparison, ablated_status, ablated_note)

Json to_json(const Wall& w) { return fields_to_json(w); }
Wall wall_from_json(const Json& j, const std::string& where) { return j.is_null() ? Wall{} : fields_from_json<Wall>(j, where); }
KOPT_RECORD_JSON(CandidateConfig, candidate_config_from_json)
KOPT_RECORD_JSON(ChampionEntry, champion_entry_from_json)
KOPT_RECORD_JSON(KernelResources, kernel_resources_from_json)
KOPT_RECORD_JSON(Timing, timing_from_json)
KOPT_RECORD_JSON(SelectionEntry, selection_entry_from_json)
KOPT_RECORD_JSON(MethodAblation, method_ablation_from_json)

// ---- state.json's entries ----------------------------------------------------------------------------------------

Json to_json(const HistoryEntry& h) {
  Json e = {{"candidate", to_json(h.candidate)},
            {"status", search::candidate_status_name(h.status)},
            {"median_ms", num_or_null(h.median_ms)},
            {"iteration", h.iteration},
            {"search_s", h.search_s},
            {"cost_ms", {{"compile", h.compile_ms}, {"sass", h.sass_ms}, {"measure", h.measure_ms}, {"cases", h.cases_ms}}}};
  if (h.objective_ms) e["objective_ms"] = *h.objective_ms;
  if (!h.reused.is_null()) e["reused"] = h.reused;
  if (h.unwritten_fraction) e["unwritten_fraction"] = *h.unwritten_fraction;
  if (h.predicted_infeasible) e["predicted_infeasible"] = *h.predicted_infeasible;
  return e;
}

HistoryEntry history_entry_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  HistoryEntry h;
  if (const Json* c = opt_object(j, "candidate", where)) h.candidate = candidate_config_from_json(*c, at(where, "candidate"));
  if (auto st = opt_string(j, "status", where)) {
    auto s = parse_candidate_status(*st);
    if (!s) throw RecordError(at(where, "status") + ": unknown candidate status '" + *st + "'");
    h.status = *s;
  }
  h.median_ms = opt_number(j, "median_ms", where);
  h.objective_ms = opt_number(j, "objective_ms", where);
  h.iteration = static_cast<int>(opt_int(j, "iteration", where).value_or(0));
  h.search_s = opt_number(j, "search_s", where).value_or(0.0);
  if (const Json* cost = opt_object(j, "cost_ms", where)) {
    const std::string w = at(where, "cost_ms");
    h.compile_ms = opt_number(*cost, "compile", w).value_or(0.0);
    h.sass_ms = opt_number(*cost, "sass", w).value_or(0.0);
    h.measure_ms = opt_number(*cost, "measure", w).value_or(0.0);
    h.cases_ms = opt_number(*cost, "cases", w).value_or(0.0);
  }
  if (const Json* r = opt_object(j, "reused", where)) h.reused = *r;
  h.unwritten_fraction = opt_number(j, "unwritten_fraction", where);
  h.predicted_infeasible = opt_string(j, "predicted_infeasible", where);
  return h;
}

Json to_json(const StateRecord& s) {
  auto champion = [](const std::optional<ChampionEntry>& c) { return c ? to_json(*c) : Json(nullptr); };
  Json history = Json::array();
  for (const auto& h : s.history) history.push_back(to_json(h));
  Json j = {{"version", s.version}, {"iterations_done", s.iterations_done}, {"stop_reason", std::string(stop_reason_text(s.stop_reason))},
            {"stop_detail", s.stop_detail}, {"champion", champion(s.champion)}, {"baseline", champion(s.baseline)},
            {"history", history}, {"gate_records", s.gate_records}};
  if (s.phase_seconds) j["phase_seconds"] = *s.phase_seconds;
  if (s.wall) j["wall"] = to_json(*s.wall);
  if (s.timeline) j["timeline"] = *s.timeline;
  if (!s.measuring_slots.empty() || s.measuring_wall_s > 0) {
    Json per_slot = Json::array();
    for (const auto& p : s.measuring_slots) per_slot.push_back({{"name", p.name}, {"runs", p.runs}, {"lost", p.lost}, {"busy_s", p.busy_s}});
    j["measuring"] = {{"wall_s", s.measuring_wall_s}, {"per_slot", per_slot}};
  }
  if (!s.meta_gpu.empty()) j["meta"] = {{"gpu", s.meta_gpu}};
  return j;
}

StateRecord state_record_from_json(const Json& j) {
  need_object(j, "");
  StateRecord s;
  s.version = static_cast<int>(opt_int(j, "version", "").value_or(0));
  s.iterations_done = static_cast<int>(opt_int(j, "iterations_done", "").value_or(0));
  const std::string reason = opt_string(j, "stop_reason", "").value_or("");
  auto r = stop_reason_from_text(reason);
  if (!r) throw RecordError("stop_reason: unknown stop reason '" + reason + "'");
  s.stop_reason = *r;
  s.stop_detail = opt_string(j, "stop_detail", "").value_or("");
  if (const Json* c = opt_object(j, "champion", "")) s.champion = champion_entry_from_json(*c, "champion");
  if (const Json* b = opt_object(j, "baseline", "")) s.baseline = champion_entry_from_json(*b, "baseline");
  if (const Json* h = opt_array(j, "history", ""))
    for (size_t i = 0; i < h->size(); ++i) s.history.push_back(history_entry_from_json((*h)[i], at("history", i)));
  s.phase_seconds = opt_map<double>(j, "phase_seconds", "");
  if (const Json* w = opt_object(j, "wall", "")) s.wall = wall_from_json(*w, "wall");
  s.timeline = opt_any(j, "timeline");
  if (const Json* g = opt_object(j, "gate_records", "")) s.gate_records = *g;
  if (const Json* m = opt_object(j, "measuring", "")) {
    s.measuring_wall_s = opt_number(*m, "wall_s", "measuring").value_or(0.0);
    if (const Json* ps = opt_array(*m, "per_slot", "measuring"))
      for (size_t i = 0; i < ps->size(); ++i) {
        const std::string w = at("measuring.per_slot", i);
        need_object((*ps)[i], w);
        s.measuring_slots.push_back({opt_string((*ps)[i], "name", w).value_or(""), static_cast<int>(opt_int((*ps)[i], "runs", w).value_or(0)),
                                     static_cast<int>(opt_int((*ps)[i], "lost", w).value_or(0)), opt_number((*ps)[i], "busy_s", w).value_or(0.0)});
      }
  }
  if (const Json* m = opt_object(j, "meta", "")) s.meta_gpu = opt_string(*m, "gpu", "meta").value_or("");
  return s;
}

Result<StateRecord> read_state(const std::string& path) {
  KOPT_TRY_ASSIGN(auto j, util::read_json(path));
  return parse_file<StateRecord>(j, path, [](const Json& x) { return state_record_from_json(x); });
}

// ---- a candidate's directory ---------------------------------------------------------------------------------------

bool BuildRecord::ok() const { return status == compile::to_string(compile::CompileStatus::kOk); }

Json to_json(const BuildRecord& b) { return fields_to_json(b); }
BuildRecord build_record_from_json(const Json& j) { return fields_from_json<BuildRecord>(j, ""); }

Json to_json(const RunResult& r) {
  Json j = fields_to_json(r);
  j["meta"] = {{"time", r.time}};
  return j;
}

RunResult run_result_from_json(const Json& j) {
  RunResult r = fields_from_json<RunResult>(j, "");
  r.time = meta_time(j);
  return r;
}

Json to_json(const SassRecord& s) {
  Json methods = Json::object();
  for (const auto& [m, st] : s.method_status) methods[m] = {{"status", st}};
  Json kernels = Json::array();
  for (const auto& mix : s.kernel_mix) kernels.push_back({{"mix", mix}});
  return {{"methods", methods}, {"kernels", kernels}};
}

SassRecord sass_record_from_json(const Json& j) {
  need_object(j, "");
  SassRecord s;
  if (const Json* m = opt_object(j, "methods", ""))
    for (const auto& [name, v] : m->items())
      s.method_status[name] = v.is_object() ? opt_string(v, "status", at("methods", name)).value_or("") : std::string();
  if (const Json* k = opt_array(j, "kernels", ""))
    for (size_t i = 0; i < k->size(); ++i) {
      const Json& kernel = (*k)[i];
      std::map<std::string, int> mix;
      if (kernel.is_object() && kernel.contains("mix") && kernel["mix"].is_object())
        for (const auto& [cls, n] : kernel["mix"].items())
          if (n.is_number()) mix[cls] = n.get<int>();
      s.kernel_mix.push_back(std::move(mix));
    }
  return s;
}

Json to_json(const ReusedRecord& r) {
  if (!r.recorded) return {{"marker", r.marker}};
  Json rec = {{"id", r.record_id}, {"run_dir", r.run_dir}, {"recorded_at", r.recorded_at}, {"run_status", r.run_status}};
  if (r.median_ms) rec["median_ms"] = *r.median_ms;
  return {{"marker", r.marker}, {"record", rec}};
}

ReusedRecord reused_record_from_json(const Json& j) {
  need_object(j, "");
  ReusedRecord r;
  r.marker = opt_string(j, "marker", "").value_or("");
  const Json* rec = opt_object(j, "record", "");
  if (!rec) return r;
  r.recorded = true;
  r.record_id = opt_int(*rec, "id", "record").value_or(0);
  r.run_dir = opt_string(*rec, "run_dir", "record").value_or("");
  r.recorded_at = opt_string(*rec, "recorded_at", "record").value_or("");
  r.run_status = opt_string(*rec, "run_status", "record").value_or("");
  r.median_ms = opt_number(*rec, "median_ms", "record");
  return r;
}

// ---- an iteration's directory ----------------------------------------------------------------------------------

std::vector<SelectionEntry> selection_from_json(const Json& j) {
  need_object(j, "");
  std::vector<SelectionEntry> out;
  if (const Json* f = opt_array(j, "finalists", ""))
    for (size_t i = 0; i < f->size(); ++i) out.push_back(selection_entry_from_json((*f)[i], at("finalists", i)));
  return out;
}

Json to_json(const AblationRecord& a) {
  Json methods = Json::array();
  for (const auto& m : a.methods) methods.push_back(to_json(m));
  return {{"methods", methods}, {"params", write_value(a.params)}};
}

AblationRecord ablation_record_from_json(const Json& j) {
  need_object(j, "");
  AblationRecord a;
  if (const Json* m = opt_array(j, "methods", ""))
    for (size_t i = 0; i < m->size(); ++i) a.methods.push_back(method_ablation_from_json((*m)[i], at("methods", i)));
  if (const Json* p = opt_array(j, "params", "")) read_value(*p, "params", a.params);
  return a;
}

}  // namespace kopt::record
