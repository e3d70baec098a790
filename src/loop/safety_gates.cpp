// The safety gates (docs/GATES.md): the sanitizer (on the baseline at a small case, on a finalist or every candidate)
// and the determinism check of a would-be or final champion; the final champion's check on the ephemeral seed.
#include "contract/golden_maker.h"
#include "contract/safetensors.h"
#include "loop/determinism.h"
#include "loop/optimizer.h"
#include "runner/sealed.h"
#include "sanitize/verdict_cache.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

void push_record(util::Json& records, const char* key, util::Json item) {
  if (!records.contains(key) || !records[key].is_array()) records[key] = util::Json::array();
  records[key].push_back(std::move(item));
}

const fs::path& Optimizer::sanitize_golden() {
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
      auto m = lab_.golden({small, g});
      sanitize_golden_ = m ? g : prep_.golden_dir;
      if (!m) say("  sanitizer: no golden data at the small case ({}): at the run's own", m.error().message);
    }
  }
  return sanitize_golden_;
}

sanitize::Verdict Optimizer::run_sanitizer(const fs::path& lib, const search::Candidate* c, const fs::path& out_dir) {
  fs::create_directories(out_dir);
  (void)sanitize_golden();
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
  // The same code, inputs, tools, GPU model and driver judged before: its verdict (sanitize/verdict_cache.h; only a
  // complete one that rejected nothing is kept).
  const auto cache = lab_.evidence_cache_dir("sanitizer");
  std::string key;
  if (cache) {
    auto golden = util::read_json(sanitize_golden_ / "manifest.json");
    sanitize::VerdictSubject subject{code_identity(lib, c),
                                     golden ? contract::golden_identity(*golden) : std::string(),
                                     req.sanitizer,
                                     req.target_argv.empty() ? fs::path() : fs::path(req.target_argv.front()),
                                     gpu_.name,
                                     util::meta_info().driver};
    key = sanitize::verdict_key(subject, req);
    if (auto v = sanitize::find_verdict(*cache, key)) {
      say("    sanitizer: the verdict of the same code on the same inputs, tools, GPU and driver, from the cache: {} "
          "(KOPT_EVIDENCE_CACHE=off runs the gate again)",
          v->from_cache);
      return std::move(v).value();
    }
  }
  sanitize::Verdict v = lab_.sanitize(req);
  if (cache)
    if (auto kept = sanitize::keep_verdict(*cache, key, v, dir_.string()); !kept)
      say("    the sanitizer's verdict was not kept: {}", kept.error().message);
  return v;
}

void Optimizer::sanitize_baseline() { record_baseline_sanitizer(start_baseline_sanitizer()); }

// The baseline's sanitizer gate in two halves: begun (on a thread: it runs beside the cases' correctness checks,
// which time nothing; issue 36), then waited for and recorded. Not wanted (--sanitize): nothing runs, nothing is
// recorded.
std::future<std::optional<sanitize::Verdict>> Optimizer::start_baseline_sanitizer() {
  if (!sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kBaseline))
    return std::async(std::launch::deferred, [] { return std::optional<sanitize::Verdict>(); });
  say("  sanitizer gate: the baseline at a small case (memcheck, racecheck, synccheck, initcheck)...");
  return sanitizer_on_thread(prep_.build.library, std::nullopt, dir_ / "gates" / "sanitize");
}

std::future<std::optional<sanitize::Verdict>> Optimizer::sanitizer_on_thread(const fs::path& lib,
                                                                             std::optional<search::Candidate> cand,
                                                                             const fs::path& out_dir) {
  (void)sanitize_golden();  // here: its golden data may come from the lab, which the thread's neighbours use
  return std::async(std::launch::async, [this, lib, cand = std::move(cand), out_dir] {
    return std::optional<sanitize::Verdict>(run_sanitizer(lib, cand ? &*cand : nullptr, out_dir));
  });
}

// A sanitizer verdict as the state's gate records keep it (the baseline's, a finalist's, the final champion's).
static util::Json sanitizer_record(const sanitize::Verdict& v) {
  return {{"race_safe", sanitize::race_safe_name(v.race_safe)},
          {"rejected", v.rejected},
          {"reason", v.reason},
          {"reported", v.reported},
          {"complete", v.complete()}};
}

