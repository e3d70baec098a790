#pragma once
// The per-shape dispatch's steps (Optimizer::per_shape_dispatch, --dispatch), shared by per_shape_loop.cpp (the
// shortlist, the races against the final champion, the plan) and per_shape_steps.cpp (the folder a worthwhile plan
// becomes: its dispatcher built, checked and timed). Internal to the loop, as optimizer.h is.
#include <optional>
#include <string>
#include <vector>

#include "loop/optimizer.h"

namespace kopt::loop {

struct Optimizer::DispatchConfig {
  search::Candidate candidate;
  std::filesystem::path library;
  bool baseline = false;
  std::vector<std::optional<double>> medians;  // its own median at each case (cases_ order), for the shortlist
};

struct Optimizer::DispatchSteps {
  // One shortlisted configuration raced against the final champion at every case.
  struct Race {
    util::Json record;  // {"config", "correct", "cases"}: dispatch.json's "races"
    bool correct = true;
    DispatchContender contender;
  };

  Optimizer& o;
  std::filesystem::path ddir;  // dir_/dispatch: the races, checks and timings

  // 1. The shortlist (per_shape_loop.cpp): the configurations that may serve a case (the baseline, unless it is
  // champion, and the candidates correct at every case and rejected by no gate), then at each case the two whose own
  // median there is below the champion's (indices into the pool).
  std::vector<DispatchConfig> pool(const std::string& champ_id);
  std::vector<size_t> shortlist(const std::vector<DispatchConfig>& pool) const;
  // 2. One configuration raced against the final champion at every case; nullopt: interrupted.
  std::optional<Race> race(const DispatchConfig& cfg);
  // The configurations a worthwhile plan uses, in its order (the champion's own first when it serves a case).
  std::vector<DispatchConfig> plan_configs(const DispatchPlan& plan, const std::string& champ_id,
                                           const std::vector<DispatchConfig>& raced) const;
  // 3. Builds, checks and times the dispatch of a worthwhile plan (per_shape_steps.cpp); its record.
  util::Json emit(const std::vector<DispatchConfig>& configs, const DispatchPlan& plan, const std::vector<DispatchCase>& cases);
  // emit()'s steps: each configuration's library and source into `out` (their file names into `libs`, their
  // records into `cfg_json`); dispatch.json and dispatch.cu; the dispatcher's build (its library).
  Status write_configs(const std::vector<DispatchConfig>& configs, const std::filesystem::path& out,
                       std::vector<std::string>& libs, util::Json& cfg_json);
  Status write_dispatcher(const DispatchPlan& plan, const std::vector<DispatchCase>& cases,
                          const std::vector<size_t>& case_config, const std::vector<std::string>& libs,
                          const util::Json& cfg_json, const std::filesystem::path& out);
  Result<std::filesystem::path> build_dispatcher(const std::filesystem::path& out);
  // The dispatcher checked like a candidate: at every case, then at every held-out shape where the baseline is
  // correct (each check into `check_rec`).
  AllCasesVerdict check(const std::filesystem::path& lib, util::Json& check_rec);
  // The dispatcher timed against the single champion at every case, paired: rec's "cases" and "overall", and the
  // dispatch emitted in `out`.
  void time(const std::filesystem::path& lib, const DispatchPlan& plan, const std::vector<DispatchCase>& cases,
            const std::filesystem::path& out, util::Json& rec);
};

}  // namespace kopt::loop
