// Issue 18's shapes and safety gates inside the loop (docs/GATES.md): the workload matrix's cases and their
// golden data, correctness at every case, selection over the cases, the sanitizer and determinism gates of the
// finalists, and, after the search, the per-case table and the held-out shapes. Every device run goes through
// the Lab, so the fake lab of the loop's tests drives all of it.
#include <algorithm>

#include "contract/golden_maker.h"
#include "contract/safetensors.h"
#include "loop/holdout.h"
#include "loop/optimizer.h"
#include "pipeline/placement.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"
#include "workload/holdout.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {
void push_record(util::Json& records, const char* key, util::Json item) {
  if (!records.contains(key) || !records[key].is_array()) records[key] = util::Json::array();
  records[key].push_back(std::move(item));
}
}  // namespace

std::optional<RunOutcome> Optimizer::prepare_cases() {
  auto cases = workload::search_cases(o_.gates.workload_matrix, o_.gates.shapes_file, o_.job.dims);
  if (!cases) return stop("inputs", cases.error(), util::Json::object());
  // The working set from the golden manifest's real buffer sizes; unknown sizes leave the cases unfitted.
  if (auto m = workload::model_from_manifest(prep_.manifest); m && !m->buffers.empty()) ws_model_ = *m;
  else if (!m) say("  working set unknown ({}): cases are not fitted", m.error().message);
  max_ws_bytes_ = workload::max_working_set_bytes(o_.gates.max_working_set_mb, gpu_.memory_bytes);
  std::vector<workload::Case> fitted = *cases;
  if (ws_model_) {
    auto f = workload::fit_cases(*cases, *ws_model_, max_ws_bytes_);
    if (!f) return stop("inputs", f.error(), {{"max_working_set_bytes", max_ws_bytes_}});
    fitted = *f;
  }
  // The single-case path: the user's dims alone, unfitted: the loop as it always was.
  if (fitted.size() == 1 && !fitted.front().fitted() && fitted.front().realised == o_.job.dims) return std::nullopt;

  prefetch_golden(fitted, false);
  workload::OomPolicy policy;
  for (auto& c : fitted) {
    CaseData cd{c, {}, {}};
    if (c.realised == o_.job.dims) {
      cd.golden_dir = prep_.golden_dir;
      cd.manifest = prep_.manifest;
      cases_.push_back(cd);
      continue;
    }
    cd.golden_dir = dir_ / "golden_cases" / c.name;
    // Golden data, retried smaller after an out-of-memory (each retry: half the failed attempt's working set).
    for (int retries = 0;; ++retries) {
      if (resuming_ && fs::exists(cd.golden_dir / "manifest.json")) {
        auto m = util::read_json(cd.golden_dir / "manifest.json");
        if (m) {
          cd.manifest = *m;
          cd.manifest.erase("meta");
          break;
        }
      }
      say("  case {}: golden data at {}...", cd.c.name, format_dims(cd.c.realised));
      auto m = lab_.golden(cd.c.realised, cd.golden_dir);
      if (m) {
        cd.manifest = *m;
        if (auto made = contract::golden_cache_hit(*m)) say("  case {}: golden data from the cache (made {})", cd.c.name, *made);
        break;
      }
      int64_t ws = 0;
      if (ws_model_)
        if (auto w = workload::estimate(*ws_model_, cd.c.realised)) ws = w->bytes;
      auto d = workload::decide_oom_retry(workload::OomWho::kGoldenData, workload::is_out_of_memory(m.error().message), retries, ws, policy);
      if (!d.retry || !ws_model_)
        return stop("inputs", Error{m.error().code, "golden data for case " + cd.c.name + " (" + format_dims(cd.c.realised) + "): " +
                                                      m.error().message + "\n(a shape ref.py cannot compute: give --shapes FILE without it, "
                                                      "or --workload-matrix off)"},
                    {{"case", workload::to_json(cd.c)}});
      auto f = workload::fit_to_limit(*ws_model_, cd.c.requested, d.next_max_bytes);
      if (!f) return stop("inputs", f.error(), {{"case", workload::to_json(cd.c)}});
      say("  case {}: {}; retrying at {}", cd.c.name, d.reason, format_dims(f->realised));
      cd.c.realised = f->realised;
      cd.c.note += (cd.c.note.empty() ? "" : "; ") + d.reason;
    }
    cases_.push_back(cd);
  }
  // The primary case: the largest realised working set (ties: the first, the user's own case when it is one).
  primary_ = 0;
  int64_t best = -1;
  for (size_t i = 0; i < cases_.size(); ++i) {
    int64_t ws = 0;
    if (ws_model_)
      if (auto w = workload::estimate(*ws_model_, cases_[i].c.realised)) ws = w->bytes;
    if (ws > best) best = ws, primary_ = i;
  }
  prep_.golden_dir = cases_[primary_].golden_dir;
  prep_.manifest = cases_[primary_].manifest;
  util::Json list = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    util::Json j = workload::to_json(cases_[i].c);
    j["golden_dir"] = cases_[i].golden_dir.string();
    j["primary"] = i == primary_;
    if (cases_[i].manifest.is_object() && cases_[i].manifest.contains("golden_cache")) j["golden_cache"] = cases_[i].manifest["golden_cache"];
    if (ws_model_)
      if (auto w = workload::estimate(*ws_model_, cases_[i].c.realised)) j["working_set_bytes"] = w->bytes;
    list.push_back(j);
  }
  if (auto st = write_json(dir_ / "gates" / "cases.json", "cases",
                           {{"matrix", workload::matrix_mode_name(o_.gates.workload_matrix)},
                            {"shapes_file", o_.gates.shapes_file ? util::Json(o_.gates.shapes_file->string()) : util::Json(nullptr)},
                            {"max_working_set_bytes", max_ws_bytes_}, {"primary", cases_[primary_].c.name}, {"cases", list}});
      !st)
    return fail(st.error());
  st_.gate_records["cases"] = list;
  say("  {} case(s): {}; races and timings at {}", cases_.size(),
      [&] {
        std::vector<std::string> n;
        for (const auto& c : cases_) n.push_back(c.c.name + (c.c.fitted() ? " (fitted)" : ""));
        return util::join(n, ", ");
      }(),
      cases_[primary_].c.name);
  return std::nullopt;
}

