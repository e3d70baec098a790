#include "cli/run_outcome.h"

#include <cstdio>

namespace kopt::cli {

namespace {
// The error's kind, else the end's own where the loop gave none.
ExitCode error_code(const loop::RunOutcome& r, ExitCode without) { return r.error ? r.error->code : without; }
// kopt's own failure and the generator's are never a success, whatever the error says.
ExitCode failure_code(const loop::RunOutcome& r) {
  const ExitCode c = error_code(r, ExitCode::kOther);
  return c == ExitCode::kOk ? ExitCode::kOther : c;
}
}  // namespace

ExitCode exit_code_of(const loop::RunOutcome& r) {
  switch (r.end) {
    case loop::RunEnd::kFinished:
    case loop::RunEnd::kAlreadyFinished: return ExitCode::kOk;
    case loop::RunEnd::kInterrupted: return ExitCode::kInterrupted;
    case loop::RunEnd::kHardwareGate: return ExitCode::kGate;
    case loop::RunEnd::kInputError: return error_code(r, ExitCode::kInput);
    case loop::RunEnd::kGateStopped: return error_code(r, ExitCode::kGate);
    case loop::RunEnd::kGeneratorStopped:
    case loop::RunEnd::kFailed: return failure_code(r);
  }
  return ExitCode::kOther;
}

int report_outcome(const loop::RunOutcome& r) {
  if (!r.message.empty()) {
    std::fputs(r.message.c_str(), stderr);
    std::fflush(stderr);
  }
  return to_int(exit_code_of(r));
}

}  // namespace kopt::cli
