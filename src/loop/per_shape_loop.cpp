// The per-shape dispatch in the loop (--dispatch; issue 39 item 3; loop/per_shape.h; docs/GATES.md "The per-shape
// dispatch"). After the search and the held-out shapes:
//  1. a shortlist: at each case, the two configurations (candidates correct at every case and rejected by no gate, and
//     the baseline) whose own median there, from their races at every case, is below the final champion's;
//  2. each shortlisted one raced against the final champion at every case (paired: the reliable signal; the search's
//     races were against whichever champion stood then), and the plan (plan_dispatch: the champion unless a contender
//     is faster beyond the noise);
//  3. a worthwhile plan (two configurations or more) becomes champion/dispatch/: each configuration's library as built
//     and checked by the run (config_<k>.so) with its source (config_<k>.cu, its defines written in), the dispatcher
//     (dispatch.cu, built by the compile pool), dispatch.json; the dispatcher checked at every case and held-out shape
//     where the baseline is correct, and paired against the champion at every case.
// Everything is recorded in dispatch/ of the run directory and gate_records["dispatch"] (summary.json "dispatch").
#include <algorithm>

#include "loop/per_shape_steps.h"
#include "loop/phase.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {

// The values solve()'s scalar parameters take at a case: the manifest's "scalars" where it has them, else the dims of
// the same names.
DimValues scalar_point(const contract::KernelSignature& sig, const CaseData& cd) {
  DimValues v;
  for (const auto& p : sig.params) {
    if (p.kind != contract::ParamKind::kScalar) continue;
    if (cd.manifest.is_object() && cd.manifest.contains("scalars") && cd.manifest["scalars"].contains(p.name) &&
        cd.manifest["scalars"][p.name].is_number())
      v[p.name] = static_cast<int64_t>(cd.manifest["scalars"][p.name].get<double>());
    else if (auto it = cd.c.realised.find(p.name); it != cd.c.realised.end())
      v[p.name] = it->second;
  }
  return v;
}

}  // namespace

// --dispatch: after the held-out shapes, the configurations measured fastest at some case raced against the final
// champion at every case, the plan, and when it is worthwhile champion/dispatch/ built, checked at every case and
// held-out shape and timed against the champion (gate_records["dispatch"]).
void Optimizer::per_shape_dispatch() {
  if (!o_.gates.dispatch || !st_.champion || !st_.baseline || util::interrupted()) return;
  Phase phase(*this, "dispatch");
  DispatchSteps steps{*this, dir_ / "dispatch"};
  fs::create_directories(steps.ddir);
  util::Json record = {{"emitted", false}};
  auto finish_record = [&](const std::string& reason) {
    if (!reason.empty()) record["reason"] = reason;
    if (auto st = write_json(steps.ddir / "dispatch.json", "dispatch", record); !st) say("  {}", st.error().message);
    st_.gate_records["dispatch"] = record;
  };
  if (cases_.size() < 2) {  // the matrix merged its cases (small dims), or the user's dims alone
    say("per-shape dispatch: not made: the run has one case");
    return finish_record("the run has one case (the workload matrix's cases coincided): nothing to dispatch on");
  }
  if (triton()) {
    say("per-shape dispatch: not made: a Triton kernel's dispatch is not emitted yet (CUDA and CUTLASS only)");
    return finish_record("a Triton kernel's dispatch is not emitted yet (CUDA and CUTLASS only)");
  }
  std::vector<DispatchCase> cases;
  for (const auto& cd : cases_) cases.push_back({cd.c.name, cd.c.weight, scalar_point(prep_.signature, cd)});

  // 1. The shortlist.
  const std::string champ_id = st_.champion->candidate.id;
  const std::vector<DispatchConfig> pool = steps.pool(champ_id);
  const std::vector<size_t> shortlist = steps.shortlist(pool);
  say("per-shape dispatch: {} configuration(s) raced against the champion at every case...", shortlist.size());

  // 2. Raced against the final champion at every case; the plan.
  std::vector<DispatchContender> contenders;
  std::vector<DispatchConfig> raced;
  util::Json races = util::Json::array();
  for (size_t j : shortlist) {
    auto race = steps.race(pool[j]);
    if (!race) return;  // interrupted
    races.push_back(race->record);
    if (!race->correct) continue;
    contenders.push_back(race->contender);
    raced.push_back(pool[j]);
  }
  record["races"] = races;
  const DispatchPlan plan = plan_dispatch(cases, champ_id, contenders);
  record["plan"] = to_json(plan, cases);
  if (!plan.worthwhile) {
    say("per-shape dispatch: none: {}", plan.reason);
    return finish_record(plan.reason);
  }
  util::Json emitted = steps.emit(steps.plan_configs(plan, champ_id, raced), plan, cases);
  record.update(emitted);
  finish_record(record.value("emitted", false) ? "" : record.value("reason", std::string()));
}

