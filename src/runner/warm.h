#pragma once
// The warm path of `kopt bench` (issue 36 item 3; docs/RUNNER.md "The warm bench worker"). A bench request goes to
// a measuring worker that outlives the command: `kopt __bench-server`, found on a Unix socket under kopt's cache
// folder, keyed by everything its state depends on (warm_key()), and started detached by the first bench that finds
// none. The server holds one `kopt __worker --one-shot-verdicts` (runner/worker.h: the CUDA context, the judge and
// the seal, the golden data on the host and on the GPU) and relays each request to it; what a request proves (a
// sealed-seed pass, a trusted probe) is never carried to the next. A request that kills, hangs or breaks the worker
// gets the verdict a one-shot child would get, and the next request starts a fresh worker. The server answers one
// request at a time; clients of one key queue on a lock file. It exits after an idle timeout, when its kopt
// executable or the golden data it serves changes, and when a server for other golden data on the same GPU starts.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runner/launch.h"

namespace kopt::runner {

// What a warm worker's state depends on; any difference is another worker.
struct WarmKeyInputs {
  std::string kopt_identity;    // the executable: path, device, inode, size, modification time (and its link's)
  std::string golden_identity;  // runner/golden_store.h golden_identity() of the request's golden folder
  std::string gpu_identity;     // the driver's version text and this boot's id (CUDA_VISIBLE_DEVICES is in env)
  std::map<std::string, std::string> env;  // the environment the worker inherits and reads (warm_env())
  std::vector<std::string> worker_argv;    // the worker's command (tests: a fake worker)
};
// Hex hashes of the inputs: the whole key, and the GPU's part alone (servers of one GPU retire each other).
std::string warm_key(const WarmKeyInputs& in);
std::string warm_gpu_key(const WarmKeyInputs& in);
// The variables of `environ` a worker's behaviour depends on: KOPT_* (but the bench worker's own settings),
// CUDA_*, NVIDIA_*, LD_*, PYTHON*, PATH and HOME.
std::map<std::string, std::string> warm_env(char** environ_list);
// The GPU's part, read without the CUDA driver: /proc/driver/nvidia/version and /proc/sys/kernel/random/boot_id.
std::string system_gpu_identity();
// The identity of the file at `path` (following a link, and the link itself); empty when it cannot be read.
std::string file_identity(const std::filesystem::path& path);

struct WarmConfig {
  std::string kopt_exe;                  // empty: this executable
  std::vector<std::string> worker_argv;  // empty: `<kopt_exe> __worker --one-shot-verdicts`
  double idle_s = 600;                   // the server exits after this long without a request
  std::filesystem::path dir;             // empty: the socket folder (warm_dir())
};
// KOPT_BENCH_WORKER_IDLE_S sets idle_s (seconds, > 0).
WarmConfig warm_config_from_env();
// Whether KOPT_BENCH_WORKER turns the warm worker off (off, 0, no).
bool warm_worker_off_by_env();
// Where sockets, locks and logs live: kopt_cache_dir("bench_worker"), or /tmp/kopt-bench-UID when that path is too
// long for a socket address; created with mode 0700.
Result<std::filesystem::path> warm_dir();

struct WarmRun {
  RunOutcome outcome;
  util::Json info;  // bench.json's "warm_worker": used, reused, server_age_s, requests_served, ...
};

// Runs `req` on the warm worker of its key, starting one if none answers. A request the worker does not serve
// (Triton, profile, a slot's environment) or a server that cannot be reached runs as a one-shot child through
// `fallback`, and info says why.
WarmRun run_warm(const RunRequest& req, util::CommandRunner& fallback, const WarmConfig& cfg = {});

// Entry point of `kopt __bench-server` (the server side, warm_server.cpp).
int bench_server_main(const std::vector<std::string>& args);

// The relay's ProcessResult on the wire, both ways.
util::Json process_result_to_json(const util::ProcessResult& p);
util::ProcessResult process_result_from_json(const util::Json& j);

}  // namespace kopt::runner
