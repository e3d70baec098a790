#pragma once
// The whole optimize loop over a lab, its outcome reported as the command line reports it (cli/run_outcome.h: the
// message on stderr, the exit code from the one table; a finished run's summary, which the command line prints before
// it, is not printed here). For the loop's tests, which check the exit code a user would see.
#include "db/store.h"
#include "loop/optimize.h"

namespace kopt::testing_support {

int run_optimize(loop::OptimizeOptions opts, loop::Lab& lab, db::RecordSink* sink = nullptr, db::RecordLookup* lookup = nullptr);

}  // namespace kopt::testing_support
