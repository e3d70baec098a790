// A measured candidate at the workload matrix's other cases (issue 18): checked there, or raced against the champion
// there too, so the search ranks by the objective selection selects by.
#include <algorithm>

#include "loop/optimizer.h"

namespace kopt::loop {

namespace fs = std::filesystem;

// A candidate correct at the primary case, checked at every other: the reason when it is wrong at one. `lost` is
// set when that reason is a worker that died with no result (retried on another GPU when there is one).
std::optional<std::string> Optimizer::check_at_cases(const CandidateRun& cr, const fs::path& cdir, bool* lost) {
  std::vector<CaseCheck> checks;
  util::Json rec = util::Json::array();
  // A Triton candidate's timed child checked the other cases already (RunRequest::also_check): their verdicts; a
  // case it did not check (it stopped at a wrong one before, or an older harness) gets a check run of its own.
  const auto in_child = runner::case_checks_in(cr.outcome.details);
  for (size_t i = 0; i < cases_.size(); ++i) {
    if (i == primary_) continue;
    const auto& cd = cases_[i];
    const std::string golden = cd.golden_arg().string();
    auto done = std::find_if(in_child.begin(), in_child.end(), [&](const auto& c) { return c.golden == golden; });
    runner::RunOutcome r;
    if (done != in_child.end()) {
      r.status = done->status;
      r.message = done->message;
    } else {
      r = run({cr.build.library}, {&cr.candidate}, cdir / ("check_" + cd.c.name + ".json"), runner::RunMode::kCheck, {}, false,
              cd.golden_dir);
      if (lost) *lost = runner::lost_worker(r);
    }
    checks.push_back({cd.c.name, r.status, r.message});
    rec.push_back({{"case", cd.c.name},
                   {"status", runner::status_name(r.status)},
                   {"message", r.message},
                   {"checked_in", done != in_child.end() ? "the timed run's child" : "a check run"}});
    if (r.status != runner::RunStatus::kOk) break;  // the first wrong case decides
  }
  auto v = correct_at_every_case(checks);
  if (auto st = write_json(cdir / "cases.json", "case_checks", {{"checks", rec}, {"correct", v.correct}, {"reason", v.reason}}); !st)
    say("  {}", st.error().message);
  if (v.correct) return std::nullopt;
  return v.reason;
}

// A candidate raced against the champion at the primary case (CUDA/CUTLASS), raced at every other case too: its
// correctness there (the reason when it is wrong at one) and its weighted objective (cr.over_cases,
// cr.objective_ms), so the search ranks by what selection selects. `lost`: as check_at_cases.
std::optional<std::string> Optimizer::race_at_cases(CandidateRun& cr, const fs::path& cdir, bool* lost) {
  std::vector<CaseCheck> checks;
  std::vector<CaseComparison> per_case;
  std::vector<std::optional<double>> medians(cases_.size());
  if (cr.outcome.timing) medians[primary_] = cr.outcome.timing->median_ms;
  util::Json rec = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    const auto& cd = cases_[i];
    if (i == primary_) {
      per_case.push_back({cd.c.name, cd.c.weight, *cr.vs_champion});
      continue;
    }
    auto raced = run({fs::path(st_.champion->library), cr.build.library}, {&st_.champion->candidate, &cr.candidate},
                     cdir / ("race_" + cd.c.name + ".json"), runner::RunMode::kPaired, {}, true, cd.golden_dir);
    if (lost) *lost = runner::lost_worker(raced);
    auto mine = raced_outcome(raced);
    checks.push_back({cd.c.name, mine.status, mine.message});
    util::Json r = {{"case", cd.c.name}, {"status", runner::status_name(mine.status)}, {"message", mine.message}};
    if (mine.status != runner::RunStatus::kOk) {
      rec.push_back(r);
      break;  // the first wrong case decides
    }
    auto champ = raced.details["libs"][0].value("samples_ms", std::vector<double>{});
    auto cmp = runner::compare_paired(champ, mine.samples_ms);
    if (mine.samples_ms.size() >= 2) medians[i] = runner::compute_stats(mine.samples_ms).median_ms;
    r["comparison"] = runner::to_json(cmp);
    rec.push_back(r);
    per_case.push_back({cd.c.name, cd.c.weight, cmp});
  }
  auto v = correct_at_every_case(checks);
  util::Json j = {{"checks", rec}, {"correct", v.correct}, {"reason", v.reason}};
  if (v.correct) {
    if (o_.gates.dispatch) {  // what --dispatch shortlists by (per_shape_loop.cpp)
      std::lock_guard<std::mutex> lock(case_medians_mu_);
      case_medians_[cr.candidate.id] = medians;
    }
    cr.over_cases = combine_cases(per_case);
    j["objective"] = to_json(*cr.over_cases);
    if (cr.over_cases->valid) cr.objective_ms = st_.champion->objective() * cr.over_cases->geomean_ratio;
  }
  if (auto st = write_json(cdir / "cases.json", "case_checks", j); !st) say("  {}", st.error().message);
  if (v.correct) return std::nullopt;
  return v.reason;
}

}  // namespace kopt::loop
