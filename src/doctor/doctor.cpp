#include "doctor/doctor.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <type_traits>

#include "toolchain/cutlass.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::doctor {

namespace fs = std::filesystem;

std::string_view describe(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "ok";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "skip";
  }
  return "?";
}

bool Report::passed() const { return failed_required().empty(); }

bool fails_gate(const Check& c) { return c.required && (c.status == CheckStatus::kFail || c.status == CheckStatus::kSkip); }

std::vector<std::string> Report::failed_required() const {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (fails_gate(c)) out.push_back(c.name);
  return out;
}

bool is_counter_permission_error(const std::string& out) {
  return out.find("ERR_NVGPUCTRPERM") != std::string::npos ||
         out.find("does not have permission to access NVIDIA GPU Performance Counters") != std::string::npos;
}

std::string counter_permission_fix() {
  return "the user may not read GPU performance counters (ERR_NVGPUCTRPERM). Run kopt as root, or allow "
         "profiling for all users: add 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' to a file in "
         "/etc/modprobe.d/, then reload the nvidia module or reboot "
         "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
}

namespace {

util::ProcessResult run_with_retry(util::ProcessSpec spec, int retries = 2) {
  util::ProcessResult r;
  for (int i = 0; i <= retries; ++i) {
    r = util::run_process(spec);
    if (r.started && !r.timed_out) break;  // only a hang or a failed start is worth retrying
  }
  return r;
}

Check check_gpu(Report& report) {
  Check c{"gpu"};
  auto info = device::query_gpus();
  if (!info) {
    c.status = CheckStatus::kFail;
    c.summary = info.error().message;
    c.fix = "run kopt on a machine with an NVIDIA GPU and its driver (libcuda.so.1)";
    return c;
  }
  report.gpus = info->gpus;
  report.driver_version = info->driver_version_text();
  c.status = CheckStatus::kPass;
  std::vector<std::string> names;
  for (const auto& g : info->gpus)
    names.push_back(fmt::format("[{}] {} sm_{}{} {} SMs, L2 {} MiB, {:.0f} GiB, SM {} MHz, mem {} MHz, {}", g.index,
                                g.name, g.cc_major, g.cc_minor, g.sm_count, g.l2_bytes >> 20,
                                static_cast<double>(g.memory_bytes) / (1ull << 30), g.sm_clock_khz / 1000,
                                g.mem_clock_khz / 1000, g.uuid));
  c.summary = fmt::format("driver {} ; {}", report.driver_version, util::join(names, " ; "));
  c.details["driver_version"] = report.driver_version;
  c.details["gpus"] = util::Json::array();
  for (const auto& g : info->gpus) c.details["gpus"].push_back(device::to_json(g));
  return c;
}

Check check_nvcc(const Report& report) {
  Check c{"nvcc"};
  std::string nvcc = toolchain::find_nvcc();
  if (nvcc.empty()) {
    c.status = CheckStatus::kFail;
    c.summary = "nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
    c.fix = "install the CUDA toolkit or put nvcc on PATH";
    return c;
  }
  auto r = run_with_retry({{nvcc, "--version"}, "", {}, 30});
  auto v = toolchain::parse_cuda_tool_version(r.stdout_text);
  if (!v) {
    c.status = CheckStatus::kFail;
    c.summary = nvcc + ": cannot read its version (" + r.describe() + ")";
    return c;
  }
  c.details = {{"path", nvcc}, {"version", v->text}};
  auto arch = run_with_retry({{nvcc, "--list-gpu-arch"}, "", {}, 30});
  std::vector<std::string> bad;
  for (const auto& g : report.gpus)
    if (!toolchain::arch_supported(arch.stdout_text, g.cc_major, g.cc_minor)) bad.push_back(g.arch());
  c.details["can_target"] = bad.empty();
  if (!bad.empty()) {
    c.status = CheckStatus::kFail;
    c.summary = fmt::format("{} (nvcc {}) cannot target {}", nvcc, v->text, util::join(bad, ", "));
    c.fix = "install a CUDA toolkit that supports this GPU's architecture";
  } else {
    c.status = CheckStatus::kPass;
    c.summary = fmt::format("{} (nvcc {}){}", nvcc, v->text,
                            report.gpus.empty() ? "" : ", targets " + report.gpus.front().arch());
  }
  return c;
}

Check check_cuda_tool(const std::string& name, const std::string& path) {
  Check c{name};
  if (path.empty()) {
    c.status = CheckStatus::kFail;
    c.summary = name + " not found";
    c.fix = "pip install nvidia-cuda-" + name + " (or put the CUDA toolkit's bin on PATH)";
    return c;
  }
  auto r = run_with_retry({{path, "--version"}, "", {}, 30});
  auto v = toolchain::parse_cuda_tool_version(r.stdout_text);
  c.status = v ? CheckStatus::kPass : CheckStatus::kFail;
  c.summary = v ? fmt::format("{} ({})", path, v->text) : path + ": cannot read its version (" + r.describe() + ")";
  c.details = {{"path", path}, {"version", v ? v->text : ""}};
  return c;
}

// Builds (once) a tiny CUDA program and profiles it with one metric to prove the counters are readable.
std::string first_line_of(const fs::path& f) {
  auto t = util::read_file(f);
  return t ? util::trim(*t) : std::string();
}

std::string module_params() {
  auto t = util::read_file("/proc/driver/nvidia/params");
  return t ? *t : std::string();
}

bool counters_cache_off() { return util::env_off("KOPT_DOCTOR_CACHE"); }

Check check_ncu_counters(const std::string& ncu, const Options& opts, const Report& report) {
  Check c{"ncu_counters"};
  if (report.gpus.empty()) {
    c.summary = "skipped: no GPU";
    return c;
  }
  std::string nvcc = toolchain::find_nvcc();
  if (ncu.empty() || nvcc.empty()) {
    c.summary = "skipped: needs ncu and nvcc";
    return c;
  }
  fs::path dir = opts.cache_dir.empty()
                     ? fs::path(std::getenv("HOME") ? std::getenv("HOME") : "/tmp") / ".cache/kopt/doctor"
                     : fs::path(opts.cache_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  // A pass is remembered under what could take it away (counters_cache_key); a failure never is.
  const std::string key = counters_cache_key(report, ncu, first_line_of("/proc/sys/kernel/random/boot_id"),
                                             module_params());
  const fs::path passed = dir / "counters_passed.json";
  if (opts.reuse_counter_check && !key.empty() && !counters_cache_off())
    if (auto j = util::read_json(passed); j && j->is_object() && j->value("key", std::string()) == key) {
      c.status = CheckStatus::kPass;
      c.summary = "counters readable (a probe kernel profiled this boot at " + j->value("at", std::string("?")) +
                  " under the same driver and ncu; KOPT_DOCTOR_CACHE=off profiles it again)";
      c.details = {{"cached", true}, {"at", j->value("at", std::string())}};
      return c;
    }
  fs::path src = dir / "probe.cu", exe = dir / ("probe_" + report.gpus.front().arch());
  if (!fs::exists(exe, ec)) {
    auto st = util::write_file_atomic(src,
        "#include <cstdio>\n__global__ void kopt_probe(float* x){x[threadIdx.x]+=1.0f;}\n"
        "int main(){float* d; if(cudaMalloc(&d,1024*sizeof(float))!=cudaSuccess) return 2;\n"
        "kopt_probe<<<1,256>>>(d); cudaError_t e=cudaDeviceSynchronize(); cudaFree(d);\n"
        "std::printf(\"probe %s\\n\", cudaGetErrorString(e)); return e==cudaSuccess?0:3;}\n");
    if (!st) {
      c.status = CheckStatus::kFail;
      c.summary = st.error().message;
      return c;
    }
    auto b = util::run_process({{nvcc, "-arch=" + report.gpus.front().arch(), "-o", exe.string(), src.string()},
                                "", {}, 180, 1 << 20, true});
    if (!b.success()) {
      c.status = CheckStatus::kFail;
      c.summary = "could not build the probe kernel: " + b.describe() + ": " + util::trim(b.stdout_text).substr(0, 400);
      return c;
    }
  }
  // The GPU's own: not beside the ceilings a run measures at its start (util::gpu_lease).
  util::ProcessResult r;
  {
    std::lock_guard<std::mutex> lease(util::gpu_lease());
    r = run_with_retry({{ncu, "--clock-control", "none", "--metrics", "sm__cycles_elapsed.avg", "--csv", "--kernel-name",
                         "kopt_probe", exe.string()},
                        "",
                        {},
                        180,
                        1 << 20,
                        true});
  }
  c.details = {{"output_tail", r.stdout_text.substr(r.stdout_text.size() > 1500 ? r.stdout_text.size() - 1500 : 0)}};
  if (is_counter_permission_error(r.stdout_text)) {
    c.status = CheckStatus::kFail;
    c.summary = "ncu cannot read GPU performance counters (permission)";
    c.fix = counter_permission_fix();
  } else if (r.success() && r.stdout_text.find("sm__cycles_elapsed.avg") != std::string::npos) {
    c.status = CheckStatus::kPass;
    c.summary = "counters readable (profiled a probe kernel: sm__cycles_elapsed.avg)";
    if (!key.empty()) (void)util::write_json_atomic(passed, "doctor_counters", {{"key", key}, {"at", util::utc_now_iso()}});
  } else {
    c.status = CheckStatus::kFail;
    std::string tail = util::trim(r.stdout_text);
    if (tail.size() > 300) tail = tail.substr(tail.size() - 300);
    c.summary = "ncu could not profile a probe kernel (" + r.describe() + "): " + tail;
    c.fix = "check that ncu matches the driver and that the GPU is not in use by a profiler";
  }
  return c;
}

Check check_ncu(std::string& ncu_path) {
  Check c{"ncu"};
  ncu_path = toolchain::find_ncu();
  if (ncu_path.empty()) {
    c.status = CheckStatus::kFail;
    c.summary = "ncu (Nsight Compute) not found";
    c.fix = "install Nsight Compute and put ncu on PATH (or set KOPT_NCU)";
    return c;
  }
  auto r = run_with_retry({{ncu_path, "--version"}, "", {}, 60});
  auto v = toolchain::parse_ncu_version(r.stdout_text);
  c.status = v ? CheckStatus::kPass : CheckStatus::kFail;
  c.summary = v ? fmt::format("{} ({})", ncu_path, v->text) : ncu_path + ": cannot read its version";
  c.details = {{"path", ncu_path}, {"version", v ? v->text : ""}};
  return c;
}

constexpr const char* kPythonProbe = R"PY(
import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
for mod in ("numpy", "safetensors", "torch", "triton"):
    try:
        m = __import__(mod)
        out[mod] = getattr(m, "__version__", "present")
    except Exception as e:
        out[mod] = None
        out[mod + "_error"] = type(e).__name__ + ": " + str(e)[:200]
try:
    import torch
    out["torch_cuda"] = bool(torch.cuda.is_available())
    out["torch_device"] = torch.cuda.get_device_name(0) if out["torch_cuda"] else None
except Exception:
    out["torch_cuda"] = False
print(json.dumps(out))
)PY";

// The gate's probe (Options::import_python_modules false): versions from the installed metadata, nothing imported.
constexpr const char* kPythonMetadataProbe = R"PY(
import json, sys, importlib.util, importlib.metadata as md
out = {"python": sys.version.split()[0], "executable": sys.executable, "imported": False}
for mod in ("numpy", "safetensors", "torch", "triton"):
    try:
        if importlib.util.find_spec(mod) is None:
            raise ImportError("no module named " + mod)
        try:
            out[mod] = md.version(mod)
        except Exception:
            out[mod] = "present"
    except Exception as e:
        out[mod] = None
        out[mod + "_error"] = type(e).__name__ + ": " + str(e)[:200]
print(json.dumps(out))
)PY";

