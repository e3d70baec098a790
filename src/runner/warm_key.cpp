// The warm bench worker's key, settings and wire format (runner/warm.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>

#include "runner/warm.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/strings.h"
#include "util/unix_socket.h"

namespace kopt::runner {

namespace {

std::string stat_text(const struct stat& st) {
  return fmt::format("{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

// A small system file's text, or "" (no NVIDIA driver, no procfs).
std::string small_file(const char* path) {
  auto t = util::read_file(path);
  return t ? util::trim(*t) : std::string();
}

}  // namespace

std::string file_identity(const std::filesystem::path& path) {
  struct stat target {}, link {};
  if (::stat(path.c_str(), &target) != 0 || ::lstat(path.c_str(), &link) != 0) return "";
  return path.string() + "|" + stat_text(target) + "|" + stat_text(link);
}

std::map<std::string, std::string> warm_env(char** environ_list) {
  std::map<std::string, std::string> out;
  for (char** e = environ_list; e && *e; ++e) {
    std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(kv.substr(0, eq));
    // The bench worker's own settings shape the client, not the worker's measurements.
    if (name.starts_with("KOPT_BENCH_WORKER")) continue;
    const bool matters = name.starts_with("KOPT_") || name.starts_with("CUDA_") || name.starts_with("NVIDIA_") ||
                         name.starts_with("LD_") || name.starts_with("PYTHON") || name == "PATH" || name == "HOME";
    if (matters) out[name] = std::string(kv.substr(eq + 1));
  }
  return out;
}

std::string warm_gpu_key(const WarmKeyInputs& in) {
  util::Hasher h;
  h.add(in.gpu_identity);
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    auto it = in.env.find(v);
    h.add(v).add(it == in.env.end() ? "-" : it->second);
  }
  return h.hex();
}

std::string warm_key(const WarmKeyInputs& in) {
  util::Hasher h;
  h.add("kopt-bench-worker-1").add(in.kopt_identity).add(in.golden_identity).add(in.gpu_identity);
  for (const auto& [k, v] : in.env) h.add(k).add(v);
  h.add("argv");
  for (const auto& a : in.worker_argv) h.add(a);
  return h.hex();
}

// The GPU's part of the key, read from the system without the CUDA driver (what cuInit would cost, 0.1 s): the
// driver's version text and this boot's id. A GPU is not swapped without a reboot or a driver reload.
std::string system_gpu_identity() {
  return small_file("/proc/driver/nvidia/version") + "|" + small_file("/proc/sys/kernel/random/boot_id");
}

WarmConfig warm_config_from_env() {
  WarmConfig c;
  if (const char* v = std::getenv("KOPT_BENCH_WORKER_IDLE_S"); v && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s > 0) c.idle_s = s;
  }
  return c;
}

bool warm_worker_off_by_env() { return util::env_off("KOPT_BENCH_WORKER"); }

Result<std::filesystem::path> warm_dir() {
  namespace fs = std::filesystem;
  fs::path dir = util::kopt_cache_dir("bench_worker");
  // <dir>/<gpu 8>-<key 16>.sock must fit a socket address.
  if ((dir / std::string(30, 'x')).string().size() > util::max_socket_path())
    dir = fs::temp_directory_path() / ("kopt-bench-" + std::to_string(::getuid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return internal_error("cannot make " + dir.string() + ": " + ec.message());
  // Whoever can reach the socket can make the worker load a library: this user only.
  if (st.st_uid != ::getuid()) return internal_error(dir.string() + " belongs to another user");
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
    return internal_error("cannot make " + dir.string() + " private");
  return dir;
}

util::Json process_result_to_json(const util::ProcessResult& p) {
  return {{"started", p.started},       {"start_error", p.start_error}, {"exit_code", p.exit_code},
          {"term_signal", p.term_signal}, {"timed_out", p.timed_out},   {"interrupted", p.interrupted},
          {"stderr", p.stderr_text},    {"wall_ms", p.wall_ms}};
}

util::ProcessResult process_result_from_json(const util::Json& j) {
  util::ProcessResult p;
  p.started = j.value("started", false);
  p.start_error = j.value("start_error", std::string());
  p.exit_code = j.value("exit_code", -1);
  p.term_signal = j.value("term_signal", 0);
  p.timed_out = j.value("timed_out", false);
  p.interrupted = j.value("interrupted", false);
  p.stderr_text = j.value("stderr", std::string());
  p.wall_ms = j.value("wall_ms", 0.0);
  return p;
}

}  // namespace kopt::runner
