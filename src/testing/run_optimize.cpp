#include "testing/run_optimize.h"

#include "cli/run_outcome.h"

namespace kopt::testing_support {

int run_optimize(loop::OptimizeOptions opts, loop::Lab& lab, db::RecordSink* sink, db::RecordLookup* lookup) {
  return cli::report_outcome(loop::optimize(std::move(opts), lab, sink, lookup));
}

}  // namespace kopt::testing_support
