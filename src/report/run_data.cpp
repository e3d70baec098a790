#include "report/run_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>

#include "roofline/ceilings.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::report {

namespace fs = std::filesystem;
using util::Json;

std::optional<int64_t> parse_utc_iso(const std::string& s) {
  std::tm tm{};
  int y, mo, d, h, mi, sec;
  char z = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z) != 7 || z != 'Z') return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm));
}

std::string compile_error_line(const std::string& log) {
  std::string last;
  for (const auto& raw : util::split_lines(log)) {
    std::string line = util::trim(raw);
    if (line.empty()) continue;
    if (line.find("error") != std::string::npos) return line.substr(0, 240);
    last = line;
  }
  return last.substr(0, 240);
}

util::Json summed_mix(const util::Json& sass) {
  Json out = Json::object();
  if (!sass.is_object() || !sass.contains("kernels") || !sass["kernels"].is_array()) return out;
  for (const auto& k : sass["kernels"]) {
    if (!k.contains("mix") || !k["mix"].is_object()) continue;
    for (const auto& [cls, n] : k["mix"].items())
      if (n.is_number()) out[cls] = out.value(cls, 0) + n.get<int>();
  }
  return out;
}

util::Json convergence(const util::Json& candidates) {
  std::vector<const Json*> evals;
  for (const auto& c : candidates)
    if (c.contains("eval") && c["eval"].is_number()) evals.push_back(&c);
  std::stable_sort(evals.begin(), evals.end(), [](const Json* a, const Json* b) { return (*a)["eval"].get<int>() < (*b)["eval"].get<int>(); });
  Json out = Json::array();
  Json best = nullptr, best_id = nullptr;
  for (const Json* c : evals) {
    bool ok = c->value("status", std::string()) == "ok" && c->contains("median_ms") && (*c)["median_ms"].is_number();
    if (ok && (best.is_null() || (*c)["median_ms"].get<double>() < best.get<double>())) {
      best = (*c)["median_ms"];
      best_id = (*c)["id"];
    }
    out.push_back({{"eval", (*c)["eval"]}, {"time_s", c->value("time_s", Json())}, {"id", c->value("id", std::string())},
                   {"status", c->value("status", std::string())}, {"median_ms", ok ? (*c)["median_ms"] : Json()},
                   {"best_ms", best}, {"best_id", best_id}});
  }
  return out;
}

std::string candidate_reason(const util::Json& c, const std::string& champion_id) {
  std::string id = c.value("id", std::string());
  std::string status = c.value("status", std::string());
  std::string note = c.value("note", std::string());
  if (c.value("role", std::string()) == "ablation")
    return fmt::format("ablation of {} (the champion without it){}", c.value("ablation_of", std::string("a method")),
                       status == "ok" ? "" : ": " + status + (note.empty() ? "" : ": " + note));
  if (status == "compile_failed") return "compile failed" + (note.empty() ? std::string() : ": " + note);
  if (status == "incorrect") return "incorrect" + (note.empty() ? std::string() : ": " + note);
  if (status == "crashed") return "crashed" + (note.empty() ? std::string() : ": " + note);
  if (status == "timed_out") return "timed out" + (note.empty() ? std::string() : ": " + note);
  if (status != "ok") return status + (note.empty() ? std::string() : ": " + note);
  if (id == champion_id) return "";
  if (c.contains("selection") && c["selection"].is_object()) {
    const auto& s = c["selection"];
    if (s.contains("error")) return "finalist; " + s.value("error", std::string());
    if (s.value("decision", std::string()) == "new_champion")
      return fmt::format("champion of iteration {}, later superseded", c.value("iteration", 0));
    return "finalist, kept the incumbent: " + s.value("reason", std::string("no decision recorded"));
  }
  if (id == "baseline") return "the baseline";
  return "not a finalist (slower than the candidates re-timed against the champion)";
}

