#pragma once
// Numerics modes applied to a measured candidate (pure).
//   reference:   every output within ref.py's (or the command line's) atol/rtol — the runner decides.
//   approximate: the same check with approx_atol/approx_rtol (10x by default) — the runner decides.
//   strict:      the reference check, and no output's error may exceed the baseline's own error against
//                the reference: for every seed and output, max_abs_err <= baseline max_abs_err and
//                rel_l2_err <= baseline rel_l2_err (each with a relative slack of 1e-12 for printing).
#include <string>

#include "util/json_io.h"

namespace kopt::loop {

struct StrictVerdict {
  bool ok = true;
  std::string reason;  // the first output/seed that exceeds the baseline's error
};

// `candidate` and `baseline` are runner result JSONs (their "seeds" arrays).
StrictVerdict judge_strict(const util::Json& candidate, const util::Json& baseline);

}  // namespace kopt::loop
