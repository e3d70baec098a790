#pragma once
// `kopt sass KERNEL.py`: the SASS of a Triton kernel. Triton compiles at the first launch (JIT), so the
// cubins come from running the kernel once on the GPU (`triton-run --mode compile --dump-cubin`), or from
// --lib CUBIN files a previous run wrote. Without a GPU and without --lib the command says so (exit 3).
#include "cli/commands.h"

namespace kopt::cli {

// True when the arguments name a Triton kernel (a positional argument ending in .py).
bool names_triton_kernel(const Args& args);

int cmd_sass_triton(const Args& args);

}  // namespace kopt::cli
