// Reuse inside the loop (issue 39 item 2, docs/DATABASE.md "Reuse"): a configuration the results database holds under
// the same key is not measured again; its record stands for it. The decisions are loop/reuse.h's; this file looks the
// records up, turns them into runs, and measures again the reused finalists that could be crowned.
#include <algorithm>
#include <map>

#include "loop/optimizer.h"
#include "loop/phase.h"
#include "loop/proposals.h"
#include "util/fs.h"

namespace kopt::loop {

namespace fs = std::filesystem;

std::optional<db::RecordKey> Optimizer::lookup_key(const search::Candidate& c) {
  if (!ensure_record_context()) return std::nullopt;
  return pipeline::make_key(*record_ctx_, &c, timing_method_, triton() ? runner::RunMode::kTime : runner::RunMode::kPaired);
}

namespace {
search::CandidateStatus status_of(db::Verdict v) {
  switch (v) {
    case db::Verdict::kCorrect: return search::CandidateStatus::kOk;
    case db::Verdict::kCrashed: return search::CandidateStatus::kCrashed;
    case db::Verdict::kTimedOut: return search::CandidateStatus::kTimedOut;
    case db::Verdict::kIncorrect: break;
  }
  return search::CandidateStatus::kIncorrect;
}
}  // namespace

std::optional<CandidateRun> Optimizer::reused_run(const search::Candidate& c, const fs::path& iter_dir, ReuseMode mode) {
  if (!lookup_ || mode == ReuseMode::kNever || o_.remeasure) return std::nullopt;
  auto key = lookup_key(c);
  if (!key || !lookup_) return std::nullopt;
  auto found = lookup_->find_by_key(*key);
  if (!found) {
    util::progress_print(fmt::format("  warning: the results database: {}; nothing more is reused in this run", found.error().message));
    lookup_ = nullptr;
    return std::nullopt;
  }
  const util::Json champion = opponent_json(st_.champion->candidate);
  auto choice = decide_reuse(*found, o_.remeasure,
                             mode == ReuseMode::kRacedAgainstChampion ? std::optional<util::Json>(champion) : std::nullopt);
  if (choice.decision != ReuseDecision::kReuse) return std::nullopt;
  const db::Record& r = **found;
  CandidateRun cr;
  cr.candidate = c;
  cr.reused = r;
  cr.reuse_reason = choice.reason;
  cr.status = status_of(r.verdict);
  cr.note = r.note;
  cr.build.name = c.id;
  cr.build.status = compile::CompileStatus::kOk;  // built before; this run has no library of it (never crowned as is)
  cr.build.log_text = "not built: " + reused_marker(r);
  cr.outcome.status = runner::parse_status(r.run_status).value_or(cr.status == search::CandidateStatus::kOk ? runner::RunStatus::kOk
                                                                                                             : runner::RunStatus::kWrongResult);
  cr.outcome.message = r.note;
  cr.outcome.timing_method = r.key.timing_method;
  cr.outcome.samples_ms = r.samples_ms;
  if (cr.status == search::CandidateStatus::kOk && r.median_ms) {
    runner::TimingStats t = r.samples_ms.size() >= 2 ? runner::compute_stats(r.samples_ms) : runner::TimingStats{};
    t.median_ms = *r.median_ms;
    t.ci95_low_ms = r.ci95_low_ms.value_or(*r.median_ms);
    t.ci95_high_ms = r.ci95_high_ms.value_or(*r.median_ms);
    if (t.samples == 0) t.samples = static_cast<int>(r.samples_ms.size());
    cr.outcome.timing = t;
    cr.vs_champion = stored_comparison(r, champion, false);
    // Over a workload matrix the search ranks by the objective: the stored ratio against this very champion, else
    // the primary case's median (the record has no other).
    if (over_cases())
      if (auto g = stored_objective_ratio(r, champion)) cr.objective_ms = st_.champion->objective() * *g;
  }
  cr.search_s = tick();
  // The candidate's folder says what stood for it: its candidate.json and the record (reused.json).
  const fs::path cdir = iter_dir / "candidates" / c.id;
  std::error_code ec;
  fs::create_directories(cdir, ec);
  if (auto st = write_json(cdir / "candidate.json", "candidate", search::to_json(c)); !st) say("  {}", st.error().message);
  if (auto st = write_json(cdir / "reused.json", "reused_record",
                           {{"marker", reused_marker(r)}, {"reason", choice.reason}, {"record", db::to_json(r)}});
      !st)
    say("  {}", st.error().message);
  return cr;
}

// `budgeted`: candidates left when the time budget runs out are not measured (not recorded either: a resumed
// run with more budget may propose them again).
// Configurations with a record that may stand for them (`reuse`) are not compiled or measured (reused_run).
Result<std::vector<CandidateRun>> Optimizer::measure(std::vector<search::Candidate> cands, const fs::path& iter_dir,
                                                     const std::string& what, bool budgeted, ReuseMode reuse) {
  std::vector<std::optional<CandidateRun>> stored(cands.size());
  std::vector<search::Candidate> fresh;
  size_t reused = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    stored[i] = reused_run(cands[i], iter_dir, reuse);
    if (stored[i]) {
      ++reused;
      const auto& r = *stored[i];
      say("    {:<10} {:<10} {} ({})", r.candidate.id, search::candidate_status_name(r.status),
          r.outcome.timing ? fmt::format("{:.4f} ms", r.outcome.timing->median_ms) : r.note, reused_marker(*r.reused));
    } else {
      fresh.push_back(cands[i]);
    }
  }
  if (reused) say("  {}: {} of {} reused from the results database, not measured again (--remeasure measures them)", what, reused, cands.size());
  std::map<std::string, CandidateRun> measured;
  if (!fresh.empty()) {
    KOPT_TRY_ASSIGN(auto runs, measure_now(std::move(fresh), iter_dir, what, budgeted));
    for (auto& r : runs) measured[r.candidate.id] = std::move(r);
  }
  std::vector<CandidateRun> out;  // in the generator's order
  for (size_t i = 0; i < cands.size(); ++i) {
    if (stored[i]) {
      out.push_back(std::move(*stored[i]));
    } else if (auto it = measured.find(cands[i].id); it != measured.end()) {
      out.push_back(std::move(it->second));
    }
  }
  return out;
}

