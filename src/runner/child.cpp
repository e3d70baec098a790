#include "runner/child.h"

#include <dlfcn.h>
#include <ffi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <tuple>

#include "device/cuda_driver.h"
#include "runner/compare.h"
#include "runner/golden.h"
#include "runner/outcome.h"
#include "runner/paired.h"
#include "runner/race.h"
#include "runner/stats.h"

namespace kopt::runner {

namespace {

using contract::DType;
using contract::ParamKind;
using device::DriverApi;

struct Options {
  std::vector<std::string> libs;
  std::string golden;
  std::string out;
  std::string mode = "check";  // check | time | paired | profile
  double atol = -1, rtol = -1;
  double max_time_s = 5;
  int min_samples = 10;
  int max_samples = 2000;
  double target_ci = 0.01;
  int rounds = 40;
  bool race = false;         // paired: stop once the last library is ranked against the first (runner/race.h)
  int seed_for_timing = -1;  // default: the first seed
};

// A failure that ends the child: written into the result and reported by exit code. `lib`: the library
// being called when it happened (paired mode), written as the result's `failed_lib`.
struct Fatal {
  RunStatus status;
  std::string message;
  std::string lib = {};
};

class Child {
 public:
  Child(const Options& o, const DriverApi& api, const Golden& g) : opt_(o), api_(api), g_(g) {}

  util::Json run();

 private:
  struct Lib {
    std::string path;
    void* handle = nullptr;
    void* solve = nullptr;
    int (*get_last_error)() = nullptr;  // cudaGetLastError from the library's own runtime, when exported
  };
  struct Bound {  // one seed's device buffers and argument values
    std::map<std::string, CUdeviceptr> dptr;
    std::map<std::string, std::vector<unsigned char>> uploaded;  // inputs (and in-out initial values)
    contract::TensorMap tensors;
    std::vector<CUdeviceptr> spacers;
  };

  void check(CUresult r, const std::string& what) {
    if (r != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, what + ": " + device::error_text(api_, r)};
  }
  Lib load_lib(const std::string& path);
  Bound bind_seed(int seed, std::mt19937_64& rng);
  void free_bound(Bound& b);
  void reset_outputs(Bound& b);
  void call(const Lib& lib, Bound& b);
  util::Json verify(Bound& b, Tolerance tol, RunStatus& status, std::string& message);
  std::vector<double> time_samples(const Lib& lib, Bound& b, util::Json& info);
  void run_paired(Tolerance tol, std::mt19937_64& rng, util::Json& result, RunStatus& status, std::string& message);

  const Options& opt_;
  const DriverApi& api_;
  const Golden& g_;
  CUdeviceptr flush_ = 0;
  size_t flush_bytes_ = 0;
};

Child::Lib Child::load_lib(const std::string& path) {
  Lib lib;
  lib.path = path;
  lib.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) throw Fatal{RunStatus::kLoadError, std::string("cannot load ") + path + ": " + ::dlerror()};
  lib.solve = ::dlsym(lib.handle, "solve");
  if (!lib.solve) throw Fatal{RunStatus::kLoadError, path + " has no exported solve() (is it extern \"C\"?)"};
  lib.get_last_error = reinterpret_cast<int (*)()>(::dlsym(lib.handle, "cudaGetLastError"));
  return lib;
}

Child::Bound Child::bind_seed(int seed, std::mt19937_64& rng) {
  Bound b;
  auto tensors = load_seed(g_, seed);
  if (!tensors) throw Fatal{RunStatus::kLoadError, tensors.error().message};
  b.tensors = std::move(tensors).value();
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    // A spacer of random size before each buffer: every seed sees different addresses, so a kernel that
    // caches results by pointer fails.
    CUdeviceptr spacer = 0;
    check(api_.cuMemAlloc(&spacer, 256 * (1 + rng() % 4096)), "cuMemAlloc (spacer)");
    b.spacers.push_back(spacer);
    CUdeviceptr d = 0;
    size_t bytes = static_cast<size_t>(std::max<int64_t>(spec.nbytes, 1));
    check(api_.cuMemAlloc(&d, bytes), "cuMemAlloc " + p.name + " (" + std::to_string(bytes) + " bytes)");
    b.dptr[p.name] = d;
    if (spec.role == "input" || spec.role == "inout") {
      auto it = b.tensors.find("in." + p.name);
      if (it == b.tensors.end()) throw Fatal{RunStatus::kLoadError, "golden seed " + std::to_string(seed) + " lacks in." + p.name};
      if (static_cast<int64_t>(it->second.data.size()) != spec.nbytes)
        throw Fatal{RunStatus::kLoadError, "golden in." + p.name + " has the wrong size"};
      b.uploaded[p.name] = it->second.data;
    }
    if (spec.role == "output" || spec.role == "inout") {
      if (!b.tensors.count("out." + p.name))
        throw Fatal{RunStatus::kLoadError, "golden seed " + std::to_string(seed) + " lacks out." + p.name};
    }
  }
  reset_outputs(b);
  return b;
}