namespace {

struct Reader {
  fs::path dir;
  std::vector<std::string>& notes;
  // The file's JSON; nullopt when absent (silently) or unreadable (with a note).
  std::optional<Json> json(const fs::path& rel) const {
    fs::path p = dir / rel;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    auto j = util::read_json(p);
    if (!j) {
      notes.push_back(j.error().message);
      return std::nullopt;
    }
    return *j;
  }
  std::optional<std::string> text(const fs::path& rel) const {
    std::error_code ec;
    if (!fs::is_regular_file(dir / rel, ec)) return std::nullopt;
    auto t = util::read_file(dir / rel);
    return t ? std::optional<std::string>(*t) : std::nullopt;
  }
};

Json num_or_null(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key] : Json();
}

std::string meta_time(const Json& j) {
  return j.is_object() && j.contains("meta") && j["meta"].is_object() ? j["meta"].value("time", std::string()) : std::string();
}

// iter_03 -> 3, iter_00_baseline -> 0; nullopt for anything else.
std::optional<int> iteration_of(const std::string& name) {
  static const std::regex re("^iter_([0-9]+)(_baseline)?$");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  return std::stoi(m[1].str());
}

// The timing fields of a runner result (run.json, gates/timing.json) onto a candidate row.
void add_timing(Json& row, const Json& result, const std::optional<int64_t>& start, bool samples) {
  if (result.contains("timing") && result["timing"].is_object()) {
    const auto& t = result["timing"];
    for (const char* k : {"median_ms", "ci95_low_ms", "ci95_high_ms", "ci95_rel_halfwidth", "robust_cv", "min_ms", "max_ms"})
      row[k] = num_or_null(t, k);
    row["samples"] = t.value("samples", 0);
    row["stability"] = t.value("stability", std::string());
  }
  if (samples && result.contains("samples_ms") && result["samples_ms"].is_array()) row["samples_ms"] = result["samples_ms"];
  std::string when = meta_time(result);
  row["measured_at"] = when;
  auto t = parse_utc_iso(when);
  row["time_s"] = (t && start) ? Json(static_cast<double>(*t - *start)) : Json();
  if (!result.value("message", std::string()).empty()) row["note"] = result.value("message", std::string());
}

// One candidate directory (candidate.json, build.json, run.json, sass.json) as a row.
Json candidate_row(const Reader& r, const fs::path& rel, const std::optional<int64_t>& start, bool samples) {
  Json row = Json::object();
  if (auto c = r.json(rel / "candidate.json")) {
    for (const char* k : {"id", "params", "methods", "guards", "flags", "defines", "constexprs", "launch", "origin", "content_hash"})
      if (c->contains(k)) row[k] = (*c)[k];
  }
  row["dir"] = rel.string();
  if (auto b = r.json(rel / "build.json")) {
    row["compile_ms"] = num_or_null(*b, "compile_ms");
    row["build_status"] = b->value("status", std::string());
    int regs = -1;
    int64_t spill = 0;
    for (const auto& k : b->value("resources", Json::array())) {
      if (k.contains("registers") && k["registers"].is_number()) regs = std::max(regs, k["registers"].get<int>());
      for (const char* s : {"spill_store_bytes", "spill_load_bytes"})
        if (k.contains(s) && k[s].is_number()) spill += k[s].get<int64_t>();
    }
    row["registers"] = regs >= 0 ? Json(regs) : Json();
    row["spill_bytes"] = spill;
    if (b->value("status", std::string()) != "ok") {
      auto log = r.text(rel / "compile.log");
      row["note"] = log ? compile_error_line(*log) : b->value("status", std::string());
    }
  }
  if (auto run = r.json(rel / "run.json")) {
    row["run_status"] = run->value("status", std::string());
    add_timing(row, *run, start, samples);
  }
  if (auto s = r.json(rel / "sass.json")) {
    Json verdicts = Json::object();
    if (s->contains("methods") && (*s)["methods"].is_object())
      for (const auto& [m, v] : (*s)["methods"].items()) verdicts[m] = v.is_object() ? v.value("status", std::string()) : std::string();
    row["sass"] = verdicts;
  }
  return row;
}

