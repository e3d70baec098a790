// kopt's ceilings probe: measures what this GPU can actually do and prints ONE JSON object on stdout.
//
// kopt embeds this file (roofline/ceilings_probe_source.cpp, made by scripts/embed_ceilings_probe.py),
// writes it into its cache and builds it with
//   nvcc -arch=sm_90 -O3 ceilings_probe.cu -o kopt_ceilings_probe -lcublasLt -lcublas -ldl
// (adding -DKOPT_PROBE_NO_CUBLASLT where cuBLASLt is missing: the tensor-core ceilings are then skipped).
//
// Usage: kopt_ceilings_probe [--device N] [--quick] [--warmup N] [--reps N] [--only name,name,...]
// Every measurement: warm-up launches, then `reps` launches each timed with CUDA events; the median is
// reported with min and max. A measurement that cannot run is reported as {"skipped": true, "reason": ...}.
// Progress goes to stderr. Exit 0 when the JSON was printed; 2 when no device could be used (the JSON then
// carries "error").
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#ifndef KOPT_PROBE_NO_CUBLASLT
#include <cublasLt.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------------------
// A tiny JSON writer (the probe has no JSON library).
std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Fields {
  std::vector<std::string> items;
  Fields& str(const char* k, const std::string& v) { return raw(k, json_str(v)); }
  Fields& num(const char* k, double v) { return raw(k, json_num(v)); }
  Fields& integer(const char* k, long long v) { return raw(k, std::to_string(v)); }
  Fields& boolean(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  Fields& raw(const char* k, const std::string& v) {
    items.push_back(json_str(k) + ": " + v);
    return *this;
  }
  std::string object(const char* indent = "") const {
    std::string out = "{";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n  " : "\n  ") + std::string(indent) + items[i];
    return out + "\n" + indent + "}";
  }
};

std::vector<std::string> g_measurements;  // JSON objects, in order

void report_skip(const std::string& name, const std::string& reason) {
  std::fprintf(stderr, "probe: %s skipped: %s\n", name.c_str(), reason.c_str());
  g_measurements.push_back(Fields().str("name", name).boolean("skipped", true).str("reason", reason).object("  "));
}

std::string cuda_err(const std::string& what, cudaError_t e) {
  return what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

// ---------------------------------------------------------------------------------------------------------
// Timing: warm-up, then each repetition timed alone with a pair of events; median, min, max.
struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};

template <typename Launch>
bool time_launches(Launch&& launch, int warmup, int reps, Timing& t, std::string& err) {
  cudaEvent_t a, b;
  cudaError_t e = cudaEventCreate(&a);
  if (e == cudaSuccess) e = cudaEventCreate(&b);
  if (e != cudaSuccess) {
    err = cuda_err("cudaEventCreate", e);
    return false;
  }
  std::vector<double> ms;
  for (int i = 0; i < warmup + reps && err.empty(); ++i) {
    cudaEventRecord(a);
    if (!launch(err)) break;
    cudaEventRecord(b);
    e = cudaEventSynchronize(b);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
      err = cuda_err("launch", e);
      break;
    }
    float f = 0;
    cudaEventElapsedTime(&f, a, b);
    if (i >= warmup) ms.push_back(f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (!err.empty()) return false;
  std::sort(ms.begin(), ms.end());
  t.reps = static_cast<int>(ms.size());
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  t.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return true;
}

// value = work / median time, in `unit` (GB/s: 1e9 bytes/s; TFLOP/s and TOP/s: 1e12 operations/s).
void report_result(const std::string& name, const char* unit, double work, const char* work_key, const Timing& t,
                   const std::string& note, const std::string& extra_fields = "") {
  double scale = std::strcmp(unit, "GB/s") == 0 ? 1e9 : 1e12;
  double value = work / (t.median_ms * 1e-3) / scale;
  std::fprintf(stderr, "probe: %-12s %10.1f %s (median %.4f ms over %d)\n", name.c_str(), value, unit,
               t.median_ms, t.reps);
  Fields f;
  f.str("name", name).str("unit", unit).num("value", value).num("median_ms", t.median_ms).num("min_ms", t.min_ms);
  f.num("max_ms", t.max_ms).integer("reps", t.reps).num(work_key, work);
  if (!note.empty()) f.str("note", note);
  if (!extra_fields.empty()) f.items.push_back(extra_fields);
  g_measurements.push_back(f.object("  "));
}

// ---------------------------------------------------------------------------------------------------------
// Random non-zero data (zeros make tensor cores and DRAM look faster than they are).
__device__ __forceinline__ uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Uniform in [-1, 1), magnitude at least 1/16.
__device__ __forceinline__ float rnd_nonzero(size_t i, uint32_t seed) {
  float v = (mix(i * 0x9e3779b97f4a7c15ULL + seed) >> 8) * (2.0f / 16777216.0f) - 1.0f;
  if (fabsf(v) < 0.0625f) v = v < 0 ? -0.5f : 0.5f;
  return v;
}

template <typename T>
__device__ __forceinline__ T from_float(float v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ uint32_t from_float<uint32_t>(float v) { return __float_as_uint(v); }
#ifndef KOPT_PROBE_NO_CUBLASLT  // the low-precision types only feed the matrix products
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }
template <>
__device__ __forceinline__ int32_t from_float<int32_t>(float v) { return static_cast<int32_t>(v * 1000.0f) | 1; }
template <>
__device__ __forceinline__ int8_t from_float<int8_t>(float v) {
  int q = static_cast<int>(v * 63.0f);  // [-63, 63], never 0 since |v| >= 1/16
  return static_cast<int8_t>(q == 0 ? 1 : q);
}
#endif

template <typename T>
__global__ void fill_kernel(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = from_float<T>(rnd_nonzero(i, seed));
}

template <typename T>
cudaError_t fill(T* p, size_t n, uint32_t seed) {
  fill_kernel<T><<<4096, 256>>>(p, n, seed);
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------------------
// DRAM: four read/write mixes, because HBM's rate depends on it (reads alone are fastest, every write costs
// bus turnarounds): read-only (a reduction), triad (dst = a + b: 2 reads : 1 write), copy (1 : 1) and
// write-only. Every kernel moves 16-byte words, 4 per thread per pass (all loads issued before any store);
// a pass covers blockDim*4 consecutive words per block, and the grid either covers the data once (one pass)
// or strides over it. The probe times several grids per mix and keeps the fastest: a ceiling must be what
// the best kernel reaches, not what one launch shape happens to get.
__device__ __forceinline__ unsigned fold(int4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__device__ __forceinline__ void reduce_out(unsigned acc, unsigned* out) {
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicXor(out, acc);
}

template <int kReads, bool kWrite>
__global__ void stream_kernel(const int4* __restrict__ a, const int4* __restrict__ b, int4* __restrict__ dst,
                              size_t n, unsigned* out) {
  constexpr int kPer = 4;
  const size_t step = static_cast<size_t>(gridDim.x) * blockDim.x * kPer;
  unsigned acc = 0;
  for (size_t base = blockIdx.x * static_cast<size_t>(blockDim.x) * kPer + threadIdx.x; base < n; base += step) {
    int4 va[kPer], vb[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;
      if (kReads >= 1 && i < n) va[u] = a[i];
      if (kReads >= 2 && i < n) vb[u] = b[i];
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const size_t i = base + static_cast<size_t>(u) * blockDim.x;
      if (i >= n) continue;
      if (kWrite) {
        int4 v;
        if (kReads == 0) {
          const int s = static_cast<int>(i) | 1;  // non-zero, different per word
          v = make_int4(s, s ^ 0x5a5a, s + 7, s * 3);
        } else {
          v = va[u];
        }
        if (kReads >= 2) v = make_int4(v.x + vb[u].x, v.y + vb[u].y, v.z + vb[u].z, v.w + vb[u].w);
        dst[i] = v;
      } else {
        acc += fold(va[u]);
      }
    }
  }
  if (!kWrite) reduce_out(acc, out);
}

// L2: repeated reads of a buffer far smaller than L2, bypassing L1 (ld.global.cg); the loads are volatile
// asm so the compiler cannot merge passes.
__device__ __forceinline__ int4 load_cg(const int4* p) {
  int4 v;
  asm volatile("ld.global.cg.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__global__ void l2_read_kernel(const int4* __restrict__ src, size_t n, int passes, unsigned* out) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t start = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (int p = 0; p < passes; ++p) {
    size_t i = start;
    for (; i + 3 * stride < n; i += 4 * stride) {
      int4 a = load_cg(src + i), b = load_cg(src + i + stride), c = load_cg(src + i + 2 * stride),
           d = load_cg(src + i + 3 * stride);
      acc += fold(a) + fold(b) + fold(c) + fold(d);
    }
    for (; i < n; i += stride) acc += fold(load_cg(src + i));
  }
  reduce_out(acc, out);
}

// ---------------------------------------------------------------------------------------------------------
// FMA throughput: 8 independent chains per thread, 4x unrolled, one full wave of resident blocks.
constexpr int kChains = 8;
constexpr int kUnroll = 4;

__device__ __forceinline__ float fma_op(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_op(double a, double b, double c) { return fma(a, b, c); }

template <typename T>
__global__ void fma_kernel(T* out, T b, T c, int iters, long long* cycles) {
  T x[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) x[j] = static_cast<T>(threadIdx.x + j) * static_cast<T>(1e-3);
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < kChains; ++j) x[j] = fma_op(x[j], b, c);
    }
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) s += x[j];
  out[blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x] = s;
  if (blockIdx.x == 0 && threadIdx.x == 0) *cycles = clock64() - t0;
}

// ---------------------------------------------------------------------------------------------------------
// NVML, loaded at run time when present: the display driver's version and the clocks under load.
struct Nvml {
  void* lib = nullptr;
  void* dev = nullptr;
  int (*get_clock)(void*, int, unsigned*) = nullptr;
  int (*get_max_clock)(void*, int, unsigned*) = nullptr;
  std::string driver_version;

  void open(const std::string& uuid) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto drv = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    auto by_uuid = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
    get_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    get_max_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (!init || init() != 0) {
      lib = nullptr;
      return;
    }
    char buf[96] = {};
    if (drv && drv(buf, sizeof buf) == 0) driver_version = buf;
    if (by_uuid && by_uuid(uuid.c_str(), &dev) != 0) dev = nullptr;
  }
  // type: 1 = SM, 2 = memory (nvmlClockType_t). -1 when unknown.
  long long clock_mhz(int type, bool max = false) const {
    unsigned v = 0;
    auto f = max ? get_max_clock : get_clock;
    if (!dev || !f || f(dev, type, &v) != 0) return -1;
    return v;
  }
};

std::string uuid_text(const cudaUUID_t& u) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

struct Config {
  int device = 0;
  bool quick = false;
  int warmup = 3;
  int reps = 15;
  std::string only;  // comma-separated names; empty: all
  bool wants(const char* name) const {
    if (only.empty()) return true;
    std::string s = "," + only + ",";
    return s.find("," + std::string(name) + ",") != std::string::npos;
  }
};

struct Device {
  int sm_count = 0;
  long long l2_bytes = 0;
  int threads_per_sm = 0;
};

// ---------------------------------------------------------------------------------------------------------
struct DramMix {
  const char* name;
  int reads;    // buffers read per word of output (0, 1 or 2)
  bool write;
  int buffers;  // the 4 GiB are split into this many equal arrays
  const char* what;
};

template <int kReads, bool kWrite>
void launch_stream(int grid, const int4* a, const int4* b, int4* dst, size_t n, unsigned* out) {
  stream_kernel<kReads, kWrite><<<grid, 256>>>(a, b, dst, n, out);
}

void measure_dram(const Config& cfg, const Device& dev) {
  static const DramMix mixes[] = {
      {"dram_read", 1, false, 1, "read-only reduction"},
      {"dram_triad", 2, true, 3, "triad dst = a + b (2 reads : 1 write)"},
      {"dram_copy", 1, true, 2, "copy (1 read : 1 write)"},
      {"dram_write", 0, true, 1, "write-only fill"},
  };
  bool any = false;
  for (const auto& m : mixes) any = any || cfg.wants(m.name);
  if (!any) return;
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  // 4 GiB in all (256 MiB with --quick), split into the mix's arrays: every launch moves about 4 GiB.
  size_t want = cfg.quick ? (size_t{256} << 20) : (size_t{4} << 30);
  std::string note;
  if (want > free_b / 2) {
    want = (free_b / 2) & ~size_t{(1 << 20) - 1};
    note = "; buffer reduced to half the free memory";
  }
  auto skip_all = [&](const std::string& why) {
    for (const auto& m : mixes)
      if (cfg.wants(m.name)) report_skip(m.name, why);
  };
  if (want < static_cast<size_t>(dev.l2_bytes) * 4) return skip_all("not enough free device memory for a buffer 4x the L2");
  int4* buf = nullptr;
  unsigned* out = nullptr;
  cudaError_t e = cudaMalloc(&buf, want);
  if (e == cudaSuccess) e = cudaMalloc(&out, sizeof(unsigned));
  if (e == cudaSuccess) e = fill(reinterpret_cast<uint32_t*>(buf), want / 4, 1u);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    skip_all(cuda_err("allocating the DRAM buffers", e));
    cudaFree(buf);
    cudaFree(out);
    return;
  }
  const size_t words = want / sizeof(int4);
  const int resident = dev.sm_count * std::max(1, dev.threads_per_sm / 256);
  for (const auto& m : mixes) {
    if (!cfg.wants(m.name)) continue;
    const size_t n = words / m.buffers;  // words per array
    const int4* a = buf;
    const int4* b = buf + n;
    int4* dst = buf + static_cast<size_t>(m.buffers - 1) * n;
    if (m.reads == 0) dst = buf;
    const long long one_pass = static_cast<long long>((n + 1023) / 1024);
    const long long grids[] = {resident, 4LL * resident, std::min<long long>(one_pass, 0x7fffffffLL)};
    const char* grid_names[] = {"grid-stride, one wave", "grid-stride, 4 waves", "one pass"};
    Timing best;
    int best_k = -1;
    std::string err, tried;
    for (int k = 0; k < 3; ++k) {
      const int grid = static_cast<int>(grids[k]);
      auto launch = [&](std::string&) {
        if (m.reads == 1 && !m.write) launch_stream<1, false>(grid, a, nullptr, nullptr, n, out);
        else if (m.reads == 2) launch_stream<2, true>(grid, a, b, dst, n, out);
        else if (m.reads == 1) launch_stream<1, true>(grid, a, nullptr, dst, n, out);
        else launch_stream<0, true>(grid, nullptr, nullptr, dst, n, out);
        return true;
      };
      Timing t;
      std::string e1;
      if (!time_launches(launch, cfg.warmup, cfg.reps, t, e1)) {
        err = e1;
        break;
      }
      const double gbps = (m.reads + (m.write ? 1 : 0)) * static_cast<double>(n) * sizeof(int4) / (t.median_ms * 1e6);
      char buf2[96];
      std::snprintf(buf2, sizeof buf2, "%s%s %d blocks %.0f GB/s", tried.empty() ? "" : ", ", grid_names[k], grid, gbps);
      tried += buf2;
      if (best_k < 0 || t.median_ms < best.median_ms) {
        best = t;
        best_k = k;
      }
    }
    if (!err.empty()) {
      report_skip(m.name, err);
      continue;
    }
    const double bytes = (m.reads + (m.write ? 1 : 0)) * static_cast<double>(n) * sizeof(int4);
    report_result(m.name, "GB/s", bytes, "bytes_per_rep", best,
                  std::string(m.what) + ", 16-byte words, bytes = read + written; best of " + tried + " (kept: " +
                      grid_names[best_k] + ")" + note);
  }
  cudaFree(buf);
  cudaFree(out);
}