std::vector<Check> check_python(const Report& report, bool import_modules) {
  std::vector<Check> checks;
  Check py{"python3"};
  std::string python = toolchain::find_python();
  if (python.empty()) {
    py.status = CheckStatus::kFail;
    py.summary = "python3 not found";
    py.fix = "install python3 (or set KOPT_PYTHON)";
    checks.push_back(py);
    return checks;
  }
  auto r = run_with_retry({{python, "-c", import_modules ? kPythonProbe : kPythonMetadataProbe}, "", {}, 120});
  util::Json j;
  try {
    j = util::Json::parse(util::trim(r.stdout_text));
  } catch (...) {
    py.status = CheckStatus::kFail;
    py.summary = python + ": probe failed (" + r.describe() + "): " + util::trim(r.stderr_text).substr(0, 300);
    checks.push_back(py);
    return checks;
  }
  py.status = CheckStatus::kPass;
  py.summary = fmt::format("{} ({})", python, j.value("python", "?"));
  py.details = j;
  checks.push_back(py);
  auto module = [&](const std::string& name, bool required, const std::string& why) {
    Check c{"python:" + name};
    c.required = required;
    if (j.contains(name) && !j[name].is_null()) {
      c.status = CheckStatus::kPass;
      c.summary = j[name].get<std::string>();
    } else {
      c.status = required ? CheckStatus::kFail : CheckStatus::kWarn;
      c.summary = "missing (" + why + ")";
      c.fix = "pip install " + name;
    }
    checks.push_back(c);
  };
  module("numpy", true, "the golden-data harness needs it");
  module("safetensors", true, "golden data is stored as safetensors");
  module("torch", false, "needed by ref.py files that use torch");
  module("triton", false, "needed for Triton kernels");
  if (!report.gpus.empty() && j.contains("torch") && !j["torch"].is_null() && j.value("imported", true)) {
    Check c{"python:torch_cuda"};
    c.required = false;
    bool ok = j.value("torch_cuda", false);
    c.status = ok ? CheckStatus::kPass : CheckStatus::kWarn;
    c.summary = ok ? "torch sees " + j.value("torch_device", std::string("the GPU")) : "torch does not see the GPU";
    checks.push_back(c);
  }
  return checks;
}

}  // namespace

