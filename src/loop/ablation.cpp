// What each method of a new champion is worth: the champion against itself with the method's guard (or flags)
// off, in paired rounds, then a verdict from that attribution and the SASS evidence (decisions.h: classify).
#include <algorithm>

#include "compile/command.h"
#include "loop/optimizer.h"
#include "loop/phase.h"
#include "search/registry.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {
sass::VerifyStatus sass_status_of(const util::Json& sass, const std::string& method) {
  if (!sass.contains("methods") || !sass["methods"].contains(method)) return sass::VerifyStatus::kInconclusive;
  std::string s = sass["methods"][method].value("status", std::string("inconclusive"));
  for (auto vs : {sass::VerifyStatus::kPass, sass::VerifyStatus::kFail, sass::VerifyStatus::kInconclusive,
                  sass::VerifyStatus::kNotApplicable, sass::VerifyStatus::kToolError})
    if (sass::to_string(vs) == s) return vs;
  return sass::VerifyStatus::kInconclusive;
}
}  // namespace

// The variants an ablation measures: every ablatable method's variant (the champion with it off) and every parameter the
// champion changed from the baseline reverted alone, in one batch (`offs`): they compile in parallel and each is raced
// against the champion (CUDA) as it is built; that race is the attribution.
namespace {
struct AblationPlan {
  struct Method {
    std::string method;
    bool ablatable = false;
    std::optional<search::Candidate> off;
  };
  struct Param {
    ParamAblation record;
    std::optional<search::Candidate> off;
  };
  std::vector<Method> methods;
  std::vector<Param> params;
  std::vector<search::Candidate> offs;
};

void plan_method_variants(AblationPlan& plan, const search::Candidate& cc, bool triton, const search::SearchSpace* space,
                          const std::string& source_text) {
  for (const auto& m : cc.methods) {
    AblationPlan::Method pl{m};
    bool guarded = cc.guards.count(m) && cc.guards.at(m) &&
                   std::find(cc.not_ablatable.begin(), cc.not_ablatable.end(), m) == cc.not_ablatable.end();
    const search::Method* meth = search::find_method(m);
    bool flag_method = meth && meth->is_flag_method();
    pl.ablatable = guarded || flag_method;
    if (pl.ablatable) {
      search::Candidate off = cc;
      off.id = cc.id + "_no_" + m;
      off.methods.erase(std::remove(off.methods.begin(), off.methods.end(), m), off.methods.end());
      if (flag_method) {
        for (const auto& f : meth->flags) off.flags.erase(std::remove(off.flags.begin(), off.flags.end(), f), off.flags.end());
      } else {
        if (triton) off.constexprs[compile::method_guard(m)] = 0;
        else off.defines[compile::method_guard(m)] = "0";
        off.guards[m] = false;
      }
      // Its place in the space, so the search learns from what the ablation measures (GeneratorInput::ablations).
      if (const int d = space ? space->method_dim(m) : -1; d >= 0 && off.config && static_cast<size_t>(d) < off.config->size())
        (*off.config)[static_cast<size_t>(d)] = space->dims[static_cast<size_t>(d)].default_index;
      off.content_hash = search::candidate_hash(source_text, off);
      pl.off = off;
      plan.offs.push_back(off);
    }
    plan.methods.push_back(pl);
  }
}

// Every parameter the champion changed from the baseline, reverted alone to the baseline's value: what each change
// is worth (issue 37: on sgemm two methods explained 1.36 of the 2.16 ms gained; the rest was parameters). A
// flag method's parameter belongs to its method (ablated above); a variant that breaks a constraint is not built.
void plan_param_variants(AblationPlan& plan, const search::Candidate& cc, const search::Candidate& base,
                         const search::SearchSpace* space, const std::string& source_text, int iteration) {
  for (const auto& [name, value] : cc.params) {
    auto b = base.params.find(name);
    if (b == base.params.end() || b->second == value) continue;
    const int d = space ? space->dim_index(name) : -1;
    if (d < 0 || space->dims[static_cast<size_t>(d)].kind != search::DimKind::kParam) continue;
    const search::Dim& dim = space->dims[static_cast<size_t>(d)];
    AblationPlan::Param pp;
    pp.record.iteration = iteration;
    pp.record.champion_id = cc.id;
    pp.record.param = name;
    pp.record.champion_value = value;
    pp.record.baseline_value = b->second;
    search::Candidate off = cc;
    off.id = cc.id + "_base_" + name;
    off.params[name] = b->second;
    if (dim.param_kind == search::ParamKind::kDefine) off.defines[name] = std::to_string(b->second);
    else if (dim.param_kind == search::ParamKind::kConstexpr) off.constexprs[name] = b->second;
    else off.launch[std::string(search::param_kind_name(dim.param_kind))] = b->second;
    auto at = std::find(dim.values.begin(), dim.values.end(), b->second);
    if (off.config && static_cast<size_t>(d) < off.config->size() && at != dim.values.end()) {
      (*off.config)[static_cast<size_t>(d)] = static_cast<int>(at - dim.values.begin());
      if (!space->valid(*off.config)) {
        pp.record.effect = ParamEffect::kInvalid;
        pp.record.note = fmt::format("{}={} with the champion's other values breaks a constraint of the space ({})", name,
                                     b->second, space->key(*off.config));
        plan.params.push_back(std::move(pp));
        continue;
      }
    }
    off.content_hash = search::candidate_hash(source_text, off);
    pp.record.variant_id = off.id;
    pp.off = off;
    plan.offs.push_back(off);
    plan.params.push_back(std::move(pp));
  }
}
}  // namespace

