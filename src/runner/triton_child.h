#pragma once
// The measuring child of a Triton kernel: `python3 -m kopt_harness triton-run` (python/kopt_harness/
// triton_run.py), the same protocol and result schema as `kopt __runner` (docs/TRITON.md).
#include <string>
#include <vector>

#include "runner/launch.h"

namespace kopt::runner {

// The child's argv (pure): `env PYTHONPATH=<harness_dir>[:<pythonpath>] PYTHONUNBUFFERED=1 [KOPT_EXE=<kopt_exe>] <python> -m
// <module> triton-run --kernel K --out R --mode M [--golden DIR] [--config JSON]... [--dump-cubin DIR]
// [--dims JSON] ... [--ephemeral-fd N]`. Going through `env` keeps it a plain argv, so the same vector runs under
// run_candidate and under ncu (which follows the exec). <module> is kopt_harness.fork_client (the run happens
// in a child of the fork server, which has torch and triton imported; python/kopt_harness/forkserver.py),
// except in mode profile, where it is kopt_harness itself, so that ncu sees the process running the kernel.
// KOPT_EXE=<kopt_exe> goes into the environment when given: the process that imports the kernel (the fork server's
// child, or the harness itself) starts `<kopt_exe> __judge` and seals itself away from the sealed seeds before it
// imports the kernel (python/kopt_harness/sealed.py, runner/sealed.h). `--ephemeral-fd N` (RunRequest::ephemeral_fd):
// that process hands the inherited descriptor to its judge and closes it before the kernel is imported (through the
// fork server, the client sends it to the child that does; run_candidate's pass_fds lets the child inherit it).
std::vector<std::string> triton_child_argv(const RunRequest& req, const std::string& python,
                                           const std::string& harness_dir, const std::string& pythonpath = "",
                                           const std::string& kopt_exe = "");

}  // namespace kopt::runner
