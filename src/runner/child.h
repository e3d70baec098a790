#pragma once
// The measuring child process (`kopt __runner ...`). It loads one or more candidate libraries, uploads the
// golden inputs, calls solve() through libffi, and writes a result JSON. It runs in its own process so an
// illegal memory access, a crash or a hang never takes kopt down.
#include <string>
#include <vector>

namespace kopt::runner {

// Entry point for `kopt __runner`; returns the child's exit code (0 when the result file was written).
int child_main(const std::vector<std::string>& args);

}  // namespace kopt::runner
