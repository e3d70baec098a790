#pragma once
// How `kopt optimize`'s outcome reaches the user: the loop hands back what happened (loop::RunOutcome: the RunEnd,
// the Error that ended it, the message); the command line maps it to an exit code from the one table
// (core/exit_code.h) and prints its message. The loop decides no exit code.
#include "core/exit_code.h"
#include "loop/outcome.h"

namespace kopt::cli {

// The exit code of a run's end: 0 for a finished run (or one already finished), 130 interrupted, 3 the hardware
// gate; an error's ends take the error's kind (a gate's or the inputs' as the step that failed said; kopt's own
// failure and the generator's never exit 0: kOther where the error says kOk).
ExitCode exit_code_of(const loop::RunOutcome& r);

// What the command line does with an outcome: its message on stderr (as is), then its exit code.
int report_outcome(const loop::RunOutcome& r);

}  // namespace kopt::cli
