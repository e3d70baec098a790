// The per-shape dispatch's folder (--dispatch; loop/per_shape_steps.h; the shortlist, the races and the plan are in
// per_shape_loop.cpp): a worthwhile plan becomes champion/dispatch/: each configuration's library as built and checked
// by the run (config_<k>.so) with its source (config_<k>.cu, its defines written in), the dispatcher (dispatch.cu, built
// by the compile pool), dispatch.json; the dispatcher checked at every case and held-out shape where the baseline is
// correct, and paired against the champion at every case.
#include "loop/per_shape_steps.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::loop {

namespace fs = std::filesystem;

util::Json Optimizer::DispatchSteps::emit(const std::vector<DispatchConfig>& configs, const DispatchPlan& plan,
                                          const std::vector<DispatchCase>& cases) {
  util::Json rec = {{"emitted", false}};
  const fs::path out = o.dir_ / "champion" / "dispatch";
  fs::remove_all(out);
  fs::create_directories(out);
  // 3. The folder: each configuration's library and source, the dispatcher's source and build.
  std::vector<std::string> libs;
  util::Json cfg_json = util::Json::array();
  if (auto st = write_configs(configs, out, libs, cfg_json); !st) {
    rec["reason"] = st.error().message;
    return rec;
  }
  std::vector<size_t> case_config;
  for (const auto& id : plan.chosen)
    for (size_t k = 0; k < configs.size(); ++k)
      if (configs[k].candidate.id == id) case_config.push_back(k);
  if (auto st = write_dispatcher(plan, cases, case_config, libs, cfg_json, out); !st) {
    rec["reason"] = st.error().message;
    return rec;
  }
  auto built = build_dispatcher(out);
  if (!built) {
    rec["reason"] = built.error().message;
    o.say("per-shape dispatch: {}", rec["reason"].get<std::string>());
    return rec;
  }
  const fs::path lib = *built;
  rec["library"] = lib.string();
  rec["configs"] = cfg_json;
  o.say("per-shape dispatch: {} configurations over {} bucket(s); checked at every case and held-out shape...", configs.size(),
        plan.buckets.size());

  util::Json check_rec = util::Json::array();
  auto verdict = check(lib, check_rec);
  rec["checks"] = check_rec;
  if (!verdict.correct) {
    rec["reason"] = "the dispatch is not correct: " + verdict.reason;
    o.say("per-shape dispatch: rejected: {}", verdict.reason);
    fs::remove_all(out);  // never left where a user would take it from
    return rec;
  }
  time(lib, plan, cases, out, rec);
  return rec;
}

Status Optimizer::DispatchSteps::write_configs(const std::vector<DispatchConfig>& configs, const fs::path& out,
                                               std::vector<std::string>& libs, util::Json& cfg_json) {
  for (size_t k = 0; k < configs.size(); ++k) {
    const auto& c = configs[k];
    const std::string lib = fmt::format("config_{}.so", k);
    std::error_code ec;
    fs::copy_file(c.library, out / lib, fs::copy_options::overwrite_existing, ec);
    if (ec) return internal_error("copying " + c.library.string() + ": " + ec.message());
    // The configuration's own source (a derived space's instrumented copy, where the run derived one), as written.
    auto src = util::read_file(c.candidate.source.empty() ? o.o_.job.kernel : c.candidate.source);
    if (!src) return internal_error("configuration " + c.candidate.id + "'s source: " + src.error().message);
    std::string head = fmt::format("// kopt per-shape dispatch: configuration {} ({})\n", k, c.candidate.id);
    if (!c.candidate.flags.empty()) head += "// build with these extra nvcc flags: " + util::join(c.candidate.flags, " ") + "\n";
    for (const auto& [name, v] : c.candidate.defines) head += "#define " + name + " " + v + "\n";
    KOPT_TRY(util::write_file_atomic(out / fmt::format("config_{}.cu", k), head + "\n" + *src));
    libs.push_back(lib);
    cfg_json.push_back({{"index", k}, {"id", c.candidate.id}, {"library", lib}, {"source_library", c.library.string()},
                        {"defines", c.candidate.defines}, {"flags", c.candidate.flags}});
  }
  return ok_status();
}

