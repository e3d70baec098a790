// Issue 18's shapes and safety gates inside the loop (docs/GATES.md): the workload matrix's cases and their
// golden data, correctness at every case, selection over the cases, the sanitizer and determinism gates of the
// finalists, and, after the search, the per-case table and the held-out shapes. Every device run goes through
// the Lab, so the fake lab of the loop's tests drives all of it.
#include <algorithm>

#include "contract/golden_maker.h"
#include "contract/safetensors.h"
#include "loop/holdout.h"
#include "loop/optimizer.h"
#include "pipeline/placement.h"
#include "pipeline/prepare.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"
#include "workload/holdout.h"

namespace kopt::loop {

namespace fs = std::filesystem;

// After prepare(): the search's cases, fitted to the working-set limit, with golden data each (an out-of-memory
// retried smaller); the primary case's golden data becomes the run's (prep_). Leaves cases_ empty on the
// single-case path (the matrix off, no shapes file, the user's dims within the limit): nothing below runs then.
std::optional<RunOutcome> Optimizer::prepare_cases(const std::function<std::optional<RunOutcome>()>& beside) {
  auto cases = workload::search_cases(o_.gates.workload_matrix, o_.gates.shapes_file, o_.job.dims);
  if (!cases) return stop("inputs", cases.error(), util::Json::object());
  // The working set from the golden manifest's real buffer sizes; unknown sizes leave the cases unfitted.
  if (auto m = workload::model_from_manifest(prep_.manifest); m && !m->buffers.empty()) ws_model_ = *m;
  else if (!m) say("  working set unknown ({}): cases are not fitted", m.error().message);
  max_ws_bytes_ = workload::max_working_set_bytes(o_.gates.max_working_set_mb, gpu_.memory_bytes);
  std::vector<workload::Case> fitted = *cases;
  if (ws_model_) {
    auto f = workload::fit_cases(*cases, *ws_model_, max_ws_bytes_);
    if (!f) return stop("inputs", f.error(), {{"max_working_set_bytes", max_ws_bytes_}});
    fitted = *f;
  }
  // The single-case path: the user's dims alone, unfitted: the loop as it always was.
  if (fitted.size() == 1 && !fitted.front().fitted() && fitted.front().realised == o_.job.dims) return std::nullopt;

  // The baseline's check at the user's case needs none of the cases' data, and neither it nor the harness times anything:
  // it runs while the harness makes the cases' (issue 36). Where a larger case would be primary, its data first.
  const bool early = beside && fitted[primary_of(fitted)].realised == o_.job.dims;
  // The sanitizer's small case first, alone through the harness (4 MiB: a fraction of a second): `beside` runs the
  // baseline's sanitizer gate after its check, while the harness makes the cases' data (issue 36).
  if (early && ws_model_ && sanitize_golden_.empty() && sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kBaseline))
    if (auto small = sanitize::sanitize_dims(*ws_model_, o_.job.dims); small && *small != o_.job.dims) {
      const fs::path g = dir_ / "golden_sanitize";  // run_sanitizer's folder
      lab_.prefetch_golden({{*small, g}});
      // Placed now (golden() waits for a batch in the background): run_sanitizer finds it.
      if (lab_.golden({*small, g})) sanitize_golden_ = g;
    }
  prefetch_golden(fitted, false, early);
  if (early)
    if (auto rc = beside()) return *rc;
  workload::OomPolicy policy;
  for (auto& c : fitted) {
    CaseData cd{c, {}, {}};
    if (c.realised == o_.job.dims) {
      cd.golden_dir = prep_.golden_dir;
      cd.manifest = prep_.manifest;
      cases_.push_back(cd);
      continue;
    }
    cd.golden_dir = dir_ / "golden_cases" / c.name;
    if (auto rc = case_golden(cd, policy)) return *rc;
    cases_.push_back(cd);
  }
  choose_primary();
  prep_.golden_dir = cases_[primary_].golden_dir;
  prep_.manifest = cases_[primary_].manifest;
  return record_cases();
}

// gates/cases.json and the state's record of the search's cases, and the line that names them.
std::optional<RunOutcome> Optimizer::record_cases() {
  util::Json list = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    util::Json j = workload::to_json(cases_[i].c);
    j["golden_dir"] = cases_[i].golden_dir.string();
    j["primary"] = i == primary_;
    if (cases_[i].manifest.is_object() && cases_[i].manifest.contains("golden_cache")) j["golden_cache"] = cases_[i].manifest["golden_cache"];
    if (ws_model_)
      if (auto w = workload::estimate(*ws_model_, cases_[i].c.realised)) j["working_set_bytes"] = w->bytes;
    list.push_back(j);
  }
  if (auto st = write_json(dir_ / "gates" / "cases.json", "cases",
                           {{"matrix", workload::matrix_mode_name(o_.gates.workload_matrix)},
                            {"shapes_file", o_.gates.shapes_file ? util::Json(o_.gates.shapes_file->string()) : util::Json(nullptr)},
                            {"max_working_set_bytes", max_ws_bytes_}, {"primary", cases_[primary_].c.name}, {"cases", list}});
      !st)
    return fail(st.error());
  st_.gate_records["cases"] = list;
  say("  {} case(s): {}; races and timings at {}", cases_.size(),
      [&] {
        std::vector<std::string> n;
        for (const auto& c : cases_) n.push_back(c.c.name + (c.c.fitted() ? " (fitted)" : ""));
        return util::join(n, ", ");
      }(),
      cases_[primary_].c.name);
  return std::nullopt;
}

