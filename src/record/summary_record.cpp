#include "record/summary_record.h"

#include "record/fields.h"

namespace kopt::record {

using util::Json;
using namespace fields;

namespace {
template <class T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
}  // namespace

Json to_json(const Headline& h) {
  Json j = Json::object();
  put(j, "baseline_ms", h.baseline_ms), put(j, "champion_ms", h.champion_ms), put(j, "champion_id", h.champion_id);
  put(j, "speedup_vs_baseline", h.speedup_vs_baseline), put(j, "reference_ms", h.reference_ms);
  put(j, "speedup_vs_reference", h.speedup_vs_reference), put(j, "warning", h.warning);
  return j;
}

Headline headline_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  Headline h;
  h.baseline_ms = opt_number(j, "baseline_ms", where);
  h.champion_ms = opt_number(j, "champion_ms", where);
  h.champion_id = opt_string(j, "champion_id", where);
  h.speedup_vs_baseline = opt_number(j, "speedup_vs_baseline", where);
  h.reference_ms = opt_number(j, "reference_ms", where);
  h.speedup_vs_reference = opt_number(j, "speedup_vs_reference", where);
  h.warning = opt_string(j, "warning", where);
  return h;
}

Json to_json(const RooflineSummary& r) {
  Json j = Json::object();
  put(j, "mode", r.mode), put(j, "verdict", r.verdict), put(j, "bound", r.bound), put(j, "near_peak", r.near_peak);
  put(j, "floor_ms", r.floor_ms), put(j, "efficiency", r.efficiency);
  return j;
}

RooflineSummary roofline_summary_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  RooflineSummary r;
  r.mode = opt_string(j, "mode", where);
  r.verdict = opt_string(j, "verdict", where);
  r.bound = opt_string(j, "bound", where);
  r.near_peak = opt_bool(j, "near_peak", where);
  r.floor_ms = opt_number(j, "floor_ms", where);
  r.efficiency = opt_number(j, "efficiency", where);
  return r;
}

Json to_json(const TimelineEntry& t) {
  Json j = Json::object();
  put(j, "iteration", t.iteration), put(j, "champion_id", t.champion_id), put(j, "champion_ms", t.champion_ms);
  put(j, "improved", t.improved), put(j, "candidates", t.candidates), put(j, "correct", t.correct), put(j, "note", t.note);
  return j;
}

Json to_json(const std::vector<TimelineEntry>& timeline) {
  Json j = Json::array();
  for (const auto& t : timeline) j.push_back(to_json(t));
  return j;
}

TimelineEntry timeline_entry_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  TimelineEntry t;
  t.iteration = opt_int(j, "iteration", where);
  t.champion_id = opt_string(j, "champion_id", where);
  t.champion_ms = opt_number(j, "champion_ms", where);
  t.improved = opt_bool(j, "improved", where);
  t.candidates = opt_int(j, "candidates", where);
  t.correct = opt_int(j, "correct", where);
  t.note = opt_string(j, "note", where);
  return t;
}

std::vector<TimelineEntry> timeline_from_json(const Json& j, const std::string& where) {
  if (!j.is_array()) wrong(where, "an array", j);
  std::vector<TimelineEntry> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(timeline_entry_from_json(j[i], at(where, i)));
  return out;
}

Json to_json(const FrontierEntry& f) {
  Json j = Json::object();
  put(j, "id", f.id), put(j, "median_ms", f.median_ms), put(j, "methods", f.methods);
  return j;
}

FrontierEntry frontier_entry_from_json(const Json& j, const std::string& where) {
  need_object(j, where);
  return {opt_string(j, "id", where), opt_number(j, "median_ms", where), opt_strings(j, "methods", where)};
}

namespace {
constexpr const char* kTyped[] = {"schema", "kernel", "dims", "numerics_mode", "generator", "sizes_guessed", "gates_passed",
                                  "stop", "headline", "roofline", "timeline", "methods", "frontier", "wall", "phase_seconds",
                                  "champion_path", "run_dir"};
bool typed(const std::string& key) {
  for (const char* k : kTyped)
    if (key == k) return true;
  return false;
}
}  // namespace

