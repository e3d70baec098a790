// After the search (issue 18): the per-case table of the baseline and the champion, and the held-out shapes.
#include <algorithm>

#include "contract/golden_maker.h"
#include "loop/holdout.h"
#include "loop/optimizer.h"
#include "loop/phase.h"
#include "pipeline/placement.h"
#include "util/keyed_store.h"
#include "workload/holdout.h"

namespace kopt::loop {

namespace fs = std::filesystem;

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
  // The default matrix's cases outside the kernel's domain (check_baseline_at_cases), said under the table.
  if (st_.gate_records.contains("cases_dropped"))
    for (const auto& drop : st_.gate_records["cases_dropped"])
      st_.gate_records["case_table"]["dropped"].push_back(drop.value("reason", std::string()) + "; the case was dropped");
}

// The held-out shapes for these search cases (--holdout-shapes FILE, else derived), each fitted to the working-set
// limit; `note` says what the derivation left out (or why the file could not be read).
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

std::vector<workload::Case> Optimizer::holdout_shapes(std::string& note) {
  std::vector<workload::Case> search;
  for (const auto& cd : cases_) search.push_back(cd.c);
  if (search.empty()) search = workload::user_case(o_.job.dims);
  return holdout_shape_list(search, note);
}

void Optimizer::prefetch_holdout_golden() {
  if (!st_.baseline || !st_.champion || util::interrupted() || (cases_.empty() && !o_.gates.holdout_shapes_file)) return;  // finish()'s rule
  std::string note;
  prefetch_golden(holdout_shapes(note), true, true);
  holdout_prefetched_ = true;
}

// One contender at a held-out shape: checked on every seed of its golden data (kHoldoutSeeds) and timed, or, where the evidence cache holds a correct run
// of the same code on the same inputs under the same runner, GPU and driver, that run (a failing run is never kept:
// it runs again, and its first bad element is this run's).
HoldoutRun Optimizer::holdout_run(const fs::path& lib, const search::Candidate* c, const fs::path& result,
                                  const fs::path& golden_dir, const std::string& golden) {
  const auto cache = lab_.evidence_cache_dir("holdout");
  std::string key;
  if (cache) {
    key = evidence_run_key(request({lib}, {c}, result, runner::RunMode::kTime, {}, false, golden_dir), {code_identity(lib, c)},
                           golden);
    if (auto e = util::find_keyed(*cache, key))
      if (auto r = holdout_run_from_json(e->value)) {
        r->from_cache = e->where;
        return *r;
      }
  }
  HoldoutRun r = holdout_run_from(run({lib}, {c}, result, runner::RunMode::kTime, {}, false, golden_dir));
  if (cache && runner::is_correct(r.status) && r.median_ms) {
    // What a correct run is judged by: its status and median (its details serve a failing run's first bad element).
    if (auto st = util::keep_keyed(*cache, key, "holdout_run", to_json(r), dir_.string()); !st)
      say("  the held-out run was not kept: {}", st.error().message);
  }
  return r;
}

void Optimizer::run_holdout() {
  if (!st_.baseline || !st_.champion || util::interrupted()) return;
  Phase p(*this, "holdout");
  std::string note;
  const std::vector<workload::Case> shapes = holdout_shapes(note);
  if (!holdout_prefetched_) prefetch_golden(shapes, true);  // else begun beside the final checks (in the cache now)
  say("held-out shapes: {} shape(s), checked and timed for the champion and the baseline...", shapes.size());
  // Their times are indicative (what the champion gains there, not a selection): a short budget and a 3 % CI target,
  // restored after. The checks are the full ones (every seed of the shapes' golden data: kHoldoutSeeds, lab.h).
  // Measured (2026-12-03, H200, vector_add 16 M): 25 s at the 2 s budget.
  struct Restore {
    double& v;
    double saved;
    ~Restore() { v = saved; }
  } restore_budget{o_.max_time_s, o_.max_time_s}, restore_ci{target_ci_, target_ci_};
  o_.max_time_s = std::min(o_.max_time_s, kHoldoutTimeBudgetS);
  target_ci_ = kHoldoutTargetCi;
  std::vector<HoldoutCaseResult> results;
  const bool same = st_.champion->candidate.id == "baseline";
  for (const auto& shape : shapes) {
    if (util::interrupted()) break;
    fs::path d = dir_ / "holdout" / shape.name;
    HoldoutRun b, c;
    auto m = lab_.golden({shape.realised, d / "golden", kHoldoutSeeds});
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
      const std::string golden = contract::golden_identity(*m);
      b = holdout_run(fs::path(st_.baseline->library), nullptr, d / "baseline.json", d / "golden", golden);
      c = same
              ? b
              : holdout_run(fs::path(st_.champion->library), &st_.champion->candidate, d / "champion.json", d / "golden", golden);
    }
    auto r = judge_holdout_case(shape, b, c);
    const int cached = !b.from_cache.empty() + (!same && !c.from_cache.empty());
    if (cached > 0)
      r.text += same || cached == 2
                    ? " (from the evidence cache)"
                    : fmt::format(" (the {}'s run from the evidence cache)", b.from_cache.empty() ? "champion" : "baseline");
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
