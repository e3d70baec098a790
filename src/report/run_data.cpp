#include "report/run_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>

#include "compile/occupancy.h"
#include "roofline/ceilings.h"
#include "util/diff.h"
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
  if (c.value("role", std::string()) == "ablation" && !c.value("ablation_param", std::string()).empty())
    return fmt::format("ablation of parameter {} (the champion with the baseline's value){}", c.value("ablation_param", std::string()),
                       status == "ok" ? "" : ": " + status + (note.empty() ? "" : ": " + note));
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
// A word of a shell command line, quoted only when it needs to be.
std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") == std::string::npos)
    return w;
  return util::shell_quote(w);
}
std::string json_scalar_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}
}  // namespace

std::string reproduce_command(const Json& options, const Json& champion, const std::string& champion_file, const std::string& ref) {
  std::vector<std::string> w = {"kopt", "bench", champion_file, "--ref", ref};
  if (options.contains("dims") && options["dims"].is_object())
    for (const auto& [k, v] : options["dims"].items()) w.push_back("--dim"), w.push_back(k + "=" + json_scalar_text(v));
  const bool triton = champion_file.size() > 3 && champion_file.substr(champion_file.size() - 3) == ".py";
  if (!triton) {
    if (!options.value("arch", std::string()).empty()) w.push_back("--arch"), w.push_back(options["arch"].get<std::string>());
    std::vector<std::string> flags = options.value("nvcc_flags", std::vector<std::string>{});
    for (const auto& f : champion.value("flags", std::vector<std::string>{}))
      if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
    for (const auto& f : flags) w.push_back("--nvcc-flag=" + f);  // one word: a flag starting with '-' is not read as an option
  } else {
    // A Triton champion's values are run_kernel's arguments: -D each (its file names them in KOPT_CHAMPION_CONFIG).
    for (const char* k : {"constexprs", "launch"})
      if (champion.contains(k) && champion[k].is_object())
        for (const auto& [n, v] : champion[k].items()) w.push_back("-D"), w.push_back(n + "=" + json_scalar_text(v));
  }
  for (const auto& d : options.value("include_dirs", std::vector<std::string>{})) w.push_back("-I"), w.push_back(d);
  if (options.contains("defines") && options["defines"].is_object())
    for (const auto& [k, v] : options["defines"].items()) {
      std::string val = json_scalar_text(v);
      w.push_back("-D"), w.push_back(val.empty() ? k : k + "=" + val);
    }
  if (const std::string n = options.value("numerics", std::string()); !n.empty() && n != "reference")
    w.push_back("--numerics-mode"), w.push_back(n);
  for (const char* t : {"atol", "rtol"})
    if (options.contains(t) && options[t].is_number()) w.push_back(std::string("--") + t), w.push_back(json_scalar_text(options[t]));
  if (options.contains("seeds") && options["seeds"].is_number_integer()) w.push_back("--seeds"), w.push_back(json_scalar_text(options["seeds"]));
  if (options.contains("max_time_s") && options["max_time_s"].is_number())
    w.push_back("--measure-budget-s"), w.push_back(json_scalar_text(options["max_time_s"]));
  std::string out;
  for (const auto& x : w) out += (out.empty() ? "" : " ") + shell_word(x);
  return out;
}