void measure_l2(const Config& cfg, const Device& dev) {
  if (!cfg.wants("l2_read")) return;
  if (dev.l2_bytes <= 0) {
    report_skip("l2_read", "the device reports no L2 size");
    return;
  }
  // A quarter of the L2 (Hopper's L2 is two partitions; a quarter stays resident in either).
  const size_t bytes = (static_cast<size_t>(dev.l2_bytes) / 4) & ~size_t{4095};
  const size_t n = bytes / sizeof(int4);
  const double target_bytes = cfg.quick ? 1e9 : 16e9;
  const int passes = std::max(1, static_cast<int>(target_bytes / bytes));
  int4* buf = nullptr;
  unsigned* out = nullptr;
  cudaError_t e = cudaMalloc(&buf, bytes);
  if (e == cudaSuccess) e = cudaMalloc(&out, sizeof(unsigned));
  if (e == cudaSuccess) e = fill(reinterpret_cast<uint32_t*>(buf), bytes / 4, 2u);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    report_skip("l2_read", cuda_err("allocating the L2 buffer", e));
  } else {
    const int blocks = dev.sm_count * (dev.threads_per_sm / 256);
    Timing t;
    std::string err;
    auto launch = [&](std::string&) {
      l2_read_kernel<<<blocks, 256>>>(buf, n, passes, out);
      return true;
    };
    if (time_launches(launch, cfg.warmup, cfg.reps, t, err))
      report_result("l2_read", "GB/s", static_cast<double>(bytes) * passes, "bytes_per_rep", t,
                    "ld.global.cg reads of " + std::to_string(bytes >> 20) + " MiB (a quarter of the L2), " +
                        std::to_string(passes) + " passes");
    else
      report_skip("l2_read", err);
  }
  cudaFree(buf);
  cudaFree(out);
}

