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

std::optional<std::filesystem::path> triton_default_cache_dir(const std::function<const char*(const char*)>& env) {
  auto set = [&](const char* name) -> const char* {
    const char* v = env(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const char* d = set("TRITON_CACHE_DIR")) return std::filesystem::path(d);
  for (const char* home : {"TRITON_HOME", "HOME"})
    if (const char* h = set(home)) return std::filesystem::path(h) / ".triton" / "cache";
  return std::nullopt;
}

size_t copy_triton_cache_entries(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return 0;
  fs::create_directories(to, ec);
  if (ec) return 0;
  size_t copied = 0;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    if (!e.is_directory(ec) || fs::exists(to / e.path().filename(), ec)) continue;
    // Into a sibling first, renamed into place whole: a child reading the cache meanwhile never sees half an entry.
    const fs::path tmp = to / (e.path().filename().string() + ".kopt-copy");
    fs::remove_all(tmp, ec);
    fs::copy(e.path(), tmp, fs::copy_options::recursive, ec);
    if (!ec) fs::rename(tmp, to / e.path().filename(), ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      continue;
    }
    ++copied;
  }
  return copied;
}

}  // namespace kopt::loop