std::optional<RunOutcome> Optimizer::check_baseline_at_cases() {
  workload::OomPolicy policy;
  for (size_t i = 0; i < cases_.size(); ++i) {
    if (i == primary_) continue;
    auto& cd = cases_[i];
    for (int retries = 0;; ++retries) {
      auto r = run({prep_.build.library}, {nullptr}, dir_ / "gates" / ("correctness_" + cd.c.name + ".json"), runner::RunMode::kCheck, {}, false, cd.golden_dir);
      if (r.status == runner::RunStatus::kOk) break;
      // The baseline out of memory at a case: the case is fitted smaller for every contender, golden data remade.
      int64_t ws = 0;
      if (ws_model_)
        if (auto w = workload::estimate(*ws_model_, cd.c.realised)) ws = w->bytes;
      auto d = workload::decide_oom_retry(workload::OomWho::kBaseline, workload::is_out_of_memory(r.message), retries, ws, policy);
      std::optional<workload::Fit> f;
      if (d.retry && ws_model_)
        if (auto fit = workload::fit_to_limit(*ws_model_, cd.c.requested, d.next_max_bytes)) f = *fit;
      if (f && f->realised != cd.c.realised) {
        say("  case {}: {}", cd.c.name, d.reason);
        auto m = lab_.golden(f->realised, cd.golden_dir);
        if (m) {
          cd.c.realised = f->realised;
          cd.c.note += (cd.c.note.empty() ? "" : "; ") + d.reason;
          cd.manifest = *m;
          continue;
        }
      }
      return stop("correctness",
                  validation_error(fmt::format("the baseline is not correct at case {} ({}): {}: {}. The case is outside the "
                                               "kernel's domain: give --shapes FILE without it, or --workload-matrix off",
                                               cd.c.name, format_dims(cd.c.realised), runner::status_name(r.status), r.message)),
                  {{"case", workload::to_json(cd.c)}, {"result", runner::to_json(r)}});
    }
  }
  return std::nullopt;
}

