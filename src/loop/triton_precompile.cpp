#include "loop/triton_precompile.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

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
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < requests.size(); i = next++) out[i] = run(i, requests[i]);
  };
  const size_t n = std::clamp<size_t>(static_cast<size_t>(std::max(jobs, 1)), 1, std::max<size_t>(requests.size(), 1));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace kopt::loop