// Golden data, retried smaller after an out-of-memory (each retry: half the failed attempt's working set).
std::optional<RunOutcome> Optimizer::case_golden(CaseData& cd, workload::OomPolicy& policy) {
  for (int retries = 0;; ++retries) {
    if (resuming_ && fs::exists(cd.golden_dir / "manifest.json")) {
      auto m = util::read_json(cd.golden_dir / "manifest.json");
      if (m) {
        cd.manifest = *m;
        cd.manifest.erase("meta");
        break;
      }
    }
    say("  case {}: golden data at {}...", cd.c.name, format_dims(cd.c.realised));
    auto m = lab_.golden({cd.c.realised, cd.golden_dir});
    if (m) {
      cd.manifest = *m;
      if (auto made = contract::golden_cache_hit(*m)) {
        if (pipeline::made_by_this_process(*made)) say("  case {}: golden data made by this run's harness at {}", cd.c.name, *made);
        else say("  case {}: golden data from the cache (made {})", cd.c.name, *made);
      }
      break;
    }
    int64_t ws = 0;
    if (ws_model_)
      if (auto w = workload::estimate(*ws_model_, cd.c.realised)) ws = w->bytes;
    auto d = workload::decide_oom_retry(workload::OomWho::kGoldenData, workload::is_out_of_memory(m.error().message), retries, ws, policy);
    if (!d.retry || !ws_model_)
      return stop("inputs", Error{m.error().code, "golden data for case " + cd.c.name + " (" + format_dims(cd.c.realised) + "): " +
                                                    m.error().message + "\n(a shape ref.py cannot compute: give --shapes FILE without it, "
                                                    "or --workload-matrix off)"},
                  {{"case", workload::to_json(cd.c)}});
    auto f = workload::fit_to_limit(*ws_model_, cd.c.requested, d.next_max_bytes);
    if (!f) return stop("inputs", f.error(), {{"case", workload::to_json(cd.c)}});
    say("  case {}: {}; retrying at {}", cd.c.name, d.reason, format_dims(f->realised));
    cd.c.realised = f->realised;
    cd.c.note += (cd.c.note.empty() ? "" : "; ") + d.reason;
  }
  return std::nullopt;
}

void Optimizer::choose_primary() {
  std::vector<workload::Case> cases;
  for (const auto& cd : cases_) cases.push_back(cd.c);
  primary_ = primary_of(cases);
}

size_t Optimizer::primary_of(const std::vector<workload::Case>& cases) const {
  // The primary case: the largest realised working set (ties: the first, the user's own case when it is one).
  size_t primary = 0;
  int64_t best = -1;
  for (size_t i = 0; i < cases.size(); ++i) {
    int64_t ws = 0;
    if (ws_model_)
      if (auto w = workload::estimate(*ws_model_, cases[i].realised)) ws = w->bytes;
    if (ws > best) best = ws, primary = i;
  }
  return primary;
}

namespace {
// A failure's message in one line: its first line and, where it has more (a compiler's traceback), its last.
std::string gist(const std::string& message) {
  std::vector<std::string> lines;
  for (auto& l : util::split_lines(message))
    if (auto t = util::trim(l); !t.empty()) lines.push_back(t);
  if (lines.empty()) return "";
  return lines.size() == 1 ? lines.front() : lines.front() + " ... " + lines.back();
}
}  // namespace