sanitize::Verdict Optimizer::run_sanitizer(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir) {
  fs::create_directories(out_dir);
  if (sanitize_golden_.empty()) {
    // The small case: the user's dims fitted to sanitize::kSanitizeWorkingSetBytes (4 MiB; the matrix's axes and
    // rounding), golden data made once.
    Dims small = o_.job.dims;
    if (ws_model_)
      if (auto d = sanitize::sanitize_dims(*ws_model_, o_.job.dims)) small = *d;
    const fs::path g = dir_ / "golden_sanitize";
    if (small == o_.job.dims) {
      sanitize_golden_ = prep_.golden_dir;
    } else if (fs::exists(g / "manifest.json")) {
      sanitize_golden_ = g;
    } else {
      auto m = lab_.golden(small, g);
      sanitize_golden_ = m ? g : prep_.golden_dir;
      if (!m) say("  sanitizer: no golden data at the small case ({}): at the run's own", m.error().message);
    }
  }
  sanitize::Request req;
  req.sanitizer = toolchain::find_compute_sanitizer();  // empty: the gate decides nothing (race_safe unknown)
  // One seed: what the tools look for (out-of-bounds accesses, races, uninitialised reads) is the code's, and the
  // candidate's results were checked on every seed already; three seeds under racecheck cost three times as much.
  auto target = request({lib}, {c}, out_dir / "sanitized_run.json", runner::RunMode::kCheck, {}, false, sanitize_golden_);
  target.max_seeds = 1;
  req.target_argv = runner::child_argv(target);
  req.timeout_s = sanitize_timeout_s_;
  // The shared-memory fill (sanitizer.h): the same check, outside compute-sanitizer, shared memory full of 0xFF.
  auto fill = request({lib}, {c}, out_dir / "smem_fill_run.json", runner::RunMode::kCheck, {}, false, sanitize_golden_);
  fill.max_seeds = 1;
  if (fill.triton_kernel.empty()) {
    fill.smem_fill = sanitize::kFillPattern;
    req.fill_argv = runner::child_argv(fill);
    req.fill_result = (out_dir / "smem_fill_run.json").string();
  }
  return lab_.sanitize(req);
}

void Optimizer::sanitize_baseline() {
  if (!sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kBaseline)) return;
  say("  sanitizer gate: the baseline at a small case (memcheck, racecheck, synccheck, initcheck)...");
  auto v = run_sanitizer(prep_.build.library, nullptr, dir_ / "gates" / "sanitize");
  st_.race_safe = v.race_safe;
  st_.gate_records["baseline_sanitizer"] = {{"race_safe", sanitize::race_safe_name(v.race_safe)}, {"rejected", v.rejected},
                                            {"reason", v.reason}, {"reported", v.reported}, {"complete", v.complete()}};
  if (auto st = write_json(dir_ / "gates" / "sanitize_baseline.json", "sanitizer", sanitize::to_json(v)); !st)
    say("  {}", st.error().message);
  if (v.rejected) say("  the BASELINE has sanitizer findings: {} (a candidate inherits them unless it fixes them)", v.reason);
  else say("  sanitizer: race_safe {}{}", sanitize::race_safe_name(v.race_safe),
           v.reported.empty() ? "" : "; reported: " + util::join(v.reported, "; "));
}

std::optional<std::string> Optimizer::check_at_cases(const CandidateRun& cr, const fs::path& cdir, bool* lost) {
  std::vector<CaseCheck> checks;
  util::Json rec = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    if (i == primary_) continue;
    const auto& cd = cases_[i];
    auto r = run({cr.build.library}, {&cr.candidate}, cdir / ("check_" + cd.c.name + ".json"), runner::RunMode::kCheck, {}, false, cd.golden_dir);
    if (lost) *lost = runner::lost_worker(r);
    checks.push_back({cd.c.name, r.status, r.message});
    rec.push_back({{"case", cd.c.name}, {"status", runner::status_name(r.status)}, {"message", r.message}});
    if (r.status != runner::RunStatus::kOk) break;  // the first wrong case decides
  }
  auto v = correct_at_every_case(checks);
  if (auto st = write_json(cdir / "cases.json", "case_checks", {{"checks", rec}, {"correct", v.correct}, {"reason", v.reason}}); !st)
    say("  {}", st.error().message);
  if (v.correct) return std::nullopt;
  return v.reason;
}

