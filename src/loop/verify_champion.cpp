// --champion-gates final: the safety gates on the champion the search ends with, falling back through the champions
// it replaced (docs/GATES.md).
#include <algorithm>

#include "loop/optimizer.h"
#include "loop/phase.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

Dims Optimizer::ephemeral_seed_dims() const { return cases_.empty() ? o_.job.dims : cases_[primary_].c.realised; }

uint64_t Optimizer::primary_working_set_bytes() const {
  if (!ws_model_) return 0;
  auto w = workload::estimate(*ws_model_, ephemeral_seed_dims());
  return w ? static_cast<uint64_t>(std::max<int64_t>(w->bytes, 0)) : 0;
}

void Optimizer::begin_after_search() {
  // The seed first: the final champion's check waits for it after its determinism and sanitizer checks (a few
  // seconds), while the held-out shapes' golden data is wanted only by their timings, later. Made after the search
  // and held in memory only, as when verify_champion() asks for it (contract/ephemeral_seed.h).
  if (o_.gates.champion_gates == ChampionGates::kFinal && st_.champion && !st_.verified_as_champion(st_.champion->candidate.id) &&
      !util::interrupted())
    lab_.begin_ephemeral_seed(ephemeral_seed_dims());
  prefetch_holdout_golden();
}

Status Optimizer::verify_champion(const fs::path& dir) {
  if (o_.gates.champion_gates != ChampionGates::kFinal) return ok_status();
  if (!st_.champion || st_.verified_as_champion(st_.champion->candidate.id)) return ok_status();
  Phase p(*this, "selection");
  util::Json records = util::Json::array();
  // The ephemeral seed, made once now that the search is over (nothing is timed meanwhile; begun by
  // begin_after_search where it could be), at the primary case's golden data; held (kopt not dumpable) until every
  // champion that needs it was checked.
  std::optional<Result<contract::EphemeralSeedPtr>> ephemeral;
  while (st_.champion && !st_.verified_as_champion(st_.champion->candidate.id) && !util::interrupted()) {
    const ChampionRecord c = *st_.champion;
    say("verifying the final champion {} (determinism, the sanitizer, then the ephemeral seed)...", c.candidate.id);
    util::Json rec = {{"candidate", c.candidate.id}};
    std::optional<std::string> why, reason;  // what is said, what the rejection records (as selection's)
    RejectGate gate = RejectGate::kDeterminism;
    // The sanitizer's tools (one-shot children under compute-sanitizer) beside the determinism check and the ephemeral
    // seed's check: none of them times anything, and nothing timed or profiled follows before all three end (issue
    // 36). Judged in the order they ran in before: determinism, the sanitizer, the ephemeral seed; what a failed gate
    // makes moot is not recorded.
    auto sanitizing = start_sanitizer_gate(c.library, c.candidate, dir / "verification", "(the final champion)");
    std::optional<GateCheck> seed_check;
    auto w = determinism_gate(c.library, c.candidate, dir / "verification", rec);
    if (!w) {
      if (!ephemeral) ephemeral = lab_.ephemeral_seed(ephemeral_seed_dims());
      seed_check = ephemeral_check(c.library, c.candidate, *ephemeral, dir / "verification");
    }
    auto sanitized = sanitizing.get();
    if (w) {
      why = reason = *w;
    } else if (auto u = record_sanitizer_gate(std::move(sanitized), c.candidate, dir / "verification", rec)) {
      why = "sanitizer: " + *u;
      reason = *u;
      gate = RejectGate::kSanitizer;
    } else if (auto e = record_ephemeral(std::move(*seed_check), c.candidate, rec)) {
      why = "ephemeral seed: " + *e;
      reason = *e;
      gate = RejectGate::kEphemeralSeed;
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
    std::vector<CandidateRun> pool = fallback_pool(back);
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

// Up to three candidates measured while a rejected champion was champion that may beat the one it replaced (`back`),
// by the objective, fastest first, each with its library (as this process built it, or where the run directory keeps it).
std::vector<CandidateRun> Optimizer::fallback_pool(const ChampionRecord& back) const {
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
  return pool;
}

}  // namespace kopt::loop