Check check_cutlass() {
  Check c{"cutlass"};
  c.required = false;
  auto inc = toolchain::find_cutlass_include();
  if (!inc.found()) {
    c.status = CheckStatus::kWarn;
    c.summary = inc.problem + " (needed only for CUTLASS kernels)";
    c.fix = "pip install --no-deps nvidia-cutlass==4.2.0.0 (scripts/setup.sh does), export CUTLASS_PATH=/path/to/cutlass "
            "(the folder holding include/cutlass/cutlass.h), or pass --cutlass-include DIR";
    return c;
  }
  std::error_code ec;
  bool cute = fs::is_regular_file(fs::path(inc.dir) / "cute" / "tensor.hpp", ec);
  c.status = cute ? CheckStatus::kPass : CheckStatus::kWarn;
  c.summary = fmt::format("{} ({}{})", inc.dir, inc.origin, inc.version.empty() ? "" : ", CUTLASS " + inc.version);
  if (!cute) {
    c.summary += ": no cute/tensor.hpp beside cutlass/ (CUTLASS 3.x kernels need CuTe)";
    c.fix = "use a CUTLASS 3.x or later tree (include/cute), e.g. the nvidia-cutlass wheel";
  }
  c.details = {{"include_dir", inc.dir}, {"origin", inc.origin}, {"version", inc.version}, {"cute", cute}};
  return c;
}