MultiCaseComparison Optimizer::compare_over_cases(const CandidateRun& cr, const runner::PairedComparison& primary, const fs::path& dir) {
  std::vector<CaseComparison> per_case;
  for (size_t i = 0; i < cases_.size(); ++i) {
    const auto& cd = cases_[i];
    if (i == primary_) {
      per_case.push_back({cd.c.name, cd.c.weight, primary});
      continue;
    }
    auto cmp = paired(st_.champion->library, st_.champion->candidate, cr.build.library, cr.candidate,
                      dir / ("paired_" + cr.candidate.id + "_" + cd.c.name + ".json"), cd.golden_dir);
    runner::PairedComparison none;
    per_case.push_back({cd.c.name, cd.c.weight, cmp ? *cmp : none});
  }
  return combine_cases(per_case);
}

std::string_view reject_gate_name(RejectGate g) {
  switch (g) {
    case RejectGate::kCases: return "cases";
    case RejectGate::kRegression: return "regression";
    case RejectGate::kDeterminism: return "determinism";
    case RejectGate::kSanitizer: return "sanitizer";
    case RejectGate::kSpeedOfLight: return "below_speed_of_light";
  }
  return "?";
}

void Optimizer::reject(const std::string& id, RejectGate gate, const std::string& reason) {
  std::lock_guard<std::mutex> lock(state_mu_);
  push_record(st_.gate_records, "rejected", {{"candidate", id}, {"gate", reject_gate_name(gate)}, {"reason", reason}});
  // A finalist the sanitizer or the determinism check rejects is no correct configuration: the history (the
  // frontier, the generator's model) says so. One slower at a case stays a correct, timed configuration.
  if (gate != RejectGate::kSanitizer && gate != RejectGate::kDeterminism) return;
  for (auto& m : st_.history)
    if (m.candidate.id == id && m.status == search::CandidateStatus::kOk) {
      m.status = search::CandidateStatus::kIncorrect;
      m.median_ms.reset();
    }
}

std::optional<std::string> Optimizer::determinism_gate(const fs::path& lib, const search::Candidate& cand, const fs::path& dir,
                                                       util::Json& record) {
  const fs::path d = dir / "determinism" / cand.id;
  fs::create_directories(d);
  const search::Candidate* c = &cand;
  // Two check runs on the same golden inputs, each writing its first seed's outputs (the only seed it needs: the
  // finalist was checked on every seed in its race).
  auto ra0 = request({lib}, {c}, d / "run_a.json", runner::RunMode::kCheck, {}, false);
  ra0.dump_outputs = d / "outputs_a.safetensors";
  ra0.max_seeds = 1;
  auto ra = request({lib}, {c}, d / "run_b.json", runner::RunMode::kCheck, {}, false);
  ra.dump_outputs = d / "outputs_b.safetensors";
  ra.max_seeds = 1;
  auto a = lab_.run(ra0);
  auto b = lab_.run(ra);
  util::Json rec = {{"candidate", cand.id}};
  std::optional<std::string> why;
  auto bytes_a = util::read_file(ra0.dump_outputs), bytes_b = util::read_file(ra.dump_outputs);
  if (a.status != runner::RunStatus::kOk || b.status != runner::RunStatus::kOk || !bytes_a || !bytes_b) {
    // A run that failed here is the correctness check's business; the determinism check has no verdict.
    rec["verdict"] = "not_run";
    rec["reason"] = a.status != runner::RunStatus::kOk ? a.message : b.status != runner::RunStatus::kOk ? b.message : "no outputs were dumped";
  } else {
    auto v = judge_determinism_bytes(*bytes_a, *bytes_b, o_.job.numerics == search::NumericsMode::kStrict, prep_.tol);
    if (!v) {
      rec["verdict"] = "not_run";
      rec["reason"] = v.error().message;
    } else {
      rec["verdict"] = determinism_name(v->verdict);
      rec["reason"] = v->reason;
      if (v->rejects()) why = "nondeterministic: " + v->reason;
    }
  }
  record["determinism"] = rec;
  push_record(st_.gate_records, "determinism", rec);
  return why;
}

std::optional<std::string> Optimizer::sanitizer_gate(const fs::path& lib, const search::Candidate& cand, const fs::path& dir,
                                                     util::Json& record, std::string_view when) {
  if (!sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kFinalist)) return std::nullopt;
  say("    sanitizer gate on {} {}...", cand.id, when);
  auto v = run_sanitizer(lib, &cand, dir / "sanitize" / cand.id);
  if (auto st = write_json(dir / "sanitize" / cand.id / "verdict.json", "sanitizer", sanitize::to_json(v)); !st)
    say("  {}", st.error().message);
  record["sanitizer"] = {{"race_safe", sanitize::race_safe_name(v.race_safe)}, {"rejected", v.rejected}, {"reason", v.reason},
                         {"reported", v.reported}, {"complete", v.complete()}};
  if (v.rejected) return v.reason;
  st_.gate_records["champion_sanitizer"] = record["sanitizer"];
  st_.gate_records["champion_sanitizer"]["candidate"] = cand.id;
  st_.race_safe = v.race_safe;
  return std::nullopt;
}