// Ceilings: the run's own (ceilings.json), else the datasheet of the GPU the run names, else none.
Json ceilings_json(const Reader& r, const std::string& gpu_name, std::vector<std::string>& notes) {
  std::optional<roofline::Ceilings> c;
  std::string origin;
  if (auto j = r.json("ceilings.json")) {
    auto parsed = roofline::ceilings_from_json(*j);
    if (parsed) {
      c = *parsed;
      origin = "run";
    } else {
      notes.push_back("ceilings.json: " + parsed.error().message);
    }
  }
  if (!c && !gpu_name.empty()) {
    if (auto d = roofline::datasheet_for(gpu_name)) {
      c = roofline::datasheet_ceilings(*d, {}, gpu_name, "");
      origin = "datasheet";
      notes.push_back("the run directory has no ceilings.json: the roofline shows the " + d->label + " figures, not measured ones");
    }
  }
  if (!c) {
    notes.push_back("no ceilings: the run directory has no ceilings.json and kopt has no datasheet for '" + gpu_name + "'");
    return nullptr;
  }
  Json roofs = Json::array();
  for (const auto& [roof, x] : c->roofs) {
    const auto& info = roofline::roof_info(roof);
    roofs.push_back({{"name", info.name}, {"label", info.label}, {"unit", info.unit},
                     {"kind", info.kind == roofline::RoofKind::kBandwidth ? "bandwidth" : "compute"}, {"value", x.value},
                     {"source", roofline::describe(x.source)}, {"note", x.note}});
  }
  Json out = {{"origin", origin}, {"gpu_name", c->gpu_name}, {"measured_at", c->measured_at}, {"roofs", roofs}, {"warnings", c->warnings}};
  if (auto d = c->dram_roof()) out["dram_roof"] = roofline::roof_info(*d).name;
  return out;
}

Json profile_json(const Json& p) {
  Json top = Json::object();
  if (p.contains("top_metrics") && p["top_metrics"].is_object())
    for (const auto& [axis, list] : p["top_metrics"].items()) {
      Json rows = Json::array();
      for (const auto& m : list)
        rows.push_back({{"metric", m.value("name_used", m.value("metric", std::string()))}, {"value", num_or_null(m, "value")},
                        {"unit", m.value("unit", std::string())}, {"ideal", num_or_null(m, "ideal")},
                        {"distance", num_or_null(m, "distance")}, {"description", m.value("description", std::string())}});
      top[axis] = rows;
    }
  Json out = {{"top_metrics", top}, {"ncu_version", p.value("ncu_version", std::string())}};
  if (p.contains("classification")) out["classification"] = p["classification"];
  return out;
}

}  // namespace

