#include "record/run_record.h"

#include "compile/request.h"
#include "record/fields.h"
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

// ---- Wall ------------------------------------------------------------------------------------------------------

Json to_json(const Wall& w) {
  return {{"whole_s", w.whole_s}, {"first_candidate_s", num_or_null(w.first_candidate_s)}, {"champion_s", num_or_null(w.champion_s)}};
}

Wall wall_from_json(const Json& j, const std::string& where) {
  Wall w;
  if (j.is_null()) return w;
  need_object(j, where);
  w.whole_s = opt_number(j, "whole_s", where).value_or(0.0);
  w.first_candidate_s = opt_number(j, "first_candidate_s", where);
  w.champion_s = opt_number(j, "champion_s", where);
  return w;
}

// ---- CandidateConfig -------------------------------------------------------------------------------------------

Json to_json(const CandidateConfig& c) {
  Json j = Json::object();
  auto put = [&](const char* k, const auto& v) {
    if (v) j[k] = *v;
  };
  put("id", c.id), put("source", c.source), put("origin", c.origin), put("content_hash", c.content_hash);
  put("params", c.params), put("constexprs", c.constexprs), put("launch", c.launch), put("guards", c.guards);
  put("defines", c.defines), put("methods", c.methods), put("flags", c.flags), put("not_ablatable", c.not_ablatable);
  put("config", c.config);
  return j;
}

CandidateConfig candidate_config_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  CandidateConfig c;
  c.id = opt_string(j, "id", where);
  c.source = opt_string(j, "source", where);
  c.origin = opt_string(j, "origin", where);
  c.content_hash = opt_string(j, "content_hash", where);
  c.params = opt_map<int64_t>(j, "params", where);
  c.constexprs = opt_map<int64_t>(j, "constexprs", where);
  c.launch = opt_map<int64_t>(j, "launch", where);
  c.guards = opt_map<bool>(j, "guards", where);
  c.defines = opt_map<std::string>(j, "defines", where);
  c.methods = opt_strings(j, "methods", where);
  c.flags = opt_strings(j, "flags", where);
  c.not_ablatable = opt_strings(j, "not_ablatable", where);
  c.config = opt_any(j, "config");
  return c;
}

// ---- state.json's entries ----------------------------------------------------------------------------------------

Json to_json(const ChampionEntry& c) {
  Json j = {{"candidate", to_json(c.candidate)}, {"library", c.library}, {"median_ms", c.median_ms}, {"result_json", c.result_json}};
  if (c.objective_ms) j["objective_ms"] = *c.objective_ms;
  return j;
}

ChampionEntry champion_entry_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  ChampionEntry c;
  if (const Json* cand = opt_object(j, "candidate", where)) c.candidate = candidate_config_from_json(*cand, at(where, "candidate"));
  c.library = opt_string(j, "library", where).value_or("");
  c.median_ms = opt_number(j, "median_ms", where).value_or(0.0);
  c.result_json = opt_string(j, "result_json", where).value_or("");
  c.objective_ms = opt_number(j, "objective_ms", where);
  return c;
}

Json to_json(const HistoryEntry& h) {
  Json e = {{"candidate", to_json(h.candidate)},
            {"status", search::candidate_status_name(h.status)},
            {"median_ms", num_or_null(h.median_ms)},
            {"iteration", h.iteration},
            {"search_s", h.search_s},
            {"cost_ms", {{"compile", h.compile_ms}, {"sass", h.sass_ms}, {"measure", h.measure_ms}, {"cases", h.cases_ms}}}};
  if (h.objective_ms) e["objective_ms"] = *h.objective_ms;
  if (!h.reused.is_null()) e["reused"] = h.reused;
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

Json to_json(const KernelResources& k) {
  Json j = {{"entry", k.entry}, {"arch", k.arch}};
  if (k.registers) j["registers"] = *k.registers;
  for (auto [key, v] : {std::pair{"shared_bytes", &k.shared_bytes}, std::pair{"stack_frame_bytes", &k.stack_frame_bytes},
                        std::pair{"spill_store_bytes", &k.spill_store_bytes}, std::pair{"spill_load_bytes", &k.spill_load_bytes}})
    if (*v) j[key] = **v;
  return j;
}

KernelResources kernel_resources_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  KernelResources k;
  k.entry = opt_bool(j, "entry", where).value_or(true);
  k.arch = opt_string(j, "arch", where).value_or("");
  if (auto r = opt_int(j, "registers", where)) k.registers = static_cast<int>(*r);
  k.shared_bytes = opt_int(j, "shared_bytes", where);
  k.stack_frame_bytes = opt_int(j, "stack_frame_bytes", where);
  k.spill_store_bytes = opt_int(j, "spill_store_bytes", where);
  k.spill_load_bytes = opt_int(j, "spill_load_bytes", where);
  return k;
}

bool BuildRecord::ok() const { return status == compile::to_string(compile::CompileStatus::kOk); }

Json to_json(const BuildRecord& b) {
  Json res = Json::array();
  for (const auto& k : b.resources) res.push_back(to_json(k));
  Json j = {{"status", b.status}, {"resources", res}};
  if (b.compile_ms) j["compile_ms"] = *b.compile_ms;
  return j;
}

