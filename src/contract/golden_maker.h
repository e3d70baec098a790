#pragma once
// Making golden data once per run: writes the signature, runs the Python harness
// (`python3 -m kopt_harness golden ...`) on ref.py, and reads back its manifest.
#include <filesystem>
#include <string>
#include <vector>

#include "core/dims.h"
#include "contract/golden_cache.h"
#include "contract/signature.h"
#include "core/result.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::contract {

struct GoldenRequest {
  std::filesystem::path ref_py;
  KernelSignature signature;
  Dims dims;
  int seeds = 3;
  std::filesystem::path out_dir;
  long long ptr_size = 0;        // 0: guess from dims when ref.py gives no shapes
  bool time_reference = true;
  double timeout_s = 900;
  // Set for a Triton kernel.py: its setup() gives the buffers, so no signature is written or passed
  // (`golden --triton-kernel`, docs/TRITON.md).
  std::filesystem::path triton_kernel;
  // Golden data kept across runs (golden_cache.h); nullopt: always run ref.py. Callers set it from
  // golden_cache_from_env().
  std::optional<GoldenCache> cache;
  // The sealed seed's folder beneath sealed_root() (contract/sealed_seed.h): make_golden draws a fresh token when
  // it runs the harness; harness_argv passes --sealed-dir when it is set. Not part of the cache key.
  std::string sealed_token;
};

// The harness argv (python3 -m kopt_harness golden ...). Pure.
std::vector<std::string> harness_argv(const GoldenRequest& req, const std::string& python);

// The request's sealed token drawn, its ref.py checked, its folder and (a CUDA kernel's) signature.json written: the
// harness's argv (`python3 -m kopt_harness golden ...`).
Result<std::vector<std::string>> ready_golden_request(GoldenRequest& req);

// The harness as a process: `python3 -m kopt_harness ARGS...` with PYTHONPATH set to kopt's harness. Errors:
// python3 missing (gate, exit 3), the harness not found next to kopt (internal).
Result<util::ProcessSpec> harness_process(const std::vector<std::string>& args, double timeout_s);

// The cache key of a request (its harness argv): the harness's sources, the Python, and the harness's arguments with ref.py, the
// Triton kernel and the signature file by path and content, every other *.py beside ref.py by name and content, and
// the output folder left out. Errors: a file it names cannot be read.
Result<std::string> golden_key(const std::vector<std::string>& argv);

// Runs the harness, or places the cached entry for the same request (then the manifest returned carries
// "golden_cache": {"hit": true, "key", "made", "entry"}; after a run, {"hit": false, "key", "stored"}).
// Errors inside ref.py come back with their traceback (exit 4).
Result<util::Json> make_golden(const GoldenRequest& req, util::CommandRunner& runner);

// A cached entry make_golden may place: its manifest names a sealed seed that is still there.
bool golden_entry_usable(const CacheHit& hit);

// Golden data for several requests in one harness process (`golden-batch`: one Python, one torch and CUDA start
// instead of one per request), into the golden cache: each request whose entry the cache lacks is made in its
// out_dir and stored; make_golden then places it from there. Requests without a cache are left out; a request that
// fails here is left to make_golden, which makes it alone and reports its error. Returns how many were made.
Result<int> prefetch_golden(std::vector<GoldenRequest> requests, util::CommandRunner& runner);

// What a batch must make of `requests`: those with a cache whose entry it lacks, one per key, each ready (its
// sealed token drawn, its folder and signature written) with the argument list `golden` takes.
struct GoldenBatch {
  std::vector<GoldenRequest> todo;
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> args;  // after `python3 -m kopt_harness golden`
  double timeout_s = 0;                        // the requests' timeouts summed
};
GoldenBatch golden_batch(std::vector<GoldenRequest> requests);
// The harness's summary line for todo[i]: when it says ok, the made data is checked and stored in the cache.
// True: made.
bool adopt_batch_line(const GoldenBatch& batch, size_t i, const std::string& line);

// When make_golden placed a cached entry: when the entry was made ("?" if unknown); nullopt otherwise.
std::optional<std::string> golden_cache_hit(const util::Json& manifest);
// What golden data is, for a key of evidence judged on it (the sanitizer cache): its files' sha256 with its dims and
// buffers, or else its golden-cache key; empty when the manifest has neither (nothing to key on).
std::string golden_identity(const util::Json& manifest);

}  // namespace kopt::contract
