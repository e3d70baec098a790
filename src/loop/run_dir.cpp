// The files a run leaves: state.json after every step (what --resume reads), stop.json, the champion's source,
// summary.json and summary.md. Every write is atomic and its failure is reported, never dropped.
#include "loop/optimizer.h"
#include "pipeline/triton.h"
#include "report/html.h"
#include "search/llm_usage.h"
#include "report/summary.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/output.h"

namespace kopt::loop {

namespace fs = std::filesystem;

Optimizer::Phase::Phase(Optimizer& o, std::string n) : o_(o), active_(std::this_thread::get_id() == o.main_thread_) {
  if (!active_) return;
  auto now = Clock::now();
  if (!o_.phase_stack_.empty()) o_.flush_phase(now);
  o_.phase_stack_.push_back({std::move(n), now});
}

Optimizer::Phase::~Phase() {
  if (!active_) return;
  o_.flush_phase(Clock::now());
  o_.phase_stack_.pop_back();
  if (!o_.phase_stack_.empty()) o_.phase_stack_.back().second = Clock::now();
}

void Optimizer::flush_phase(Clock::time_point now) {
  auto& [name, since] = phase_stack_.back();
  st_.phase_seconds[name] += std::chrono::duration<double>(now - since).count();
  since = now;
}

util::Json candidate_costs(const std::vector<search::Measurement>& history) {
  std::vector<double> compile, sass, measure, cases, gpu;
  for (const auto& m : history) {
    if (m.candidate.id == "baseline" || m.measure_ms <= 0) continue;
    compile.push_back(m.compile_ms);
    sass.push_back(m.sass_ms);
    measure.push_back(m.measure_ms);
    cases.push_back(m.cases_ms);
    gpu.push_back(m.measure_ms + m.cases_ms);
  }
  auto median = [](std::vector<double> v) { return v.empty() ? 0.0 : runner::compute_stats(v).median_ms; };
  auto p90 = [](std::vector<double> v) { return v.empty() ? 0.0 : runner::compute_stats(v).p90_ms; };
  auto split = [&](auto f) {
    return util::Json{{"compile", f(compile)}, {"sass", f(sass)}, {"measure", f(measure)}, {"cases", f(cases)},
                      {"measure_all_cases", f(gpu)}};
  };
  return {{"candidates", measure.size()},
          {"median_ms", split(median)},
          {"p90_ms", split(p90)},
          {"note", "per measured candidate, wall: its nvcc (batches compile in parallel), its SASS analysis (beside the "
                   "measuring), its race against the champion at the primary case (measure; compile excluded), its races "
                   "or checks at the workload matrix's other cases (cases), and the two together (measure_all_cases)"}};
}

util::Json reuse_summary(const std::vector<search::Measurement>& history, const std::vector<search::Measurement>& ablations,
                          const std::vector<std::string>& raced_again) {
  util::Json rows = util::Json::array();
  int evaluations = 0;
  for (const auto* list : {&history, &ablations})
    for (const auto& m : *list) {
      if (m.candidate.id == "baseline") continue;
      ++evaluations;
      if (m.reused.is_null()) continue;
      util::Json r = m.reused;
      r["id"] = m.candidate.id;
      r["iteration"] = m.iteration;
      r["status"] = search::candidate_status_name(m.status);
      r["ablation"] = list == &ablations;
      rows.push_back(r);
    }
  return {{"evaluations", evaluations}, {"reused", rows.size()}, {"raced_again", raced_again}, {"records", rows}};
}

Status Optimizer::write_json(const fs::path& path, const std::string& kind, const util::Json& body) {
  return util::write_json_atomic(path, kind, body);
}

void Optimizer::start_search_clock() {
  search_base_s_ = st_.stop.search_s;
  search_clock_ = Clock::now();
}

std::string Optimizer::slot_name(int slot) const {
  if (slot >= 0 && static_cast<size_t>(slot) < slots_.size()) return slots_[static_cast<size_t>(slot)].name;
  return "GPU";
}

void Optimizer::record_dispatch(const dispatch::Dispatcher& d) {
  std::lock_guard<std::mutex> lock(state_mu_);
  auto& m = st_.measuring;
  m["wall_s"] = m.value("wall_s", 0.0) + d.wall_s();
  if (!m.contains("per_slot") || !m["per_slot"].is_array()) m["per_slot"] = util::Json::array();
  auto& per = m["per_slot"];
  for (size_t s = 0; s < d.slots().size(); ++s) {
    while (per.size() <= s) per.push_back({{"slot", per.size()}, {"runs", 0}, {"lost", 0}, {"busy_s", 0.0}});
    per[s]["name"] = slot_name(static_cast<int>(s));
    per[s]["runs"] = per[s].value("runs", 0) + d.slots()[s].jobs;
    per[s]["lost"] = per[s].value("lost", 0) + d.slots()[s].lost;
    per[s]["busy_s"] = per[s].value("busy_s", 0.0) + d.slots()[s].busy_s;
  }
  for (const auto& [job, r] : d.jobs())
    if (r.slots.size() > 1) {
      if (!m.contains("retried") || !m["retried"].is_array()) m["retried"] = util::Json::array();
      m["retried"].push_back({{"slots", r.slots}, {"lost", r.lost}});
    }
}

double Optimizer::tick() {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (search_clock_) st_.stop.search_s = search_base_s_ + std::chrono::duration<double>(Clock::now() - *search_clock_).count();
  st_.wall.whole_s = elapsed_s();
  return st_.stop.search_s;
}

bool Optimizer::budget_spent() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return st_.stop.time_budget_s > 0 && st_.stop.search_s >= st_.stop.time_budget_s;
}

