// Selection: finalists raced against the champion (over the workload matrix where there is one), the safety gates
// of a would-be champion, and the gate records of what was rejected.
#include "loop/optimizer.h"
#include "loop/phase.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

// A measured run's comparison with the champion it was raced against: over the workload matrix when there is
// one (nullopt when it has none there), else its race at the primary case.
std::optional<runner::PairedComparison> Optimizer::raced_comparison(const CandidateRun& r) const {
  if (r.reused) return stored_comparison(*r.reused, opponent_json(st_.champion->candidate), over_cases());
  if (over_cases()) return r.over_cases ? std::optional(r.over_cases->as_paired()) : std::nullopt;
  return r.vs_champion;
}

// select()'s steps: a finalist kept behind the champion with no new run (recorded in out), the decision on one raced
// (over the cases where there are; cmp becomes the comparison decided on), and a would-be champion's safety gates.
struct Optimizer::SelectionSteps {
  Optimizer& o;
  bool kept_without_run(const CandidateRun& cr, const Contender& inc, const std::string& champion_at_start,
                        const std::optional<runner::PairedComparison>& crowned_vs_start, SelectionResult& out);
  SelectionOutcome decide_finalist(const CandidateRun& cr, const Contender& inc, const Contender& f, runner::PairedComparison& cmp,
                                   bool raced_this_champion, const fs::path& iter_dir, util::Json& rec);
  void champion_gates(SelectionOutcome& d, const CandidateRun& cr, const fs::path& iter_dir, util::Json& rec);
};

namespace {
// An earlier run's final champion, ordered first among the finalists (pick_finalists): why, as said and recorded.
std::string ordered_first(const Contender& f) {
  return "ordered first: the final champion of an earlier run under the same key (" + f.stored_champion_run +
         "); a later finalist replaces it only when significantly faster";
}

void note_ordered_first(const std::vector<Contender>& finalists, util::Json& record) {
  for (const auto& f : finalists)
    if (f.stored_champion_s > 0)
      for (auto& rec : record)
        if (rec.value("finalist", std::string()) == f.id) rec["ordered_first"] = ordered_first(f);
}
}  // namespace