template <typename T>
void measure_fma(const Config& cfg, const Device& dev, const char* name, Nvml& nvml, std::string& clocks) {
  if (!cfg.wants(name)) return;
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_kernel<T>, 256, 0);
  if (per_sm <= 0) per_sm = 1;
  const int blocks = dev.sm_count * per_sm;  // one full wave
  const size_t threads = static_cast<size_t>(blocks) * 256;
  const int iters = cfg.quick ? 2048 : (sizeof(T) == 4 ? 32768 : 16384);
  T* out = nullptr;
  long long* cycles = nullptr;
  cudaError_t e = cudaMalloc(&out, threads * sizeof(T));
  if (e == cudaSuccess) e = cudaMalloc(&cycles, sizeof(long long));
  if (e != cudaSuccess) {
    report_skip(name, cuda_err("cudaMalloc", e));
    cudaFree(out);
    return;
  }
  Timing t;
  std::string err;
  auto launch = [&](std::string&) {
    fma_kernel<T><<<blocks, 256>>>(out, static_cast<T>(0.999999), static_cast<T>(1e-6), iters, cycles);
    return true;
  };
  if (time_launches(launch, cfg.warmup, cfg.reps, t, err)) {
    long long cyc = 0;
    cudaMemcpy(&cyc, cycles, sizeof cyc, cudaMemcpyDeviceToHost);
    // SM clock seen during the last launch: block 0's cycles over the kernel's time (one wave, so close).
    double mhz = cyc / (t.median_ms * 1e3);
    long long nvml_mhz = nvml.clock_mhz(1);
    clocks += ", " + json_str(std::string(name) + "_sm_mhz_from_clock64") + ": " + json_num(mhz);
    if (nvml_mhz > 0) clocks += ", " + json_str(std::string("nvml_sm_mhz_after_") + name) + ": " + json_num(nvml_mhz);
    double flops = 2.0 * kChains * kUnroll * static_cast<double>(iters) * static_cast<double>(threads);
    report_result(name, "TFLOP/s", flops, "flops_per_rep", t,
                  std::to_string(kChains) + " independent FMA chains per thread, " + std::to_string(blocks) +
                      " blocks of 256 (one wave)",
                  "\"sm_mhz_from_clock64\": " + json_num(mhz));
  } else {
    report_skip(name, err);
  }
  cudaFree(out);
  cudaFree(cycles);
}

