#include "loop/outcome.h"

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

}  // namespace kopt::loop
