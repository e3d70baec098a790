#pragma once
// The measuring child process (`kopt __runner ...`). It loads one or more candidate libraries, uploads the
// golden inputs, calls solve() through libffi, and writes a result JSON. It runs in its own process so an
// illegal memory access, a crash or a hang never takes kopt down.
#include <string>
#include <vector>

namespace kopt::runner {

// Entry point for `kopt __runner`; returns the child's exit code (0 when the result file was written).
int child_main(const std::vector<std::string>& args);

// Entry point for `kopt __worker` (runner/worker.h): serves `__runner` command lines, one JSON request per line of
// stdin ({"argv": [...]}), one reply per line of stdout ({"rc": N, "restart": bool}); the CUDA context and the
// golden data stay loaded between requests. A library's own output goes to stderr. Returns when stdin closes,
// or 3 after a CUDA error that broke the context (the parent starts a fresh worker). `one_shot_verdicts`
// (`__worker --one-shot-verdicts`, the warm bench worker's): nothing a request proved carries over to the next (no
// library's sealed-seed pass, no trusted probe), so each is judged as a one-shot child would judge it.
int worker_main(bool one_shot_verdicts = false);

}  // namespace kopt::runner
