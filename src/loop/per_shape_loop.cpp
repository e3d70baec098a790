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

#include "loop/optimizer.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

struct Optimizer::DispatchConfig {
  search::Candidate candidate;
  fs::path library;
  bool baseline = false;
  std::vector<std::optional<double>> medians;  // its own median at each case (cases_ order), for the shortlist
};

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

void Optimizer::per_shape_dispatch() {
  if (!o_.gates.dispatch || !st_.champion || !st_.baseline || util::interrupted()) return;
  Phase phase(*this, "dispatch");
  const fs::path ddir = dir_ / "dispatch";
  fs::create_directories(ddir);
  util::Json record = {{"emitted", false}};
  auto finish_record = [&](const std::string& reason) {
    if (!reason.empty()) record["reason"] = reason;
    if (auto st = write_json(ddir / "dispatch.json", "dispatch", record); !st) say("  {}", st.error().message);
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
  std::set<std::string> rejected;
  if (st_.gate_records.contains("rejected"))
    for (const auto& r : st_.gate_records["rejected"]) rejected.insert(r.value("candidate", std::string()));
  std::vector<DispatchConfig> pool;
  const std::string champ_id = st_.champion->candidate.id;
  if (champ_id != "baseline" && st_.gate_records.contains("case_table")) {
    DispatchConfig b{st_.baseline->candidate, st_.baseline->library, true, {}};
    for (const auto& row : st_.gate_records["case_table"]["cases"])
      b.medians.push_back(row["baseline_ms"].is_number() ? std::optional<double>(row["baseline_ms"].get<double>())
                                                         : std::nullopt);
    pool.push_back(b);
  }
  {
    std::lock_guard<std::mutex> lock(case_medians_mu_);
    for (const auto& m : st_.history) {
      const auto& id = m.candidate.id;
      if (m.status != search::CandidateStatus::kOk || id == champ_id || rejected.count(id) || !case_medians_.count(id) ||
          !libraries_.count(id))
        continue;
      pool.push_back({m.candidate, libraries_[id], false, case_medians_[id]});
    }
  }
  std::vector<std::optional<double>> champ_ms(cases_.size());
  if (st_.gate_records.contains("case_table"))
    for (size_t i = 0; i < cases_.size() && i < st_.gate_records["case_table"]["cases"].size(); ++i)
      if (const auto& row = st_.gate_records["case_table"]["cases"][i]; row["champion_ms"].is_number())
        champ_ms[i] = row["champion_ms"].get<double>();
  std::vector<size_t> shortlist;
  for (size_t i = 0; i < cases_.size(); ++i) {
    std::vector<size_t> here;
    for (size_t j = 0; j < pool.size(); ++j)
      if (i < pool[j].medians.size() && pool[j].medians[i] && (!champ_ms[i] || *pool[j].medians[i] < *champ_ms[i]))
        here.push_back(j);
    std::sort(here.begin(), here.end(), [&](size_t a, size_t b) { return *pool[a].medians[i] < *pool[b].medians[i]; });
    for (size_t k = 0; k < here.size() && k < 2; ++k)
      if (std::find(shortlist.begin(), shortlist.end(), here[k]) == shortlist.end()) shortlist.push_back(here[k]);
  }
  say("per-shape dispatch: {} configuration(s) raced against the champion at every case...", shortlist.size());

  // 2. Raced against the final champion at every case; the plan.
  std::vector<DispatchContender> contenders;
  std::vector<DispatchConfig> raced;
  util::Json races = util::Json::array();
  for (size_t j : shortlist) {
    const auto& cfg = pool[j];
    DispatchContender c{cfg.candidate.id, {}};
    util::Json per = util::Json::array();
    bool correct = true;
    for (const auto& cd : cases_) {
      if (util::interrupted()) return;
      auto r = run(
          {fs::path(st_.champion->library), cfg.library}, {&st_.champion->candidate, cfg.baseline ? nullptr : &cfg.candidate},
          ddir / "races" / cfg.candidate.id / ("race_" + cd.c.name + ".json"), runner::RunMode::kPaired, {}, true, cd.golden_dir);
      auto mine = raced_outcome(r);
      if (mine.status != runner::RunStatus::kOk) {
        per.push_back({{"case", cd.c.name}, {"status", runner::status_name(mine.status)}, {"message", mine.message}});
        correct = false;
        break;
      }
      auto champ = r.details["libs"][0].value("samples_ms", std::vector<double>{});
      auto cmp = runner::compare_paired(champ, mine.samples_ms);
      c.vs_champion.push_back(cmp);
      per.push_back({{"case", cd.c.name}, {"status", "ok"}, {"comparison", runner::to_json(cmp)}});
    }
    races.push_back({{"config", cfg.candidate.id}, {"correct", correct}, {"cases", per}});
    if (!correct) continue;
    contenders.push_back(c);
    raced.push_back(cfg);
  }
  record["races"] = races;
  const DispatchPlan plan = plan_dispatch(cases, champ_id, contenders);
  record["plan"] = to_json(plan, cases);
  if (!plan.worthwhile) {
    say("per-shape dispatch: none: {}", plan.reason);
    return finish_record(plan.reason);
  }
  // The configurations the plan uses, in its order (the champion's own first when it serves a case).
  std::vector<DispatchConfig> configs;
  for (const auto& id : plan.configs) {
    if (id == champ_id) {
      configs.push_back({st_.champion->candidate, st_.champion->library, false, {}});
      continue;
    }
    for (const auto& r : raced)
      if (r.candidate.id == id) configs.push_back(r);
  }
  util::Json emitted = emit_dispatch(configs, plan, cases);
  record.update(emitted);
  finish_record(record.value("emitted", false) ? "" : record.value("reason", std::string()));
}

util::Json Optimizer::emit_dispatch(const std::vector<DispatchConfig>& configs, const DispatchPlan& plan,
                                    const std::vector<DispatchCase>& cases) {
  util::Json rec = {{"emitted", false}};
  const fs::path out = dir_ / "champion" / "dispatch";
  fs::remove_all(out);
  fs::create_directories(out);
  // 3. The folder: each configuration's library and source, the dispatcher's source and build.
  std::vector<std::string> libs;
  util::Json cfg_json = util::Json::array();
  for (size_t k = 0; k < configs.size(); ++k) {
    const auto& c = configs[k];
    const std::string lib = fmt::format("config_{}.so", k);
    std::error_code ec;
    fs::copy_file(c.library, out / lib, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      rec["reason"] = "copying " + c.library.string() + ": " + ec.message();
      return rec;
    }
    // The configuration's own source (a derived space's instrumented copy, where the run derived one), as written.
    auto src = util::read_file(c.candidate.source.empty() ? o_.job.kernel : c.candidate.source);
    if (!src) {
      rec["reason"] = "configuration " + c.candidate.id + "'s source: " + src.error().message;
      return rec;
    }
    std::string head = fmt::format("// kopt per-shape dispatch: configuration {} ({})\n", k, c.candidate.id);
    if (!c.candidate.flags.empty()) head += "// build with these extra nvcc flags: " + util::join(c.candidate.flags, " ") + "\n";
    for (const auto& [name, v] : c.candidate.defines) head += "#define " + name + " " + v + "\n";
    if (auto st = util::write_file_atomic(out / fmt::format("config_{}.cu", k), head + "\n" + *src); !st) {
      rec["reason"] = st.error().message;
      return rec;
    }
    libs.push_back(lib);
    cfg_json.push_back({{"index", k}, {"id", c.candidate.id}, {"library", lib}, {"source_library", c.library.string()},
                        {"defines", c.candidate.defines}, {"flags", c.candidate.flags}});
  }
  std::vector<size_t> case_config;
  for (const auto& id : plan.chosen)
    for (size_t k = 0; k < configs.size(); ++k)
      if (configs[k].candidate.id == id) case_config.push_back(k);
  util::Json table = {{"keys", plan.keys}, {"configs", cfg_json}, {"cases", util::Json::array()}};
  for (size_t i = 0; i < cases.size(); ++i)
    table["cases"].push_back({{"case", cases[i].name}, {"point", cases[i].point}, {"config", case_config[i]}});
  // dispatch.json first: what the folder holds (and the model lab reads to play the dispatcher).
  if (auto st = util::write_json_atomic(out / "dispatch.json", "dispatch_table", table); !st) {
    rec["reason"] = st.error().message;
    return rec;
  }
  if (auto st =
          util::write_file_atomic(out / "dispatch.cu", dispatcher_source(prep_.signature, cases, plan.keys, case_config, libs));
      !st) {
    rec["reason"] = st.error().message;
    return rec;
  }
  pipeline::KernelJob job = o_.job;  // the dispatcher has no kernel: no defines, no CUTLASS headers
  job.defines.clear();
  job.cutlass = false;
  auto built = lab_.compile({pipeline::compile_request(job, "dispatch", out / "dispatch.cu", out)}, 1, {});
  if (built.empty() || !built.front().ok()) {
    rec["reason"] =
        "the dispatcher did not compile: " + (built.empty() ? std::string("no result") : built.front().log_text.substr(0, 2000));
    say("per-shape dispatch: {}", rec["reason"].get<std::string>());
    return rec;
  }
  const fs::path lib = built.front().library;
  rec["library"] = lib.string();
  rec["configs"] = cfg_json;
  say("per-shape dispatch: {} configurations over {} bucket(s); checked at every case and held-out shape...", configs.size(),
      plan.buckets.size());

  // Checked like a candidate: at every case, then at every held-out shape where the baseline is correct.
  const fs::path ddir = dir_ / "dispatch";
  std::vector<CaseCheck> checks;
  util::Json check_rec = util::Json::array();
  auto check_at = [&](const std::string& name, const fs::path& golden, const char* what) {
    auto r = run({lib}, {nullptr}, ddir / "checks" / (std::string(what) + "_" + name + ".json"), runner::RunMode::kCheck, {},
                 false, golden);
    checks.push_back({name, r.status, r.message});
    check_rec.push_back({{"shape", name}, {"kind", what}, {"status", runner::status_name(r.status)}, {"message", r.message}});
  };
  for (const auto& cd : cases_) check_at(cd.c.name, cd.golden_dir, "case");
  if (st_.gate_records.contains("holdout"))
    for (const auto& h : st_.gate_records["holdout"]["cases"]) {
      const std::string v = h.value("verdict", std::string());
      const std::string name = h["case"].value("name", std::string());
      if ((v == "pass" || v == "champion_fails") && fs::exists(dir_ / "holdout" / name / "golden"))
        check_at(name, dir_ / "holdout" / name / "golden", "holdout");
    }
  rec["checks"] = check_rec;
  auto verdict = correct_at_every_case(checks);
  if (!verdict.correct) {
    rec["reason"] = "the dispatch is not correct: " + verdict.reason;
    say("per-shape dispatch: rejected: {}", verdict.reason);
    fs::remove_all(out);  // never left where a user would take it from
    return rec;
  }

  // Timed against the single champion at every case, paired: the gain and its CI, then over the cases.
  std::vector<CaseComparison> per_case;
  util::Json rows = util::Json::array();
  for (size_t i = 0; i < cases_.size(); ++i) {
    const auto& cd = cases_[i];
    auto r = run({fs::path(st_.champion->library), lib}, {&st_.champion->candidate, nullptr},
                 ddir / "timing" / (cd.c.name + ".json"), runner::RunMode::kPaired, {}, false, cd.golden_dir);
    util::Json row = {{"case", cd.c.name}, {"point", cases[i].point}, {"weight", cd.c.weight}, {"config", plan.chosen[i]}};
    if (r.status == runner::RunStatus::kOk && r.details.contains("libs") && r.details["libs"].size() == 2) {
      auto a = r.details["libs"][0].value("samples_ms", std::vector<double>{});
      auto b = r.details["libs"][1].value("samples_ms", std::vector<double>{});
      if (a.size() >= 2 && b.size() >= 2) {
        auto cmp = runner::compare_paired(a, b);
        per_case.push_back({cd.c.name, cd.c.weight, cmp});
        row["champion_ms"] = runner::compute_stats(a).median_ms;
        row["dispatch_ms"] = runner::compute_stats(b).median_ms;
        row["ratio"] = cmp.median_ratio;
        row["ratio_ci95"] = {cmp.ci95_low, cmp.ci95_high};
        row["speedup"] = cmp.median_ratio > 0 ? 1 / cmp.median_ratio : 0.0;
        row["verdict"] = runner::describe(cmp.verdict);
      }
    } else {
      row["status"] = runner::status_name(r.status);
      row["message"] = r.message;
    }
    rows.push_back(row);
  }
  rec["cases"] = rows;
  auto overall = combine_cases(per_case);
  rec["overall"] = to_json(overall);
  rec["emitted"] = true;
  rec["folder"] = out.string();
  if (overall.valid)
    say("per-shape dispatch: {:.3f}x the champion's speed over the cases (weighted geometric mean ratio {:.3f}, 95% CI [{:.3f}, "
        "{:.3f}])",
        1 / overall.geomean_ratio, overall.geomean_ratio, overall.ci95_low, overall.ci95_high);
  return rec;
}

}  // namespace kopt::loop
