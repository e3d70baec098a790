#pragma once
// `kopt optimize`: the gates, the branch-and-select loop, ablation, the run directory and its summary.
#include "loop/lab.h"
#include "loop/options.h"

namespace kopt::loop {

// Returns the process exit code; everything it learns lands in the run directory. The first form does the
// real work (SystemLab over the system's processes); the second runs the same loop over any lab.
int run_optimize(OptimizeOptions opts);
int run_optimize(OptimizeOptions opts, Lab& lab);

}  // namespace kopt::loop
