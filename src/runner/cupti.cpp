#include "runner/cupti.h"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <utility>

namespace kopt::runner {

namespace {

// start and end are read through the current record structs; they sit at the same offsets in every version
// (a libcupti older than the header writes its own version of the struct).
static_assert(offsetof(CUpti_ActivityKernel10, start) == offsetof(CUpti_ActivityKernel4, start) &&
              offsetof(CUpti_ActivityKernel10, end) == offsetof(CUpti_ActivityKernel4, end));
static_assert(offsetof(CUpti_ActivityMemset4, start) == offsetof(CUpti_ActivityMemset, start) &&
              offsetof(CUpti_ActivityMemset4, end) == offsetof(CUpti_ActivityMemset, end));
static_assert(offsetof(CUpti_ActivityMemcpy6, start) == offsetof(CUpti_ActivityMemcpy, start) &&
              offsetof(CUpti_ActivityMemcpy6, end) == offsetof(CUpti_ActivityMemcpy, end));
static_assert(offsetof(CUpti_ActivityKernel10, start) == offsetof(CUpti_ActivityMemset4, start) &&
              offsetof(CUpti_ActivityKernel10, start) == offsetof(CUpti_ActivityMemcpy6, start));

struct CuptiApi {
  CUptiResult (*cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*cuptiActivityEnable)(CUpti_ActivityKind);
  CUptiResult (*cuptiActivityDisable)(CUpti_ActivityKind);
  CUptiResult (*cuptiActivityFlushAll)(uint32_t);
  CUptiResult (*cuptiActivityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**);
  CUptiResult (*cuptiGetResultString)(CUptiResult, const char**);
  CUptiResult (*cuptiActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*);
};

constexpr size_t kBufferBytes = 4u << 20;
constexpr size_t kBufferAlign = 8;  // ACTIVITY_RECORD_ALIGNMENT
// Records kept between two collects at most (a worker between two timed requests issues checks, uploads...).
constexpr size_t kMaxKeptRecords = 1u << 20;

// The process-wide state: CUPTI's callbacks are plain functions.
struct State {
  CuptiApi api{};
  std::string lib_path;
  std::string error;  // why the clock cannot open; set once
  std::mutex mu;      // guards records and the counters below
  std::vector<GpuActivity> records;
  size_t dropped = 0;
  std::atomic<bool> collecting{false};  // a KernelClock is alive
};

State& state() {
  static State* s = new State;  // never destroyed: CUPTI may deliver a last buffer while the process exits
  return *s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid) {
  State& s = state();
  std::vector<GpuActivity> got;
  CUpti_Activity* rec = nullptr;
  while (valid > 0 && s.api.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        got.push_back({ActivityKind::kKernel, k->start, k->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
        got.push_back({ActivityKind::kMemset, m->start, m->end});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        got.push_back({ActivityKind::kMemcpy, m->start, m->end});
        break;
      }
      default: break;
    }
  }
  size_t dropped = 0;
  if (s.api.cuptiActivityGetNumDroppedRecords) s.api.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.dropped += dropped;
    if (s.collecting.load()) {
      if (s.records.size() + got.size() > kMaxKeptRecords) s.records.clear();  // nobody collected: old news
      s.records.insert(s.records.end(), got.begin(), got.end());
    }
  }
  std::free(buffer);
}

std::string result_text(CUptiResult r) {
  const char* text = nullptr;
  if (state().api.cuptiGetResultString) state().api.cuptiGetResultString(r, &text);
  return std::string(text ? text : "unknown CUPTI error") + " (" + std::to_string(static_cast<int>(r)) + ")";
}

// Candidate paths, in order (cupti.h's header comment).
std::vector<std::string> candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  auto add_dir = [&](const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    out.push_back((dir / "libcupti.so.13").string());
    out.push_back((dir / "libcupti.so").string());
    std::vector<std::string> others;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("libcupti.so", 0) == 0 && name != "libcupti.so" && name != "libcupti.so.13")
        others.push_back(e.path().string());
    }
    std::sort(others.rbegin(), others.rend());  // newest-looking version first
    out.insert(out.end(), others.begin(), others.end());
  };
  if (const char* p = std::getenv("KOPT_CUPTI_LIB"); p && *p) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      add_dir(p);
      add_dir(fs::path(p) / "nvidia" / "cuda_cupti" / "lib");
    } else {
      out.push_back(p);
    }
  }
  out.push_back("libcupti.so.13");
  out.push_back("libcupti.so");
  std::vector<fs::path> roots;
  if (const char* h = std::getenv("CUDA_HOME"); h && *h) roots.emplace_back(h);
  roots.emplace_back("/usr/local/cuda");
  // The toolkit whose nvcc is on PATH (a toolkit installed elsewhere, without /usr/local/cuda).
  if (const char* path = std::getenv("PATH")) {
    std::string all(path);
    for (size_t b = 0; b <= all.size();) {
      size_t e = all.find(':', b);
      if (e == std::string::npos) e = all.size();
      fs::path dir(all.substr(b, e - b));
      std::error_code ec;
      if (!dir.empty() && fs::exists(dir / "nvcc", ec)) roots.push_back(dir.parent_path());
      b = e + 1;
    }
  }
  for (const auto& root : roots)
    for (const char* sub : {"lib64", "lib", "extras/CUPTI/lib64"}) add_dir(root / sub);
  return out;
}