std::string counters_cache_key(const Report& report, const std::string& ncu_path, const std::string& boot_id,
                               const std::string& module_params) {
  if (boot_id.empty() || ncu_path.empty() || report.gpus.empty()) return "";
  const std::string stamp = util::file_stamp(ncu_path);
  if (stamp.empty()) return "";
  const auto colon = stamp.find(':');
  util::Hasher h;
  h.add("kopt-doctor-counters-1").add(boot_id).add(report.driver_version).add(ncu_path).add(stamp.substr(0, colon));
  h.add(stamp.substr(colon + 1)).add(module_params);
  for (const auto& g : report.gpus) h.add(g.uuid).add(g.arch());
  return h.hex();
}

namespace {
// Runs `check` and records its seconds on the Check it returns (on the first of several: their total).
template <typename F>
auto timed(F check) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = check();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if constexpr (std::is_same_v<decltype(r), Check>)
    r.seconds = s;
  else if (!r.empty())
    r.front().seconds = s;
  return r;
}
// timed(check) on a thread of its own.
template <typename F>
auto timed_async(F check) {
  return std::async(std::launch::async, [check] { return timed(check); });
}
}  // namespace

Report run_doctor(const Options& opts) {
  // The GPU first (what the others check against), then the rest at once: each is a separate tool's process, and
  // the slow ones (Python's imports, the counters probe: 3-5 s each) no longer wait on each other. The table keeps
  // its order.
  Report report;
  report.checks.push_back(timed([&] { return check_gpu(report); }));
  const Report& gpus = report;
  auto nvcc = timed_async([&] { return check_nvcc(gpus); });
  auto ncu = std::async(std::launch::async, [&] {
    std::vector<Check> out;
    std::string path;
    out.push_back(timed([&] { return check_ncu(path); }));
    if (opts.check_ncu_counters && !opts.defer_ncu_counters)
      out.push_back(timed([&] { return check_ncu_counters(path, opts, gpus); }));
    return out;
  });
  auto cuobjdump = timed_async([] { return check_cuda_tool("cuobjdump", toolchain::find_cuobjdump()); });
  auto nvdisasm = timed_async([] { return check_cuda_tool("nvdisasm", toolchain::find_nvdisasm()); });
  auto python = timed_async([&] { return check_python(gpus, opts.import_python_modules); });
  auto cutlass = timed_async([] { return check_cutlass(); });
  std::vector<Check> rest;
  rest.push_back(nvcc.get());
  for (auto& c : ncu.get()) rest.push_back(std::move(c));
  rest.push_back(cuobjdump.get());
  rest.push_back(nvdisasm.get());
  for (auto& c : python.get()) rest.push_back(std::move(c));
  rest.push_back(cutlass.get());
  for (auto& c : rest) report.checks.push_back(std::move(c));
  return report;
}