Status Optimizer::verify_champion(const fs::path& dir) {
  if (o_.gates.champion_gates != ChampionGates::kFinal) return ok_status();
  if (!st_.champion || st_.verified_as_champion(st_.champion->candidate.id)) return ok_status();
  Phase p(*this, "selection");
  util::Json records = util::Json::array();
  while (st_.champion && !st_.verified_as_champion(st_.champion->candidate.id) && !util::interrupted()) {
    const ChampionRecord c = *st_.champion;
    say("verifying the final champion {} (determinism, then the sanitizer)...", c.candidate.id);
    util::Json rec = {{"candidate", c.candidate.id}};
    std::optional<std::string> why, reason;  // what is said, what the rejection records (as selection's)
    RejectGate gate = RejectGate::kDeterminism;
    if (auto w = determinism_gate(c.library, c.candidate, dir / "verification", rec)) {
      why = reason = *w;
    } else if (auto u = sanitizer_gate(c.library, c.candidate, dir / "verification", rec, "(the final champion)")) {
      why = "sanitizer: " + *u;
      reason = *u;
      gate = RejectGate::kSanitizer;
    }
    if (!why) {
      rec["verdict"] = "passed";
      records.push_back(rec);
      st_.verified.push_back(c.candidate.id);
      say("  {} passed", c.candidate.id);
      break;
    }
    rec["verdict"] = "rejected";
    rec["reason"] = *why;
    reject(c.candidate.id, gate, *reason);
    // The champion it replaced was significantly slower than it, and faster than the one before: the next to check.
    ChampionRecord back = st_.superseded.empty() ? *st_.baseline : st_.superseded.back();
    if (!st_.superseded.empty()) st_.superseded.pop_back();
    if (back.candidate.id == "baseline" && st_.gate_records.contains("baseline_sanitizer"))
      st_.race_safe = sanitize::parse_race_safe(st_.gate_records["baseline_sanitizer"].value("race_safe", std::string("unknown")));
    say("  {} rejected ({}): the champion is {} again", c.candidate.id, *why, back.candidate.id);
    st_.champion = back;
    st_.wall.champion_s = elapsed_s();  // the champion again from now on
    // Candidates measured while the rejected one was champion may beat the one it replaced: the fastest few by the
    // objective are raced against it now, as selection races finalists, and one that wins is checked in turn.
    std::vector<CandidateRun> pool;
    if (!triton()) {
      std::vector<const search::Measurement*> faster;
      for (const auto& m : st_.history) {
        const double obj = m.objective_ms.value_or(m.median_ms.value_or(0));
        if (m.status == search::CandidateStatus::kOk && m.median_ms && obj > 0 && obj < back.objective() &&
            m.candidate.id != back.candidate.id && m.candidate.id != "baseline")
          faster.push_back(&m);
      }
      std::sort(faster.begin(), faster.end(), [](const auto* a, const auto* b) {
        return a->objective_ms.value_or(*a->median_ms) < b->objective_ms.value_or(*b->median_ms);
      });
      for (const auto* m : faster) {
        if (pool.size() >= 3) break;
        // Its library: as this process built it, or (a resumed run) where the run directory keeps it.
        fs::path lib = dir_ / fmt::format("iter_{:02d}", m->iteration) / "candidates" / m->candidate.id / "kernel.so";
        std::error_code ec;
        if (auto it = libraries_.find(m->candidate.id); it != libraries_.end()) lib = it->second;
        else if (!fs::is_regular_file(lib, ec)) continue;
        CandidateRun cr;
        cr.candidate = m->candidate;
        cr.build.library = lib;
        cr.build.status = compile::CompileStatus::kOk;
        runner::TimingStats t;
        t.median_ms = *m->median_ms;
        cr.outcome.timing = t;
        cr.objective_ms = m->objective_ms;
        pool.push_back(std::move(cr));
      }
    }
    rec["fallback"] = back.candidate.id;
    std::vector<std::string> raced;
    for (const auto& cr : pool) raced.push_back(cr.candidate.id);
    rec["raced_again"] = raced;
    records.push_back(rec);
    st_.timeline.push_back({{"iteration", st_.iterations_done}, {"champion_id", back.candidate.id}, {"champion_ms", back.median_ms},
                            {"improved", false}, {"candidates", 0}, {"correct", 0},
                            {"note", fmt::format("final verification: {} rejected ({}); back to {}{}", c.candidate.id, *why, back.candidate.id,
                                                 raced.empty() ? "" : ", then " + util::join(raced, ", ") + " raced against it")}});
    if (!pool.empty()) {
      const fs::path fd = dir / "verification" / ("fallback_" + std::to_string(records.size()));
      fs::create_directories(fd);
      KOPT_TRY_ASSIGN(auto sel, select(pool, fd));  // its record: fd/selection.json
      if (st_.champion->candidate.id != back.candidate.id)
        say("  {} replaces {} ({}); checked next", st_.champion->candidate.id, back.candidate.id,
            sel.improved ? "significantly faster" : "within the noise, fewer methods");
    }
  }
  for (const auto& r : records) push_record(st_.gate_records, "final_verification", r);
  if (!records.empty()) KOPT_TRY(write_json(dir / "verification.json", "verification", {{"checks", records}}));
  return save_state();
}