void Child::reset_outputs(Bound& b) {
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    auto up = b.uploaded.find(p.name);
    if (up != b.uploaded.end()) {
      check(api_.cuMemcpyHtoD(b.dptr[p.name], up->second.data(), up->second.size()), "upload " + p.name);
    } else {
      check(api_.cuMemsetD8(b.dptr[p.name], poison_byte(spec.dtype), static_cast<size_t>(spec.nbytes)), "poison " + p.name);
    }
  }
  check(api_.cuCtxSynchronize(), "synchronize after upload");
}

void Child::free_bound(Bound& b) {
  for (auto& [n, d] : b.dptr) api_.cuMemFree(d);
  for (auto d : b.spacers) api_.cuMemFree(d);
  b.dptr.clear();
  b.spacers.clear();
}

void Child::call(const Lib& lib, Bound& b) {
  const auto& params = g_.signature.params;
  std::vector<ffi_type*> types;
  union Value {
    void* p;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  };
  std::vector<Value> values(params.size());
  std::vector<void*> args(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    Value& v = values[i];
    if (p.kind == ParamKind::kPointer) {
      v.p = reinterpret_cast<void*>(b.dptr[p.name]);
      types.push_back(&ffi_type_pointer);
    } else {
      double x = g_.scalars.at(p.name);
      switch (p.dtype) {
        case DType::kI32: v.i32 = static_cast<int32_t>(x); types.push_back(&ffi_type_sint32); break;
        case DType::kU32: v.u32 = static_cast<uint32_t>(x); types.push_back(&ffi_type_uint32); break;
        case DType::kI64: v.i64 = static_cast<int64_t>(x); types.push_back(&ffi_type_sint64); break;
        case DType::kU64: v.u64 = static_cast<uint64_t>(x); types.push_back(&ffi_type_uint64); break;
        case DType::kF32: v.f32 = static_cast<float>(x); types.push_back(&ffi_type_float); break;
        case DType::kF64: v.f64 = x; types.push_back(&ffi_type_double); break;
        default: throw Fatal{RunStatus::kLoadError, "unsupported scalar type for " + p.name};
      }
    }
    args[i] = &v;
  }
  ffi_cif cif;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, static_cast<unsigned>(params.size()), &ffi_type_void, types.data()) != FFI_OK)
    throw Fatal{RunStatus::kInternal, "libffi could not prepare the call to solve()"};
  ffi_call(&cif, FFI_FN(lib.solve), nullptr, args.data());
  if (lib.get_last_error) {
    int e = lib.get_last_error();
    if (e != 0) throw Fatal{RunStatus::kCudaError, "solve() left a CUDA runtime error (cudaError " + std::to_string(e) + ", e.g. a failed launch)"};
  }
}

util::Json Child::verify(Bound& b, Tolerance tol, RunStatus& status, std::string& message) {
  util::Json out = util::Json::object();
  util::Json outputs = util::Json::object(), inputs = util::Json::object();
  check(api_.cuCtxSynchronize(), "synchronize after solve()");  // device-wide: catches work on any stream
  for (const auto& p : g_.signature.params) {
    if (p.kind != ParamKind::kPointer) continue;
    const BufferSpec& spec = g_.buffers.at(p.name);
    std::vector<unsigned char> host(static_cast<size_t>(spec.nbytes));
    check(api_.cuMemcpyDtoH(host.data(), b.dptr[p.name], host.size()), "download " + p.name);
    if (spec.role == "input") {
      const auto& up = b.uploaded.at(p.name);
      bool same = std::memcmp(up.data(), host.data(), up.size()) == 0;
      int64_t first = -1;
      if (!same)
        for (size_t i = 0; i < up.size(); ++i)
          if (up[i] != host[i]) { first = static_cast<int64_t>(i / contract::dtype_size(spec.dtype)); break; }
      inputs[p.name] = {{"unchanged", same}, {"first_changed_index", first}};
      if (!same && status == RunStatus::kOk) {
        status = RunStatus::kInputModified;
        message = "input " + p.name + " was modified by the kernel (first changed element " + std::to_string(first) + ")";
      }
    } else {
      const auto& expected = b.tensors.at("out." + p.name);
      auto c = compare(spec.dtype, spec.shape, expected.data.data(), host.data(), expected.numel(), tol);
      outputs[p.name] = to_json(c);
      if (!c.ok && (status == RunStatus::kOk || status == RunStatus::kInputModified)) {
        bool unwritten = c.still_poisoned > 0 && spec.role == "output";
        status = unwritten ? RunStatus::kUnwrittenOutput : RunStatus::kWrongResult;
        message = "output " + p.name + ": " + c.summary();
      }
    }
  }
  out["outputs"] = outputs;
  out["inputs"] = inputs;
  return out;
}

