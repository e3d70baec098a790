// The warm start and the strategy memory inside the loop (issue 39 item 2(b) and 2(c)): what the results database holds
// of other shapes and of past runs' methods, looked up once, turned into the generator's suggestions and method bonus.
// The decisions are loop/warm_start.h's and loop/strategy_memory.h's; nothing here trusts a stored figure: every
// warm-start point is measured in this run like any candidate, and a bonus only reorders methods whose evidence fires.
#include "loop/optimizer.h"
#include "loop/strategy_memory.h"
#include "loop/warm_start.h"

namespace kopt::loop {

// Before the first iteration: the nearest other shapes' best configurations (loop/warm_start.h) into st_.warm_start,
// which lead the first design (GeneratorInput::warm_start). Nothing without a lookup, --no-warm-start, or on resume.
void Optimizer::plan_warm_start() {
  if (!o_.warm_start || !lookup_ || !space_ || st_.iterations_done > 0 || !st_.warm_start.empty()) return;
  if (o_.generator.kind != GeneratorKind::kBuiltin) return;  // other generators write their own candidates
  if (!ensure_record_context() || !lookup_) return;
  auto records = lookup_->kernel_records(record_ctx_->kernel_hash);
  if (!records) {
    util::progress_print(fmt::format("  warning: the results database: {}; no warm start", records.error().message));
    return;
  }
  WarmStartContext ctx{record_ctx_->kernel_hash, record_ctx_->dims, record_ctx_->dtypes, record_ctx_->gpu_model};
  st_.warm_start = warm_start_points(*records, ctx, *space_, reg_);
  if (st_.warm_start.empty()) return;
  say("warm start: {} configuration(s) of the nearest shapes measured before lead the first design (each measured here):",
      st_.warm_start.size());
  for (const auto& p : st_.warm_start) say("  {}  ({})", p.key, p.reason());
}

void Optimizer::note_warm_start(const std::vector<search::Candidate>& cands) {
  for (auto& p : st_.warm_start) {
    if (!p.candidate_id.empty()) continue;
    for (const auto& c : cands)
      if (c.config && *c.config == p.config) {
        p.candidate_id = c.id;
        break;
      }
  }
}

// The strategy memory's bonus per method for the champion's roofline position (loop/strategy_memory.h), recorded in
// st_.strategy_memory; empty without a lookup or with --no-strategy-memory.
std::map<std::string, double> Optimizer::strategy_memory_bonus() {
  if (!o_.strategy_memory || !lookup_ || !ensure_record_context() || !lookup_) return {};
  auto outcomes = lookup_->method_outcomes(record_ctx_->gpu_model);
  if (!outcomes) {
    util::progress_print(fmt::format("  warning: the results database: {}; no strategy memory", outcomes.error().message));
    return {};
  }
  const auto tallies = tally_outcomes(*outcomes, position_, dir_.string());
  auto bonus = method_bonus(tallies);
  st_.strategy_memory = bonus.empty() ? util::Json(nullptr) : strategy_memory_json(position_, tallies, bonus);
  return bonus;
}

void Optimizer::record_method_outcomes(int iteration, const std::vector<search::MethodVerdict>& verdicts) {
  if (!sink_ || verdicts.empty() || !ensure_record_context() || !sink_) return;
  const double champion_ms = st_.champion ? st_.champion->median_ms : 0;
  for (const auto& v : verdicts) {
    db::MethodOutcome m;
    m.gpu_model = record_ctx_->gpu_model;
    m.kernel_hash = record_ctx_->kernel_hash;
    m.run_dir = dir_.string();
    m.iteration = iteration;
    m.position = position_;
    m.method = v.method;
    m.verdict = std::string(search::verdict_name(v.verdict));
    m.outcome = outcome_of(m.verdict, v.measured_gain);
    if (v.saved_ms && champion_ms > 0) m.saved_fraction = *v.saved_ms / champion_ms;
    if (auto st = sink_->record_method_outcome(m); !st) {
      util::progress_print(fmt::format("  warning: the results database: {}; the run goes on without recording",
                                       st.error().message));
      sink_ = nullptr;
      return;
    }
  }
}

}  // namespace kopt::loop