// The first candidate's measurement, when it ends (not when its iteration's history is written).
void Optimizer::note_measured() {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (!st_.wall.first_candidate_s) st_.wall.first_candidate_s = elapsed_s();
}

Status Optimizer::save_state() {
  tick();
  return write_json(dir_ / "state.json", "state", to_json(st_));
}

RunOutcome Optimizer::outcome(RunEnd end, ExitCode code, std::string message) const {
  return {end, code, std::move(message), dir_};
}

RunOutcome Optimizer::fail(const Error& e) {
  util::note_failure(e.message);
  return outcome(RunEnd::kFailed, e.code == ExitCode::kOk ? ExitCode::kOther : e.code,
                 fmt::format("kopt optimize: {}\n  run directory: {} (state.json holds the last completed step; after fixing "
                             "the cause, continue with: kopt optimize --resume {})\n",
                             e.message, dir_.string(), dir_.string()));
}

Status Optimizer::write_summary() {
  auto s = summary_json();
  KOPT_TRY(write_json(dir_ / "summary.json", "summary", s));
  KOPT_TRY(util::write_file_atomic(dir_ / "summary.md", report::render_markdown(s)));
  // The page (report/html.h) is a view of the files above: a failure to render it is said, not fatal.
  if (auto page = report::write_html(dir_); !page) say("  summary.html not written: {}", page.error().message);
  return ok_status();
}

RunOutcome Optimizer::stop(const std::string& stage, const Error& e, util::Json tried) {
  if (util::interrupted()) return interrupted_exit();  // a killed child is not a failed gate: stay resumable
  util::Json j = {{"stage", stage}, {"reason", e.message}, {"exit_code", to_int(e.code)}, {"tried", std::move(tried)}};
  st_.stop_reason = stage == "interrupted" ? StopReason::kInterrupted : StopReason::kGateFailed;
  st_.stop_detail = stage + ": " + e.message;
  util::note_failure("stopped at the " + stage + " gate: " + e.message + " (run directory " + dir_.string() + ")");
  Status written = write_json(dir_ / "stop.json", "stop", j);
  if (written) written = save_state();
  if (written) written = write_summary();
  std::string message = fmt::format("kopt optimize: stopped at the {} gate: {}\n  run directory: {} (stop.json, summary.md)\n",
                                    stage, e.message, dir_.string());
  if (!written) message += "kopt optimize: and the run directory could not be written: " + written.error().message + "\n";
  return outcome(RunEnd::kGateStopped, e.code, std::move(message));
}