std::vector<double> Child::time_samples(const Lib& lib, Bound& b, util::Json& info) {
  CUevent start, stop;
  check(api_.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(api_.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  auto now = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto a, auto z) { return std::chrono::duration<double, std::milli>(z - a).count(); };
  // Warm-up: at least 3 calls and 50 ms (module load, first-touch, clocks ramping).
  auto w0 = now();
  for (int i = 0; i < 3 || ms(w0, now()) < 50; ++i) {
    call(lib, b);
    check(api_.cuCtxSynchronize(), "warm-up");
    if (i > 1000) break;
  }
  bool sync_before_stop = false;  // switched on when work escapes the default stream (see docs/RUNNER.md)
  std::vector<double> samples, host_samples;
  auto t_begin = now();
  auto sample = [&]() {
    check(api_.cuMemsetD32(flush_, static_cast<unsigned>(samples.size()), flush_bytes_ / 4), "L2 flush");
    check(api_.cuCtxSynchronize(), "L2 flush");
    auto h0 = now();
    check(api_.cuEventRecord(start, nullptr), "cuEventRecord");
    call(lib, b);
    if (sync_before_stop) check(api_.cuCtxSynchronize(), "synchronize");
    check(api_.cuEventRecord(stop, nullptr), "cuEventRecord");
    check(api_.cuCtxSynchronize(), "synchronize after sample");
    auto h1 = now();
    float e = 0;
    check(api_.cuEventElapsedTime(&e, start, stop), "cuEventElapsedTime");
    samples.push_back(e);
    host_samples.push_back(ms(h0, h1));
  };
  // Probe: does the call finish within its events? A kernel on a non-blocking stream escapes the legacy
  // default stream, so the stop event fires early while the device-wide synchronisation waits.
  for (int i = 0; i < 5; ++i) sample();
  std::vector<double> ev(samples), host(host_samples);
  std::sort(ev.begin(), ev.end());
  std::sort(host.begin(), host.end());
  double ev_med = ev[ev.size() / 2], host_med = host[host.size() / 2];
  if (host_med - ev_med > 0.05 && ev_med < 0.5 * host_med) {
    sync_before_stop = true;
    info["work_outside_default_stream"] = true;
  }
  samples.clear();
  host_samples.clear();
  t_begin = now();
  while (true) {
    sample();
    int n = static_cast<int>(samples.size());
    if (n >= opt_.max_samples) { info["stop_reason"] = "max_samples"; break; }
    if (ms(t_begin, now()) > opt_.max_time_s * 1000) { info["stop_reason"] = "time_budget"; break; }
    if (n >= opt_.min_samples && n % 5 == 0) {
      auto st = compute_stats(samples);
      if (st.ci95_rel_halfwidth <= opt_.target_ci) { info["stop_reason"] = "ci_reached"; break; }
    }
  }
  info["timing_method"] = sync_before_stop ? "events_with_device_sync_before_stop" : "events_default_stream";
  auto hs = compute_stats(host_samples);
  info["host_median_ms"] = hs.median_ms;
  api_.cuEventDestroy(start);
  api_.cuEventDestroy(stop);
  return samples;
}

void Child::run_paired(Tolerance tol, std::mt19937_64& rng, util::Json& result, RunStatus& status, std::string& message) {
  // Each library is loaded and checked once on fresh poison (the first seed); a failure is the library's own
  // (runner/paired.h) as long as the context survives it. Then interleaved rounds: each round times every
  // correct library once, in a shuffled order, on the same buffers, after an L2 flush.
  std::vector<PairedEntry> entries(opt_.libs.size());
  std::vector<Lib> libs(opt_.libs.size());
  for (size_t k = 0; k < libs.size(); ++k) {
    entries[k].lib = opt_.libs[k];
    try {
      libs[k] = load_lib(opt_.libs[k]);
    } catch (const Fatal& f) {
      entries[k].status = f.status;
      entries[k].message = f.message;
    }
  }
  Bound b = bind_seed(g_.seeds.front(), rng);
  flush_bytes_ = 256u << 20;
  check(api_.cuMemAlloc(&flush_, flush_bytes_), "cuMemAlloc (L2 flush buffer)");
  for (size_t k = 0; k < libs.size(); ++k) {
    if (entries[k].status != RunStatus::kOk) continue;
    try {
      reset_outputs(b);
      call(libs[k], b);
      entries[k].check = verify(b, tol, entries[k].status, entries[k].message);
      for (int i = 0; i < 2 && entries[k].status == RunStatus::kOk; ++i) {  // with the check: 3 warm-up calls
        call(libs[k], b);
        check(api_.cuCtxSynchronize(), "warm-up");
      }
    } catch (Fatal& f) {
      // A launch the runtime refused (too many resources, a bad configuration) leaves the context usable;
      // an illegal access or a trap does not, and ends the child naming the library.
      if (api_.cuCtxSynchronize() != CUDA_SUCCESS) {
        f.lib = libs[k].path;
        throw;
      }
      entries[k].status = f.status;
      entries[k].message = f.message;
    }
  }
  CUevent start, stop;
  check(api_.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(api_.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<size_t> order = timed_libs(entries);
  auto t0 = std::chrono::steady_clock::now();
  int rounds = 0;
  for (; rounds < opt_.rounds && !order.empty(); ++rounds) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k : order) {
      try {
        check(api_.cuMemsetD32(flush_, static_cast<unsigned>(rounds), flush_bytes_ / 4), "L2 flush");
        check(api_.cuCtxSynchronize(), "L2 flush");
        check(api_.cuEventRecord(start, nullptr), "cuEventRecord");
        call(libs[k], b);
        check(api_.cuEventRecord(stop, nullptr), "cuEventRecord");
        check(api_.cuCtxSynchronize(), "synchronize after sample");
      } catch (Fatal& f) {
        f.lib = libs[k].path;
        throw;
      }
      float e = 0;
      check(api_.cuEventElapsedTime(&e, start, stop), "cuEventElapsedTime");
      entries[k].samples_ms.push_back(e);
    }
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opt_.race && order.size() >= 2 && entries.size() >= 2 && entries.front().status == RunStatus::kOk &&
        entries.back().status == RunStatus::kOk) {
      RaceRule rule;
      rule.max_rounds = opt_.rounds;
      rule.max_time_s = opt_.max_time_s;
      if (race_state(entries.front().samples_ms, entries.back().samples_ms, rule, el) != RaceState::kContinue) {
        ++rounds;
        break;
      }
    }
    if (rounds >= 10 && el > opt_.max_time_s) { ++rounds; break; }
  }
  api_.cuEventDestroy(start);
  api_.cuEventDestroy(stop);
  result["rounds"] = rounds;
  result["libs"] = paired_libs_json(entries);
  std::tie(status, message) = paired_status(entries);
  free_bound(b);
}