std::vector<Optimizer::DispatchConfig> Optimizer::DispatchSteps::pool(const std::string& champ_id) {
  std::set<std::string> rejected;
  if (o.st_.gate_records.contains("rejected"))
    for (const auto& r : o.st_.gate_records["rejected"]) rejected.insert(r.value("candidate", std::string()));
  std::vector<DispatchConfig> pool;
  if (champ_id != "baseline" && o.st_.gate_records.contains("case_table")) {
    DispatchConfig b{o.st_.baseline->candidate, o.st_.baseline->library, true, {}};
    for (const auto& row : o.st_.gate_records["case_table"]["cases"])
      b.medians.push_back(row["baseline_ms"].is_number() ? std::optional<double>(row["baseline_ms"].get<double>())
                                                         : std::nullopt);
    pool.push_back(b);
  }
  std::lock_guard<std::mutex> lock(o.case_medians_mu_);
  for (const auto& m : o.st_.history) {
    const auto& id = m.candidate.id;
    if (m.status != search::CandidateStatus::kOk || id == champ_id || rejected.count(id) || !o.case_medians_.count(id) ||
        !o.libraries_.count(id))
      continue;
    pool.push_back({m.candidate, o.libraries_[id], false, o.case_medians_[id]});
  }
  return pool;
}

std::vector<size_t> Optimizer::DispatchSteps::shortlist(const std::vector<DispatchConfig>& pool) const {
  const auto& cases = o.cases_;
  std::vector<std::optional<double>> champ_ms(cases.size());
  if (o.st_.gate_records.contains("case_table"))
    for (size_t i = 0; i < cases.size() && i < o.st_.gate_records["case_table"]["cases"].size(); ++i)
      if (const auto& row = o.st_.gate_records["case_table"]["cases"][i]; row["champion_ms"].is_number())
        champ_ms[i] = row["champion_ms"].get<double>();
  std::vector<size_t> shortlist;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<size_t> here;
    for (size_t j = 0; j < pool.size(); ++j)
      if (i < pool[j].medians.size() && pool[j].medians[i] && (!champ_ms[i] || *pool[j].medians[i] < *champ_ms[i]))
        here.push_back(j);
    std::sort(here.begin(), here.end(), [&](size_t a, size_t b) { return *pool[a].medians[i] < *pool[b].medians[i]; });
    for (size_t k = 0; k < here.size() && k < 2; ++k)
      if (std::find(shortlist.begin(), shortlist.end(), here[k]) == shortlist.end()) shortlist.push_back(here[k]);
  }
  return shortlist;
}

std::optional<Optimizer::DispatchSteps::Race> Optimizer::DispatchSteps::race(const DispatchConfig& cfg) {
  Race race;
  race.contender = {cfg.candidate.id, {}};
  util::Json per = util::Json::array();
  for (const auto& cd : o.cases_) {
    if (util::interrupted()) return std::nullopt;
    auto r = o.run({fs::path(o.st_.champion->library), cfg.library},
                   {&o.st_.champion->candidate, cfg.baseline ? nullptr : &cfg.candidate},
                   ddir / "races" / cfg.candidate.id / ("race_" + cd.c.name + ".json"), runner::RunMode::kPaired, {}, true,
                   cd.golden_dir);
    auto mine = raced_outcome(r);
    if (mine.status != runner::RunStatus::kOk) {
      per.push_back({{"case", cd.c.name}, {"status", runner::status_name(mine.status)}, {"message", mine.message}});
      race.correct = false;
      break;
    }
    auto champ = r.details["libs"][0].value("samples_ms", std::vector<double>{});
    auto cmp = runner::compare_paired(champ, mine.samples_ms);
    race.contender.vs_champion.push_back(cmp);
    per.push_back({{"case", cd.c.name}, {"status", "ok"}, {"comparison", runner::to_json(cmp)}});
  }
  race.record = {{"config", cfg.candidate.id}, {"correct", race.correct}, {"cases", per}};
  return race;
}

std::vector<Optimizer::DispatchConfig> Optimizer::DispatchSteps::plan_configs(
    const DispatchPlan& plan, const std::string& champ_id, const std::vector<DispatchConfig>& raced) const {
  std::vector<DispatchConfig> configs;
  for (const auto& id : plan.configs) {
    if (id == champ_id) {
      configs.push_back({o.st_.champion->candidate, o.st_.champion->library, false, {}});
      continue;
    }
    for (const auto& r : raced)
      if (r.candidate.id == id) configs.push_back(r);
  }
  return configs;
}

}  // namespace kopt::loop