Json to_json(const SummaryRecord& s) {
  Json j = Json::object();
  j["schema"] = s.schema;
  put(j, "kernel", s.kernel), put(j, "dims", s.dims), put(j, "numerics_mode", s.numerics_mode), put(j, "generator", s.generator);
  put(j, "sizes_guessed", s.sizes_guessed), put(j, "gates_passed", s.gates_passed);
  if (s.has_stop) {
    Json stop = Json::object();
    if (s.stop_reason) stop["reason"] = std::string(stop_reason_text(*s.stop_reason));
    put(stop, "detail", s.stop_detail);
    j["stop"] = stop;
  }
  if (s.headline) j["headline"] = to_json(*s.headline);
  if (s.roofline) j["roofline"] = to_json(*s.roofline);
  if (s.timeline) j["timeline"] = to_json(*s.timeline);
  put(j, "methods", s.methods);
  if (s.frontier) {
    Json f = Json::array();
    for (const auto& e : *s.frontier) f.push_back(to_json(e));
    j["frontier"] = f;
  }
  if (s.wall) j["wall"] = to_json(*s.wall);
  put(j, "phase_seconds", s.phase_seconds), put(j, "champion_path", s.champion_path), put(j, "run_dir", s.run_dir);
  for (const auto& [k, v] : s.sections) j[k] = v;
  return j;
}

SummaryRecord summary_record_from_json(const Json& j) {
  need_object(j, "");
  SummaryRecord s;
  s.schema = opt_string(j, "schema", "").value_or("");
  s.kernel = opt_string(j, "kernel", "");
  s.dims = opt_string(j, "dims", "");
  s.numerics_mode = opt_string(j, "numerics_mode", "");
  s.generator = opt_string(j, "generator", "");
  if (const Json* m = opt_object(j, "meta", "")) {
    s.meta_gpu = opt_string(*m, "gpu", "meta");
    s.meta_time = opt_string(*m, "time", "meta");
    s.meta_kopt_version = opt_string(*m, "kopt_version", "meta");
  }
  s.sizes_guessed = opt_bool(j, "sizes_guessed", "");
  s.gates_passed = opt_bool(j, "gates_passed", "");
  if (const Json* st = opt_object(j, "stop", "")) {
    s.has_stop = true;
    if (auto reason = opt_string(*st, "reason", "stop")) {
      auto r = stop_reason_from_text(*reason);
      if (!r) throw RecordError("stop.reason: unknown stop reason '" + *reason + "'");
      s.stop_reason = *r;
    }
    s.stop_detail = opt_string(*st, "detail", "stop");
  }
  if (const Json* h = opt_object(j, "headline", "")) s.headline = headline_from_json(*h);
  if (const Json* r = opt_object(j, "roofline", "")) s.roofline = roofline_summary_from_json(*r);
  if (const Json* t = opt_array(j, "timeline", "")) s.timeline = timeline_from_json(*t);
  if (const Json* m = opt_object(j, "methods", "")) {
    std::map<std::string, std::vector<std::string>> methods;
    for (const auto& [verdict, list] : m->items()) methods[verdict] = opt_strings(*m, verdict.c_str(), "methods").value_or(std::vector<std::string>{});
    s.methods = methods;
  }
  if (const Json* f = opt_array(j, "frontier", "")) {
    s.frontier.emplace();
    for (size_t i = 0; i < f->size(); ++i) s.frontier->push_back(frontier_entry_from_json((*f)[i], at("frontier", i)));
  }
  if (const Json* w = opt_object(j, "wall", "")) s.wall = wall_from_json(*w, "wall");
  s.phase_seconds = opt_map<double>(j, "phase_seconds", "");
  s.champion_path = opt_string(j, "champion_path", "");
  s.run_dir = opt_string(j, "run_dir", "");
  for (const auto& [k, v] : j.items())
    if (!typed(k)) s.sections[k] = v;
  return s;
}

}  // namespace kopt::record
