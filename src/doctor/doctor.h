#pragma once
// `kopt doctor`: the hardware gate. Usable alone and as a library function that `optimize` calls first.
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "device/gpu_info.h"
#include "util/json_io.h"

namespace kopt::doctor {

enum class CheckStatus { kPass, kWarn, kFail, kSkip };
std::string_view describe(CheckStatus s);

struct Check {
  std::string name;      // "gpu", "nvcc", "ncu", "ncu_counters", "cuobjdump", ...
  CheckStatus status = CheckStatus::kSkip;
  bool required = true;  // a failed required check fails the gate
  std::string summary;   // one line for the table
  std::string fix;       // how to fix, when failing
  util::Json details = util::Json::object();
  double seconds = 0;  // how long the check took (the gate's whole-wall accounting: which one the gate waits on)
};

// Whether this check fails the gate: a required check that failed or could not run (skipped).
bool fails_gate(const Check& c);

struct Report {
  std::vector<Check> checks;
  std::vector<device::GpuInfo> gpus;
  std::string driver_version;
  bool passed() const;
  std::vector<std::string> failed_required() const;
};

struct Options {
  bool check_ncu_counters = true;  // profile a tiny kernel to prove counters are readable
  std::string cache_dir;           // where the tiny probe kernel is built (default ~/.cache/kopt/doctor)
  // The gate before a run (optimize) asks less than `kopt doctor` does: the Python modules by their installed
  // metadata (importing torch and triton costs 3-5 s; the golden-data harness imports them moments later and says
  // what fails), and a counters probe that passed this boot under the same driver, ncu and module parameters is not
  // run again (KOPT_DOCTOR_CACHE=off runs it).
  bool import_python_modules = true;
  bool reuse_counter_check = false;
  // run_doctor leaves the counters probe out (ncu on a one-block kernel: 1.6-2.8 s after the ceilings, H100): the
  // optimize gate runs it with counters_check() beside the baseline's first checks (issue 36).
  bool defer_ncu_counters = false;
};

// The key under which a passing counters probe is remembered: boot, driver, ncu (path, size, mtime), the GPUs and
// the nvidia module's parameters (where the admin-only profiling restriction is set). Empty: nothing to key on.
std::string counters_cache_key(const Report& report, const std::string& ncu_path, const std::string& boot_id,
                               const std::string& module_params);

Report run_doctor(const Options& opts);
// The counters probe alone, as run_doctor runs it (remembered per boot with reuse_counter_check; the GPU lease held
// while ncu runs): `report` gives the GPUs (run_doctor's, with defer_ncu_counters).
Check counters_check(const Report& report, const Options& opts);
// The CUTLASS headers (optional: warn when missing): toolchain::find_cutlass_include(), with CuTe beside them.
Check check_cutlass();
util::Json to_json(const Report& r);
util::Json to_json(const Check& c);  // one check as the report lists it
// The versions every JSON's meta block carries (util/json_io.h), as this report found them.
util::MetaInfo meta_of(const Report& r);
// The same without a whole doctor run (bench, roofline, profile, sass): the GPU and driver given, nvcc's and
// ncu's versions asked with --version (empty where a tool is missing).
util::MetaInfo probe_meta(const std::string& gpu, const std::string& driver);
std::string format_table(const Report& r);

// Recognises Nsight Compute's "no permission to read counters" message (ERR_NVGPUCTRPERM).
bool is_counter_permission_error(const std::string& ncu_output);
std::string counter_permission_fix();

}  // namespace kopt::doctor