// ---------------------------------------------------------------------------------------------------------
#ifndef KOPT_PROBE_NO_CUBLASLT
struct GemmSpec {
  const char* name;
  const char* unit;
  cudaDataType_t ab_type, cd_type, scale_type;
  cublasComputeType_t compute;
  size_t ab_bytes, cd_bytes;
};

std::string cublas_err(const char* what, cublasStatus_t s) {
  return std::string(what) + " returned " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) + ")";
}

cudaError_t fill_typed(void* p, size_t n, cudaDataType_t t, uint32_t seed) {
  switch (t) {
    case CUDA_R_16F: return fill(static_cast<__half*>(p), n, seed);
    case CUDA_R_16BF: return fill(static_cast<__nv_bfloat16*>(p), n, seed);
    case CUDA_R_32F: return fill(static_cast<float*>(p), n, seed);
    case CUDA_R_64F: return fill(static_cast<double*>(p), n, seed);
    case CUDA_R_8F_E4M3: return fill(static_cast<__nv_fp8_e4m3*>(p), n, seed);
    case CUDA_R_8I: return fill(static_cast<int8_t*>(p), n, seed);
    case CUDA_R_32I: return fill(static_cast<int32_t*>(p), n, seed);  // the int8 GEMM's C/D
    default: return cudaErrorInvalidValue;
  }
}

