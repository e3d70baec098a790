#include "compile/compiler.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "compile/cache.h"
#include "compile/command.h"
#include "compile/cutlass.h"
#include "compile/includes.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::compile {

namespace fs = std::filesystem;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> q;
  for (const auto& a : argv) q.push_back(util::shell_quote(a));
  return util::join(q, " ");
}

// Places the log (and the library, when there is one) in out_dir; fills library/log_path.
void deliver(const CompileRequest& req, const fs::path& cached_library, const fs::path& cached_log,
             CompileResult& r) {
  r.library = cached_library;
  r.log_path = cached_log;
  if (req.out_dir.empty()) return;
  std::error_code ec;
  fs::create_directories(req.out_dir, ec);
  fs::path log = req.out_dir / kLogName;
  if (auto st = util::write_file_atomic(log, r.log_text); st) {
    r.log_path = log;
  } else {
    r.log_text += "\n# kopt: " + st.error().message + "\n";
  }
  if (cached_library.empty()) return;
  fs::path lib = req.out_dir / kLibraryName;
  fs::remove(lib, ec);
  fs::create_hard_link(cached_library, lib, ec);  // same file system: no copy
  if (ec) fs::copy_file(cached_library, lib, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    r.log_text += "\n# kopt: cannot place " + lib.string() + ": " + ec.message() + "; using the cached library\n";
    return;
  }
  r.library = lib;
}

CompileResult failure(const CompileRequest& req, CompileStatus status, std::string log,
                      std::chrono::steady_clock::time_point t0) {
  CompileResult r;
  r.name = req.name;
  r.status = status;
  r.log_text = std::move(log);
  deliver(req, {}, {}, r);
  r.compile_ms = ms_since(t0);
  return r;
}

}  // namespace

Compiler::Compiler(util::CommandRunner& runner, std::string nvcc) : runner_(runner), nvcc_(std::move(nvcc)) {
  if (nvcc_.empty()) nvcc_ = toolchain::find_nvcc();
}

const std::string& Compiler::nvcc_version() {
  std::call_once(version_once_, [&] {
    if (nvcc_.empty()) {
      version_error_ = "nvcc not found: install the CUDA toolkit, put nvcc on PATH or set KOPT_NVCC";
      return;
    }
    util::ProcessSpec spec{{nvcc_, "--version"}};
    spec.timeout_s = 60;
    spec.merge_stderr = true;
    auto r = runner_.run(spec);
    if (!r.success()) {
      version_error_ = nvcc_ + " --version failed (" + r.describe() + "): " + r.stdout_text.substr(0, 400);
      return;
    }
    version_ = r.stdout_text;
  });
  return version_;
}

CompileResult Compiler::compile(const CompileRequest& req) {
  const auto t0 = std::chrono::steady_clock::now();
  if (nvcc_version().empty()) return failure(req, CompileStatus::kToolMissing, version_error_ + "\n", t0);
  if (util::interrupted()) return failure(req, CompileStatus::kFailed, "interrupted before compiling\n", t0);

  if (auto problem = cutlass_headers_problem(req); !problem.empty())
    return failure(req, CompileStatus::kFailed, "kopt: " + problem + "\n", t0);
  auto flags = nvcc_flags(req);
  if (!flags) return failure(req, CompileStatus::kFailed, "kopt: " + flags.error().message + "\n", t0);
  std::error_code ec;
  fs::path source = fs::absolute(req.source, ec).lexically_normal();
  auto source_text = util::read_file(source);
  if (!source_text) return failure(req, CompileStatus::kFailed, "kopt: " + source_text.error().message + "\n", t0);
  auto headers = collect_local_headers(source, req.include_dirs);
  if (!headers) return failure(req, CompileStatus::kFailed, "kopt: " + headers.error().message + "\n", t0);

  KeyInputs key_in;
  key_in.nvcc_version = version_;
  key_in.flags = *flags;
  for (const char* var : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"})
    if (const char* v = std::getenv(var); v && *v) key_in.env.emplace_back(var, v);
  key_in.source_text = *source_text;
  for (const auto& h : *headers) {
    fs::path rel = h.path.lexically_relative(source.parent_path());
    bool under = !rel.empty() && *rel.begin() != "..";
    key_in.headers.emplace_back(under ? rel.string() : h.path.string(), h.text);
  }

  CompileResult r;
  r.name = req.name;
  r.cache_key = cache_key(key_in);
  BuildCache cache(req.cache_dir.empty() ? default_cache_dir() : req.cache_dir);

  auto load_entry = [&](const CacheEntry& e) {
    r.status = CompileStatus::kOk;
    auto log = util::read_file(e.log);
    r.log_text = log ? *log : "";
    if (e.entry.contains("resources") && e.entry["resources"].is_array())
      for (const auto& j : e.entry["resources"])
        if (auto k = resources_from_json(j)) r.resources.push_back(std::move(k).value());
    deliver(req, e.library, e.log, r);
  };

  if (auto hit = cache.find(r.cache_key)) {
    r.cache_hit = true;
    load_entry(*hit);
    r.compile_ms = ms_since(t0);
    return r;
  }

  auto staging = cache.make_staging_dir();
  if (!staging) return failure(req, CompileStatus::kFailed, "kopt: " + staging.error().message + "\n", t0);
  util::ProcessSpec spec{nvcc_argv(nvcc_, *flags, source, *staging / kLibraryName)};
  spec.timeout_s = req.timeout_s;
  spec.merge_stderr = true;
  auto run = runner_.run(spec);
  std::string log = "$ " + command_line(spec.argv) + "\n" + run.stdout_text;
  if (!log.empty() && log.back() != '\n') log += '\n';
  log += fmt::format("# nvcc: {} after {:.1f} s\n", run.describe(), run.wall_ms / 1000.0);

  bool built = run.success() && fs::is_regular_file(*staging / kLibraryName, ec);
  if (!built) {
    fs::remove_all(*staging, ec);
    if (run.success()) log += "# kopt: nvcc succeeded but wrote no library\n";
    return failure(req, run.timed_out ? CompileStatus::kTimedOut : CompileStatus::kFailed, std::move(log), t0);
  }
  r.resources = parse_ptxas_verbose(run.stdout_text);
  util::Json res = util::Json::array();
  for (const auto& k : r.resources) res.push_back(to_json(k));
  util::Json entry = {{"key", r.cache_key},          {"name", req.name},
                      {"source", source.string()},   {"flags", *flags},
                      {"nvcc_version", version_},    {"nvcc_ms", run.wall_ms},
                      {"resources", res}};
  Status st = util::write_file_atomic(*staging / kLogName, log);
  if (st) st = util::write_json_atomic(*staging / kEntryName, "build-cache-entry", entry);
  if (!st) {
    fs::remove_all(*staging, ec);
    return failure(req, CompileStatus::kFailed, log + "# kopt: " + st.error().message + "\n", t0);
  }
  auto committed = cache.commit(*staging, r.cache_key);
  if (!committed) return failure(req, CompileStatus::kFailed, log + "# kopt: " + committed.error().message + "\n", t0);
  r.status = CompileStatus::kOk;
  r.log_text = log;
  deliver(req, committed->library, committed->log, r);
  r.compile_ms = ms_since(t0);
  return r;
}

}  // namespace kopt::compile