Check counters_check(const Report& report, const Options& opts) {
  return timed([&] { return check_ncu_counters(toolchain::find_ncu(), opts, report); });
}

util::Json to_json(const Report& r) {
  util::Json j;
  j["passed"] = r.passed();
  j["failed_required"] = r.failed_required();
  j["driver_version"] = r.driver_version;
  j["gpus"] = util::Json::array();
  for (const auto& g : r.gpus) j["gpus"].push_back(device::to_json(g));
  j["checks"] = util::Json::array();
  for (const auto& c : r.checks) j["checks"].push_back(to_json(c));
  return j;
}

util::Json to_json(const Check& c) {
  return {{"name", c.name},
          {"status", describe(c.status)},
          {"required", c.required},
          {"summary", c.summary},
          {"fix", c.fix},
          {"details", c.details},
          {"seconds", std::round(c.seconds * 1000) / 1000}};
}

std::string format_table(const Report& r) {
  std::string s = "kopt doctor\n";
  for (const auto& c : r.checks) {
    s += fmt::format("  {:<4}  {:<18} {}\n", describe(c.status), c.name, c.summary);
    if (!c.fix.empty() && c.status != CheckStatus::kPass) s += fmt::format("        {:<18} fix: {}\n", "", c.fix);
  }
  auto failed = r.failed_required();
  if (failed.empty())
    s += "doctor: all required checks passed\n";
  else
    s += "doctor: FAILED — missing or broken: " + util::join(failed, ", ") + "\n";
  return s;
}

util::MetaInfo meta_of(const Report& r) {
  util::MetaInfo m;
  if (!r.gpus.empty()) m.gpu = r.gpus.front().name;
  m.driver = r.driver_version;
  for (const auto& c : r.checks) {
    if (c.name == "nvcc") m.nvcc = c.details.value("version", std::string());
    if (c.name == "ncu") m.ncu = c.details.value("version", std::string());
  }
  return m;
}

util::MetaInfo probe_meta(const std::string& gpu, const std::string& driver) {
  util::MetaInfo m{gpu, driver, "", ""};
  if (std::string nvcc = toolchain::find_nvcc(); !nvcc.empty())
    if (auto v = toolchain::parse_cuda_tool_version(toolchain::version_output(nvcc, 30)))
      m.nvcc = v->text;
  if (std::string ncu = toolchain::find_ncu(); !ncu.empty())
    if (auto v = toolchain::parse_ncu_version(toolchain::version_output(ncu, 60)))
      m.ncu = v->text;
  return m;
}

}  // namespace kopt::doctor