// D = A^T B (the "TN" layout every type, fp8 and int8 included, supports), column-major, m = n = k = size.
void measure_gemm(const Config& cfg, cublasLtHandle_t lt, const GemmSpec& g, Nvml& nvml, std::string& clocks) {
  if (!cfg.wants(g.name)) return;
  const int64_t size = cfg.quick ? 2048 : 8192;
  const int64_t m = size, n = size, k = size;
  void *a = nullptr, *b = nullptr, *d = nullptr, *ws = nullptr;
  const size_t ws_bytes = size_t{64} << 20;
  cudaError_t e = cudaMalloc(&a, m * k * g.ab_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&b, k * n * g.ab_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&d, m * n * g.cd_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&ws, ws_bytes);
  if (e == cudaSuccess) e = fill_typed(a, m * k, g.ab_type, 3u);
  if (e == cudaSuccess) e = fill_typed(b, k * n, g.ab_type, 4u);
  if (e == cudaSuccess) e = fill_typed(d, m * n, g.cd_type, 5u);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::string reason;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  auto check = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS && reason.empty()) reason = cublas_err(what, st);
    return reason.empty();
  };
  if (e != cudaSuccess) reason = cuda_err("allocating the matrices", e);
  if (reason.empty()) {
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    check(cublasLtMatmulDescCreate(&op, g.compute, g.scale_type), "cublasLtMatmulDescCreate") &&
        check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "set TRANSA") &&
        check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "set TRANSB") &&
        check(cublasLtMatrixLayoutCreate(&la, g.ab_type, k, m, k), "cublasLtMatrixLayoutCreate(A)") &&
        check(cublasLtMatrixLayoutCreate(&lb, g.ab_type, k, n, k), "cublasLtMatrixLayoutCreate(B)") &&
        check(cublasLtMatrixLayoutCreate(&ld, g.cd_type, m, n, m), "cublasLtMatrixLayoutCreate(D)") &&
        check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate") &&
        check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                   sizeof ws_bytes),
              "set MAX_WORKSPACE_BYTES");
  }
  cublasLtMatmulHeuristicResult_t heur[4] = {};
  int found = 0;
  if (reason.empty()) {
    s = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 4, heur, &found);
    if (check(s, "cublasLtMatmulAlgoGetHeuristic") && found == 0)
      reason = "cuBLASLt offers no algorithm for this type on this GPU";
  }
  // alpha = 1, beta = 0 in the scale type.
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
  int32_t one_i = 1, zero_i = 0;
  const void* alpha = g.scale_type == CUDA_R_64F ? static_cast<const void*>(&one_d)
                      : g.scale_type == CUDA_R_32I ? static_cast<const void*>(&one_i)
                                                   : static_cast<const void*>(&one_f);
  const void* beta = g.scale_type == CUDA_R_64F ? static_cast<const void*>(&zero_d)
                     : g.scale_type == CUDA_R_32I ? static_cast<const void*>(&zero_i)
                                                  : static_cast<const void*>(&zero_f);
  Timing best;
  int best_algo = -1;
  std::string last_err;
  for (int i = 0; reason.empty() && i < found; ++i) {
    Timing t;
    std::string err;
    auto launch = [&](std::string& er) {
      cublasStatus_t st = cublasLtMatmul(lt, op, alpha, a, la, b, lb, beta, d, ld, d, ld, &heur[i].algo, ws,
                                         ws_bytes, nullptr);
      if (st != CUBLAS_STATUS_SUCCESS) er = cublas_err("cublasLtMatmul", st);
      return st == CUBLAS_STATUS_SUCCESS;
    };
    if (time_launches(launch, std::max(2, cfg.warmup), cfg.reps, t, err)) {
      if (best_algo < 0 || t.median_ms < best.median_ms) {
        best = t;
        best_algo = i;
      }
    } else {
      last_err = err;
      if (err.find("launch") == 0) break;  // a CUDA error is sticky: do not try further algorithms
    }
  }
  if (reason.empty() && best_algo < 0) reason = last_err.empty() ? "no algorithm ran" : last_err;
  if (reason.empty()) {
    long long nvml_mhz = nvml.clock_mhz(1);
    if (nvml_mhz > 0) clocks += ", " + json_str(std::string("nvml_sm_mhz_after_") + g.name) + ": " + json_num(nvml_mhz);
    report_result(g.name, g.unit, 2.0 * m * n * k, "flops_per_rep", best,
                  "cuBLASLt " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                      " TN, random non-zero data; best of " + std::to_string(found) + " heuristic algorithms",
                  "\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) + ", \"k\": " + std::to_string(k));
  } else {
    report_skip(g.name, reason);
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (ld) cublasLtMatrixLayoutDestroy(ld);
  if (op) cublasLtMatmulDescDestroy(op);
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  cudaFree(ws);
}
#endif

