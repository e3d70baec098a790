// Measuring a batch of candidates: compiled in parallel on the CPU while the GPU measures what is already built, in
// the order the builds finish, each candidate's SASS analysis beside the measuring. What each candidate's measurement
// is (its races, checks and gates) is in measure_candidate.cpp.
#include <cstdlib>

#include "loop/measure_batch.h"
#include "loop/phase.h"
#include "loop/triton_precompile.h"

namespace kopt::loop {

namespace fs = std::filesystem;

Optimizer::MeasureBatch::MeasureBatch(Optimizer& opt, std::vector<search::Candidate> candidates, const fs::path& dir,
                                      std::string what_, bool budgeted_, std::vector<compile::CompileRequest> requests)
    : o(opt),
      cands(std::move(candidates)),
      iter_dir(dir),
      what(std::move(what_)),
      budgeted(budgeted_),
      reqs(std::move(requests)),
      builds(cands.size()),
      progress(fmt::format("  {}: candidates measured", what), cands.size()),
      built(o.triton() ? cands.size() : 0),
      compiling(!o.triton()),
      sass_jobs(cands.size()) {}

Optimizer::MeasureBatch::~MeasureBatch() {
  if (compiler.joinable()) compiler.join();
}

void Optimizer::MeasureBatch::start_sass(size_t i) {
  if (!builds[i].ok()) return;
  sass_jobs[i] = std::async(std::launch::async, [opt = &o, lib = builds[i].library, c = cands[i]] {
    auto s0 = Clock::now();
    SassJob j{opt->sass_check({lib}, c), 0};
    j.ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
    return j;
  });
}

void Optimizer::MeasureBatch::precompile_triton() {
  const int jobs = !triton_precompile_on()
                       ? 0
                       : triton_precompile_jobs(
                             cands.size(), o.jobs_, compile::cpu_cores(), compile::mem_available_bytes().value_or(0),
                             static_cast<uint64_t>(std::max<long long>(o.gpu_.memory_bytes, 0)), o.primary_working_set_bytes());
  if (jobs == 0 || util::interrupted()) return;
  Phase p(o, "compile");
  // Each child's limit: kTritonCompileChildLimitS, no more than a measuring child's; with a search budget, no longer
  // than what is left of it.
  double limit_s = std::min(kTritonCompileChildLimitS, o.o_.job.run_timeout_s);
  if (budgeted)
    if (auto left = o.budget_left_s()) limit_s = std::clamp(*left, 5.0, limit_s);
  // Every case's dims, the primary's first: the timed child checks each case, and a dimension the kernel takes as
  // tl.constexpr (liger's geglu: n_cols) compiles a kernel a value; compiled at the primary's only, the timed child
  // still compiled the other cases' (H100, s42 call 1: ~0.5 s first call, ~6 s a candidate in all).
  util::Json dims = util::Json::array({util::Json(o.ephemeral_seed_dims())});
  for (size_t i = 0; i < o.cases_.size(); ++i)
    if (i != o.primary_) dims.push_back(util::Json(o.cases_[i].c.realised));
  std::vector<runner::RunRequest> reqs_now;
  for (const auto& c : cands) {
    const fs::path cdir = iter_dir / "candidates" / c.id;
    auto r = o.request({}, {&c}, cdir / "precompile.json", runner::RunMode::kCompile, {}, false, {});
    r.triton_dims = dims;
    r.triton_cache_dir = cdir / "triton_cache";
    r.timeout_s = limit_s;
    reqs_now.push_back(std::move(r));
  }
  o.say("  {}: compiling {} Triton configurations ahead on {} job(s) (one launch each at {} case(s); nothing is timed "
        "meanwhile)...", what, cands.size(), jobs, dims.size());
  const auto t0 = Clock::now();
  std::vector<double> wall_ms(reqs_now.size(), 0.0);
  auto outs = run_each(reqs_now, jobs, [&](size_t i, const runner::RunRequest& r) {
    const auto c0 = Clock::now();
    auto out = o.lab_.run(r);
    wall_ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - c0).count();
    return out;
  });
  size_t ok = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    builds[i].compile_ms = wall_ms[i];  // the candidate's cost table's compile column: its compile child's wall
    if (outs[i].status == runner::RunStatus::kOk) {
      triton_caches[cands[i].id] = reqs_now[i].triton_cache_dir;
      ++ok;
    }
  }
  // The runs given no cache folder of their own (a finalist's paired runs, its checks) compile into Triton's default
  // cache: they find these candidates there instead of compiling them again.
  size_t seeded = 0;
  if (auto to = triton_default_cache_dir([](const char* n) { return std::getenv(n); }))
    for (const auto& [id, dir] : triton_caches) seeded += copy_triton_cache_entries(dir, *to);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  o.say("  {}: {}/{} compiled ahead in {:.1f} s ({} new entries in Triton's cache){}", what, ok, cands.size(), s, seeded,
        ok == cands.size()
            ? ""
            : fmt::format("; {} compile when measured, as before (their precompile.json says why)", cands.size() - ok));
}