RunOutcome Optimizer::generator_stopped(const Error& e) {
  st_.stop_reason = StopReason::kNone;  // not finished: the generator can be retried with --resume
  st_.stop_detail = "generator: " + e.message;
  util::note_failure("the generator stopped: " + e.message + " (resumable: kopt optimize --resume " + dir_.string() + ")");
  Status written = save_state();
  if (written) written = write_json(dir_ / "stop.json", "stop", {{"stage", "generator"}, {"reason", e.message}, {"resumable", true}});
  if (written) written = write_summary();
  std::string again = "kopt optimize --resume " + dir_.string();
  if (o_.generator == "llm") again += " [--llm-url URL] [--llm-model MODEL] [--llm-key-env VAR]";
  std::string message = fmt::format("kopt optimize: the generator stopped: {}\n  run directory: {}; after fixing the cause, "
                                    "continue with:\n  {}\n",
                                    e.message, dir_.string(), again);
  if (!written) {
    RunOutcome failed = fail(written.error());
    failed.message = message + failed.message;
    return failed;
  }
  return outcome(RunEnd::kGeneratorStopped, e.code == ExitCode::kOk ? ExitCode::kOther : e.code, std::move(message));
}

RunOutcome Optimizer::interrupted_exit() {
  st_.stop_reason = StopReason::kNone;  // not finished: resumable
  if (auto st = save_state(); !st) return fail(st.error());
  if (auto st = write_summary(); !st) say("  the summary of the interrupted run was not written: {}", st.error().message);
  return outcome(RunEnd::kInterrupted, ExitCode::kInterrupted,
                 fmt::format("\nkopt optimize: interrupted. The run directory is consistent; continue with:\n  kopt optimize "
                             "--resume {}\n",
                             dir_.string()));
}

Status Optimizer::write_champion() {
  if (!st_.champion) return ok_status();
  const auto& c = st_.champion->candidate;
  fs::path cdir = dir_ / "champion";
  fs::create_directories(cdir);
  KOPT_TRY_ASSIGN(std::string src, util::read_file(c.source));
  std::string head = fmt::format("// kopt champion {} ({:.4f} ms; baseline {:.4f} ms)\n// methods: {}\n", c.id,
                                 st_.champion->median_ms, st_.baseline ? st_.baseline->median_ms : 0.0,
                                 c.methods.empty() ? "none" : util::join(c.methods, ", "));
  if (!c.flags.empty()) head += "// build with these extra nvcc flags: " + util::join(c.flags, " ") + "\n";
  const std::string warning = st_.gate_records.contains("holdout") ? st_.gate_records["holdout"].value("warning", std::string()) : "";
  if (!warning.empty()) head += "// WARNING: " + warning + "\n";
  std::string name = o_.job.kernel.filename().string();
  if (triton()) {
    // A Python kernel takes its configuration as run_kernel's keyword arguments: written beside it.
    util::Json cfg = pipeline::triton_config(c);
    std::string py_head;
    for (const auto& line : util::split_lines(head)) py_head += "#" + line.substr(2) + "\n";
    py_head += "# run_kernel(**inputs, **KOPT_CHAMPION_CONFIG)\nKOPT_CHAMPION_CONFIG = " + cfg.dump() + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, py_head + "\n" + src));
    KOPT_TRY(write_json(cdir / "config.json", "champion_config", {{"config", cfg}}));
  } else {
    for (const auto& [k, v] : c.defines) head += "#define " + k + " " + v + "\n";
    KOPT_TRY(util::write_file_atomic(cdir / name, head + "\n" + src));
  }
  // The baseline beside it, written the same way (its own values in the same place), so the two files' diff is the
  // change (summary.html shows it): the source as the run read it, whatever happens to the user's file later.
  std::string baseline_name;
  if (st_.baseline) {
    const auto& b = st_.baseline->candidate;
    auto bsrc = util::read_file(b.source);
    if (bsrc) {
      baseline_name = "baseline_" + name;
      std::string bhead = fmt::format("// kopt baseline ({:.4f} ms)\n// methods: {}\n", st_.baseline->median_ms,
                                      b.methods.empty() ? "none" : util::join(b.methods, ", "));
      if (!b.flags.empty()) bhead += "// build with these extra nvcc flags: " + util::join(b.flags, " ") + "\n";
      if (triton()) {
        std::string py_head;
        for (const auto& line : util::split_lines(bhead)) py_head += "#" + line.substr(2) + "\n";
        py_head += "# run_kernel(**inputs, **KOPT_CHAMPION_CONFIG)\nKOPT_CHAMPION_CONFIG = " + pipeline::triton_config(b).dump() + "\n";
        KOPT_TRY(util::write_file_atomic(cdir / baseline_name, py_head + "\n" + *bsrc));
      } else {
        for (const auto& [k, v] : b.defines) bhead += "#define " + k + " " + v + "\n";
        KOPT_TRY(util::write_file_atomic(cdir / baseline_name, bhead + "\n" + *bsrc));
      }
    }
  }
  return write_json(cdir / "champion.json", "champion",
                    {{"candidate", search::to_json(c)}, {"median_ms", st_.champion->median_ms}, {"file", (cdir / name).string()},
                     {"baseline_file", baseline_name.empty() ? util::Json(nullptr) : util::Json((cdir / baseline_name).string())}});
}

