#pragma once
// `kopt optimize`: the gates, the branch-and-select loop, ablation, the run directory and its summary.
#include "db/store.h"
#include "loop/lab.h"
#include "loop/options.h"

namespace kopt::loop {

// Returns the process exit code; everything it learns lands in the run directory. The first form does the
// real work (SystemLab over the system's processes, recording into the results database unless opts.no_db); the
// second runs the same loop over any lab.
int run_optimize(OptimizeOptions opts);
// `sink`: where each measured configuration is recorded (the results database; nullptr: nowhere). `lookup`: where
// configurations measured before are found and reused unless opts.remeasure (docs/DATABASE.md "Reuse"; nullptr:
// nothing is reused). The first form passes the one database as both.
int run_optimize(OptimizeOptions opts, Lab& lab, db::RecordSink* sink = nullptr, db::RecordLookup* lookup = nullptr);

}  // namespace kopt::loop