// ablate()'s verdicts from its plan's measured variants: each method's, then each parameter's, from the variant's
// paired comparison with the champion.
struct Optimizer::AblationSteps {
  Optimizer& o;
  util::Json method_verdicts(const AblationPlan& plan, const CandidateRun& champ_run,
                             const std::map<std::string, CandidateRun>& measured, int iteration, const fs::path& iter_dir);
  util::Json param_verdicts(AblationPlan& plan, const std::map<std::string, CandidateRun>& measured, const fs::path& iter_dir);
  std::optional<runner::PairedComparison> variant_comparison(const CandidateRun& off, const std::string& what,
                                                             const fs::path& iter_dir);
};

// The champion's methods, each switched off alone, and its parameters that differ from the baseline's, each reverted
// alone to the baseline's value: {"methods": [...], "params": [...]} (ablation.json; the parameters also in
// st_.param_ablations). `variants`, when given, receives the measured variants.
Result<util::Json> Optimizer::ablate(const CandidateRun& champ_run, int iteration, const fs::path& iter_dir,
                                     std::vector<CandidateRun>* variants) {
  AblationSteps steps{*this};
  Phase p(*this, "ablation");
  const auto& cc = champ_run.candidate;
  AblationPlan plan;
  const search::SearchSpace* space = space_ ? &*space_ : nullptr;
  plan_method_variants(plan, cc, triton(), space, source_text_);
  plan_param_variants(plan, cc, base_candidate_, space, source_text_, iteration);
  std::map<std::string, CandidateRun> measured;
  if (!plan.offs.empty()) {
    const size_t method_variants = plan.offs.size() - static_cast<size_t>(std::count_if(
        plan.params.begin(), plan.params.end(), [](const AblationPlan::Param& pp) { return pp.off.has_value(); }));
    KOPT_TRY_ASSIGN(auto runs, measure(plan.offs, iter_dir / "ablation",
                                       fmt::format("ablation of {} method(s) and {} parameter(s)", method_variants,
                                                   plan.offs.size() - method_variants),
                                       false, ReuseMode::kRacedAgainstChampion));
    for (auto& r : runs) {
      st_.ablations.push_back(measurement_of(r, iteration));
      measured[r.candidate.id] = std::move(r);
    }
  }
  util::Json ablation = steps.method_verdicts(plan, champ_run, measured, iteration, iter_dir);
  util::Json params = steps.param_verdicts(plan, measured, iter_dir);
  KOPT_TRY(write_json(iter_dir / "sass_verification.json", "sass_verification", champ_run.sass));
  if (variants)
    for (auto& [id, r] : measured) variants->push_back(std::move(r));
  return util::Json{{"methods", ablation}, {"params", params}};
}

std::optional<runner::PairedComparison> Optimizer::AblationSteps::variant_comparison(const CandidateRun& off, const std::string& what,
                                                                      const fs::path& iter_dir) {
  // A measured variant's paired comparison with the champion: its race (CUDA), or a paired run now (Triton).
  if (off.vs_champion) return off.vs_champion;
  return o.paired(o.st_.champion->library, o.st_.champion->candidate, off.build.library, off.candidate,
                iter_dir / "ablation" / ("paired_" + what + ".json"));
}

