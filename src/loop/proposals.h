#pragma once
// A second identical run measures nothing new (issue 39): the built-in generator's proposals at each iteration are
// kept in the results database (db::ProposalMark) under the hash of the state it proposed from, less the noise in its
// figures, and a later run that reaches the same state proposes them again. Without this, a second identical run on
// the H200 (vector_add, 2026-12-04) proposed other points from its fourth iteration on and measured 14 configurations
// the first had not: its model had read the re-raced finalists' fresh medians, the reused records' objectives scaled by
// this run's baseline, and an ablation variant's newer record of a configuration, each a little off the first run's.
//
// The state: the kernel's record key (source, dims, GPU, driver, toolchain, flags, timing method: the baseline's
// db::key_hash), the generator, the batch size, the seed and the iteration, the champion (its configuration and
// flags), every configuration measured so far (the candidates and the ablation variants) with its status, and the
// ablations' method verdicts. Left out on purpose: every figure (medians, objectives, the profile's metrics, the
// roofline's method budget drawn from them), and what an earlier identical run's own records feed (the warm start's
// suggestions, the strategy memory's bonuses). So a run whose races crown another champion, or whose configurations end
// with another verdict, is in another state and proposes afresh. Selection is untouched: every crowning is on this
// run's races.
//
// Pure functions; the loop looks the marks up and records them (Optimizer::propose, reuse_loop.cpp).
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"
#include "search/generator.h"
#include "util/json_io.h"

namespace kopt::loop {

std::string proposal_state_hash(const std::string& kernel_key_hash, std::string_view generator, const search::GeneratorInput& in);

// What is kept of a generator's output: its candidates (as the run record writes a candidate), `exploring`, the
// outlook and the notes, with the baseline source the candidates were written against.
util::Json proposal_json(const search::GeneratorOutput& out, const std::filesystem::path& baseline_source);

// Replaces `out`'s candidates, exploring, outlook and notes by a kept body's (the method selection, the feasibility
// model's predictions and the checked failures stay the generator's own). A candidate written against the kept
// baseline source is given this run's (`baseline_source`). An error, with `out` untouched, when the body is malformed
// or a candidate names another source.
Status apply_proposal(const util::Json& body, const std::filesystem::path& baseline_source, search::GeneratorOutput& out);

}  // namespace kopt::loop