std::vector<Contender> Optimizer::contenders_of(const std::vector<CandidateRun>& runs) {
  // Ranked by what selection decides on: the weighted objective over the workload matrix where it was measured.
  std::vector<Contender> contenders;
  for (const auto& r : runs)
    if (r.status == search::CandidateStatus::kOk && r.outcome.timing) {
      Contender c{r.candidate.id, true, r.objective_ms.value_or(r.outcome.timing->median_ms),
                  static_cast<int>(r.candidate.methods.size())};
      if (auto mark = stored_champion(r.candidate)) {
        c.stored_champion_s = std::max<int64_t>(mark->recorded_unix_s, 1);
        c.stored_champion_run = mark->run_dir;
      }
      contenders.push_back(std::move(c));
    }
  return contenders;
}

// The newest mark of an earlier run's final champion under `c`'s record key (pick_finalists orders it first).
// A lookup that fails is a warning, said once, and ends the lookups for the rest of the run, as reused_run's.
std::optional<db::ChampionMark> Optimizer::stored_champion(const search::Candidate& c) {
  if (!lookup_ || c.id == "baseline") return std::nullopt;
  auto key = lookup_key(c);
  if (!key || !lookup_) return std::nullopt;
  const std::string hash = db::key_hash(*key);
  if (auto it = stored_champions_.find(hash); it != stored_champions_.end()) return it->second;
  auto marks = lookup_->champion_runs(hash);
  if (!marks) {
    util::progress_print(fmt::format("  warning: the results database: {}; no earlier champion is looked up", marks.error().message));
    lookup_ = nullptr;
    return std::nullopt;
  }
  return stored_champions_[hash] = marks->empty() ? std::nullopt : std::optional(marks->front());
}

// The run's final champion, once it passed its final checks, into the results database: a later run under the same
// key races it first among its finalists. The baseline is not marked (it is never a finalist). A failure is a
// warning: the database never fails a run.
void Optimizer::record_champion() {
  if (!sink_ || !st_.champion || st_.champion->candidate.id == "baseline" || !st_.verified_as_champion(st_.champion->candidate.id))
    return;
  auto key = lookup_key(st_.champion->candidate);
  if (!key || !sink_) return;
  db::ChampionMark m;
  m.key_hash = db::key_hash(*key);
  m.kernel_hash = key->kernel_hash;
  m.run_dir = dir_.string();
  if (auto st = sink_->record_champion(m); !st) {
    util::progress_print(fmt::format("  warning: the results database: {}; the champion is not marked", st.error().message));
    sink_ = nullptr;
  }
}

