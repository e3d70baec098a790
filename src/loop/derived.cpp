// A kernel without @kopt annotations: kopt searches the space it derived (search/derive.h) through an
// annotated, instrumented copy in the run directory; the user's file is never touched. Points of that space
// that fail to build or compute a wrong answer are pruned, each with its reason, in derived/pruned.json and
// the summary.
#include "compile/request.h"
#include "loop/optimizer.h"
#include "pipeline/triton.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {

// The first line of a compiler log that says what failed (static_assert, ptxas resources), else the status.
std::string compile_reason(const std::string& log, const std::string& fallback) {
  for (const auto& line : util::split_lines(log))
    if (line.find("error") != std::string::npos) return util::trim(line).substr(0, 300);
  return fallback;
}

}  // namespace

Status Optimizer::use_derived_space() {
  original_kernel_ = o_.job.kernel;
  fs::path ddir = dir_ / "derived";
  fs::create_directories(ddir);
  fs::path copy = ddir / o_.job.kernel.filename();
  KOPT_TRY(util::write_file_atomic(copy, derived_->instrumented));
  KOPT_TRY(write_json(ddir / "derivation.json", "derivation", search::to_json(*derived_)));
  if (resuming_)
    if (auto j = util::read_json(ddir / "pruned.json"); j && j->contains("pruned")) {
      pruned_ = (*j)["pruned"];
      for (const auto& p : pruned_)
        if (p.contains("constraint")) prune(p["constraint"].get<std::string>());
    }
  o_.job = pipeline::with_instrumented_copy(o_.job, copy);
  lab_.use_job(o_.job);
  if (space_) {
    space_->source_file = copy.string();
    space_->derived = true;
  }
  say("kopt optimize: {} has no @kopt lines; searching the {} parameter(s) kopt derived ({}; kopt annotate {} shows them)",
      original_kernel_.string(), derived_->params.size(), copy.string(), original_kernel_.string());
  return ok_status();
}

void Optimizer::record_pruned(const std::vector<CandidateRun>& runs) {
  bool added = false;
  for (const auto& r : runs) {
    if (r.status == search::CandidateStatus::kOk) continue;
    std::vector<std::string> point;
    for (const auto& p : derived_->params) {
      if (auto it = r.candidate.defines.find(p.name); it != r.candidate.defines.end()) point.push_back(p.name + "=" + it->second);
      if (auto it = r.candidate.constexprs.find(p.name); it != r.candidate.constexprs.end())
        point.push_back(fmt::format("{}={}", p.name, it->second));
      if (auto it = r.candidate.launch.find(p.origin); it != r.candidate.launch.end()) point.push_back(fmt::format("{}={}", p.origin, it->second));
    }
    for (const auto& m : derived_->methods)
      if (auto it = r.candidate.defines.find(search::guard_macro(m.id)); it != r.candidate.defines.end())
        point.push_back(it->first + "=" + it->second);
    // A compile past the time limit, or a build that spills, says so; another compile failure gives nvcc's first error.
    bool own_note = r.build.status == compile::CompileStatus::kTimedOut || (r.build.ok() && !r.note.empty());
    std::string why = r.status == search::CandidateStatus::kCompileFailed && !own_note ? compile_reason(r.build.log_text, r.note) : r.note;
    const std::string_view status =
        r.predicted_infeasible ? std::string_view("predicted_infeasible") : search::candidate_status_name(r.status);
    util::Json entry = {{"candidate", r.candidate.id}, {"point", util::join(point, ",")}, {"methods", r.candidate.methods},
                        {"flags", r.candidate.flags}, {"status", status}, {"why", why.substr(0, 400)}};
    // The point (its derived params and method guards) leaves the space: a compile failure whatever the flags, a
    // wrong or failed run, or a build pruned for spilling, only when no flag method was on (a flag could be the cause).
    if ((r.status == search::CandidateStatus::kCompileFailed && !r.build.ok()) || r.candidate.flags.empty()) {
      std::vector<std::string> terms;
      for (const auto& d : space_->dims) {
        if (d.kind == search::DimKind::kFlag) continue;
        auto it = r.candidate.params.find(d.name);
        if (it != r.candidate.params.end()) terms.push_back(fmt::format("{} == {}", d.name, it->second));
        else if (auto g = r.candidate.defines.find(d.name); g != r.candidate.defines.end())
          terms.push_back(fmt::format("{} == {}", d.name, g->second));
        else if (auto c = r.candidate.constexprs.find(d.name); c != r.candidate.constexprs.end())
          terms.push_back(fmt::format("{} == {}", d.name, c->second));
      }
      if (!terms.empty()) {
        std::string expr = "!(" + util::join(terms, " && ") + ")";
        if (prune(expr)) entry["constraint"] = expr;
      }
    }
    pruned_.push_back(entry);
    added = true;
  }
  if (added)
    if (auto st = write_json(dir_ / "derived" / "pruned.json", "pruned", {{"pruned", pruned_}}); !st)
      say("  could not write derived/pruned.json: {}", st.error().message);
}