util::Json Optimizer::summary_json() {
  util::Json s;
  s["schema"] = report::kSummarySchema;
  s["meta"] = util::make_meta("summary");
  s["kernel"] = o_.job.kernel.string();
  s["dims"] = format_dims(o_.job.dims);
  s["numerics_mode"] = search::numerics_mode_name(o_.job.numerics);
  s["generator"] = o_.generator;
  s["sizes_guessed"] = prep_.sizes_guessed;
  util::Json h = util::Json::object();
  if (st_.baseline) h["baseline_ms"] = st_.baseline->median_ms;
  if (st_.champion) {
    h["champion_ms"] = st_.champion->median_ms;
    h["champion_id"] = st_.champion->candidate.id;
    if (st_.baseline) h["speedup_vs_baseline"] = st_.baseline->median_ms / st_.champion->median_ms;
    if (st_.reference_ms > 0) {
      h["reference_ms"] = st_.reference_ms;
      h["speedup_vs_reference"] = st_.reference_ms / st_.champion->median_ms;
    }
  }
  const auto& g = st_.gate_records;
  if (g.contains("holdout") && !g["holdout"].value("warning", std::string()).empty())
    h["warning"] = g["holdout"]["warning"];
  s["headline"] = h;
  // Issue 18's gates: the cases (requested vs realised dims), the per-case table, the held-out shapes, the
  // sanitizer's race safety, the determinism checks and what the gates rejected or flagged.
  util::Json gates = {{"race_safe", sanitize::race_safe_name(st_.race_safe)},
                      {"sanitize", sanitize::policy_name(o_.gates.sanitize)},
                      {"workload_matrix", workload::matrix_mode_name(o_.gates.workload_matrix)},
                      {"no_regressions", o_.gates.no_regressions},
                      {"champion_gates", champion_gates_name(o_.gates.champion_gates)}};
  // Whether the champion passed its determinism check and sanitizer (the baseline's own gates are its sanitizer run).
  if (st_.champion && st_.champion->candidate.id != "baseline")
    gates["champion_verified"] = st_.verified_as_champion(st_.champion->candidate.id);
  for (const char* k : {"cases", "baseline_sanitizer", "champion_sanitizer", "rejected", "flagged", "determinism", "final_verification"})
    if (g.contains(k)) gates[k] = g[k];
  s["gates"] = gates;
  if (g.contains("case_table")) s["cases"] = g["case_table"];
  // The headline's times are the primary case's: said when it is not the user's dims (fitted or another case).
  if (!cases_.empty() && cases_[primary_].c.realised != o_.job.dims)
    s["timed_at"] = {{"case", cases_[primary_].c.name}, {"requested", cases_[primary_].c.requested},
                     {"realised", cases_[primary_].c.realised}, {"note", cases_[primary_].c.note}};
  if (g.contains("holdout")) s["holdout"] = g["holdout"];
  if (st_.roofline.is_object()) {
    const auto& r = st_.roofline;
    util::Json rs = {{"mode", r.value("mode", std::string())}, {"near_peak", r.value("verdict", std::string()) == "near_peak"},
                     {"verdict", r.value("verdict", std::string())}};
    if (r.contains("floor") && r["floor"].is_object()) {
      rs["floor_ms"] = r["floor"].value("floor_ms", 0.0);
      rs["bound"] = r["floor"].value("binding", std::string());
    }
    if (r.contains("efficiency") && r["efficiency"].is_number()) rs["efficiency"] = r["efficiency"].get<double>();
    s["roofline"] = rs;
  }
  s["timeline"] = st_.timeline;
  util::Json methods = util::Json::object();
  for (auto v : {search::Verdict::kEffective, search::Verdict::kMeasuredEffective, search::Verdict::kIneffective,
                 search::Verdict::kImplementationFailed, search::Verdict::kUnverified, search::Verdict::kNotAblatable})
    methods[std::string(search::verdict_name(v))] = util::Json::array();
  for (const auto& v : st_.verdicts) {
    std::string figure = v.saved_ms ? fmt::format("; off costs {:+.4f} ms, 95% CI [{:+.4f}, {:+.4f}]", *v.saved_ms,
                                                  *v.saved_ci95_low_ms, *v.saved_ci95_high_ms)
                                    : "";
    methods[std::string(search::verdict_name(v.verdict))].push_back(fmt::format("{} (iteration {}{})", v.method, v.iteration, figure));
  }
  s["methods"] = methods;
  util::Json params = util::Json::array();
  for (const auto& p : st_.param_ablations) params.push_back(to_json(p));
  s["param_ablations"] = params;
  s["frontier"] = st_.frontier;
  s["stop"] = {{"reason", std::string(stop_reason_text(st_.stop_reason))}, {"detail", st_.stop_detail}};
  s["phase_seconds"] = st_.phase_seconds;
  s["wall"] = to_json(st_.wall);
  s["candidate_costs"] = candidate_costs(st_.history);
  s["reuse"] = reuse_summary(st_.history, st_.ablations, st_.raced_again);
  // Issue 39 item 2(b): the warm start's points, where each came from, the candidate it became and what it measured here.
  if (!st_.warm_start.empty()) {
    util::Json points = util::Json::array();
    for (const auto& p : st_.warm_start) {
      util::Json e = to_json(p);
      e["median_ms_here"] = nullptr;
      e["status_here"] = nullptr;
      for (const auto& m : st_.history)
        if (!p.candidate_id.empty() && m.candidate.id == p.candidate_id) {
          e["status_here"] = search::candidate_status_name(m.status);
          if (m.median_ms) e["median_ms_here"] = *m.median_ms;
        }
      points.push_back(e);
    }
    s["warm_start"] = {{"points", points}};
  }
  if (!st_.strategy_memory.is_null()) s["strategy_memory"] = st_.strategy_memory;
  if (st_.measuring.contains("per_slot")) s["measuring"] = st_.measuring;
  if (auto u = search::llm_usage_summary(dir_); !u.is_null()) s["llm"] = u;
  // Only a champion that was written: a run stopped at a gate has none (and its summary says so).
  if (std::error_code ec; fs::exists(dir_ / "champion" / o_.job.kernel.filename(), ec))
    s["champion_path"] = (dir_ / "champion" / o_.job.kernel.filename()).string();
  s["gates_passed"] = st_.stop_reason != StopReason::kGateFailed;
  if (derived_) {
    s["kernel"] = original_kernel_.string();
    s["derived"] = derived_json();
  }
  s["run_dir"] = dir_.string();
  return s;
}