void Optimizer::record_baseline_sanitizer(std::future<std::optional<sanitize::Verdict>> running) {
  auto got = running.get();
  if (!got) return;
  const sanitize::Verdict& v = *got;
  st_.race_safe = v.race_safe;
  st_.gate_records["baseline_sanitizer"] = sanitizer_record(v);
  if (auto st = write_json(dir_ / "gates" / "sanitize_baseline.json", "sanitizer", sanitize::to_json(v)); !st)
    say("  {}", st.error().message);
  if (v.rejected) say("  the BASELINE has sanitizer findings: {} (a candidate inherits them unless it fixes them)", v.reason);
  else say("  sanitizer: race_safe {}{}", sanitize::race_safe_name(v.race_safe),
           v.reported.empty() ? "" : "; reported: " + util::join(v.reported, "; "));
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
  return record_sanitizer_gate(start_sanitizer_gate(lib, cand, dir, when).get(), cand, dir, record);
}

std::future<std::optional<sanitize::Verdict>> Optimizer::start_sanitizer_gate(const fs::path& lib, const search::Candidate& cand,
                                                                              const fs::path& dir, std::string_view when) {
  if (!sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kFinalist))
    return std::async(std::launch::deferred, [] { return std::optional<sanitize::Verdict>(); });
  say("    sanitizer gate on {} {}...", cand.id, when);
  return sanitizer_on_thread(lib, cand, dir / "sanitize" / cand.id);
}

std::optional<std::string> Optimizer::record_sanitizer_gate(std::optional<sanitize::Verdict> got, const search::Candidate& cand,
                                                            const fs::path& dir, util::Json& record) {
  if (!got) return std::nullopt;
  const sanitize::Verdict& v = *got;
  if (auto st = write_json(dir / "sanitize" / cand.id / "verdict.json", "sanitizer", sanitize::to_json(v)); !st)
    say("  {}", st.error().message);
  record["sanitizer"] = sanitizer_record(v);
  if (v.rejected) return v.reason;
  st_.gate_records["champion_sanitizer"] = record["sanitizer"];
  st_.gate_records["champion_sanitizer"]["candidate"] = cand.id;
  st_.race_safe = v.race_safe;
  return std::nullopt;
}

// The ephemeral seed (contract/ephemeral_seed.h): a one-shot check run of the champion whose judge serves a seed
// made during this run and never written to any file, in the sealed seed's place. Wrong there (or failing there as it
// never failed before): the reason it may not be champion. No seed, or a run with no verdict (load or internal
// error, interrupted, or "ok" without the ephemeral seed's record: its judge did not take the seed): recorded as not
// run.
Optimizer::GateCheck Optimizer::ephemeral_check(const fs::path& lib, const search::Candidate& cand,
                                                const Result<contract::EphemeralSeedPtr>& seed, const fs::path& dir) {
  util::Json rec = {{"candidate", cand.id}};
  std::optional<std::string> why;
  if (!seed) {
    rec["verdict"] = "not_run";
    rec["reason"] = "no ephemeral seed: " + seed.error().message;
  } else {
    const fs::path d = dir / "ephemeral_seed" / cand.id;
    fs::create_directories(d);
    auto req = request({lib}, {&cand}, d / "check.json", runner::RunMode::kCheck, {}, false);
    req.ephemeral_fd = (*seed)->fd();
    const runner::RunOutcome r = lab_.run(req);
    rec["seed"] = (*seed)->to_json();
    rec["status"] = runner::status_name(r.status);
    if (r.details.contains("answer_key")) rec["answer_key"] = r.details["answer_key"];
    if (const std::string unjudged = runner::ephemeral_seed_unjudged(r.details); r.status == runner::RunStatus::kOk && !unjudged.empty()) {
      rec["verdict"] = "not_run";
      rec["reason"] = unjudged;
    } else if (r.status == runner::RunStatus::kOk) {
      rec["verdict"] = "passed";
    } else if (r.status == runner::RunStatus::kLoadError || r.status == runner::RunStatus::kInternal ||
               r.status == runner::RunStatus::kInterrupted) {
      rec["verdict"] = "not_run";
      rec["reason"] = r.message;
    } else {
      rec["verdict"] = "rejected";
      rec["reason"] = r.message;
      why = std::string(runner::status_name(r.status)) + ": " + r.message;
    }
  }
  return {std::move(rec), std::move(why)};
}

std::optional<std::string> Optimizer::record_ephemeral(GateCheck check, const search::Candidate& cand, util::Json& record) {
  const util::Json& rec = check.record;
  say("    ephemeral seed on {}: {}{}", cand.id, rec["verdict"].get<std::string>(),
      rec.contains("reason") ? " (" + rec["reason"].get<std::string>() + ")" : "");
  record["ephemeral_seed"] = rec;
  push_record(st_.gate_records, "ephemeral_seed", rec);
  return check.why;
}

}  // namespace kopt::loop
