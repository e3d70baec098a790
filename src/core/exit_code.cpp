#include "core/exit_code.h"

namespace kopt {

std::string_view describe(ExitCode c) {
  switch (c) {
    case ExitCode::kOk: return "success";
    case ExitCode::kOther: return "internal error";
    case ExitCode::kValidation: return "kernel validation failed or no valid candidate";
    case ExitCode::kGate: return "hardware, tool or Nsight Compute gate failed";
    case ExitCode::kInput: return "input, contract or configuration error";
    case ExitCode::kInterrupted: return "interrupted";
  }
  return "unknown";
}

}  // namespace kopt