std::optional<RunOutcome> Optimizer::check_baseline_at_cases() {
  workload::OomPolicy policy;
  std::vector<std::string> dropped;
  for (size_t i = 0; i < cases_.size(); ++i) {
    if (i == primary_) continue;
    auto& cd = cases_[i];
    for (int retries = 0;; ++retries) {
      auto r = run({prep_.build.library}, {nullptr}, dir_ / "gates" / ("correctness_" + cd.c.name + ".json"), runner::RunMode::kCheck, {}, false, cd.golden_dir);
      if (r.status == runner::RunStatus::kOk) break;
      // The baseline out of memory at a case: the case is fitted smaller for every contender, golden data remade.
      int64_t ws = 0;
      if (ws_model_)
        if (auto w = workload::estimate(*ws_model_, cd.c.realised)) ws = w->bytes;
      auto d = workload::decide_oom_retry(workload::OomWho::kBaseline, workload::is_out_of_memory(r.message), retries, ws, policy);
      std::optional<workload::Fit> f;
      if (d.retry && ws_model_)
        if (auto fit = workload::fit_to_limit(*ws_model_, cd.c.requested, d.next_max_bytes)) f = *fit;
      if (f && f->realised != cd.c.realised) {
        say("  case {}: {}", cd.c.name, d.reason);
        auto m = lab_.golden({f->realised, cd.golden_dir});
        if (m) {
          cd.c.realised = f->realised;
          cd.c.note += (cd.c.note.empty() ? "" : "; ") + d.reason;
          cd.manifest = *m;
          continue;
        }
      }
      const std::string why = fmt::format("the baseline is not correct at case {} ({}): {}: {}", cd.c.name,
                                          format_dims(cd.c.realised), runner::status_name(r.status), gist(r.message));
      // A case the default matrix made (the user asked for none of its dims) where the user's own kernel fails is outside
      // the kernel's domain (a Triton kernel whose block is a dimension needs a power of two: FLA's logcumsumexp at
      // S = 48, issue 35): the search goes on over the other cases, and the summary says which case went and why. A
      // case the user named (--shapes FILE) stops the run: the user asked for it.
      if (cd.c.origin == workload::CaseOrigin::kMatrix) {
        say("  case {}: dropped: {}; outside the kernel's domain (the default matrix made it; --shapes FILE names the cases)",
            cd.c.name, why);
        st_.gate_records["cases_dropped"].push_back(
            {{"case", workload::to_json(cd.c)}, {"reason", why}, {"result", runner::to_json(r)}});
        dropped.push_back(cd.c.name);
        break;
      }
      return stop("correctness",
                  validation_error(fmt::format("the baseline is not correct at case {} ({}): {}: {}. The case is outside the "
                                               "kernel's domain: give --shapes FILE without it, or --workload-matrix off",
                                               cd.c.name, format_dims(cd.c.realised), runner::status_name(r.status), r.message)),
                  {{"case", workload::to_json(cd.c)}, {"result", runner::to_json(r)}});
    }
  }
  if (dropped.empty()) return std::nullopt;
  // The primary case (the user's, checked first) is never dropped: it stays primary, with the remaining weights summing to 1.
  const std::string primary = cases_[primary_].c.name;
  std::erase_if(cases_,
                [&](const CaseData& cd) { return std::find(dropped.begin(), dropped.end(), cd.c.name) != dropped.end(); });
  double sum = 0;
  for (const auto& cd : cases_) sum += cd.c.weight;
  for (auto& cd : cases_) cd.c.weight = sum > 0 ? cd.c.weight / sum : 1.0 / static_cast<double>(cases_.size());
  for (size_t i = 0; i < cases_.size(); ++i)
    if (cases_[i].c.name == primary) primary_ = i;
  return record_cases();
}

// Golden data the run will ask for next, made in one harness process where the lab can (Lab::prefetch_golden):
// the matrix's cases and the sanitizer's small case (holdout false), or these held-out shapes (holdout true).
// `background`: begun beside the work that follows (Lab::prefetch_golden_in_background), even for one request.
void Optimizer::prefetch_golden(const std::vector<workload::Case>& cases, bool holdout, bool background) {
  std::vector<GoldenWant> wanted;
  auto want = [&](const Dims& dims, const fs::path& dir) {
    if (dims == o_.job.dims || fs::exists(dir / "manifest.json")) return;
    for (const auto& w : wanted)
      if (w.dims == dims) return;  // the same dims twice (the small case can be a case): made once, placed twice
    wanted.push_back({dims, dir, holdout ? kHoldoutSeeds : 0});
  };
  if (holdout) {
    for (const auto& shape : cases) want(shape.realised, dir_ / "holdout" / shape.name / "golden");
  } else {
    // The matrix's cases and the sanitizer's small case, made before the first candidate. The held-out shapes are
    // made when they are checked, after the search (a batch of their own): made here, they would delay the first
    // candidate by their reference runs.
    for (const auto& c : cases) want(c.realised, dir_ / "golden_cases" / c.name);
    if (ws_model_ && sanitize::should_sanitize(o_.gates.sanitize, sanitize::Role::kBaseline))
      if (auto small = sanitize::sanitize_dims(*ws_model_, o_.job.dims)) want(*small, dir_ / "golden_sanitize");
  }
  if (background) {
    if (wanted.empty()) return;
    say("  golden data for {} {} in one harness process, beside {}...", wanted.size(), holdout ? "held-out shapes" : "cases",
        holdout ? "the final champion's checks" : "the baseline's check at the user's case");
    lab_.prefetch_golden_in_background(wanted);
    return;
  }
  if (wanted.size() < 2) return;  // one request gains nothing from a batch
  say("  golden data for {} {} in one harness process...", wanted.size(), holdout ? "held-out shapes" : "cases");
  lab_.prefetch_golden(wanted);
}

}  // namespace kopt::loop
