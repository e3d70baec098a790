#include "loop/outcome.h"

#include <cstdio>

namespace kopt::loop {

std::string_view run_end_name(RunEnd e) {
  switch (e) {
    case RunEnd::kFinished: return "finished";
    case RunEnd::kAlreadyFinished: return "already_finished";
    case RunEnd::kInputError: return "input_error";
    case RunEnd::kHardwareGate: return "hardware_gate";
    case RunEnd::kGateStopped: return "gate_stopped";
    case RunEnd::kGeneratorStopped: return "generator_stopped";
    case RunEnd::kInterrupted: return "interrupted";
    case RunEnd::kFailed: return "failed";
  }
  return "unknown";
}

int report_outcome(const RunOutcome& r) {
  if (!r.message.empty()) {
    std::fputs(r.message.c_str(), stderr);
    std::fflush(stderr);
  }
  return r.exit_code();
}

}  // namespace kopt::loop
