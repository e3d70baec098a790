#pragma once
// `kopt optimize`: the gates, the branch-and-select loop, ablation, the run directory and its summary.
#include "db/store.h"
#include "loop/lab.h"
#include "loop/options.h"
#include "loop/outcome.h"

namespace kopt::loop {

// How the run ended (loop/outcome.h: the command line prints its message and maps it to an exit code); everything it
// learns lands in the run directory. The first form does the real work (SystemLab over the system's processes,
// recording into the results database unless opts.no_db); the second runs the same loop over any lab.
RunOutcome optimize(OptimizeOptions opts);
// `sink`: where each measured configuration is recorded (the results database; nullptr: nowhere). `lookup`: where
// configurations measured before are found and reused unless opts.remeasure (docs/DATABASE.md "Reuse"; nullptr:
// nothing is reused). The first form passes the one database as both. `progress`: where the progress lines go
// (empty: above the progress bars, on stderr).
RunOutcome optimize(OptimizeOptions opts, Lab& lab, db::RecordSink* sink = nullptr, db::RecordLookup* lookup = nullptr,
                    ProgressSink progress = {});

}  // namespace kopt::loop