Result<SelectionResult> Optimizer::select(const std::vector<CandidateRun>& runs, const fs::path& iter_dir) {
  SelectionSteps steps{*this};
  Phase p(*this, "selection");
  SelectionResult out;
  std::vector<Contender> contenders = contenders_of(runs);
  const std::string champion_at_start = st_.champion->candidate.id;
  // A finalist's comparison with the champion at the start of this selection (its own races), over the cases.
  auto vs_start = [&](const CandidateRun& r) { return raced_comparison(r); };
  std::optional<runner::PairedComparison> crowned_vs_start;  // the new champion's, once one was crowned here
  const std::vector<Contender> finalists = pick_finalists(contenders, static_cast<size_t>(o_.finalists));
  for (const auto& f : finalists)
    if (f.stored_champion_s > 0) say("  {}: {}", f.id, ordered_first(f));
  for (const auto& f : finalists) {
    const CandidateRun* cr = nullptr;
    for (const auto& r : runs)
      if (r.candidate.id == f.id) cr = &r;
    Contender inc{st_.champion->candidate.id, true, st_.champion->objective(), static_cast<int>(st_.champion->candidate.methods.size())};
    for (const auto& g : finalists)  // the champion crowned here may be an earlier run's final champion
      if (g.id == inc.id && g.stored_champion_s > 0) {
        inc.stored_champion_s = g.stored_champion_s;
        inc.stored_champion_run = g.stored_champion_run;
      }
    if (steps.kept_without_run(*cr, inc, champion_at_start, crowned_vs_start, out)) continue;
    // A candidate raced against this champion already has its comparison; otherwise (Triton, or the champion
    // changed earlier in this selection) it gets a paired run now.
    std::optional<runner::PairedComparison> cmp;
    if (cr->vs_champion && st_.champion->candidate.id == champion_at_start) cmp = cr->vs_champion;
    else cmp = paired(st_.champion->library, st_.champion->candidate, cr->build.library, cr->candidate, iter_dir / ("paired_" + f.id + ".json"));
    if (!cmp) {
      out.record.push_back({{"finalist", f.id}, {"error", "paired timing failed"}});
      continue;
    }
    util::Json rec = {{"finalist", f.id}, {"incumbent", inc.id}, {"comparison", runner::to_json(*cmp)}};
    SelectionOutcome d = steps.decide_finalist(*cr, inc, f, *cmp, st_.champion->candidate.id == champion_at_start, iter_dir, rec);
    steps.champion_gates(d, *cr, iter_dir, rec);
    rec["decision"] = d.decision == ChampionDecision::kNewChampion ? "new_champion" : "keep";
    rec["reason"] = d.reason;
    out.record.push_back(rec);
    say("  {} vs {}: {} -> {}", f.id, inc.id, runner::summarize(*cmp), d.reason);
    if (d.decision == ChampionDecision::kNewChampion) {
      if (st_.champion->candidate.id == champion_at_start) crowned_vs_start = vs_start(*cr);
      else crowned_vs_start.reset();  // a second crowning: compared with an intermediate champion, not the start one
      const double objective = over_cases() ? st_.champion->objective() * cmp->median_ratio : 0;
      if (st_.champion->candidate.id != "baseline") st_.superseded.push_back(*st_.champion);
      st_.champion = ChampionRecord{cr->candidate, cr->build.library.string(), cr->outcome.timing->median_ms,
                                    (iter_dir / "candidates" / cr->candidate.id / "run.json").string(), objective};
      st_.wall.champion_s = elapsed_s();
      out.improved = out.improved || cmp->verdict == runner::Verdict::kFaster;
    }
  }
  note_ordered_first(finalists, out.record);
  KOPT_TRY(write_json(iter_dir / "selection.json", "selection", {{"finalists", out.record}}));
  return out;
}

bool Optimizer::SelectionSteps::kept_without_run(const CandidateRun& cr, const Contender& inc, const std::string& champion_at_start,
                                 const std::optional<runner::PairedComparison>& crowned_vs_start, SelectionResult& out) {
  const std::string& id = cr.candidate.id;
  // A reused finalist here is one its stored figures keep behind the champion (race_reused_finalists raced the
  // others again): the champion stays, and nothing is run.
  if (cr.reused) {
    const std::string why = reused_marker(*cr.reused) + ": " + cr.reuse_reason + " (not raced again)";
    out.record.push_back({{"finalist", id}, {"incumbent", inc.id}, {"decision", "keep"}, {"reason", why}, {"reused", reused_json(*cr.reused)}});
    o.say("  {} vs {}: {}", id, inc.id, why);
    return true;
  }
  // A finalist that both races already put behind the champion crowned in this selection (its ratio's 95% CI
  // against the old champion entirely above the new one's) needs no new paired runs against it.
  if (auto mine = o.raced_comparison(cr); mine && crowned_vs_start && o.st_.champion->candidate.id != champion_at_start &&
                                        mine->ci95_low > crowned_vs_start->ci95_high) {
    const std::string why = fmt::format(
        "slower than {}, both raced against {}: ratio {:.3f} [{:.3f}, {:.3f}] against {:.3f} [{:.3f}, {:.3f}] (no new run)",
        inc.id, champion_at_start, mine->median_ratio, mine->ci95_low, mine->ci95_high, crowned_vs_start->median_ratio,
        crowned_vs_start->ci95_low, crowned_vs_start->ci95_high);
    out.record.push_back({{"finalist", id}, {"incumbent", inc.id}, {"decision", "keep"}, {"reason", why}});
    o.say("  {} vs {}: {}", id, inc.id, why);
    return true;
  }
  return false;
}