util::Json Child::run() {
  util::Json result = {{"status", "internal_error"}, {"message", ""}, {"mode", opt_.mode}};
  Tolerance tol = g_.tol;
  if (opt_.atol >= 0) tol.atol = opt_.atol;
  if (opt_.rtol >= 0) tol.rtol = opt_.rtol;
  result["tolerance"] = {{"atol", tol.atol}, {"rtol", tol.rtol}};
  std::mt19937_64 rng(static_cast<uint64_t>(::getpid()) * 2654435761ull + 17);

  RunStatus status = RunStatus::kOk;
  std::string message;
  if (opt_.mode == "paired") {
    run_paired(tol, rng, result, status, message);
  } else {
    const Lib lib = load_lib(opt_.libs.front());
    util::Json seeds = util::Json::array();
    for (int seed : g_.seeds) {
      Bound b = bind_seed(seed, rng);
      call(lib, b);
      util::Json v = verify(b, tol, status, message);
      v["seed"] = seed;
      seeds.push_back(v);
      free_bound(b);
      if (opt_.mode == "profile") break;  // one seed is enough to profile
    }
    result["seeds"] = seeds;
    if (status == RunStatus::kOk && opt_.mode == "time") {
      int seed = opt_.seed_for_timing >= 0 ? opt_.seed_for_timing : g_.seeds.front();
      Bound b = bind_seed(seed, rng);
      // A flush buffer well above the L2 size (50 MiB on H100/H200): 256 MiB written between samples.
      flush_bytes_ = 256u << 20;
      check(api_.cuMemAlloc(&flush_, flush_bytes_), "cuMemAlloc (L2 flush buffer)");
      util::Json info = util::Json::object();
      auto samples = time_samples(lib, b, info);
      result["timing"] = to_json(compute_stats(samples));
      result["timing_info"] = info;
      result["samples_ms"] = samples;
      // Re-check correctness after timing, on fresh poison.
      reset_outputs(b);
      call(lib, b);
      RunStatus recheck = RunStatus::kOk;
      std::string recheck_msg;
      result["recheck"] = verify(b, tol, recheck, recheck_msg);
      if (recheck != RunStatus::kOk) {
        status = recheck;
        message = "after timing: " + recheck_msg;
      }
      free_bound(b);
    }
    if (status == RunStatus::kOk && opt_.mode == "profile") {
      Bound b = bind_seed(g_.seeds.front(), rng);
      call(lib, b);  // warm-up outside the profiled range
      check(api_.cuCtxSynchronize(), "warm-up");
      reset_outputs(b);
      check(api_.cuProfilerStart(), "cuProfilerStart");
      call(lib, b);
      check(api_.cuCtxSynchronize(), "synchronize");
      check(api_.cuProfilerStop(), "cuProfilerStop");
      free_bound(b);
    }
  }
  result["status"] = status_name(status);
  result["message"] = message;
  return result;
}

}  // namespace

