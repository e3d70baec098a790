#pragma once
// The one table of kopt's exit codes. Every command maps its outcome here; nothing else calls exit().
#include <string_view>

namespace kopt {

enum class ExitCode : int {
  kOk = 0,            // success
  kOther = 1,         // anything else (an internal error)
  kValidation = 2,    // kernel validation failed, or no valid candidate
  kGate = 3,          // hardware, tool or Nsight Compute gate failed
  kInput = 4,         // input, contract or configuration error
  kInterrupted = 130  // interrupted (SIGINT)
};

constexpr int to_int(ExitCode c) { return static_cast<int>(c); }
std::string_view describe(ExitCode c);

}  // namespace kopt