// Derived points the generator's feasibility model predicts infeasible and no longer proposes (status
// predicted_infeasible, no candidate), each once.
void Optimizer::record_predicted(const std::vector<search::PredictedInfeasible>& points) {
  bool added = false;
  for (const auto& p : points) {
    const bool known = std::any_of(pruned_.begin(), pruned_.end(), [&](const util::Json& e) {
      return e.value("point", std::string()) == p.key && e.value("status", std::string()) == "predicted_infeasible";
    });
    if (known) continue;
    pruned_.push_back({{"candidate", ""}, {"point", p.key}, {"methods", util::Json::array()}, {"flags", util::Json::array()},
                       {"status", "predicted_infeasible"}, {"why", p.reason.substr(0, 400)}});
    added = true;
  }
  if (added)
    if (auto st = write_json(dir_ / "derived" / "pruned.json", "pruned", {{"pruned", pruned_}}); !st)
      say("  could not write derived/pruned.json: {}", st.error().message);
}

bool Optimizer::prune(const std::string& expr) {
  auto e = search::Expr::parse(expr);
  if (!e) return false;
  for (const auto& n : e->names())
    if (space_->dim_index(n) < 0) return false;
  for (const auto& c : space_->constraints)
    if (c.expr.text() == expr) return true;
  space_->constraints.push_back({std::move(e).value(), "derived/pruned.json"});
  return true;
}

// A param one block of which covers a dim (`covers=`, a Triton row kernel's tile): at the run's cases its values below
// the dim's largest value compute a wrong answer, known before any is compiled. They leave the space (a constraint the
// summary lists), unless the baseline's own value is one of them: it passed gate 2, so the relation does not hold here.
void Optimizer::prune_uncovered() {
  if (!space_) return;
  for (const auto& d : space_->dims) {
    if (d.kind != search::DimKind::kParam || d.covers.empty() || d.values.empty()) continue;
    int64_t need = 0;
    auto at = [&](const Dims& dims) {
      if (auto it = dims.find(d.covers); it != dims.end()) need = std::max(need, it->second);
    };
    at(o_.job.dims);
    for (const auto& cd : cases_) at(cd.c.realised);
    if (need <= 0 || d.values.front() >= need) continue;
    const int64_t baseline = d.values[static_cast<size_t>(d.default_index)];
    if (baseline < need) {
      say("  note: {} covers {}, yet the baseline's {} = {} < {} passed its check: its smaller values stay", d.name, d.covers,
          d.name, baseline, need);
      continue;
    }
    const std::string expr = fmt::format("{} >= {}", d.name, need);
    if (!prune(expr)) continue;
    std::vector<std::string> gone;
    for (int64_t v : d.values)
      if (v < need) gone.push_back(std::to_string(v));
    const std::string why = fmt::format(
        "one block of {} covers {} ({} at the run's largest case): {} {} leave the space, a "
        "wrong answer each",
        d.name, d.covers, need, gone.size() == 1 ? "value" : "values", util::join(gone, ", "));
    if (derived_) derived_->constraints.push_back({expr, why});
    say("  {}", why);
  }
}

// A param with when= (a constant of one branch of `if (M >= 128 && N >= 128) {...} else {...}`): where its condition
// holds at none of the run's cases (the dims and every case of the workload matrix), the code it tunes never runs here,
// and its other values build other binaries that compute the same thing. It stays at its default (a constraint the
// summary lists), known before any is compiled. A condition naming anything but dims leaves it searched.
void Optimizer::pin_untaken() {
  if (!space_) return;
  for (const auto& d : space_->dims) {
    if (d.kind != search::DimKind::kParam || d.when.empty() || d.values.size() < 2) continue;
    auto e = search::Expr::parse(d.when);
    if (!e) continue;
    bool known = true, holds = false;
    auto at = [&](const Dims& dims) {
      search::Bindings b;
      for (const auto& n : e->names()) {
        auto it = dims.find(n);
        if (it == dims.end()) {
          known = false;
          return;
        }
        b[n] = it->second;
      }
      auto v = e->eval(b);
      if (!v) known = false;
      else holds = holds || *v != 0;
    };
    at(o_.job.dims);
    for (const auto& cd : cases_) at(cd.c.realised);
    if (!known || holds) continue;
    const int64_t baseline = d.values[static_cast<size_t>(d.default_index)];
    const std::string expr = fmt::format("{} == {}", d.name, baseline);
    if (!prune(expr)) continue;
    const std::string why = fmt::format("{} tunes code that runs where {}, which holds at none of the run's cases: it stays at {}",
                                        d.name, d.when, baseline);
    if (derived_) derived_->constraints.push_back({expr, why});
    say("  {}", why);
  }
}

util::Json Optimizer::derived_json() const {
  util::Json j = search::to_json(*derived_);
  j["copy"] = o_.job.kernel.string();
  j["pruned"] = pruned_;
  return j;
}

}  // namespace kopt::loop
