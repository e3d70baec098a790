#pragma once
// The measuring worker, parent side: one long-lived `kopt __worker` child per run serves every check, time and
// paired request of CUDA/CUTLASS libraries, so the CUDA context, the golden data (loaded once, resident on the
// GPU) and the flush buffer are paid for once per run instead of once per candidate (docs/RUNNER.md). Each
// request is exactly a `kopt __runner` command line, answered with the same result file, so the two paths cannot
// drift. A request that kills the worker, hangs or leaves the CUDA context broken costs one worker restart:
// the next request starts a fresh one; the failing candidate gets the verdict a one-shot child would give it.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/launch.h"
#include "util/session.h"

namespace kopt::runner {

// How a worker is started: `kopt __worker` on this host (argv empty), or another command speaking the same line
// protocol (the Ray bridge, `python3 -m kopt_harness ray-worker`, docs/MULTI_GPU.md); `env` is added to its
// environment (CUDA_VISIBLE_DEVICES of its GPU when a run measures on several).
struct WorkerSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};

// The worker of slot `slot` on the Ray cluster at `address`: the bridge `python3 -m kopt_harness ray-worker`
// (python/kopt_harness/ray_worker.py) holding one GPU through a Ray actor that runs `kopt __worker` on its node
// (docs/MULTI_GPU.md); `extra` is added to its arguments (tests: a fake worker on a custom resource).
WorkerSpec ray_worker_spec(const std::string& address, int slot, const std::vector<std::string>& extra = {});

class MeasuringWorker {
 public:
  // `log`: where the worker's stderr goes (a kernel's printf lands there too); `kopt_exe` as child_argv's.
  explicit MeasuringWorker(std::filesystem::path log, std::string kopt_exe = "", WorkerSpec spec = {});
  // The same contract as run_candidate(); Triton and profile requests are not the worker's (they run one-shot).
  RunOutcome run(const RunRequest& req);
  static bool serves(const RunRequest& req) {
    return req.triton_kernel.empty() && req.mode != RunMode::kProfile && req.ephemeral_fd < 0;
  }
  // One request line (worker_request()'s, or a warm bench client's) sent to the worker, started first where none
  // runs, and how it ended, as a one-shot child's ProcessResult (interpret() reads it with the result file).
  // `client_fd`: the socket of a client waiting for it (util::Session::receive). On a death, stderr_text holds
  // what the worker logged during this request.
  util::ProcessResult relay(const util::Json& request, double timeout_s, int client_fd = -1);
  // The worker started now where none runs (relay() starts one otherwise): it makes its CUDA context, pins its
  // staging memory and reserves its resident golden data's room while the caller goes on, then waits for a request.
  Status start();
  int starts() const { return starts_; }  // workers started so far (1 + restarts)
  int served() const { return served_; }
  int served_by_this() const { return served_by_this_; }  // requests the running worker answered (0: none runs)
  bool running() const { return session_ && session_->alive(); }
  void retire() { session_.reset(); }  // the next request starts a fresh worker

 private:
  std::filesystem::path log_;
  std::string exe_;
  WorkerSpec spec_;
  std::unique_ptr<util::Session> session_;
  int starts_ = 0, served_ = 0;
  int served_by_this_ = 0;  // requests the current worker answered (it is renewed after many libraries)
};

// The request line for a RunRequest: {"argv": [the __runner arguments]}; the reply is {"rc": N}.
util::Json worker_request(const RunRequest& req);

}  // namespace kopt::runner