const char* const kGemmNames[] = {"fp16_tensor", "bf16_tensor", "tf32_tensor", "fp8_tensor", "int8_tensor",
                                  "fp64_tensor"};

void measure_tensor(const Config& cfg, Nvml& nvml, std::string& clocks, std::string& cublaslt_version) {
#ifdef KOPT_PROBE_NO_CUBLASLT
  (void)nvml;
  (void)clocks;
  (void)cublaslt_version;
  for (const char* name : kGemmNames)
    if (cfg.wants(name)) report_skip(name, "the probe was built without cuBLASLt (headers or library not found)");
#else
  cublasLtHandle_t lt = nullptr;
  cublasStatus_t s = cublasLtCreate(&lt);
  if (s != CUBLAS_STATUS_SUCCESS) {
    for (const char* name : kGemmNames)
      if (cfg.wants(name)) report_skip(name, cublas_err("cublasLtCreate", s));
    return;
  }
  cublaslt_version = std::to_string(cublasLtGetVersion());
  const GemmSpec specs[] = {
      {"fp16_tensor", "TFLOP/s", CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2},
      {"bf16_tensor", "TFLOP/s", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2},
      {"tf32_tensor", "TFLOP/s", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4},
      {"fp8_tensor", "TFLOP/s", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2},
      {"int8_tensor", "TOP/s", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4},
      {"fp64_tensor", "TFLOP/s", CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8},
  };
  for (const auto& g : specs) measure_gemm(cfg, lt, g, nvml, clocks);
  cublasLtDestroy(lt);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--device") cfg.device = std::atoi(next().c_str());
    else if (a == "--quick") cfg.quick = true;
    else if (a == "--warmup") cfg.warmup = std::max(0, std::atoi(next().c_str()));
    else if (a == "--reps") cfg.reps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--only") cfg.only = next();
    else {
      std::fprintf(stderr, "kopt_ceilings_probe: unknown argument %s\n", a.c_str());
      return 4;
    }
  }
  Fields top;
  top.integer("kopt_ceilings_probe", 1);
  int runtime_version = 0, driver_version = 0;
  cudaRuntimeGetVersion(&runtime_version);
  cudaDriverGetVersion(&driver_version);
  cudaDeviceProp prop{};
  cudaError_t e = cudaSetDevice(cfg.device);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, cfg.device);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // create the context now
  if (e != cudaSuccess) {
    top.str("error", cuda_err("cannot use device " + std::to_string(cfg.device), e));
    top.integer("cuda_driver_version", driver_version).integer("cuda_runtime_version", runtime_version);
    std::printf("%s\n", top.object().c_str());
    return 2;
  }
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, cfg.device);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, cfg.device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, cfg.device);
  Device dev;
  dev.sm_count = prop.multiProcessorCount;
  dev.l2_bytes = prop.l2CacheSize;
  dev.threads_per_sm = prop.maxThreadsPerMultiProcessor;
  const std::string uuid = uuid_text(prop.uuid);
  Nvml nvml;
  nvml.open(uuid);
  std::fprintf(stderr, "probe: %s (%s), %d SMs, SM %d MHz, memory %d MHz\n", prop.name, uuid.c_str(), dev.sm_count,
               clock_khz / 1000, mem_clock_khz / 1000);

  std::string clocks;  // ", "-separated fields, filled by the measurements
  std::string cublaslt_version;
  measure_dram(cfg, dev);
  measure_l2(cfg, dev);
  measure_fma<float>(cfg, dev, "fp32_fma", nvml, clocks);
  measure_fma<double>(cfg, dev, "fp64_fma", nvml, clocks);
  measure_tensor(cfg, nvml, clocks, cublaslt_version);

  Fields device;
  device.integer("index", cfg.device).str("name", prop.name).str("uuid", uuid);
  device.integer("cc_major", prop.major).integer("cc_minor", prop.minor).integer("sm_count", dev.sm_count);
  device.integer("l2_bytes", dev.l2_bytes).integer("memory_bytes", static_cast<long long>(prop.totalGlobalMem));
  device.integer("mem_bus_width_bits", bus_bits);
  device.integer("cuda_driver_version", driver_version).integer("cuda_runtime_version", runtime_version);
  device.raw("cublaslt_version", cublaslt_version.empty() ? "null" : cublaslt_version);
  device.raw("driver_version", nvml.driver_version.empty() ? "null" : json_str(nvml.driver_version));
  device.integer("sm_clock_max_mhz", clock_khz / 1000).integer("mem_clock_max_mhz", mem_clock_khz / 1000);
  top.raw("device", device.object("  "));

  auto mhz = [](long long v) { return v > 0 ? std::to_string(v) : std::string("null"); };
  std::string clocks_obj = "{\"nvml_sm_mhz_max\": " + mhz(nvml.clock_mhz(1, true)) +
                           ", \"nvml_mem_mhz\": " + mhz(nvml.clock_mhz(2)) + clocks + "}";
  top.raw("clocks_seen", clocks_obj);
  top.raw("config", "{\"quick\": " + std::string(cfg.quick ? "true" : "false") +
                        ", \"warmup\": " + std::to_string(cfg.warmup) + ", \"reps\": " + std::to_string(cfg.reps) + "}");
  std::string list = "[";
  for (size_t i = 0; i < g_measurements.size(); ++i) list += (i ? ",\n    " : "\n    ") + g_measurements[i];
  top.raw("measurements", list + "\n  ]");
  std::printf("%s\n", top.object().c_str());
  return 0;
}
