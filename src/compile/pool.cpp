#include "compile/pool.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <mutex>
#include <thread>

#include "compile/compiler.h"
#include "util/fs.h"
#include "util/parallel.h"
#include "util/strings.h"

namespace kopt::compile {

double candidate_compile_limit_s(double baseline_compile_ms, bool baseline_cache_hit, bool cutlass) {
  const double floor_s = cutlass ? kMinCutlassCandidateCompileS : kMinCandidateCompileS;
  const double own_s = baseline_cache_hit ? 0 : 10 * baseline_compile_ms / 1000.0;
  return std::min(kMaxCandidateCompileS, std::max(floor_s, own_s));
}

std::vector<std::string> spilling_functions(const std::vector<KernelResources>& resources) {
  std::vector<std::string> out;
  for (const auto& r : resources)
    if (r.entry && r.spills())
      out.push_back(fmt::format("{}: {} bytes spill stores, {} bytes spill loads", r.name, r.spill_store_bytes.value_or(0),
                                r.spill_load_bytes.value_or(0)));
  return out;
}

int auto_jobs(size_t cores, uint64_t free_mem_bytes, uint64_t per_job_mem_bytes) {
  uint64_t n = std::max<size_t>(cores, 1);
  if (per_job_mem_bytes > 0) n = std::min<uint64_t>(n, free_mem_bytes / per_job_mem_bytes);
  return static_cast<int>(std::clamp<uint64_t>(n, 1, 4096));
}

std::optional<uint64_t> parse_mem_available(std::string_view meminfo) {
  for (const auto& line : util::split_lines(meminfo)) {
    if (!util::starts_with(line, "MemAvailable:")) continue;
    auto fields = util::split(std::string_view(line).substr(13), ' ');
    if (fields.empty()) return std::nullopt;
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), v);
    if (ec != std::errc()) return std::nullopt;
    uint64_t unit = fields.size() > 1 && fields[1] == "kB" ? 1024 : 1;
    return v * unit;
  }
  return std::nullopt;
}

size_t cpu_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<uint64_t> mem_available_bytes() {
  auto text = util::read_file("/proc/meminfo");
  if (!text) return std::nullopt;
  return parse_mem_available(*text);
}

int auto_jobs_for(const std::vector<CompileRequest>& requests) {
  uint64_t per_job = kDefaultJobMemBytes;
  for (const auto& r : requests) per_job = std::max<uint64_t>(per_job, r.est_mem_bytes);
  auto mem = mem_available_bytes();
  return mem ? auto_jobs(cpu_cores(), *mem, per_job) : auto_jobs(cpu_cores(), 0, 0);
}

Result<int> parse_jobs(std::string_view text) {
  if (text == "auto") return 0;
  int n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p != text.data() + text.size() || n < 1)
    return input_error("--compile-jobs must be 'auto' or a positive integer, not '" + std::string(text) + "'");
  return n;
}

std::string format_progress(const BatchProgress& p) {
  return fmt::format("compiled {}/{} ({} cached, {} failed)", p.done, p.total, p.cached, p.failed);
}

std::vector<CompileResult> compile_batch(const std::vector<CompileRequest>& requests, const PoolOptions& opts,
                                         util::CommandRunner& runner, const ProgressFn& progress) {
  std::vector<CompileResult> results(requests.size());
  if (requests.empty()) return results;
  size_t jobs = static_cast<size_t>(opts.jobs > 0 ? opts.jobs : auto_jobs_for(requests));
  jobs = std::clamp<size_t>(jobs, 1, requests.size());

  Compiler compiler(runner, opts.nvcc);
  std::mutex mu;
  BatchProgress prog;
  prog.total = requests.size();
  util::for_each_index(requests.size(), jobs, [&](size_t i) {
    CompileResult r = compiler.compile(requests[i]);
    std::lock_guard<std::mutex> lock(mu);
    ++prog.done;
    if (r.cache_hit) ++prog.cached;
    if (!r.ok()) ++prog.failed;
    results[i] = std::move(r);
    if (progress) progress(prog, results[i]);
  });
  return results;
}

}  // namespace kopt::compile