BuildRecord build_record_from_json(const Json& j) {
  need_object(j, "");
  BuildRecord b;
  b.status = opt_string(j, "status", "").value_or("");
  b.compile_ms = opt_number(j, "compile_ms", "");
  if (const Json* r = opt_array(j, "resources", ""))
    for (size_t i = 0; i < r->size(); ++i)
      if ((*r)[i].is_object()) b.resources.push_back(kernel_resources_from_json((*r)[i], at("resources", i)));
  return b;
}

Json to_json(const Timing& t) {
  return {{"median_ms", num_or_null(t.median_ms)}, {"ci95_low_ms", num_or_null(t.ci95_low_ms)}, {"ci95_high_ms", num_or_null(t.ci95_high_ms)},
          {"ci95_rel_halfwidth", num_or_null(t.ci95_rel_halfwidth)}, {"robust_cv", num_or_null(t.robust_cv)},
          {"min_ms", num_or_null(t.min_ms)}, {"max_ms", num_or_null(t.max_ms)}, {"samples", t.samples}, {"stability", t.stability}};
}

Timing timing_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  Timing t;
  t.median_ms = opt_number(j, "median_ms", where);
  t.ci95_low_ms = opt_number(j, "ci95_low_ms", where);
  t.ci95_high_ms = opt_number(j, "ci95_high_ms", where);
  t.ci95_rel_halfwidth = opt_number(j, "ci95_rel_halfwidth", where);
  t.robust_cv = opt_number(j, "robust_cv", where);
  t.min_ms = opt_number(j, "min_ms", where);
  t.max_ms = opt_number(j, "max_ms", where);
  t.samples = static_cast<int>(opt_int(j, "samples", where).value_or(0));
  t.stability = opt_string(j, "stability", where).value_or("");
  return t;
}

Json to_json(const RunResult& r) {
  Json j = {{"status", r.status}, {"message", r.message}, {"meta", {{"time", r.time}}}};
  if (r.timing) j["timing"] = to_json(*r.timing);
  if (r.samples_ms) j["samples_ms"] = *r.samples_ms;
  return j;
}

RunResult run_result_from_json(const Json& j) {
  need_object(j, "");
  RunResult r;
  r.status = opt_string(j, "status", "").value_or("");
  if (const Json* t = opt_object(j, "timing", "")) r.timing = timing_from_json(*t, "timing");
  if (const Json* s = opt_array(j, "samples_ms", "")) {
    std::vector<double> v;
    for (size_t i = 0; i < s->size(); ++i) {
      if (!(*s)[i].is_number()) wrong(at("samples_ms", i), "a number", (*s)[i]);
      v.push_back((*s)[i].get<double>());
    }
    r.samples_ms = std::move(v);
  }
  r.message = opt_string(j, "message", "").value_or("");
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

Json to_json(const SelectionEntry& s) {
  Json j = {{"finalist", s.finalist}, {"decision", s.decision}, {"reason", s.reason}, {"incumbent", s.incumbent}};
  if (s.error) j["error"] = *s.error;
  if (s.comparison) j["comparison"] = *s.comparison;
  return j;
}

SelectionEntry selection_entry_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  SelectionEntry s;
  s.finalist = opt_string(j, "finalist", where).value_or("");
  s.decision = opt_string(j, "decision", where).value_or("");
  s.reason = opt_string(j, "reason", where).value_or("");
  s.incumbent = opt_string(j, "incumbent", where).value_or("");
  s.error = opt_any(j, "error");
  s.comparison = opt_any(j, "comparison");
  return s;
}

std::vector<SelectionEntry> selection_from_json(const Json& j) {
  need_object(j, "");
  std::vector<SelectionEntry> out;
  if (const Json* f = opt_array(j, "finalists", ""))
    for (size_t i = 0; i < f->size(); ++i) out.push_back(selection_entry_from_json((*f)[i], at("finalists", i)));
  return out;
}

Json to_json(const MethodAblation& m) {
  Json j = {{"method", m.method}, {"verdict", m.verdict}, {"sass", m.sass}};
  auto put = [&](const char* k, const std::optional<Json>& v) {
    if (v) j[k] = *v;
  };
  put("attribution_ms", m.attribution_ms), put("comparison", m.comparison), put("ablated_status", m.ablated_status);
  put("ablated_note", m.ablated_note);
  return j;
}

MethodAblation method_ablation_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  MethodAblation m;
  m.method = opt_string(j, "method", where).value_or("");
  m.verdict = opt_string(j, "verdict", where).value_or("");
  m.sass = opt_string(j, "sass", where).value_or("");
  m.attribution_ms = opt_any(j, "attribution_ms");
  m.comparison = opt_any(j, "comparison");
  m.ablated_status = opt_any(j, "ablated_status");
  m.ablated_note = opt_any(j, "ablated_note");
  return m;
}

Json to_json(const AblationRecord& a) {
  Json methods = Json::array();
  for (const auto& m : a.methods) methods.push_back(to_json(m));
  return {{"methods", methods}, {"params", a.params}};
}

AblationRecord ablation_record_from_json(const Json& j) {
  need_object(j, "");
  AblationRecord a;
  if (const Json* m = opt_array(j, "methods", ""))
    for (size_t i = 0; i < m->size(); ++i) a.methods.push_back(method_ablation_from_json((*m)[i], at("methods", i)));
  if (const Json* p = opt_array(j, "params", ""))
    for (size_t i = 0; i < p->size(); ++i) {
      need_object((*p)[i], at("params", i));
      a.params.push_back((*p)[i]);
    }
  return a;
}

}  // namespace kopt::record
