#include "record/summary_record.h"

#include <concepts>

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

// The records whose fields map one to one onto their JSON, each named once (fields.h).
KOPT_RECORD_FIELDS(Headline, baseline_ms, champion_ms, champion_id, speedup_vs_baseline, reference_ms, speedup_vs_reference, warning)
KOPT_RECORD_FIELDS(RooflineSummary, mode, verdict, bound, near_peak, floor_ms, efficiency)
KOPT_RECORD_FIELDS(TimelineEntry, iteration, champion_id, champion_ms, improved, candidates, correct, note)
KOPT_RECORD_FIELDS(FrontierEntry, id, median_ms, methods)
KOPT_RECORD_JSON(Headline, headline_from_json)
KOPT_RECORD_JSON(RooflineSummary, roofline_summary_from_json)
KOPT_RECORD_JSON(TimelineEntry, timeline_entry_from_json)
KOPT_RECORD_JSON(FrontierEntry, frontier_entry_from_json)

Json to_json(const std::vector<TimelineEntry>& timeline) { return write_value(timeline); }
std::vector<TimelineEntry> timeline_from_json(const Json& j, const std::string& where) {
  std::vector<TimelineEntry> out;
  read_value(j, where, out);
  return out;
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
  if (s.frontier) j["frontier"] = write_value(*s.frontier);
  if (s.wall) j["wall"] = to_json(*s.wall);
  put(j, "phase_seconds", s.phase_seconds), put(j, "champion_path", s.champion_path), put(j, "run_dir", s.run_dir);
  for (const auto& [k, v] : s.sections) j[k] = v;
  return j;
}

std::optional<std::string> summary_schema(const Json& j) {
  const Json* s = find(j, "schema");
  return s && s->is_string() ? std::optional<std::string>(s->get<std::string>()) : std::nullopt;
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
  if (const Json* h = find(j, "headline")) s.headline = headline_from_json(*h);
  if (const Json* r = find(j, "roofline")) s.roofline = roofline_summary_from_json(*r);
  if (const Json* t = find(j, "timeline")) s.timeline = timeline_from_json(*t);
  if (const Json* m = find(j, "methods")) read_value(*m, "methods", s.methods.emplace());
  if (const Json* f = find(j, "frontier")) read_value(*f, "frontier", s.frontier.emplace());
  if (const Json* w = opt_object(j, "wall", "")) s.wall = wall_from_json(*w, "wall");
  s.phase_seconds = opt_map<double>(j, "phase_seconds", "");
  s.champion_path = opt_string(j, "champion_path", "");
  s.run_dir = opt_string(j, "run_dir", "");
  for (const auto& [k, v] : j.items())
    if (!typed(k)) s.sections[k] = v;
  if (const Json* c = find(j, "cases"); c && c->is_array()) {  // an older summary's bare rows: the page's only
    Json rest = j;
    rest.erase("cases");
    s.typed = read_record<SummarySections>(rest);
  } else {
    s.typed = read_record<SummarySections>(j);
  }
  return s;
}

}  // namespace kopt::record