// Reused finalists that could be crowned are measured again, in full, until every finalist selection would see is
// either measured in this run or kept behind the champion by its stored figures (decide_race); each measured again
// replaces its reused run in `runs`.
Status Optimizer::race_reused_finalists(std::vector<CandidateRun>& runs, const fs::path& iter_dir) {
  const util::Json champion = opponent_json(st_.champion->candidate);
  // Each round measures at least one reused run again (it is then measured), so this ends.
  for (;;) {
    std::vector<search::Candidate> again;
    for (const auto& f : pick_finalists(contenders_of(runs), static_cast<size_t>(o_.finalists))) {
      for (auto& r : runs) {
        if (r.candidate.id != f.id || !r.reused) continue;
        const bool tie_crowns = r.candidate.methods.size() < st_.champion->candidate.methods.size();
        auto d = decide_race(*r.reused, champion, st_.champion->median_ms, over_cases(), tie_crowns);
        r.reuse_reason = d.reason;
        if (d.decision == RaceDecision::kRace) {
          say("    {:<10} reused finalist, {}: raced again", r.candidate.id, d.reason);
          again.push_back(r.candidate);
        }
      }
    }
    if (again.empty() || util::interrupted()) return ok_status();
    KOPT_TRY_ASSIGN(auto fresh, measure(again, iter_dir, "reused finalists raced again", false, ReuseMode::kNever));
    for (auto& f : fresh) {
      for (auto& r : runs)
        if (r.candidate.id == f.candidate.id) r = f;
      st_.raced_again.push_back(f.candidate.id);
    }
    if (fresh.size() < again.size()) return ok_status();  // cut short (Ctrl-C): selection decides on what there is
  }
}

// The built-in generator's proposals are kept under the state they came from and, that state reached again (a second
// identical run), proposed again instead of what this run's figures would suggest (loop/proposals.h). Not with
// --remeasure, another generator, or without the results database. A failure to look up or keep them is a warning.
Result<search::GeneratorOutput> Optimizer::propose(search::Generator& gen, const search::GeneratorInput& in) {
  Result<search::GeneratorOutput> out = internal_error("not run");
  {
    Phase p(*this, "generate");
    out = gen.generate(in);
  }
  if (!out || o_.generator.kind != GeneratorKind::kBuiltin || o_.remeasure || (!lookup_ && !sink_)) return out;
  auto base = lookup_key(base_candidate_);
  if (!base) return out;
  const std::string state = proposal_state_hash(db::key_hash(*base), gen.name(), in);
  if (lookup_) {
    auto kept = lookup_->proposal(state);
    if (!kept) {
      util::progress_print(fmt::format("  warning: the results database: {}; no proposals are looked up", kept.error().message));
      lookup_ = nullptr;
    } else if (*kept) {
      if (auto st = apply_proposal((*kept)->body, in.baseline_source, *out); !st) {
        say("  warning: {}; the generator's own proposals stand", st.error().message);
      } else {
        out->notes.insert(out->notes.begin(), fmt::format("the proposals of {} at its iteration {}: the same state (the same champion, "
                                                          "configurations measured and verdicts), kept in the results database",
                                                          (*kept)->run_dir, (*kept)->iteration));
        return out;
      }
    }
  }
  if (!sink_) return out;
  db::ProposalMark m;
  m.state_hash = state;
  m.kernel_hash = base->kernel_hash;
  m.run_dir = dir_.string();
  m.iteration = in.iteration;
  m.body = proposal_json(*out, in.baseline_source);
  if (auto st = sink_->record_proposal(m); !st) {
    util::progress_print(fmt::format("  warning: the results database: {}; the proposals are not kept", st.error().message));
    sink_ = nullptr;
  }
  return out;
}

util::Json Optimizer::raced_json(const CandidateRun& r) const {
  if (!r.vs_champion) return nullptr;
  util::Json j = {{"against", opponent_json(st_.champion->candidate)}, {"primary", runner::to_json(*r.vs_champion)}};
  if (over_cases() && r.over_cases) {
    j["over_cases"] = runner::to_json(r.over_cases->as_paired());
    j["objective_ratio"] = r.over_cases->geomean_ratio;
  }
  return j;
}

}  // namespace kopt::loop