int child_main(const std::vector<std::string>& args) {
  CLI::App app{"kopt __runner: the measuring child process (internal)", "kopt __runner"};
  Options o;
  app.add_option("--lib", o.libs, "candidate shared library (repeat for --mode paired)")->required();
  app.add_option("--golden", o.golden, "golden data directory")->required();
  app.add_option("--out", o.out, "result JSON path")->required();
  app.add_option("--mode", o.mode, "check | time | paired | profile");
  app.add_option("--atol", o.atol);
  app.add_option("--rtol", o.rtol);
  app.add_option("--max-time-s", o.max_time_s);
  app.add_option("--min-samples", o.min_samples);
  app.add_option("--max-samples", o.max_samples);
  app.add_option("--target-ci", o.target_ci);
  app.add_option("--rounds", o.rounds);
  app.add_flag("--race", o.race);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kopt __runner: %s\n", e.what());
    return 4;
  }
  util::Json result;
  int rc = 0;
  auto write = [&](const util::Json& j) {
    auto st = util::write_json_atomic(o.out, "runner_result", j);
    if (!st) std::fprintf(stderr, "kopt __runner: %s\n", st.error().message.c_str());
  };
  auto golden = load_golden(o.golden);
  if (!golden) {
    write({{"status", "load_error"}, {"message", golden.error().message}});
    return 4;
  }
  auto api = device::load_driver();
  if (!api) {
    write({{"status", "cuda_error"}, {"message", api.error().message}});
    return 3;
  }
  const DriverApi& d = *api.value();
  try {
    CUresult r = d.cuInit(0);
    if (r != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, "cuInit: " + device::error_text(d, r)};
    CUdevice dev;
    CUcontext ctx;
    if ((r = d.cuDeviceGet(&dev, 0)) != CUDA_SUCCESS) throw Fatal{RunStatus::kCudaError, "cuDeviceGet: " + device::error_text(d, r)};
    if ((r = d.cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS || (r = d.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS)
      throw Fatal{RunStatus::kCudaError, "primary context: " + device::error_text(d, r)};
    Child child(o, d, golden.value());
    result = child.run();
  } catch (const Fatal& f) {
    result = {{"status", status_name(f.status)}, {"message", f.lib.empty() ? f.message : f.lib + ": " + f.message}, {"mode", o.mode}};
    if (!f.lib.empty()) result["failed_lib"] = f.lib;
    rc = f.status == RunStatus::kLoadError ? 4 : 3;
  }
  write(result);
  return rc;
}

}  // namespace kopt::runner