void Optimizer::final_case_table() {
  if (cases_.empty() || !st_.baseline || !st_.champion || util::interrupted()) return;
  Phase p(*this, "cases");
  const bool same = st_.champion->candidate.id == "baseline";
  std::vector<CaseRow> rows;
  fs::path d = dir_ / "cases";
  fs::create_directories(d);
  for (const auto& cd : cases_) {
    CaseRow row;
    row.name = cd.c.name;
    row.requested = cd.c.requested;
    row.realised = cd.c.realised;
    row.weight = cd.c.weight;
    row.note = cd.c.note;
    std::optional<runner::TimingStats> champ_t;
    if (same) {
      auto r = run({fs::path(st_.baseline->library)}, {nullptr}, d / (cd.c.name + ".json"), runner::RunMode::kTime, {}, false, cd.golden_dir);
      if (r.timing) row.baseline_ms = row.champion_ms = r.timing->median_ms, champ_t = r.timing;
    } else {
      auto r = run({fs::path(st_.baseline->library), fs::path(st_.champion->library)}, {nullptr, &st_.champion->candidate},
                   d / (cd.c.name + ".json"), runner::RunMode::kPaired, {}, false, cd.golden_dir);
      if (r.status == runner::RunStatus::kOk && r.details.contains("libs") && r.details["libs"].size() == 2) {
        auto a = r.details["libs"][0].value("samples_ms", std::vector<double>{});
        auto b = r.details["libs"][1].value("samples_ms", std::vector<double>{});
        if (a.size() >= 2 && b.size() >= 2) {
          row.baseline_ms = runner::compute_stats(a).median_ms;
          champ_t = runner::compute_stats(b);
          row.champion_ms = champ_t->median_ms;
          row.champion_vs_baseline = runner::compare_paired(a, b);
        }
      }
    }
    if (champ_t && ceilings_) {
      auto placed = pipeline::place(*ceilings_, cd.manifest, prep_.buffer_dtypes, *champ_t, st_.metrics, cd.c.name, {});
      if (placed && placed->floor) row.floor_ms = placed->floor->floor_ms;
    }
    rows.push_back(row);
  }
  st_.gate_records["case_table"] = case_table_json(rows);
}

std::vector<workload::Case> Optimizer::holdout_shape_list(const std::vector<workload::Case>& search, std::string& note) {
  std::vector<workload::Case> shapes;
  if (o_.gates.holdout_shapes_file) {
    auto f = workload::read_shapes_file(*o_.gates.holdout_shapes_file, o_.job.dims, workload::CaseOrigin::kHoldoutFile);
    if (!f) note = f.error().message;  // checked before the run: only a file changed since says this
    else shapes = *f;
  } else {
    auto h = workload::awkward_shapes(o_.job.dims, search);
    shapes = h.cases;
    note = h.note;
  }
  for (auto& shape : shapes)
    if (ws_model_ && max_ws_bytes_ > 0)
      if (auto f = workload::fit_to_limit(*ws_model_, shape.requested, max_ws_bytes_); f && f->fitted()) {
        shape.realised = f->realised;
        shape.note += (shape.note.empty() ? "" : "; ") + std::string("fitted to the working-set limit");
      }
  return shapes;
}