RunOutcome Optimizer::finish(StopReason reason, const std::string& detail) {
  st_.stop_reason = reason;
  st_.stop_detail = detail.empty() ? std::string(describe(reason)) : detail;
  if (auto st = verify_champion(dir_ / fmt::format("iter_{:02d}", st_.iterations_done)); !st) return fail(st.error());
  // After the search (issue 18): the champion and the baseline at every case, then at the held-out shapes, run
  // on the matrix (the default) or with --holdout-shapes; not on the single-case path.
  final_case_table();
  if (!cases_.empty() || o_.gates.holdout_shapes_file) run_holdout();
  Status written = write_champion();
  if (written) written = save_state();
  if (written) written = write_json(dir_ / "stop.json", "stop", {{"stage", "loop"}, {"reason", std::string(stop_reason_text(st_.stop_reason))}, {"detail", st_.stop_detail}});
  if (written) written = write_summary();
  if (!written) return fail(written.error());
  auto s = summary_json();
  if (auto st = util::write_json_document(o_.json_out, s); !st) return fail(st.error());
  if (!o_.quiet) std::fputs(report::render_markdown(s).c_str(), util::report_stream(o_.json_out));
  return outcome(RunEnd::kFinished, ExitCode::kOk, "");
}

}  // namespace kopt::loop