Result<util::Json> load_run(const fs::path& run_dir, const LoadOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return input_error(run_dir.string() + " is not a directory (give a kopt run directory, kopt_runs/run_YYYYmmdd_HHMMSS)");
  std::vector<std::string> notes;
  Reader r{run_dir, notes};
  if (!fs::exists(run_dir / "state.json", ec) && !fs::exists(run_dir / "summary.json", ec))
    return input_error(run_dir.string() + " is not a kopt run directory: it has neither state.json nor summary.json");
  Json state = Json::object();
  if (fs::exists(run_dir / "state.json", ec)) {
    KOPT_TRY_ASSIGN(state, util::read_json(run_dir / "state.json"));
  }
  Json summary = r.json("summary.json").value_or(Json::object());
  Json options = r.json("options.json").value_or(Json::object());
  Json env = r.json("env.json").value_or(Json::object());
  auto start = parse_utc_iso(meta_time(options));

  // ---- the run ----
  std::string gpu;
  if (summary.contains("meta")) gpu = summary["meta"].value("gpu", std::string());
  if (gpu.empty() && env.contains("gpus") && env["gpus"].is_array() && !env["gpus"].empty())
    gpu = env["gpus"][0].value("name", std::string());
  if (gpu.empty() && state.contains("meta")) gpu = state["meta"].value("gpu", std::string());
  Json run = {{"dir", fs::absolute(run_dir).lexically_normal().string()},
              {"kernel", summary.value("kernel", options.value("kernel", std::string()))},
              {"dims", options.contains("dims") ? options["dims"] : Json::object()},
              {"dims_text", summary.value("dims", std::string())},
              {"gpu", gpu},
              {"numerics_mode", summary.value("numerics_mode", options.value("numerics", std::string()))},
              {"generator", summary.value("generator", options.value("generator", std::string()))},
              {"started_at", meta_time(options)},
              {"finished_at", meta_time(summary)},
              {"kopt_version", summary.contains("meta") ? summary["meta"].value("kopt_version", std::string()) : std::string()},
              {"stop_reason", state.value("stop_reason", std::string())},
              {"stop_detail", state.value("stop_detail", std::string())},
              {"iterations_done", state.value("iterations_done", 0)},
              {"options", options}};
  run["options"].erase("meta");

  // ---- candidate directories, by id ----
  std::map<std::string, fs::path> cand_dirs;    // search candidates
  std::vector<std::pair<int, fs::path>> iter_dirs, ablation_dirs;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    auto it = iteration_of(e.path().filename().string());
    if (!it || !e.is_directory()) continue;
    iter_dirs.push_back({*it, e.path().filename()});
    for (const char* sub : {"candidates", "ablation/candidates"}) {
      fs::path cdir = e.path() / sub;
      if (!fs::is_directory(cdir, ec)) continue;
      for (const auto& c : fs::directory_iterator(cdir, ec)) {
        if (!c.is_directory()) continue;
        fs::path rel = fs::relative(c.path(), run_dir, ec);
        if (std::string(sub) == "candidates") cand_dirs[c.path().filename().string()] = rel;
        else ablation_dirs.push_back({*it, rel});
      }
    }
  }
  std::sort(iter_dirs.begin(), iter_dirs.end());
  std::sort(ablation_dirs.begin(), ablation_dirs.end());

  // ---- per iteration: selection, ablation, roofline, profile ----
  std::map<std::string, Json> selection_of;  // finalist id -> its selection entry
  Json ablation = Json::array();
  Json timeline = state.value("timeline", summary.value("timeline", Json::array()));
  auto champion_at = [&](int it) {
    for (const auto& t : timeline)
      if (t.value("iteration", -1) == it) return t.value("champion_id", std::string());
    return std::string();
  };
  for (const auto& [it, rel] : iter_dirs) {
    if (auto s = r.json(rel / "selection.json"))
      for (const auto& f : s->value("finalists", Json::array())) selection_of[f.value("finalist", std::string())] = f;
    if (auto a = r.json(rel / "ablation.json"))
      for (const auto& m : a->value("methods", Json::array())) {
        Json e = {{"iteration", it}, {"champion_id", champion_at(it)}, {"method", m.value("method", std::string())},
                  {"verdict", m.value("verdict", std::string())}, {"sass", m.value("sass", std::string())}};
        if (m.contains("attribution_ms")) e["attribution_ms"] = m["attribution_ms"];
        if (m.contains("comparison")) e["comparison"] = m["comparison"];
        if (m.contains("ablated_status")) e["ablated_status"] = m["ablated_status"];
        if (m.contains("ablated_note")) e["ablated_note"] = m["ablated_note"];
        ablation.push_back(e);
      }
  }

  // ---- candidates, in evaluation order (state.json's history), then the ablation builds ----
  std::string champion_id = summary.contains("headline") ? summary["headline"].value("champion_id", std::string()) : std::string();
  if (state.contains("champion") && state["champion"].is_object())
    champion_id = state["champion"]["candidate"].value("id", champion_id);
  Json candidates = Json::array();
  int eval = 0;
  for (const auto& h : state.value("history", Json::array())) {
    const Json& c = h.value("candidate", Json::object());
    std::string id = c.value("id", std::string());
    Json row;
    auto d = cand_dirs.find(id);
    if (id == "baseline" || d == cand_dirs.end()) {
      row = Json::object();
      for (const char* k : {"params", "methods", "guards", "flags", "defines", "constexprs", "launch", "origin", "content_hash"})
        if (c.contains(k)) row[k] = c[k];
      if (id == "baseline") {
        auto t = r.json("gates/timing_retry.json");
        if (!t) t = r.json("gates/timing.json");
        if (t) add_timing(row, *t, start, o.samples);
        if (auto b = r.json("iter_00_baseline/sass.json")) {
          Json verdicts = Json::object();
          if (b->contains("methods") && (*b)["methods"].is_object())
            for (const auto& [m, v] : (*b)["methods"].items()) verdicts[m] = v.is_object() ? v.value("status", std::string()) : std::string();
          row["sass"] = verdicts;
        }
      } else {
        notes.push_back("candidate " + id + " is in state.json but its directory was not found");
      }
    } else {
      row = candidate_row(r, d->second, start, o.samples);
    }
    row["id"] = id;
    row["eval"] = eval++;
    row["iteration"] = h.value("iteration", 0);
    row["status"] = h.value("status", std::string("ok"));
    // state.json's median is the one the loop decided on (strict numerics may have turned a timed run incorrect).
    if (h.contains("median_ms") && h["median_ms"].is_number()) row["median_ms"] = h["median_ms"];
    row["role"] = id == "baseline" ? "baseline" : (id == champion_id ? "champion" : (selection_of.count(id) ? "finalist" : "candidate"));
    if (selection_of.count(id)) {
      const auto& s = selection_of[id];
      Json sel = {{"decision", s.value("decision", std::string())}, {"reason", s.value("reason", std::string())},
                  {"incumbent", s.value("incumbent", std::string())}};
      if (s.contains("error")) sel["error"] = s["error"];
      if (s.contains("comparison")) sel["comparison"] = s["comparison"];
      row["selection"] = sel;
    }
    candidates.push_back(row);
  }
  for (const auto& [it, rel] : ablation_dirs) {
    Json row = candidate_row(r, rel, start, o.samples);
    std::string id = row.value("id", rel.filename().string());
    row["id"] = id;
    row["iteration"] = it;
    row["role"] = "ablation";
    auto pos = id.find("_no_");
    row["ablation_of"] = pos == std::string::npos ? std::string() : id.substr(pos + 4);
    std::string rs = row.value("run_status", std::string());
    std::string bs = row.value("build_status", std::string());
    row["status"] = bs != "ok" && !bs.empty() ? "compile_failed" : (rs == "ok" ? "ok" : (rs.empty() ? "not_run" : rs));
    candidates.push_back(row);
  }
  for (auto& c : candidates) c["reason"] = candidate_reason(c, champion_id);

  // ---- roofline: the workload (from the baseline's placement) and the run's ceilings ----
  Json workload = nullptr;
  Json placements = Json::array();
  for (const auto& [it, rel] : iter_dirs) {
    auto rf = r.json(rel / "roofline.json");
    if (!rf) continue;
    placements.push_back({{"iteration", it}, {"kernel", rf->value("kernel", std::string())}, {"mode", rf->value("mode", std::string())},
                          {"verdict", rf->value("verdict", std::string())}, {"efficiency", num_or_null(*rf, "efficiency")},
                          {"achieved_tflops", num_or_null(*rf, "achieved_tflops")}, {"achieved_gbps", num_or_null(*rf, "achieved_gbps")},
                          {"utilisation", rf->value("utilisation", Json::object())}, {"gaps", rf->value("gaps", Json::object())},
                          {"bound", rf->value("bound", Json())}});
    if (workload.is_null() && rf->contains("floor") && (*rf)["floor"].is_object()) {
      const auto& f = (*rf)["floor"];
      Json roofs = Json::array();
      for (const auto& t : f.value("compute_terms", Json::array())) roofs.push_back(t.value("roof", std::string()));
      workload = {{"flops", num_or_null(f, "flops")}, {"bytes_min", num_or_null(f, "bytes_min")},
                  {"arithmetic_intensity", num_or_null(f, "arithmetic_intensity")}, {"floor_ms", num_or_null(f, "floor_ms")},
                  {"binding", f.value("binding", std::string())}, {"dram_roof", f.value("dram_roof", std::string())},
                  {"dram_gbps", num_or_null(f, "dram_gbps")}, {"compute_roofs", roofs}};
    }
  }
  if (workload.is_null()) notes.push_back("no workload model (ref.py has no workload_model): kernels cannot be placed on the roofline");

  // ---- instruction mix and profile: baseline and champion ----
  std::string champ_dir;
  for (const auto& c : candidates)
    if (c.value("id", std::string()) == champion_id && c.contains("dir")) champ_dir = c["dir"].get<std::string>();
  Json mix = {{"champion_id", champion_id}};
  auto base_sass = r.json("iter_00_baseline/sass.json");
  mix["baseline"] = base_sass ? summed_mix(*base_sass) : Json();
  if (!base_sass) notes.push_back("the baseline's instruction mix was not recorded (iter_00_baseline/sass.json)");
  auto champ_sass = champ_dir.empty() ? std::nullopt : r.json(fs::path(champ_dir) / "sass.json");
  mix["champion"] = champ_sass ? summed_mix(*champ_sass) : Json();

  Json profile = {{"champion_id", champion_id}};
  if (auto p = r.json("iter_00_baseline/profile/baseline_metrics.json")) profile["baseline"] = profile_json(*p);
  if (!champ_dir.empty()) {
    fs::path idir = fs::path(champ_dir).begin()->string();  // iter_NN
    if (auto p = r.json(idir / "profile" / "champion_metrics.json")) profile["champion"] = profile_json(*p);
  }

  // ---- per-shape results, when the run has several ----
  Json cases = summary.contains("cases") ? summary["cases"] : state.value("cases", Json());
  Json ceilings = ceilings_json(r, gpu, notes);  // before `notes` is copied below
  // ---- per-GPU figures, when the run measured on several (issue 21, docs/MULTI_GPU.md) ----
  Json gpus = Json::array();
  if (Json m = state.value("measuring", Json::object()); m.is_object() && m.value("per_slot", Json::array()).size() > 1) {
    const double wall = m.value("wall_s", 0.0);
    for (const auto& p : m["per_slot"])
      gpus.push_back({{"slot", p.value("name", std::string())}, {"candidates", p.value("runs", 0)}, {"worker_lost", p.value("lost", 0)},
                      {"busy_s", p.value("busy_s", 0.0)}, {"utilisation", wall > 0 ? p.value("busy_s", 0.0) / wall : 0.0}});
  }

  Json out = {{"schema", kReportDataSchema},
              {"run", run},
              {"headline", summary.value("headline", Json::object())},
              {"roofline_summary", summary.value("roofline", Json::object())},
              {"methods_summary", summary.value("methods", Json::object())},
              {"phase_seconds", state.value("phase_seconds", summary.value("phase_seconds", Json::object()))},
              {"champion_id", champion_id},
              {"champion_path", summary.value("champion_path", std::string())},
              {"timeline", timeline},
              {"candidates", candidates},
              {"convergence", convergence(candidates)},
              {"ablation", ablation},
              {"ceilings", ceilings},
              {"workload", workload},
              {"placements", placements},
              {"mix", mix},
              {"profile", profile},
              {"cases", cases.is_array() ? cases : Json()},
              {"gpus", gpus},
              {"notes", notes}};
  return out;
}

}  // namespace kopt::report