SelectionOutcome Optimizer::SelectionSteps::decide_finalist(const CandidateRun& cr, const Contender& inc, const Contender& f,
                                            runner::PairedComparison& cmp, bool raced_this_champion, const fs::path& iter_dir,
                                            util::Json& rec) {
  if (!o.over_cases()) return decide(inc, f, cmp);
  // Over the workload matrix: the weighted geometric mean of the per-case ratios, regressions flagged (issue 18).
  // Raced at every case against this champion already: that comparison; otherwise paired runs now.
  auto multi = cr.over_cases && raced_this_champion ? *cr.over_cases : o.compare_over_cases(cr, cmp, iter_dir);
  SelectionOutcome d = decide_over_cases(inc, f, multi, o.o_.gates.no_regressions);
  rec["cases"] = to_json(multi);
  rec["comparison"] = runner::to_json(multi.as_paired());
  if (!multi.regressions.empty()) {
    util::Json flag = {{"candidate", f.id}, {"iteration", o.st_.iterations_done + 1}, {"regressions", multi.regressions},
                       {"rejected", o.o_.gates.no_regressions}};
    if (!o.st_.gate_records.contains("flagged")) o.st_.gate_records["flagged"] = util::Json::array();
    o.st_.gate_records["flagged"].push_back(flag);
    if (o.o_.gates.no_regressions) o.reject(f.id, RejectGate::kRegression, util::join(multi.regressions, "; "));
  }
  cmp = multi.as_paired();
  return d;
}

void Optimizer::SelectionSteps::champion_gates(SelectionOutcome& d, const CandidateRun& cr, const fs::path& iter_dir, util::Json& rec) {
  // The safety gates: a finalist that is nondeterministic, or that the sanitizer flags, never becomes champion.
  // Both run only on a finalist that would otherwise become champion: on one that stays behind they decide
  // nothing (the runner-up's determinism check was about 1 s of each H200 sgemm 4096^3 selection).
  // With --champion-gates final (the default) they run once, on the champion the search ends with
  // (verify_champion): an intermediate champion that is replaced later never needed them.
  const std::string& id = cr.candidate.id;
  if (d.decision == ChampionDecision::kNewChampion && o.o_.gates.champion_gates == ChampionGates::kEach) {
    if (auto why = o.determinism_gate(cr.build.library, cr.candidate, iter_dir, rec)) {
      o.reject(id, RejectGate::kDeterminism, *why);
      d.decision = ChampionDecision::kKeepIncumbent;
      d.reason = *why;
    } else if (auto unsafe = o.sanitizer_gate(cr.build.library, cr.candidate, iter_dir, rec, "before it can become champion")) {
      o.reject(id, RejectGate::kSanitizer, *unsafe);
      d.decision = ChampionDecision::kKeepIncumbent;
      d.reason = "sanitizer: " + *unsafe;
    } else {
      o.st_.verified.push_back(id);
    }
  } else if (d.decision == ChampionDecision::kNewChampion) {
    rec["safety_gates"] = "on the final champion (--champion-gates final)";
  }
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
    case RejectGate::kEphemeralSeed: return "ephemeral_seed";
  }
  return "?";
}

void Optimizer::reject(const std::string& id, RejectGate gate, const std::string& reason) {
  std::lock_guard<std::mutex> lock(state_mu_);
  push_record(st_.gate_records, "rejected", {{"candidate", id}, {"gate", reject_gate_name(gate)}, {"reason", reason}});
  // A finalist the sanitizer, the determinism check or the ephemeral seed rejects is no correct configuration: the
  // history (the frontier, the generator's model, the fallback pool) says so. One slower at a case stays a correct,
  // timed configuration.
  if (gate != RejectGate::kSanitizer && gate != RejectGate::kDeterminism && gate != RejectGate::kEphemeralSeed) return;
  for (auto& m : st_.history)
    if (m.candidate.id == id && m.status == search::CandidateStatus::kOk) {
      m.status = search::CandidateStatus::kIncorrect;
      m.median_ms.reset();
    }
}

}  // namespace kopt::loop