void Optimizer::prefetch_golden(const std::vector<workload::Case>& cases, bool holdout) {
  std::vector<std::pair<Dims, fs::path>> wanted;
  auto want = [&](const Dims& dims, const fs::path& dir) {
    if (dims == o_.job.dims || fs::exists(dir / "manifest.json")) return;
    for (const auto& w : wanted)
      if (w.first == dims) return;  // the same dims twice (the small case can be a case): made once, placed twice
    wanted.emplace_back(dims, dir);
  };
  if (holdout) {
    for (const auto& shape : cases) want(shape.realised, dir_ / "holdout" / shape.name / "golden");
  } else {
    // The matrix's cases and the sanitizer's small case, made before the first candidate. The held-out shapes are
    // made when they are checked, after the search (a batch of their own): made here, they would delay the first
    // candidate by their reference runs.
    for (const auto& c : cases) want(c.realised, dir_ / "golden_cases" / c.name);
    if (ws_model_ && sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kBaseline))
      if (auto small = sanitize::sanitize_dims(*ws_model_, o_.job.dims)) want(*small, dir_ / "golden_sanitize");
  }
  if (wanted.size() < 2) return;  // one request gains nothing from a batch
  say("  golden data for {} {} in one harness process...", wanted.size(), holdout ? "held-out shapes" : "cases");
  lab_.prefetch_golden(wanted);
}

void Optimizer::run_holdout() {
  if (!st_.baseline || !st_.champion || util::interrupted()) return;
  Phase p(*this, "holdout");
  std::vector<workload::Case> search;
  for (const auto& cd : cases_) search.push_back(cd.c);
  if (search.empty()) search = workload::user_case(o_.job.dims);
  std::string note;
  const std::vector<workload::Case> shapes = holdout_shape_list(search, note);
  prefetch_golden(shapes, true);
  say("held-out shapes: {} shape(s), checked and timed for the champion and the baseline...", shapes.size());
  // Their times are indicative (what the champion gains there, not a selection): a short budget, restored after.
  // The checks are the full ones (every seed). Measured (2026-12-03, H200, vector_add 16 M): 25 s at the 2 s budget.
  const double saved_budget_s = o_.max_time_s;
  o_.max_time_s = std::min(o_.max_time_s, kHoldoutTimeBudgetS);
  struct Restore {
    double& v;
    double saved;
    ~Restore() { v = saved; }
  } restore{o_.max_time_s, saved_budget_s};
  std::vector<HoldoutCaseResult> results;
  const bool same = st_.champion->candidate.id == "baseline";
  for (const auto& shape : shapes) {
    if (util::interrupted()) break;
    fs::path d = dir_ / "holdout" / shape.name;
    HoldoutRun b, c;
    auto m = lab_.golden(shape.realised, d / "golden");
    if (!m && util::interrupted()) {
      // Ctrl-C (or the caller's timeout) cut the golden data: no verdict on this shape.
      b.status = runner::RunStatus::kInterrupted;
      b.message = "interrupted";
      c = b;
    } else if (!m) {
      // The reference itself fails here: outside the kernel's domain.
      b.status = runner::RunStatus::kLoadError;
      b.message = "golden data: " + m.error().message;
      c = b;
    } else {
      b = holdout_run_from(run({fs::path(st_.baseline->library)}, {nullptr}, d / "baseline.json", runner::RunMode::kTime, {}, false, d / "golden"));
      c = same ? b
               : holdout_run_from(run({fs::path(st_.champion->library)}, {&st_.champion->candidate}, d / "champion.json", runner::RunMode::kTime, {},
                                      false, d / "golden"));
    }
    auto r = judge_holdout_case(shape, b, c);
    say("  {}", r.text);
    results.push_back(std::move(r));
  }
  auto summary = summarize_holdout(std::move(results), note);
  util::Json j = to_json(summary);
  if (auto st = write_json(dir_ / "holdout.json", "holdout", j); !st) say("  {}", st.error().message);
  st_.gate_records["holdout"] = j;
  if (!summary.warning.empty()) say("WARNING: {}", summary.warning);
}

}  // namespace kopt::loop
