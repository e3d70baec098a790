#pragma once
// Test-only: a CommandRunner that passes every process on to the system and counts them (how often the harness or
// a tool really ran).
#include "util/process.h"

namespace kopt::testing_support {

class CountingRunner : public util::CommandRunner {
 public:
  util::ProcessResult run(const util::ProcessSpec& spec) override {
    ++runs;
    return real.run(spec);
  }
  util::SystemRunner real;
  int runs = 0;
};

}  // namespace kopt::testing_support
