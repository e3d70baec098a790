#include "report/run_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>

#include "compile/occupancy.h"
#include "compile/request.h"
#include "record/fields.h"
#include "record/options_record.h"
#include "record/run_files.h"
#include "record/run_record.h"
#include "record/summary_record.h"
#include "roofline/ceilings.h"
#include "util/diff.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::report {

namespace fs = std::filesystem;
using util::Json;
using record::CandidateStatus;

namespace {
// The page's rows carry a candidate's status as its name (CandidateStatus's, or "not_run" for an ablation build
// that never ran): ok only where that name is CandidateStatus::kOk's.
std::optional<CandidateStatus> status_of(const Json& row) { return record::parse_candidate_status(row.value("status", std::string())); }
bool is_ok(const Json& row) { return status_of(row) == CandidateStatus::kOk; }
bool has_number(const Json& row, const char* key) { return row.contains(key) && row[key].is_number(); }
}  // namespace

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

util::Json summed_mix(const record::SassRecord& sass) {
  std::map<std::string, int> sum;
  for (const auto& k : sass.kernel_mix)
    for (const auto& [cls, n] : k) sum[cls] += n;
  return sum;
}

util::Json convergence(const util::Json& candidates) {
  std::vector<const Json*> evals;
  for (const auto& c : candidates)
    if (c.contains("eval") && c["eval"].is_number()) evals.push_back(&c);
  std::stable_sort(evals.begin(), evals.end(), [](const Json* a, const Json* b) { return (*a)["eval"].get<int>() < (*b)["eval"].get<int>(); });
  Json out = Json::array();
  Json best = nullptr, best_id = nullptr;
  for (const Json* c : evals) {
    bool ok = is_ok(*c) && has_number(*c, "median_ms");
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
  const auto cs = record::parse_candidate_status(status);
  const bool ok = cs == CandidateStatus::kOk;
  if (c.value("role", std::string()) == "ablation" && !c.value("ablation_param", std::string()).empty())
    return fmt::format("ablation of parameter {} (the champion with the baseline's value){}", c.value("ablation_param", std::string()),
                       ok ? "" : ": " + status + (note.empty() ? "" : ": " + note));
  if (c.value("role", std::string()) == "ablation")
    return fmt::format("ablation of {} (the champion without it){}", c.value("ablation_of", std::string("a method")),
                       ok ? "" : ": " + status + (note.empty() ? "" : ": " + note));
  if (!ok) {
    std::string what = status;  // a status no candidate has (an ablation build that never ran): its name
    if (cs) switch (*cs) {
        case CandidateStatus::kCompileFailed: what = "compile failed"; break;
        case CandidateStatus::kIncorrect: what = "incorrect"; break;
        case CandidateStatus::kCrashed: what = "crashed"; break;
        case CandidateStatus::kTimedOut: what = "timed out"; break;
        case CandidateStatus::kOk: break;
      }
    return what + (note.empty() ? std::string() : ": " + note);
  }
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

std::string reproduce_command(const record::OptionsRecord& options, const record::CandidateConfig& champion,
                              const std::string& champion_file, const std::string& ref) {
  std::vector<std::string> w = {"kopt", "bench", champion_file, "--ref", ref};
  for (const auto& [k, v] : options.dims.value_or(Dims{})) w.push_back("--dim"), w.push_back(k + "=" + std::to_string(v));
  const bool triton = champion_file.size() > 3 && champion_file.substr(champion_file.size() - 3) == ".py";
  if (!triton) {
    if (const std::string arch = options.arch.value_or(""); !arch.empty()) w.push_back("--arch"), w.push_back(arch);
    std::vector<std::string> flags = options.nvcc_flags.value_or(std::vector<std::string>{});
    for (const auto& f : champion.flags.value_or(std::vector<std::string>{}))
      if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
    for (const auto& f : flags) w.push_back("--nvcc-flag=" + f);  // one word: a flag starting with '-' is not read as an option
  } else {
    // A Triton champion's values are run_kernel's arguments: -D each (its file names them in KOPT_CHAMPION_CONFIG).
    for (const auto* values : {&champion.constexprs, &champion.launch})
      for (const auto& [n, v] : values->value_or(std::map<std::string, int64_t>{}))
        w.push_back("-D"), w.push_back(n + "=" + std::to_string(v));
  }
  for (const auto& d : options.include_dirs.value_or(std::vector<std::string>{})) w.push_back("-I"), w.push_back(d);
  for (const auto& [k, v] : options.defines.value_or(std::map<std::string, std::string>{}))
    w.push_back("-D"), w.push_back(v.empty() ? k : k + "=" + v);
  if (const std::string n = options.numerics.value_or(""); !n.empty() && n != "reference")
    w.push_back("--numerics-mode"), w.push_back(n);
  for (const auto& [flag, v] : {std::pair{"--atol", options.atol}, std::pair{"--rtol", options.rtol}})
    if (v) w.push_back(flag), w.push_back(json_scalar_text(*v));
  if (options.seeds) w.push_back("--seeds"), w.push_back(std::to_string(*options.seeds));
  if (options.max_time_s) w.push_back("--measure-budget-s"), w.push_back(json_scalar_text(*options.max_time_s));
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
    const bool ok = is_ok(c) && has_number(c, "median_ms");
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
  // The file as a run record (record/run_record.h); nullopt when absent (silently), unreadable or of a wrong type
  // (with a note naming the file and the field).
  template <class F>
  auto record(const fs::path& rel, F&& from_json) const -> std::optional<decltype(from_json(std::declval<const Json&>()))> {
    using T = decltype(from_json(std::declval<const Json&>()));
    auto j = json(rel);
    if (!j) return std::nullopt;
    auto parsed = record::parse_file<T>(*j, (dir / rel).string(), from_json);
    if (!parsed) {
      notes.push_back(parsed.error().message);
      return std::nullopt;
    }
    return std::move(*parsed);
  }
  std::optional<std::string> text(const fs::path& rel) const {
    std::error_code ec;
    if (!fs::is_regular_file(dir / rel, ec)) return std::nullopt;
    auto t = util::read_file(dir / rel);
    return t ? std::optional<std::string>(*t) : std::nullopt;
  }
};

// iter_03 -> 3, iter_00_baseline -> 0; nullopt for anything else.
std::optional<int> iteration_of(const std::string& name) {
  static const std::regex re("^iter_([0-9]+)(_baseline)?$");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  return std::stoi(m[1].str());
}

// The timing fields of a runner result (run.json, gates/timing.json) onto a candidate row.
void add_timing(Json& row, const record::RunResult& result, const std::optional<int64_t>& start, bool samples) {
  if (const auto& t = result.timing) {
    auto num = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
    row["median_ms"] = num(t->median_ms);
    row["ci95_low_ms"] = num(t->ci95_low_ms);
    row["ci95_high_ms"] = num(t->ci95_high_ms);
    row["ci95_rel_halfwidth"] = num(t->ci95_rel_halfwidth);
    row["robust_cv"] = num(t->robust_cv);
    row["min_ms"] = num(t->min_ms);
    row["max_ms"] = num(t->max_ms);
    row["samples"] = t->samples;
    row["stability"] = t->stability;
  }
  if (samples && result.samples_ms) row["samples_ms"] = *result.samples_ms;
  row["measured_at"] = result.time;
  auto t = parse_utc_iso(result.time);
  row["time_s"] = (t && start) ? Json(static_cast<double>(*t - *start)) : Json();
  if (!result.message.empty()) row["note"] = result.message;
}

// A candidate's configuration onto its row: the fields its file has (the id too, where `with_id`).
void add_config(Json& row, const record::CandidateConfig& c, bool with_id) {
  auto put = [&](const char* k, const auto& v) {
    if (v) row[k] = *v;
  };
  if (with_id) put("id", c.id);
  put("params", c.params), put("methods", c.methods), put("guards", c.guards), put("flags", c.flags), put("defines", c.defines);
  put("constexprs", c.constexprs), put("launch", c.launch), put("origin", c.origin), put("content_hash", c.content_hash);
}

// ptxas's figures (compile/resources.h) over a build's entry kernels: the largest per kernel, spills summed.
void add_resources(Json& row, const record::BuildRecord& b) {
  row["compile_ms"] = b.compile_ms ? Json(*b.compile_ms) : Json();
  int regs = -1;
  int64_t spill_store = 0, spill_load = 0, smem = -1, stack = -1;
  bool any = false;
  for (const auto& k : b.resources) {
    if (!k.entry) continue;
    any = true;
    if (!k.arch.empty()) row["resources_arch"] = k.arch;
    if (k.registers) regs = std::max(regs, *k.registers);
    if (k.shared_bytes) smem = std::max(smem, *k.shared_bytes);
    if (k.stack_frame_bytes) stack = std::max(stack, *k.stack_frame_bytes);
    spill_store += k.spill_store_bytes.value_or(0);
    spill_load += k.spill_load_bytes.value_or(0);
  }
  row["registers"] = regs >= 0 ? Json(regs) : Json();
  row["shared_bytes"] = smem >= 0 ? Json(smem) : Json();
  row["stack_frame_bytes"] = stack >= 0 ? Json(stack) : Json();
  row["spill_store_bytes"] = any ? Json(spill_store) : Json();
  row["spill_load_bytes"] = any ? Json(spill_load) : Json();
  row["spill_bytes"] = spill_store + spill_load;
  row["resources_recorded"] = any;
}

Json sass_verdicts(const record::SassRecord& s) {
  Json verdicts = Json::object();
  for (const auto& [m, st] : s.method_status) verdicts[m] = st;
  return verdicts;
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

// A candidate's directory read as run records, and its row. `id`, `run_status` and `build_status`: what its files say
// (empty where they say nothing).
struct CandidateFiles {
  Json row = Json::object();
  std::optional<std::string> id;
  std::string run_status, build_status;
};

CandidateFiles candidate_row(const Reader& r, const fs::path& rel, const std::optional<int64_t>& start, bool samples) {
  CandidateFiles out;
  Json& row = out.row;
  if (auto c = r.record(rel / "candidate.json", [](const Json& j) { return record::candidate_config_from_json(j); })) {
    add_config(row, *c, true);
    out.id = c->id;
  }
  row["dir"] = rel.string();
  // Not measured in that run: the results database's record stood for it (issue 39 item 2).
  if (auto u = r.record(rel / "reused.json", record::reused_record_from_json); u && u->recorded) {
    row["reused"] = {{"marker", u->marker}, {"record_id", u->record_id}, {"run_dir", u->run_dir}, {"recorded_at", u->recorded_at}};
    if (u->median_ms) row["median_ms"] = *u->median_ms;
    row["run_status"] = out.run_status = u->run_status;
    row["build_status"] = out.build_status = compile::to_string(compile::CompileStatus::kOk);
  }
  if (auto b = r.record(rel / "build.json", record::build_record_from_json)) {
    add_resources(row, *b);
    row["build_status"] = out.build_status = b->status;
    if (!b->ok()) {
      auto log = r.text(rel / "compile.log");
      row["note"] = log ? compile_error_line(*log) : b->status;
    }
  }
  if (auto run = r.record(rel / "run.json", record::run_result_from_json)) {
    row["run_status"] = out.run_status = run->status;
    add_timing(row, *run, start, samples);
  }
  if (auto s = r.record(rel / "sass.json", record::sass_record_from_json)) row["sass"] = sass_verdicts(*s);
  return out;
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

Json number(const std::optional<record::Number>& n) { return n ? n->value : Json(); }

Json profile_json(const record::ProfileMetrics& p) {
  Json top = Json::object();
  for (const auto& [axis, list] : p.top_metrics) {
    Json rows = Json::array();
    for (const auto& m : list)
      rows.push_back({{"metric", m.name_used.value_or(m.metric)}, {"value", number(m.value)}, {"unit", m.unit}, {"ideal", number(m.ideal)},
                      {"distance", number(m.distance)}, {"description", m.description}});
    top[axis] = rows;
  }
  Json out = {{"top_metrics", top}, {"ncu_version", p.ncu_version}};
  if (p.classification) out["classification"] = *p.classification;
  return out;
}


// The champion's file (champion/<kernel>), the baseline's beside it (champion/baseline_<kernel>; reconstructed from
// the champion's file and state.json's baseline values for a run written before kopt wrote it), their unified diff
// and the reproduce command. Paths relative to the run directory.
Json champion_section(const Reader& r, const record::SummaryRecord& summary, const record::OptionsRecord& options,
                      const record::StateRecord& state, const std::string& champion_id, std::vector<std::string>& notes) {
  constexpr size_t kMaxSourceBytes = 512 * 1024;
  Json out = {{"id", champion_id}};
  if (champion_id.empty()) {
    out["note"] = "this run has no champion";
    return out;
  }
  const auto cj = r.record("champion/champion.json", [](const Json& j) { return record::read_record<record::ChampionFile>(j); })
                      .value_or(record::ChampionFile{});
  std::string name = fs::path(cj.file).filename().string();
  if (name.empty()) name = fs::path(summary.champion_path.value_or("")).filename().string();
  if (name.empty()) name = fs::path(options.kernel.value_or("")).filename().string();
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
  const record::CandidateConfig cand = state.champion ? state.champion->candidate : record::CandidateConfig{};
  const record::ChampionEntry base = state.baseline.value_or(record::ChampionEntry{});
  const record::CandidateConfig& base_cand = base.candidate;
  out["methods"] = cand.methods.value_or(std::vector<std::string>{});
  out["flags"] = cand.flags.value_or(std::vector<std::string>{});

  // The baseline's text: its file, else rebuilt from the champion's (same source, the baseline's values).
  std::string base_file = fs::path(cj.baseline_file.value_or("")).filename().string();
  std::optional<std::string> base_text;
  if (!base_file.empty()) base_file = (fs::path("champion") / base_file).generic_string(), base_text = r.text(base_file);
  if (!base_text && champion_id != "baseline" && !(base_cand == record::CandidateConfig{}) && cand.source.value_or("") == base_cand.source.value_or("") &&
      fs::path(name).extension() != ".py") {
    auto blank = text->find("\n\n");
    if (blank != std::string::npos) {
      std::string head = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: none\n", base.median_ms);
      auto methods = base_cand.methods.value_or(std::vector<std::string>{});
      if (!methods.empty()) head = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: {}\n", base.median_ms, util::join(methods, ", "));
      if (base_cand.defines)
        for (const auto& [k, v] : *base_cand.defines) head += "#define " + k + " " + v + "\n";
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
  std::string ref = options.ref.value_or("");
  const std::string recorded = summary.run_dir.value_or("");
  if (!ref.empty() && !recorded.empty() && fs::path(ref).is_absolute() && fs::path(recorded).is_absolute()) {
    auto rel = fs::path(ref).lexically_relative(recorded);
    if (!rel.empty()) ref = rel.generic_string();
  }
  out["reproduce"] = reproduce_command(options, cand, file, ref.empty() ? std::string("ref.py") : ref);
  out["reproduce_cwd"] = "the run directory";
  return out;
}
}  // namespace

std::vector<CandidateRow> candidate_rows(const Json& run) {
  using namespace record::fields;
  std::vector<CandidateRow> out;
  const Json* cands = opt_array(run, "candidates", "");
  if (!cands) return out;
  for (size_t i = 0; i < cands->size(); ++i) {
    const Json& c = (*cands)[i];
    const std::string w = at("candidates", i);
    need_object(c, w);
    CandidateRow r;
    r.id = opt_string(c, "id", w).value_or("");
    r.role = opt_string(c, "role", w).value_or("");
    r.status_text = opt_string(c, "status", w).value_or("");
    r.status = record::parse_candidate_status(r.status_text);
    r.reason = opt_string(c, "reason", w).value_or("");
    r.origin = opt_string(c, "origin", w).value_or("");
    r.content_hash = opt_string(c, "content_hash", w).value_or("");
    r.measured_at = opt_string(c, "measured_at", w).value_or("");
    r.iteration = opt_int(c, "iteration", w);
    r.samples = opt_int(c, "samples", w);
    r.registers = opt_int(c, "registers", w);
    r.median_ms = opt_number(c, "median_ms", w);
    r.ci95_low_ms = opt_number(c, "ci95_low_ms", w);
    r.ci95_high_ms = opt_number(c, "ci95_high_ms", w);
    r.compile_ms = opt_number(c, "compile_ms", w);
    if (const Json* s = opt_array(c, "samples_ms", w)) {
      r.samples_ms.emplace();
      for (size_t k = 0; k < s->size(); ++k) {
        if (!(*s)[k].is_number()) wrong(at(at(w, "samples_ms"), k), "a number", (*s)[k]);
        r.samples_ms->push_back((*s)[k].get<double>());
      }
    }
    r.params = opt_map<int64_t>(c, "params", w).value_or(std::map<std::string, int64_t>{});
    r.guards = opt_map<bool>(c, "guards", w).value_or(std::map<std::string, bool>{});
    r.flags = opt_strings(c, "flags", w).value_or(std::vector<std::string>{});
    r.methods = opt_strings(c, "methods", w).value_or(std::vector<std::string>{});
    out.push_back(std::move(r));
  }
  return out;
}

RunFacts run_facts(const Json& run) {
  using namespace record::fields;
  RunFacts f;
  f.champion_id = opt_string(run, "champion_id", "").value_or("");
  if (const Json* r = opt_object(run, "run", "")) {
    f.dir = opt_string(*r, "dir", "run").value_or("");
    f.kernel = opt_string(*r, "kernel", "run").value_or("");
    f.dims_text = opt_string(*r, "dims_text", "run").value_or("");
    f.gpu = opt_string(*r, "gpu", "run").value_or("");
    f.kopt_version = opt_string(*r, "kopt_version", "run").value_or("");
    if (const Json* d = opt_object(*r, "dims", "run")) f.dims = *d;
  }
  return f;
}

Result<util::Json> load_run(const fs::path& run_dir, const LoadOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return input_error(run_dir.string() + " is not a directory (give a kopt run directory, kopt_runs/run_YYYYmmdd_HHMMSS)");
  std::vector<std::string> notes;
  Reader r{run_dir, notes};
  if (!fs::exists(run_dir / "state.json", ec) && !fs::exists(run_dir / "summary.json", ec))
    return input_error(run_dir.string() + " is not a kopt run directory: it has neither state.json nor summary.json");
  record::StateRecord state;  // a run directory without state.json: nothing of it
  if (fs::exists(run_dir / "state.json", ec)) {
    KOPT_TRY_ASSIGN(state, record::read_state((run_dir / "state.json").string()));
  }
  const record::SummaryRecord summary = r.record("summary.json", record::summary_record_from_json).value_or(record::SummaryRecord{});
  // A section of summary.json the loop copies from state.json's gate records (cases, holdout), as written.
  auto section = [&](const char* key) -> std::optional<Json> {
    auto it = summary.sections.find(key);
    return it == summary.sections.end() ? std::nullopt : std::optional<Json>(it->second);
  };
  const record::OptionsRecord options =
      r.record("options.json", record::options_record_from_json).value_or(record::OptionsRecord{});
  const auto env = r.record("env.json", [](const Json& j) { return record::read_record<record::EnvRecord>(j); }).value_or(record::EnvRecord{});
  auto start = parse_utc_iso(options.meta_time.value_or(""));

  // ---- the run ----
  std::string gpu;
  gpu = summary.meta_gpu.value_or("");
  if (gpu.empty() && !env.gpus.empty()) gpu = env.gpus.front().name;
  if (gpu.empty()) gpu = state.meta_gpu;
  Json run = {{"dir", fs::absolute(run_dir).lexically_normal().string()},
              {"kernel", summary.kernel ? *summary.kernel : options.kernel.value_or("")},
              {"dims", options.dims ? Json(*options.dims) : Json::object()},
              {"dims_text", summary.dims.value_or("")},
              {"gpu", gpu},
              {"numerics_mode", summary.numerics_mode ? *summary.numerics_mode : options.numerics.value_or("")},
              {"generator", summary.generator ? *summary.generator : options.generator.value_or("")},
              {"started_at", options.meta_time.value_or("")},
              {"finished_at", summary.meta_time.value_or("")},
              {"kopt_version", summary.meta_kopt_version.value_or("")},
              {"stop_reason", std::string(record::stop_reason_text(state.stop_reason))},
              {"stop_detail", state.stop_detail},
              {"iterations_done", state.iterations_done},
              {"options", options.as_written}};

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
  std::map<std::string, record::SelectionEntry> selection_of;  // finalist id -> its selection entry
  Json ablation = Json::array();
  Json param_ablation = Json::array();
  Json timeline = state.timeline ? *state.timeline : (summary.timeline ? record::to_json(*summary.timeline) : Json::array());
  std::vector<record::TimelineEntry> iterations;
  if (!timeline.is_null()) {  // the iterations' champions, typed (the page draws the timeline as written)
    auto t = record::parse_file<std::vector<record::TimelineEntry>>(timeline, (run_dir / "state.json").string() + " (timeline)",
                                                                    [](const Json& j) { return record::timeline_from_json(j); });
    if (t) iterations = *t;
    else notes.push_back(t.error().message);
  }
  auto champion_at = [&](int it) {
    for (const auto& t : iterations)
      if (t.iteration == it) return t.champion_id.value_or("");
    return std::string();
  };
  for (const auto& [it, rel] : iter_dirs) {
    if (auto s = r.record(rel / "selection.json", record::selection_from_json))
      for (const auto& f : *s) selection_of[f.finalist] = f;
    if (auto a = r.record(rel / "ablation.json", record::ablation_record_from_json)) {
      for (const auto& m : a->methods) {
        Json e = record::to_json(m);
        e["iteration"] = it;
        e["champion_id"] = champion_at(it);
        ablation.push_back(e);
      }
      for (record::ParamAblationRecord pa : a->params) {
        pa.iteration = it;
        if (pa.champion_id.value_or("").empty()) pa.champion_id = champion_at(it);
        param_ablation.push_back(record::write_record(pa));
      }
    }
  }

  // ---- candidates, in evaluation order (state.json's history), then the ablation builds ----
  std::string champion_id = summary.headline ? summary.headline->champion_id.value_or("") : std::string();
  if (state.champion) champion_id = state.champion->candidate.id.value_or(champion_id);
  Json candidates = Json::array();
  int eval = 0;
  for (const auto& h : state.history) {
    const std::string id = h.candidate.id.value_or("");
    Json row;
    auto d = cand_dirs.find(id);
    if (id == "baseline" || d == cand_dirs.end()) {
      row = Json::object();
      add_config(row, h.candidate, false);
      if (id == "baseline") {
        auto t = r.record("gates/timing_retry.json", record::run_result_from_json);
        if (!t) t = r.record("gates/timing.json", record::run_result_from_json);
        if (t) add_timing(row, *t, start, o.samples);
        // The baseline's build (written since issue 37): its ptxas resources, as a candidate's.
        if (auto b = r.record("iter_00_baseline/build.json", record::build_record_from_json)) add_resources(row, *b);
        if (auto b = r.record("iter_00_baseline/sass.json", record::sass_record_from_json)) row["sass"] = sass_verdicts(*b);
      } else {
        notes.push_back("candidate " + id + " is in state.json but its directory was not found");
      }
    } else {
      row = candidate_row(r, d->second, start, o.samples).row;
    }
    row["id"] = id;
    row["eval"] = eval++;
    row["iteration"] = h.iteration;
    row["status"] = search::candidate_status_name(h.status);
    // state.json's median is the one the loop decided on (strict numerics may have turned a timed run incorrect).
    if (h.median_ms) row["median_ms"] = *h.median_ms;
    row["role"] = id == "baseline" ? "baseline" : (id == champion_id ? "champion" : (selection_of.count(id) ? "finalist" : "candidate"));
    if (auto s = selection_of.find(id); s != selection_of.end()) {
      Json sel = record::to_json(s->second);
      sel.erase("finalist");
      row["selection"] = sel;
    }
    candidates.push_back(row);
  }
  for (const auto& [it, rel] : ablation_dirs) {
    CandidateFiles files = candidate_row(r, rel, start, o.samples);
    Json& row = files.row;
    const std::string id = files.id.value_or(rel.filename().string());
    row["id"] = id;
    row["iteration"] = it;
    row["role"] = "ablation";
    auto pos = id.find("_no_");
    row["ablation_of"] = pos == std::string::npos ? std::string() : id.substr(pos + 4);
    if (auto bp = id.find("_base_"); pos == std::string::npos && bp != std::string::npos) row["ablation_param"] = id.substr(bp + 6);
    // A build that failed, else the runner's status (runner::RunStatus's name), else never run.
    const std::string& rs = files.run_status;
    const std::string& bs = files.build_status;
    row["status"] = bs != compile::to_string(compile::CompileStatus::kOk) && !bs.empty() ? std::string(search::candidate_status_name(CandidateStatus::kCompileFailed))
                                               : (rs.empty() ? std::string("not_run") : rs);
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
    auto rf = r.record(rel / "roofline.json", [](const Json& j) { return record::read_record<record::PlacementRecord>(j); });
    if (!rf) continue;
    placements.push_back({{"iteration", it}, {"kernel", rf->kernel}, {"mode", rf->mode}, {"verdict", rf->verdict},
                          {"efficiency", number(rf->efficiency)}, {"achieved_tflops", number(rf->achieved_tflops)},
                          {"achieved_gbps", number(rf->achieved_gbps)}, {"utilisation", rf->utilisation.value_or(Json::object())},
                          {"gaps", rf->gaps.value_or(Json::object())}, {"bound", rf->bound.value_or(Json())}});
    if (workload.is_null() && rf->floor) {
      const record::FloorRecord& f = *rf->floor;
      Json roofs = Json::array();
      for (const auto& t : f.compute_terms) roofs.push_back(t.roof);
      workload = {{"flops", number(f.flops)}, {"bytes_min", number(f.bytes_min)}, {"arithmetic_intensity", number(f.arithmetic_intensity)},
                  {"floor_ms", number(f.floor_ms)}, {"binding", f.binding}, {"dram_roof", f.dram_roof}, {"dram_gbps", number(f.dram_gbps)},
                  {"compute_roofs", roofs}};
    }
  }
  if (workload.is_null()) notes.push_back("no workload model (ref.py has no workload_model): kernels cannot be placed on the roofline");

  // ---- instruction mix and profile: baseline and champion ----
  std::string champ_dir;
  for (const auto& c : candidates)
    if (c.value("id", std::string()) == champion_id && c.contains("dir")) champ_dir = c["dir"].get<std::string>();
  Json mix = {{"champion_id", champion_id}};
  auto base_sass = r.record("iter_00_baseline/sass.json", record::sass_record_from_json);
  mix["baseline"] = base_sass ? summed_mix(*base_sass) : Json();
  if (!base_sass) notes.push_back("the baseline's instruction mix was not recorded (iter_00_baseline/sass.json)");
  auto champ_sass = champ_dir.empty() ? std::nullopt : r.record(fs::path(champ_dir) / "sass.json", record::sass_record_from_json);
  mix["champion"] = champ_sass ? summed_mix(*champ_sass) : Json();

  Json profile = {{"champion_id", champion_id}};
  auto metrics = [&](const fs::path& rel) { return r.record(rel, [](const Json& j) { return record::read_record<record::ProfileMetrics>(j); }); };
  if (auto p = metrics("iter_00_baseline/profile/baseline_metrics.json")) profile["baseline"] = profile_json(*p);
  else if (fs::exists(r.dir / "iter_00_baseline"))
    notes.push_back(
        "the baseline has no Nsight Compute profile: by default only champions are profiled, the final one "
        "when the search ends (kopt optimize --baseline-profile after profiles the baseline after the search)");
  if (!champ_dir.empty()) {
    fs::path idir = fs::path(champ_dir).begin()->string();  // iter_NN
    if (auto p = metrics(idir / "profile" / "champion_metrics.json")) profile["champion"] = profile_json(*p);
  }

  // ---- achieved rates: the workload model's FLOPs and minimum bytes over each correct median ----
  Json rates = {{"available", false}};
  if (workload.is_object() && workload["flops"].is_number() && workload["bytes_min"].is_number()) {
    rates = {{"available", true}, {"flops", workload["flops"]}, {"bytes_min", workload["bytes_min"]}};
    const double flops = workload["flops"].get<double>(), bytes = workload["bytes_min"].get<double>();
    for (auto& c : candidates)
      if (is_ok(c) && has_number(c, "median_ms") && c["median_ms"].get<double>() > 0) {
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
    const std::string kernel = options.kernel.value_or("");
    const bool triton = kernel.ends_with(".py");
    // The derived parameters' roles: which one is a launch's block size, whatever its name.
    std::map<std::string, std::string> roles;
    if (auto d = r.record("derived/derivation.json", [](const Json& j) { return record::read_record<record::DerivationRecord>(j); }))
      for (const auto& prm : d->params)
        if (!prm.name.empty() && !prm.role.empty()) roles[prm.name] = prm.role;
    for (auto& c : candidates) add_occupancy(c, options.arch.value_or(""), triton, roles);
  }
  if (!any_resources)
    notes.push_back("no candidate's build.json records ptxas resources: registers, shared memory and spills are not shown");

  // ---- the champion's source, its diff against the baseline, and the command that re-measures it ----
  Json champion = champion_section(r, summary, options, state, champion_id, notes);

  // ---- methods tried that the champion does not have ----
  Json lost = lost_methods(candidates, ablation, champion_id);

  // ---- per-shape results (the workload matrix's case table) and the held-out shapes, when the run has them ----
  const Json& gate_records = state.gate_records;
  Json case_src = section("cases").value_or(gate_records.value("case_table", Json()));
  Json cases = case_src.is_array() ? case_src : (case_src.is_object() ? case_src.value("cases", Json()) : Json());
  Json cases_geomean = case_src.is_object() ? case_src.value("geomean", Json()) : Json();
  Json holdout = section("holdout").value_or(gate_records.value("holdout", Json()));
  if (!holdout.is_object()) holdout = nullptr;
  Json ceilings = ceilings_json(r, gpu, notes);  // before `notes` is copied below
  // ---- per-GPU figures, when the run measured on several (issue 21, docs/MULTI_GPU.md) ----
  Json gpus = Json::array();
  if (state.measuring_slots.size() > 1) {
    const double wall = state.measuring_wall_s;
    for (const auto& p : state.measuring_slots)
      gpus.push_back({{"slot", p.name}, {"candidates", p.runs}, {"worker_lost", p.lost}, {"busy_s", p.busy_s},
                      {"utilisation", wall > 0 ? p.busy_s / wall : 0.0}});
  }

  Json out = {{"schema", kReportDataSchema},
              {"run", run},
              {"headline", summary.headline ? record::to_json(*summary.headline) : Json::object()},
              {"roofline_summary", summary.roofline ? record::to_json(*summary.roofline) : Json::object()},
              {"methods_summary", summary.methods ? Json(*summary.methods) : Json::object()},
              {"phase_seconds", state.phase_seconds ? Json(*state.phase_seconds) : (summary.phase_seconds ? Json(*summary.phase_seconds) : Json::object())},
              {"wall", state.wall ? record::to_json(*state.wall) : (summary.wall ? record::to_json(*summary.wall) : Json::object())},
              {"champion_id", champion_id},
              {"champion_path", summary.champion_path.value_or("")},
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