Json lost_methods(const Json& candidates, const Json& ablation, const std::string& champion_id) {
  std::vector<std::string> champ_methods;
  double champ_ms = 0;
  for (const auto& c : candidates)
    if (c.value("id", std::string()) == champion_id && c.value("role", std::string()) != "ablation") {
      champ_methods = c.value("methods", std::vector<std::string>{});
      if (c.contains("median_ms") && c["median_ms"].is_number()) champ_ms = c["median_ms"].get<double>();
    }
  struct Tried {
    int candidates = 0, correct = 0;
    double best_ms = 0;
    std::string best_id;
  };
  std::map<std::string, Tried> tried;
  for (const auto& c : candidates) {
    if (c.value("role", std::string()) == "ablation" || c.value("id", std::string()) == "baseline") continue;
    const bool ok = c.value("status", std::string()) == "ok" && c.contains("median_ms") && c["median_ms"].is_number();
    for (const auto& m : c.value("methods", std::vector<std::string>{})) {
      if (std::find(champ_methods.begin(), champ_methods.end(), m) != champ_methods.end()) continue;
      auto& t = tried[m];
      ++t.candidates;
      if (!ok) continue;
      ++t.correct;
      const double ms = c["median_ms"].get<double>();
      if (t.best_id.empty() || ms < t.best_ms) t.best_ms = ms, t.best_id = c.value("id", std::string());
    }
  }
  Json out = Json::array();
  for (const auto& [m, t] : tried) {
    Json e = {{"method", m}, {"candidates", t.candidates}, {"correct", t.correct},
              {"best_id", t.best_id.empty() ? Json() : Json(t.best_id)}, {"best_ms", t.best_id.empty() ? Json() : Json(t.best_ms)},
              {"vs_champion", !t.best_id.empty() && champ_ms > 0 ? Json(t.best_ms / champ_ms) : Json()}};
    for (const auto& a : ablation)  // the last ablation of it (ablation is in iteration order)
      if (a.value("method", std::string()) == m) {
        e["last_ablation"] = {{"iteration", a.value("iteration", 0)}, {"champion_id", a.value("champion_id", std::string())},
                              {"verdict", a.value("verdict", std::string())},
                              {"attribution_ms", a.contains("attribution_ms") ? a["attribution_ms"] : Json()}};
      }
    out.push_back(e);
  }
  return out;
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
// The threads per block of a candidate's launch where its configuration names them: the launch's `num_warps` or
// Triton's num_warps parameter (x 32), or a CUDA block-size parameter as kopt annotate derives and
// people name them (KERNEL_BLOCK, KERNEL_BLOCK_X/_Y/_Z, BLOCK_SIZE, THREADS, NUM_THREADS, THREADS_PER_BLOCK,
// BLOCK_THREADS), or a parameter the derivation (derived/derivation.json) found to be a launch's threads per block
// whatever its name (`block_threads_roles`: name -> role). A derived parameter at 0 is the launcher's own value: not
// known here. A Triton BLOCK_SIZE counts elements, not threads, so a Triton kernel's block is known from num_warps only.
std::optional<int> block_threads(const Json& c, bool triton, const std::map<std::string, std::string>& roles) {
  auto positive = [](const Json& v) -> std::optional<int> {
    if (v.is_number_integer() && v.get<int64_t>() > 0 && v.get<int64_t>() <= 1024) return static_cast<int>(v.get<int64_t>());
    if (v.is_string()) {
      try {
        int n = std::stoi(v.get<std::string>());
        if (n > 0 && n <= 1024) return n;
      } catch (const std::exception&) {
      }
    }
    return std::nullopt;
  };
  const Json launch = c.value("launch", Json::object());
  if (launch.is_object()) {
    if (launch.contains("num_warps"))
      if (auto w = positive(launch["num_warps"]); w && *w <= 32) return *w * 32;
  }
  const Json params = c.value("params", Json::object());
  if (!params.is_object()) return std::nullopt;
  if (params.contains("num_warps"))
    if (auto w = positive(params["num_warps"]); w && *w <= 32) return *w * 32;
  if (triton) return std::nullopt;
  for (const auto& [name, v] : params.items())
    if (auto r = roles.find(name); r != roles.end() && (r->second == "block_threads" || r->second == "launcher_threads"))
      return positive(v);
  int xyz = 1;
  bool any_axis = false;
  for (const auto& [name, v] : params.items()) {
    const bool axis = name.ends_with("_BLOCK_X") || name.ends_with("_BLOCK_Y") || name.ends_with("_BLOCK_Z");
    if (!axis) continue;
    auto n = positive(v);
    if (!n) return std::nullopt;
    xyz *= *n;
    any_axis = true;
  }
  if (any_axis) return xyz <= 1024 ? std::optional<int>(xyz) : std::nullopt;
  for (const auto& [name, v] : params.items())
    if (name == "BLOCK_SIZE" || name == "THREADS" || name == "NUM_THREADS" || name == "THREADS_PER_BLOCK" ||
        name == "BLOCK_THREADS" || name.ends_with("_BLOCK"))
      return positive(v);
  return std::nullopt;
}

// The candidate's theoretical occupancy (compile/occupancy.h) from its ptxas resources, the block size where known
// and the architecture it was built for: "occupancy" is "50% (registers)" or "unknown (...)" saying what is missing.
// Shared memory is ptxas's static figure: dynamic shared memory is not recorded, so it counts as none.
void add_occupancy(Json& c, const std::string& run_arch, bool triton, const std::map<std::string, std::string>& roles) {
  c["occupancy_pct"] = Json();
  c["occupancy_limiter"] = Json();
  auto threads = block_threads(c, triton, roles);
  c["block_threads"] = threads ? Json(*threads) : Json();
  const std::string arch = c.contains("resources_arch") && c["resources_arch"].is_string() ? c["resources_arch"].get<std::string>() : run_arch;
  if (!c.value("resources_recorded", false) || !c.contains("registers") || !c["registers"].is_number()) {
    c["occupancy"] = "unknown (no ptxas resources)";
    return;
  }
  if (!threads) {
    c["occupancy"] = "unknown (block size not known)";
    return;
  }
  auto sm = compile::sm_limits(arch);
  if (!sm) {
    c["occupancy"] = "unknown (no SM limits for " + (arch.empty() ? std::string("this GPU") : arch) + ")";
    return;
  }
  const long long smem = c.contains("shared_bytes") && c["shared_bytes"].is_number() ? c["shared_bytes"].get<long long>() : 0;
  auto o = compile::theoretical_occupancy(c["registers"].get<int>(), smem, *threads, *sm);
  if (!o) {
    c["occupancy"] = "unknown (block size not known)";
    return;
  }
  c["occupancy_pct"] = o->fraction * 100;
  c["occupancy_limiter"] = std::string(compile::limiter_name(o->limiter));
  c["occupancy"] = compile::format_occupancy(*o);
}

Json candidate_row(const Reader& r, const fs::path& rel, const std::optional<int64_t>& start, bool samples) {
  Json row = Json::object();
  if (auto c = r.json(rel / "candidate.json")) {
    for (const char* k : {"id", "params", "methods", "guards", "flags", "defines", "constexprs", "launch", "origin", "content_hash"})
      if (c->contains(k)) row[k] = (*c)[k];
  }
  row["dir"] = rel.string();
  // Not measured in that run: the results database's record stood for it (issue 39 item 2).
  if (auto u = r.json(rel / "reused.json"); u && u->contains("record") && (*u)["record"].is_object()) {
    const auto& rec = (*u)["record"];
    row["reused"] = {{"marker", u->value("marker", std::string())}, {"record_id", rec.value("id", 0)},
                     {"run_dir", rec.value("run_dir", std::string())}, {"recorded_at", rec.value("recorded_at", std::string())}};
    if (rec.contains("median_ms") && rec["median_ms"].is_number()) row["median_ms"] = rec["median_ms"];
    row["run_status"] = rec.value("run_status", std::string());
    row["build_status"] = "ok";
  }
  if (auto b = r.json(rel / "build.json")) {
    row["compile_ms"] = num_or_null(*b, "compile_ms");
    row["build_status"] = b->value("status", std::string());
    // ptxas's figures (compile/resources.h) over the build's entry kernels: the largest per kernel, spills summed.
    int regs = -1;
    int64_t spill = 0, spill_store = 0, spill_load = 0, smem = -1, stack = -1;
    bool any = false;
    for (const auto& k : b->value("resources", Json::array())) {
      if (!k.is_object() || !k.value("entry", true)) continue;
      any = true;
      if (k.contains("arch") && k["arch"].is_string() && !k["arch"].get<std::string>().empty()) row["resources_arch"] = k["arch"];
      if (k.contains("registers") && k["registers"].is_number()) regs = std::max(regs, k["registers"].get<int>());
      if (k.contains("shared_bytes") && k["shared_bytes"].is_number()) smem = std::max(smem, k["shared_bytes"].get<int64_t>());
      if (k.contains("stack_frame_bytes") && k["stack_frame_bytes"].is_number()) stack = std::max(stack, k["stack_frame_bytes"].get<int64_t>());
      if (k.contains("spill_store_bytes") && k["spill_store_bytes"].is_number()) spill_store += k["spill_store_bytes"].get<int64_t>();
      if (k.contains("spill_load_bytes") && k["spill_load_bytes"].is_number()) spill_load += k["spill_load_bytes"].get<int64_t>();
    }
    spill = spill_store + spill_load;
    row["registers"] = regs >= 0 ? Json(regs) : Json();
    row["shared_bytes"] = smem >= 0 ? Json(smem) : Json();
    row["stack_frame_bytes"] = stack >= 0 ? Json(stack) : Json();
    row["spill_store_bytes"] = any ? Json(spill_store) : Json();
    row["spill_load_bytes"] = any ? Json(spill_load) : Json();
    row["spill_bytes"] = spill;
    row["resources_recorded"] = any;
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


// The champion's file (champion/<kernel>), the baseline's beside it (champion/baseline_<kernel>; reconstructed from
// the champion's file and state.json's baseline values for a run written before kopt wrote it), their unified diff
// and the reproduce command. Paths relative to the run directory.
Json champion_section(const Reader& r, const Json& summary, const Json& options, const Json& state, const std::string& champion_id,
                      std::vector<std::string>& notes) {
  constexpr size_t kMaxSourceBytes = 512 * 1024;
  Json out = {{"id", champion_id}};
  if (champion_id.empty()) {
    out["note"] = "this run has no champion";
    return out;
  }
  auto cj = r.json("champion/champion.json").value_or(Json::object());
  std::string name = fs::path(cj.value("file", std::string())).filename().string();
  if (name.empty()) name = fs::path(summary.value("champion_path", std::string())).filename().string();
  if (name.empty()) name = fs::path(options.value("kernel", std::string())).filename().string();
  const std::string file = (fs::path("champion") / name).generic_string();
  auto text = name.empty() ? std::nullopt : r.text(file);
  if (!text) {
    out["note"] = "the run directory has no champion file (" + file + "): the run stopped before it wrote one";
    notes.push_back(out["note"].get<std::string>());
    return out;
  }
  out["file"] = file;
  out["source_bytes"] = text->size();
  if (text->size() <= kMaxSourceBytes) out["source"] = *text;
  else out["source_note"] = fmt::format("the champion's file is {} KiB: open it from the link", text->size() / 1024);
  const Json cand = state.contains("champion") && state["champion"].is_object() ? state["champion"].value("candidate", Json::object()) : Json::object();
  const Json base = state.contains("baseline") && state["baseline"].is_object() ? state["baseline"] : Json::object();
  const Json base_cand = base.value("candidate", Json::object());
  out["methods"] = cand.value("methods", Json::array());
  out["flags"] = cand.value("flags", Json::array());

  // The baseline's text: its file, else rebuilt from the champion's (same source, the baseline's values).
  std::string base_file = fs::path(cj.value("baseline_file", std::string())).filename().string();
  std::optional<std::string> base_text;
  if (!base_file.empty()) base_file = (fs::path("champion") / base_file).generic_string(), base_text = r.text(base_file);
  if (!base_text && champion_id != "baseline" && !base_cand.empty() && cand.value("source", std::string()) == base_cand.value("source", std::string()) &&
      fs::path(name).extension() != ".py") {
    auto blank = text->find("\n\n");
    if (blank != std::string::npos) {
      std::string head = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: none\n", base.value("median_ms", 0.0));
      auto methods = base_cand.value("methods", std::vector<std::string>{});
      if (!methods.empty()) head = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: {}\n", base.value("median_ms", 0.0), util::join(methods, ", "));
      if (base_cand.contains("defines") && base_cand["defines"].is_object())
        for (const auto& [k, v] : base_cand["defines"].items()) head += "#define " + k + " " + json_scalar_text(v) + "\n";
      base_text = head + text->substr(blank + 1);
      base_file.clear();
      out["baseline_note"] = "the run directory has no baseline file (written by kopt since issue 37): the baseline's text is "
                             "the champion's source with the baseline's values from state.json";
    }
  }
  if (champion_id == "baseline") {
    out["diff_note"] = "the champion is the baseline: nothing changed";
  } else if (base_text) {
    util::DiffStats st;
    std::string diff = util::unified_diff(*base_text, *text, base_file.empty() ? "baseline (reconstructed)" : base_file, file, 3, &st);
    out["baseline_file"] = base_file.empty() ? Json() : Json(base_file);
    out["diff"] = diff.size() <= kMaxSourceBytes ? Json(diff) : Json();
    out["diff_added"] = st.added;
    out["diff_removed"] = st.removed;
    if (!st.exact) out["diff_note"] = "the files are too large for a minimal diff: the changed middle is shown removed and added whole";
  } else {
    out["diff_note"] = "no diff: the run directory has no baseline file and the champion's source is not the baseline's";
  }

  // kopt bench, run from the run directory: ref.py relative to where the run was recorded, when that is known.
  std::string ref = options.value("ref", std::string());
  const std::string recorded = summary.value("run_dir", std::string());
  if (!ref.empty() && !recorded.empty() && fs::path(ref).is_absolute() && fs::path(recorded).is_absolute()) {
    auto rel = fs::path(ref).lexically_relative(recorded);
    if (!rel.empty()) ref = rel.generic_string();
  }
  out["reproduce"] = reproduce_command(options, cand, file, ref.empty() ? std::string("ref.py") : ref);
  out["reproduce_cwd"] = "the run directory";
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
  Json param_ablation = Json::array();
  Json timeline = state.value("timeline", summary.value("timeline", Json::array()));
  auto champion_at = [&](int it) {
    for (const auto& t : timeline)
      if (t.value("iteration", -1) == it) return t.value("champion_id", std::string());
    return std::string();
  };
  for (const auto& [it, rel] : iter_dirs) {
    if (auto s = r.json(rel / "selection.json"))
      for (const auto& f : s->value("finalists", Json::array())) selection_of[f.value("finalist", std::string())] = f;
    if (auto a = r.json(rel / "ablation.json")) {
      for (const auto& m : a->value("methods", Json::array())) {
        Json e = {{"iteration", it}, {"champion_id", champion_at(it)}, {"method", m.value("method", std::string())},
                  {"verdict", m.value("verdict", std::string())}, {"sass", m.value("sass", std::string())}};
        if (m.contains("attribution_ms")) e["attribution_ms"] = m["attribution_ms"];
        if (m.contains("comparison")) e["comparison"] = m["comparison"];
        if (m.contains("ablated_status")) e["ablated_status"] = m["ablated_status"];
        if (m.contains("ablated_note")) e["ablated_note"] = m["ablated_note"];
        ablation.push_back(e);
      }
      for (const auto& pa : a->value("params", Json::array())) {
        Json e = pa;
        e["iteration"] = it;
        if (e.value("champion_id", std::string()).empty()) e["champion_id"] = champion_at(it);
        param_ablation.push_back(e);
      }
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
        // The baseline's build (written since issue 37): its ptxas resources, as a candidate's.
        if (r.json("iter_00_baseline/build.json")) {
          Json built = candidate_row(r, "iter_00_baseline", start, false);
          for (const char* k : {"registers", "shared_bytes", "stack_frame_bytes", "spill_store_bytes", "spill_load_bytes", "spill_bytes",
                                "resources_recorded", "resources_arch", "compile_ms"})
            if (built.contains(k)) row[k] = built[k];
        }
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
    if (auto bp = id.find("_base_"); pos == std::string::npos && bp != std::string::npos) row["ablation_param"] = id.substr(bp + 6);
    std::string rs = row.value("run_status", std::string());
    std::string bs = row.value("build_status", std::string());
    row["status"] = bs != "ok" && !bs.empty() ? "compile_failed" : (rs == "ok" ? "ok" : (rs.empty() ? "not_run" : rs));
    candidates.push_back(row);
  }
  for (auto& c : candidates) {
    c["reason"] = candidate_reason(c, champion_id);
    if (c.contains("reused") && c["reused"].is_object()) {
      const std::string marker = c["reused"].value("marker", std::string());
      const std::string why = c["reason"].get<std::string>();
      c["reason"] = marker + (why.empty() ? std::string() : "; " + why);
    }
  }

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

  // ---- achieved rates: the workload model's FLOPs and minimum bytes over each correct median ----
  Json rates = {{"available", false}};
  if (workload.is_object() && workload["flops"].is_number() && workload["bytes_min"].is_number()) {
    rates = {{"available", true}, {"flops", workload["flops"]}, {"bytes_min", workload["bytes_min"]}};
    const double flops = workload["flops"].get<double>(), bytes = workload["bytes_min"].get<double>();
    for (auto& c : candidates)
      if (c.value("status", std::string()) == "ok" && c.contains("median_ms") && c["median_ms"].is_number() && c["median_ms"].get<double>() > 0) {
        const double s_per = c["median_ms"].get<double>() * 1e-3;
        c["achieved_tflops"] = flops / s_per / 1e12;
        c["achieved_gbps"] = bytes / s_per / 1e9;
      }
  } else {
    rates["note"] = "no workload model (ref.py has no workload_model): achieved FLOP/s and B/s are not computed";
  }
  bool any_resources = false;
  for (const auto& c : candidates) any_resources = any_resources || c.value("resources_recorded", false);
  {
    const std::string kernel = options.value("kernel", std::string());
    const bool triton = kernel.ends_with(".py");
    // The derived parameters' roles: which one is a launch's block size, whatever its name.
    std::map<std::string, std::string> roles;
    if (auto d = util::read_json(run_dir / "derived" / "derivation.json"); d && d->contains("params") && (*d)["params"].is_array())
      for (const auto& prm : (*d)["params"])
        if (prm.is_object() && prm.contains("name") && prm["name"].is_string() && prm.contains("role") && prm["role"].is_string())
          roles[prm["name"].get<std::string>()] = prm["role"].get<std::string>();
    for (auto& c : candidates) add_occupancy(c, options.value("arch", std::string()), triton, roles);
  }
  if (!any_resources)
    notes.push_back("no candidate's build.json records ptxas resources: registers, shared memory and spills are not shown");

  // ---- the champion's source, its diff against the baseline, and the command that re-measures it ----
  Json champion = champion_section(r, summary, options, state, champion_id, notes);

  // ---- methods tried that the champion does not have ----
  Json lost = lost_methods(candidates, ablation, champion_id);

  // ---- per-shape results (the workload matrix's case table) and the held-out shapes, when the run has them ----
  const Json gate_records = state.value("gate_records", Json::object());
  Json case_src = summary.contains("cases") ? summary["cases"] : gate_records.value("case_table", Json());
  Json cases = case_src.is_array() ? case_src : (case_src.is_object() ? case_src.value("cases", Json()) : Json());
  Json cases_geomean = case_src.is_object() ? case_src.value("geomean", Json()) : Json();
  Json holdout = summary.contains("holdout") ? summary["holdout"] : gate_records.value("holdout", Json());
  if (!holdout.is_object()) holdout = nullptr;
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
              {"wall", state.value("wall", summary.value("wall", Json::object()))},
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
              {"cases_geomean", cases_geomean},
              {"holdout", holdout},
              {"champion", champion},
              {"rates", rates},
              {"param_ablation", param_ablation},
              {"lost_methods", lost},
              {"gpus", gpus},
              {"notes", notes}};
  return out;
}

}  // namespace kopt::report
