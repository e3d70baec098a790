#include "loop/triton_precompile.h"

#include <algorithm>
#include <cstdlib>

#include "util/parallel.h"
#include "util/strings.h"

namespace kopt::loop {

bool triton_precompile_on() {
  const char* v = std::getenv("KOPT_TRITON_PRECOMPILE");
  return v != nullptr && *v != '\0' && !util::is_off_word(v);
}

int triton_precompile_jobs(size_t candidates, int jobs_option, size_t cores, uint64_t host_free_bytes, uint64_t gpu_memory_bytes,
                           uint64_t working_set_bytes) {
  if (candidates < 2) return 0;
  uint64_t n = std::min<uint64_t>(candidates, std::max<size_t>(cores, 1));
  if (jobs_option > 0) n = std::min<uint64_t>(n, static_cast<uint64_t>(jobs_option));
  if (host_free_bytes > 0) n = std::min<uint64_t>(n, host_free_bytes / kTritonCompileChildHostBytes);
  if (gpu_memory_bytes > 0) n = std::min<uint64_t>(n, gpu_memory_bytes / 2 / (working_set_bytes + kTritonCompileChildGpuBytes));
  return static_cast<int>(std::max<uint64_t>(n, 1));
}

std::vector<runner::RunOutcome> run_each(const std::vector<runner::RunRequest>& requests, int jobs,
                                         const std::function<runner::RunOutcome(size_t, const runner::RunRequest&)>& run) {
  std::vector<runner::RunOutcome> out(requests.size());
  util::for_each_index(requests.size(), static_cast<size_t>(std::max(jobs, 1)), [&](size_t i) { out[i] = run(i, requests[i]); });
  return out;
}

}  // namespace kopt::loop