util::Json Optimizer::AblationSteps::method_verdicts(const AblationPlan& plan, const CandidateRun& champ_run,
                                      const std::map<std::string, CandidateRun>& measured, int iteration, const fs::path& iter_dir) {
  util::Json ablation = util::Json::array();
  for (const auto& pl : plan.methods) {
    if (util::interrupted()) break;
    const std::string& m = pl.method;
    auto sass_status = sass_status_of(champ_run.sass, m);
    std::optional<Attribution> attr;
    util::Json entry = {{"method", m}, {"sass", sass::to_string(sass_status)}};
    if (pl.off) {
      auto it = measured.find(pl.off->id);
      if (it != measured.end() && it->second.status == search::CandidateStatus::kOk) {
        if (auto cmp = variant_comparison(it->second, m, iter_dir)) {
          attr = attribution_from(*cmp);
          entry["attribution_ms"] = {{"median", attr->median_ms}, {"ci95_low", attr->ci95_low_ms}, {"ci95_high", attr->ci95_high_ms}};
          entry["comparison"] = runner::to_json(*cmp);
        }
      } else if (it != measured.end()) {
        entry["ablated_status"] = search::candidate_status_name(it->second.status);
        entry["ablated_note"] = it->second.note;
      }
    }
    auto v = classify(pl.ablatable, sass_status, attr);
    entry["verdict"] = search::verdict_name(v);
    o.say("  ablation {}: {}", m, search::verdict_name(v));
    search::MethodVerdict mv{m, v, iteration, attr && attr->significant(), o.st_.metrics};
    if (attr) {
      mv.saved_ms = attr->median_ms;
      mv.saved_ci95_low_ms = attr->ci95_low_ms;
      mv.saved_ci95_high_ms = attr->ci95_high_ms;
    }
    o.st_.verdicts.push_back(mv);
    ablation.push_back(entry);
  }
  return ablation;
}

util::Json Optimizer::AblationSteps::param_verdicts(AblationPlan& plan, const std::map<std::string, CandidateRun>& measured, const fs::path& iter_dir) {
  util::Json params = util::Json::array();
  for (auto& pp : plan.params) {
    if (util::interrupted()) break;
    ParamAblation& rec = pp.record;
    util::Json entry;
    if (pp.off) {
      auto it = measured.find(pp.off->id);
      std::optional<runner::PairedComparison> cmp;
      if (it != measured.end() && it->second.status == search::CandidateStatus::kOk)
        cmp = variant_comparison(it->second, "param_" + rec.param, iter_dir);
      if (cmp) {
        rec.saved = attribution_from(*cmp);
        rec.effect = classify_param(*rec.saved);
      } else {
        rec.effect = ParamEffect::kNotMeasured;
        rec.note = it == measured.end() ? std::string("not measured (interrupted or out of time)")
                                        : std::string(search::candidate_status_name(it->second.status)) +
                                              (it->second.note.empty() ? std::string() : ": " + it->second.note);
      }
      entry = to_json(rec);
      if (cmp) entry["comparison"] = runner::to_json(*cmp);
    } else {
      entry = to_json(rec);
    }
    o.say("  ablation of {} ({} -> {}): {}", rec.param, rec.champion_value, rec.baseline_value, param_effect_name(rec.effect));
    o.st_.param_ablations.push_back(rec);
    params.push_back(entry);
  }
  return params;
}

// The variants an ablation measured clearly faster than the champion (their race's 95% CI, over the workload
// matrix where there is one, entirely below 1) are selected as candidates are; the crowned one joins the history.
// Returns the new champion's run, or nullopt.
Result<std::optional<CandidateRun>> Optimizer::adopt_faster_variants(std::vector<CandidateRun> variants, int iteration,
                                                                     const fs::path& iter_dir) {
  // Live on the H200 (2026-12-01, seed 1 of sgemm_tunable 4096^3): the ablation of the last champion measured it
  // 5.6% faster with cp_async_pipeline off, within 1% of the space's best, and the run ended with the slower one.
  std::vector<CandidateRun> faster;
  for (auto& v : variants) {
    if (v.status != search::CandidateStatus::kOk || !v.outcome.timing) continue;
    if (auto cmp = raced_comparison(v); cmp && cmp->ci95_high < 1.0) faster.push_back(std::move(v));
  }
  if (faster.empty()) return std::optional<CandidateRun>();
  say("  {} ablation variant(s) faster than the champion: selected as candidates", faster.size());
  // A reused variant is crowned only on a race of this run (loop/reuse.h).
  KOPT_TRY(race_reused_finalists(faster, iter_dir));
  // A variant raced again was measured in this run: its ablation record says so (summary.md's reuse count).
  for (const auto& v : faster)
    for (auto& a : st_.ablations)
      if (a.candidate.id == v.candidate.id && !a.reused.is_null() && !v.reused) a = measurement_of(v, a.iteration);
  const std::string before = st_.champion->candidate.id;
  KOPT_TRY_ASSIGN(auto sel, select(faster, iter_dir));
  if (st_.champion->candidate.id == before) return std::optional<CandidateRun>();
  for (auto& v : faster) {
    if (v.candidate.id != st_.champion->candidate.id) continue;
    // An evaluation of the run from now on, no longer only an ablation's measurement.
    st_.ablations.erase(std::remove_if(st_.ablations.begin(), st_.ablations.end(),
                                       [&](const search::Measurement& m) { return m.candidate.id == v.candidate.id; }),
                        st_.ablations.end());
    record_history({v}, iteration);
    return std::optional<CandidateRun>(std::move(v));
  }
  return std::optional<CandidateRun>();
}

}  // namespace kopt::loop
