#pragma once
// The options of issue 18's shape and safety gates (the workload matrix, shapes files, regressions, the
// working-set limit, the sanitizer policy), kept together so `kopt optimize`, options.json and --resume carry
// them as one block. OptimizeOptions holds one (optimize.h: `gates`).
#include <filesystem>
#include <optional>

#include "core/dims.h"
#include "core/result.h"
#include "sanitize/sanitizer.h"
#include "util/json_io.h"
#include "workload/matrix.h"

namespace kopt::loop {

// When a would-be champion gets the determinism check and the sanitizer (docs/GATES.md, "When the champion's
// gates run"): kFinal (default) crowns on the races and checks the champion the search ends with, falling back
// along the champions it replaced until one passes; kEach checks every finalist before it may become champion.
enum class ChampionGates { kFinal, kEach };
std::string_view champion_gates_name(ChampionGates g);
std::optional<ChampionGates> parse_champion_gates(std::string_view s);

// When the baseline's Nsight Compute profile (gate 4) is taken (docs/GATES.md, "When the baseline is profiled"):
// kWhenNeeded (default) places a baseline that has a workload model on the roofline from its timing and the model, so
// the first candidates are measured without waiting for ncu; the baseline is profiled only when the search needs new
// evidence while it is still the champion (an iteration without a faster one). Nsight Compute's gate is then the
// final champion's profile, taken when the search ends (issue 36: "at the end on the final champion only"). kAfter
// does the same and also profiles the baseline after the search, for the page's baseline column (10-16 s on the H200).
// Without a workload model, and with kGate, it is profiled before any candidate, as the method budget needs it.
enum class BaselineProfile { kGate, kWhenNeeded, kAfter };
std::string_view baseline_profile_name(BaselineProfile b);
std::optional<BaselineProfile> parse_baseline_profile(std::string_view s);

struct GateOptions {
  workload::MatrixMode workload_matrix = workload::MatrixMode::kDefault;  // --workload-matrix default|off
  std::optional<std::filesystem::path> shapes_file;                       // --shapes FILE (wins over the matrix)
  std::optional<std::filesystem::path> holdout_shapes_file;               // --holdout-shapes FILE (else derived)
  bool no_regressions = false;                                            // --no-regressions
  // --dispatch: after the search, a per-shape dispatch over the cases (loop/per_shape.h; docs/GATES.md "The per-shape
  // dispatch"), emitted into champion/dispatch/ when configurations differ beyond the noise. Needs several cases.
  bool dispatch = false;
  double max_working_set_mb = 0;  // --max-working-set-mb; 0: derived from the GPU's memory (working_set.h)
  sanitize::Policy sanitize = sanitize::Policy::kFinalists;               // --sanitize finalists|all|off
  ChampionGates champion_gates = ChampionGates::kFinal;                   // --champion-gates final|each
  BaselineProfile baseline_profile = BaselineProfile::kWhenNeeded;        // --baseline-profile gate|when-needed|after
};

// Checks the values and parses the shapes files against the user's dims, before any GPU work: every malformed
// line is an input error (exit 4) naming FILE:LINE (workload::parse_shapes).
Status validate(const GateOptions& g, const Dims& user);

// The keys "workload_matrix", "shapes_file", "holdout_shapes_file", "no_regressions", "dispatch", "max_working_set_mb",
// "sanitize", "champion_gates", "baseline_profile", merged into options.json; from_json reads them back (absent keys: the defaults, so run
// directories made before these options resume unchanged). Paths are stored absolute.
void add_to_json(const GateOptions& g, util::Json& options);
Result<GateOptions> gate_options_from_json(const util::Json& options);

}  // namespace kopt::loop
