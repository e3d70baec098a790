// The run record: the phase clock, the search clock, state.json after every step (what --resume reads), stop.json,
// and how the run ends (finish, a gate's stop, an interrupt, a failure). Every write is atomic and its failure is
// reported, never dropped. The summary and the champion's files are in summary.cpp.
#include "loop/optimizer.h"
#include "loop/phase.h"
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

void Optimizer::say_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(say_mu_);
  if (progress_)
    progress_(line);
  else
    util::progress_print(line);  // above a progress bar
}

void Optimizer::flush_phase(Clock::time_point now) {
  auto& [name, since] = phase_stack_.back();
  st_.phase_seconds[name] += std::chrono::duration<double>(now - since).count();
  since = now;
}

Status Optimizer::write_json(const fs::path& path, const std::string& kind, const util::Json& body) {
  return util::write_json_atomic(path, kind, body);
}

void Optimizer::start_search_clock() {
  clock_.start_search(st_.stop.search_s);
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
  if (auto s = clock_.search_s()) st_.stop.search_s = *s;
  st_.wall.whole_s = elapsed_s();
  return st_.stop.search_s;
}

bool Optimizer::budget_spent() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return st_.stop.time_budget_s > 0 && st_.stop.search_s >= st_.stop.time_budget_s;
}

std::optional<double> Optimizer::budget_left_s() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (st_.stop.time_budget_s <= 0) return std::nullopt;
  return std::max(0.0, st_.stop.time_budget_s - st_.stop.search_s);
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

RunOutcome Optimizer::outcome(RunEnd end, std::optional<Error> error, std::string message) const {
  return {end, std::move(error), std::move(message), dir_};
}

RunOutcome Optimizer::fail(const Error& e) {
  util::note_failure(e.message);
  return outcome(RunEnd::kFailed, e,
                 fmt::format("kopt optimize: {}\n  run directory: {} (state.json holds the last completed step; after fixing "
                             "the cause, continue with: kopt optimize --resume {})\n",
                             e.message, dir_.string(), dir_.string()));
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
  return outcome(RunEnd::kGateStopped, e, std::move(message));
}

RunOutcome Optimizer::generator_stopped(const Error& e) {
  st_.stop_reason = StopReason::kNone;  // not finished: the generator can be retried with --resume
  st_.stop_detail = "generator: " + e.message;
  util::note_failure("the generator stopped: " + e.message + " (resumable: kopt optimize --resume " + dir_.string() + ")");
  Status written = save_state();
  if (written) written = write_json(dir_ / "stop.json", "stop", {{"stage", "generator"}, {"reason", e.message}, {"resumable", true}});
  if (written) written = write_summary();
  std::string again = "kopt optimize --resume " + dir_.string();
  if (o_.generator.kind == GeneratorKind::kLlm) again += " [--llm-url URL] [--llm-model MODEL] [--llm-key-env VAR]";
  std::string message = fmt::format("kopt optimize: the generator stopped: {}\n  run directory: {}; after fixing the cause, "
                                    "continue with:\n  {}\n",
                                    e.message, dir_.string(), again);
  if (!written) {
    RunOutcome failed = fail(written.error());
    failed.message = message + failed.message;
    return failed;
  }
  return outcome(RunEnd::kGeneratorStopped, e, std::move(message));
}

RunOutcome Optimizer::interrupted_exit() {
  st_.stop_reason = StopReason::kNone;  // not finished: resumable
  if (auto st = save_state(); !st) return fail(st.error());
  if (auto st = write_summary(); !st) say("  the summary of the interrupted run was not written: {}", st.error().message);
  return outcome(RunEnd::kInterrupted, std::nullopt,
                 fmt::format("\nkopt optimize: interrupted. The run directory is consistent; continue with:\n  kopt optimize "
                             "--resume {}\n",
                             dir_.string()));
}

RunOutcome Optimizer::finish(StopReason reason, const std::string& detail) {
  st_.stop_reason = reason;
  st_.stop_detail = detail.empty() ? std::string(describe(reason)) : detail;
  if (auto st = verify_champion(dir_ / fmt::format("iter_{:02d}", st_.iterations_done)); !st) return fail(st.error());
  profile_deferred_baseline();
  // After the search (issue 18): the champion and the baseline at every case, then at the held-out shapes, run
  // on the matrix (the default) or with --holdout-shapes; not on the single-case path.
  final_case_table();
  if (!cases_.empty() || o_.gates.holdout_shapes_file) run_holdout();
  per_shape_dispatch();  // --dispatch only
  record_champion();     // the results database's mark (a later identical run's tie-break among equals)
  Status written = write_champion();
  if (written) written = save_state();
  if (written) written = write_json(dir_ / "stop.json", "stop", {{"stage", "loop"}, {"reason", std::string(stop_reason_text(st_.stop_reason))}, {"detail", st_.stop_detail}});
  if (written) written = write_summary();
  if (!written) return fail(written.error());
  RunOutcome done = outcome(RunEnd::kFinished, std::nullopt, "");
  // Written to --json and printed by the command line (cli/cmd_optimize.cpp), which owns both: summary.json's document
  // as written (made again, its meta's time could be a second later).
  auto written_summary = util::read_json(dir_ / "summary.json");
  done.summary = written_summary ? *written_summary : summary_json();
  return done;
}

}  // namespace kopt::loop