Status Optimizer::DispatchSteps::write_dispatcher(const DispatchPlan& plan, const std::vector<DispatchCase>& cases,
                                                  const std::vector<size_t>& case_config, const std::vector<std::string>& libs,
                                                  const util::Json& cfg_json, const fs::path& out) {
  util::Json table = {{"keys", plan.keys}, {"configs", cfg_json}, {"cases", util::Json::array()}};
  for (size_t i = 0; i < cases.size(); ++i)
    table["cases"].push_back({{"case", cases[i].name}, {"point", cases[i].point}, {"config", case_config[i]}});
  // dispatch.json first: what the folder holds (and the model lab reads to play the dispatcher).
  KOPT_TRY(util::write_json_atomic(out / "dispatch.json", "dispatch_table", table));
  return util::write_file_atomic(out / "dispatch.cu", dispatcher_source(o.prep_.signature, cases, plan.keys, case_config, libs));
}

Result<fs::path> Optimizer::DispatchSteps::build_dispatcher(const fs::path& out) {
  pipeline::KernelJob job = o.o_.job;  // the dispatcher has no kernel: no defines, no CUTLASS headers
  job.defines.clear();
  job.cutlass = false;
  auto built = o.lab_.compile({pipeline::compile_request(job, "dispatch", out / "dispatch.cu", out)}, 1, {});
  if (built.empty() || !built.front().ok())
    return internal_error("the dispatcher did not compile: " +
                          (built.empty() ? std::string("no result") : built.front().log_text.substr(0, 2000)));
  return built.front().library;
}

AllCasesVerdict Optimizer::DispatchSteps::check(const fs::path& lib, util::Json& check_rec) {
  std::vector<CaseCheck> checks;
  auto check_at = [&](const std::string& name, const fs::path& golden, const char* what) {
    auto r = o.run({lib}, {nullptr}, ddir / "checks" / (std::string(what) + "_" + name + ".json"), runner::RunMode::kCheck, {},
                   false, golden);
    checks.push_back({name, r.status, r.message});
    check_rec.push_back({{"shape", name}, {"kind", what}, {"status", runner::status_name(r.status)}, {"message", r.message}});
  };
  for (const auto& cd : o.cases_) check_at(cd.c.name, cd.golden_dir, "case");
  if (o.st_.gate_records.contains("holdout"))
    for (const auto& h : o.st_.gate_records["holdout"]["cases"]) {
      const std::string v = h.value("verdict", std::string());
      const std::string name = h["case"].value("name", std::string());
      if ((v == "pass" || v == "champion_fails") && fs::exists(o.dir_ / "holdout" / name / "golden"))
        check_at(name, o.dir_ / "holdout" / name / "golden", "holdout");
    }
  return correct_at_every_case(checks);
}

void Optimizer::DispatchSteps::time(const fs::path& lib, const DispatchPlan& plan, const std::vector<DispatchCase>& cases,
                                    const fs::path& out, util::Json& rec) {
  // The gain and its CI at each case, then over the cases.
  std::vector<CaseComparison> per_case;
  util::Json rows = util::Json::array();
  for (size_t i = 0; i < o.cases_.size(); ++i) {
    const auto& cd = o.cases_[i];
    auto r = o.run({fs::path(o.st_.champion->library), lib}, {&o.st_.champion->candidate, nullptr},
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
    o.say("per-shape dispatch: {:.3f}x the champion's speed over the cases (weighted geometric mean ratio {:.3f}, 95% CI "
          "[{:.3f}, {:.3f}])",
          1 / overall.geomean_ratio, overall.geomean_ratio, overall.ci95_low, overall.ci95_high);
}

}  // namespace kopt::loop