template <typename F>
void resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

// Loads, registers and enables; sets state().error on failure.
void start_once() {
  State& s = state();
  void* lib = nullptr;
  std::string tried;
  for (const auto& c : candidates()) {
    lib = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      s.lib_path = c;
      break;
    }
    if (tried.size() < 400) tried += (tried.empty() ? "" : ", ") + c;
  }
  if (!lib) {
    s.error = "libcupti not found (tried " + tried + "; set KOPT_CUPTI_LIB to its path)";
    return;
  }
  std::string missing;
  CuptiApi& a = s.api;
  resolve(lib, "cuptiActivityRegisterCallbacks", a.cuptiActivityRegisterCallbacks, missing);
  resolve(lib, "cuptiActivityEnable", a.cuptiActivityEnable, missing);
  resolve(lib, "cuptiActivityDisable", a.cuptiActivityDisable, missing);
  resolve(lib, "cuptiActivityFlushAll", a.cuptiActivityFlushAll, missing);
  resolve(lib, "cuptiActivityGetNextRecord", a.cuptiActivityGetNextRecord, missing);
  resolve(lib, "cuptiGetResultString", a.cuptiGetResultString, missing);
  resolve(lib, "cuptiActivityGetNumDroppedRecords", a.cuptiActivityGetNumDroppedRecords, missing);
  if (!missing.empty()) {
    s.error = s.lib_path + " lacks: " + missing;
    return;
  }
  CUptiResult r = a.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    s.error = "cuptiActivityRegisterCallbacks: " + result_text(r);
    return;
  }
  // CONCURRENT_KERNEL, not KERNEL: KERNEL serialises every kernel launch.
  const std::pair<CUpti_ActivityKind, const char*> kinds[] = {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
                                                              {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
                                                              {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"}};
  for (size_t i = 0; i < std::size(kinds); ++i) {
    r = a.cuptiActivityEnable(kinds[i].first);
    if (r != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) a.cuptiActivityDisable(kinds[j].first);
      s.error = std::string("cuptiActivityEnable(") + kinds[i].second + "): " + result_text(r);
      return;
    }
  }
}

void flush() { state().api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

// The kinds the kernel clock records (start_once enables them in this order).
constexpr CUpti_ActivityKind kClockKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET,
                                              CUPTI_ACTIVITY_KIND_MEMCPY};

}  // namespace

bool KernelClock::disabled_by_env() {
  const char* v = std::getenv("KOPT_CUPTI");
  return v && std::strcmp(v, "0") == 0;
}

std::unique_ptr<KernelClock> KernelClock::open(std::string* why_not) {
  auto fail = [&](std::string why) {
    if (why_not) *why_not = std::move(why);
    return nullptr;
  };
  if (disabled_by_env()) return fail("disabled");
  static std::once_flag once;
  std::call_once(once, start_once);
  State& s = state();
  if (!s.error.empty()) return fail(s.error);
  if (s.collecting.exchange(true)) return fail("another kernel clock is open in this process");
  std::unique_ptr<KernelClock> c(new KernelClock());
  c->drain();
  c->dropped_at_open_ = c->dropped_total();
  return c;
}

KernelClock::~KernelClock() {
  // The kinds stay enabled (once per process); records are no longer kept.
  flush();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.collecting.store(false);
  s.records.clear();
}

void KernelClock::drain() {
  flush();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.records.clear();
}

std::vector<GpuActivity> KernelClock::collect() {
  flush();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<GpuActivity> out;
  out.swap(s.records);
  return out;
}

bool KernelClock::pause() {
  flush();
  bool ok = true;
  for (auto k : kClockKinds) ok = state().api.cuptiActivityDisable(k) == CUPTI_SUCCESS && ok;
  return ok;
}

bool KernelClock::resume() {
  bool ok = true;
  for (auto k : kClockKinds) ok = state().api.cuptiActivityEnable(k) == CUPTI_SUCCESS && ok;
  drain();
  return ok;
}

size_t KernelClock::dropped_total() const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.dropped;
}

size_t KernelClock::dropped_records() const { return dropped_total() - dropped_at_open_; }

const std::string& KernelClock::library_path() const { return state().lib_path; }

}  // namespace kopt::runner