void Optimizer::MeasureBatch::start_compiles() {
  if (o.triton()) {
    precompile_triton();  // fills builds[i].compile_ms
    for (size_t i = 0; i < cands.size(); ++i) {
      builds[i].name = cands[i].id;
      builds[i].status = compile::CompileStatus::kOk;
      builds[i].library = o.prep_.kernel;
      ready.push_back(i);
    }
    return;
  }
  o.say("  {}: compiling {} on {} job(s), measuring each as it is built...", what, reqs.size(),
        o.jobs_ > 0 ? std::to_string(o.jobs_) : std::string("auto"));
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cands.size(); ++i) index[cands[i].id] = i;
  compiler = std::thread([this, index] {
    std::vector<bool> seen(cands.size(), false);
    auto all = o.lab_.compile(reqs, o.jobs_, [&](const compile::BatchProgress&, const compile::CompileResult& r) {
      auto it = index.find(r.name);
      if (it == index.end()) return;
      std::lock_guard<std::mutex> lock(mu);
      ++built;
      progress.set(done_count, fmt::format("{}/{} built", built, cands.size()));
      builds[it->second] = r;
      seen[it->second] = true;
      start_sass(it->second);
      ready.push_back(it->second);
      cv.notify_one();
    });
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < all.size() && i < builds.size(); ++i)
      if (!seen[i]) {
        builds[i] = all[i];
        start_sass(i);
        ready.push_back(i);
      }
    compiling = false;
    cv.notify_one();
  });
}

std::optional<size_t> Optimizer::MeasureBatch::next_built() {
  std::unique_lock<std::mutex> lock(mu);
  if (ready.empty() && compiling) {
    Phase p(o, "compile");
    cv.wait(lock, [&] { return !ready.empty() || !compiling; });
  }
  if (ready.empty()) return std::nullopt;
  size_t i = ready.front();
  ready.pop_front();
  return i;
}

void Optimizer::MeasureBatch::mark_done(size_t i, CandidateRun cr) {
  std::lock_guard<std::mutex> lock(mu);
  done[i] = std::move(cr);
  done_count = done.size();
  progress.set(done_count, fmt::format("{}/{} built", built, cands.size()));
}

dispatch::Attempt Optimizer::MeasureBatch::stop_with(const Error& e) {
  std::lock_guard<std::mutex> lock(mu);
  if (!failed) failed = e;
  return dispatch::Attempt::kStop;
}

void Optimizer::MeasureBatch::collect_sass() {
  if (compiler.joinable()) compiler.join();  // every SASS job has started
  for (auto& [i, cr] : done) {
    if (!sass_jobs[i].valid()) continue;
    SassJob j = sass_jobs[i].get();
    cr.sass = std::move(j.sass);
    cr.sass_ms = j.ms;
    if (auto st = o.write_json(iter_dir / "candidates" / cr.candidate.id / "sass.json", "sass", cr.sass); !st && !failed)
      failed = st.error();
  }
}

Result<std::vector<CandidateRun>> Optimizer::measure_now(std::vector<search::Candidate> cands, const fs::path& iter_dir,
                                                         const std::string& what, bool budgeted) {
  std::vector<CandidateRun> runs;
  std::vector<compile::CompileRequest> reqs;
  for (auto& c : cands) {
    fs::path cdir = iter_dir / "candidates" / c.id;
    fs::create_directories(cdir);
    KOPT_TRY(write_json(cdir / "candidate.json", "candidate", search::to_json(c)));
    reqs.push_back(request_for(c, cdir));
  }
  // Compiles run on a thread while the GPU measures what is already built, in the order the builds finish
  // (Triton compiles at the first launch, inside the measuring child: everything is ready at once).
  MeasureBatch b(*this, std::move(cands), iter_dir, what, budgeted, std::move(reqs));
  b.start_compiles();
  // Each built candidate is one job of the dispatcher: measured whole (its races at every case, its checks) on
  // one slot; on one slot, on this thread in the order the builds finish; on several, on whichever slot is free.
  dispatch::Dispatcher dispatcher({static_cast<int>(std::max<size_t>(1, slots_.size())), 2});
  {
    std::optional<Phase> p;  // several slots: the whole dispatch is the measuring phase (slots' own phases are off)
    if (slots_.size() > 1) p.emplace(*this, "measure");
    dispatcher.run([&] { return b.next_built(); },
                   [&](size_t i, int slot, int attempt) { return b.measure_candidate(i, slot, attempt); });
  }
  record_dispatch(dispatcher);
  b.collect_sass();
  for (const auto& [i, cr] : b.done) record_run(cr);  // measured is measured, whatever stops the run next
  if (b.failed) return *b.failed;
  for (auto& [i, cr] : b.done) runs.push_back(std::move(cr));  // in the generator's order
  return runs;
}

}  // namespace kopt::loop
