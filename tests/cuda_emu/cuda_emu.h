#pragma once
// cuda_emu: just enough of CUDA to run the example kernels on a CPU, so their index arithmetic, tiling and
// synchronisation are checked against the golden data on a machine without a GPU (src/pipeline/examples_test.cpp).
//
// How: every thread of a block is a fiber (ucontext) on the calling thread; blocks run one after another, so
// `__shared__` can become `static` (a function-local static is the running block's shared memory). A fiber runs
// until it reaches a barrier; the scheduler releases __syncthreads when every live thread of the block waits on
// it, and a warp's barrier (shuffles, __syncwarp) when every live thread of the warp waits on it. A barrier that
// can never be released (divergent __syncthreads) aborts with a message. Runs are deterministic (round-robin).
// Kernel launches `k<<<grid, block>>>(args)` are rewritten by the test into
// `::kemu::launch([&] { k(args); }, grid, block)`.
//
// cp.async (`__pipeline_memcpy_async`) is emulated *late*: a copy happens only when a __pipeline_wait_prior
// releases its group (or at the end of the thread), so a kernel that reads a stage before waiting for it reads
// stale data and fails. Sizes and alignments are checked as the hardware requires (4, 8 or 16 bytes, aligned).
//
// Not emulated: timing, memory spaces (pointers are host pointers), partial-warp masks, dynamic shared memory.
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }

using cudaStream_t = void*;
enum cudaError_t { cudaSuccess = 0 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize, cudaFuncAttributePreferredSharedMemoryCarveout };
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return "no error"; }
template <class F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int) { return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t = nullptr) {
  std::memset(p, v, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int v, size_t n) { return cudaMemsetAsync(p, v, n); }
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount, cudaDevAttrMaxSharedMemoryPerBlockOptin };
// An emulated device of 4 SMs (few blocks, so grids sized by the SM count stay small) and 227 KB per block.
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrMultiProcessorCount ? 4 : 227 * 1024;
  return cudaSuccess;
}

inline dim3 gridDim, blockDim;
inline uint3 threadIdx, blockIdx;
constexpr int warpSize = 32;

namespace kemu {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "cuda_emu: %s\n", what);
  std::abort();
}

struct Copy {
  void* dst;
  const void* src;
  size_t bytes, zfill;
};

enum class State { kReady, kBlockBarrier, kWarpBarrier, kDone };

struct Fiber {
  ucontext_t ctx{};
  std::unique_ptr<char[]> stack;
  uint3 tid;
  State state = State::kReady;
  std::vector<Copy> open_group;
  std::deque<std::vector<Copy>> committed;
};

inline constexpr size_t kStackBytes = 256 * 1024;
inline ucontext_t scheduler;
inline Fiber* current = nullptr;
inline unsigned lane = 0, warp = 0;
inline uint64_t shuffle_slots[32][32];  // [warp][lane]: what each lane offers in a shuffle
inline std::function<void()>* body = nullptr;

inline void run_copies(const std::vector<Copy>& g) {
  for (const auto& c : g) {
    std::memcpy(c.dst, c.src, c.bytes - c.zfill);
    std::memset(static_cast<char*>(c.dst) + (c.bytes - c.zfill), 0, c.zfill);
  }
}

inline void fiber_main() {
  (*body)();
  for (const auto& g : current->committed) run_copies(g);  // a thread's pending copies land before it ends
  run_copies(current->open_group);
  current->committed.clear();
  current->open_group.clear();
  current->state = State::kDone;  // returning resumes uc_link: the scheduler
}

inline void wait(State s) {
  current->state = s;
  swapcontext(&current->ctx, &scheduler);
}

template <class T>
T exchange(T v, unsigned src) {
  static_assert(sizeof(T) <= 8, "shuffle of a value wider than 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  shuffle_slots[warp][lane] = bits;
  wait(State::kWarpBarrier);  // every lane has offered its value
  bits = shuffle_slots[warp][src];
  wait(State::kWarpBarrier);  // every lane has read before the slots are reused
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

// Runs `fn` as every thread of every block of the grid (see the header comment).
template <class F>
void launch(F&& fn, dim3 grid, dim3 block, size_t dynamic_smem = 0, cudaStream_t = nullptr) {
  if (dynamic_smem != 0) fail("dynamic shared memory is not emulated");
  const unsigned n = block.x * block.y * block.z;
  if (n == 0 || n > 1024) fail("a block must have 1..1024 threads");
  gridDim = grid;
  blockDim = block;
  std::function<void()> f = fn;
  body = &f;
  std::vector<Fiber> fibers(n);
  for (auto& fb : fibers) fb.stack.reset(new char[kStackBytes]);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = {bx, by, bz};
        for (unsigned t = 0; t < n; ++t) {
          Fiber& fb = fibers[t];
          fb.tid = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
          fb.state = State::kReady;
          getcontext(&fb.ctx);
          fb.ctx.uc_stack.ss_sp = fb.stack.get();
          fb.ctx.uc_stack.ss_size = kStackBytes;
          fb.ctx.uc_link = &scheduler;
          makecontext(&fb.ctx, fiber_main, 0);
        }
        for (;;) {
          for (unsigned t = 0; t < n; ++t) {
            if (fibers[t].state != State::kReady) continue;
            current = &fibers[t];
            threadIdx = fibers[t].tid;
            lane = t % 32;
            warp = t / 32;
            swapcontext(&scheduler, &fibers[t].ctx);
          }
          // Nothing is ready: release the barriers every live thread of their group waits on.
          bool live = false, released = false, block_ok = true;
          for (unsigned w = 0; w * 32 < n; ++w) {
            bool warp_ok = true, any = false;
            for (unsigned t = w * 32; t < std::min(n, w * 32 + 32); ++t) {
              State s = fibers[t].state;
              if (s == State::kDone) continue;
              live = any = true;
              warp_ok = warp_ok && s == State::kWarpBarrier;
              block_ok = block_ok && s == State::kBlockBarrier;
            }
            if (any && warp_ok) {
              for (unsigned t = w * 32; t < std::min(n, w * 32 + 32); ++t)
                if (fibers[t].state == State::kWarpBarrier) fibers[t].state = State::kReady;
              released = true;
            }
          }
          if (!live) break;
          if (!released && block_ok) {
            for (auto& fb : fibers)
              if (fb.state == State::kBlockBarrier) fb.state = State::kReady;
            released = true;
          }
          if (!released) fail("deadlock: threads wait on barriers that can never be released (divergent __syncthreads?)");
        }
      }
  body = nullptr;
}

}  // namespace kemu

inline void __syncthreads() { kemu::wait(kemu::State::kBlockBarrier); }
inline void __syncwarp(unsigned = 0xffffffffu) { kemu::wait(kemu::State::kWarpBarrier); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

template <class T>
T __shfl_sync(unsigned, T v, int src, int width = 32) {
  unsigned seg = kemu::lane & ~unsigned(width - 1);
  return kemu::exchange(v, seg + (unsigned(src) & unsigned(width - 1)));
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
  unsigned src = kemu::lane ^ unsigned(mask);
  if ((src & ~unsigned(width - 1)) != (kemu::lane & ~unsigned(width - 1))) src = kemu::lane;
  return kemu::exchange(v, src);
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  unsigned seg = kemu::lane & ~unsigned(width - 1);
  unsigned src = kemu::lane + delta;
  if (src >= seg + unsigned(width)) src = kemu::lane;
  return kemu::exchange(v, src);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  unsigned seg = kemu::lane & ~unsigned(width - 1);
  unsigned src = kemu::lane - delta;
  if (kemu::lane < seg + delta) src = kemu::lane;
  return kemu::exchange(v, src);
}

template <class T>
T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (!a.compare_exchange_weak(old, old >= limit ? 0 : old + 1)) {
  }
  return old;
}

template <class T>
T __ldg(const T* p) {
  return *p;
}
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  std::memcpy(&i, &f, 4);
  return i;
}
using std::max;
using std::min;

// cp.async through the pipeline primitives (cuda_pipeline_primitives.h).
inline void __pipeline_memcpy_async(void* dst, const void* src, size_t bytes, size_t zfill = 0) {
  if (bytes != 4 && bytes != 8 && bytes != 16) kemu::fail("__pipeline_memcpy_async: size must be 4, 8 or 16");
  if (reinterpret_cast<uintptr_t>(dst) % bytes || reinterpret_cast<uintptr_t>(src) % bytes)
    kemu::fail("__pipeline_memcpy_async: source and destination must be aligned to the copy size");
  if (zfill > bytes) kemu::fail("__pipeline_memcpy_async: zfill larger than the copy");
  kemu::current->open_group.push_back({dst, src, bytes, zfill});
}
inline void __pipeline_commit() {
  kemu::current->committed.push_back(std::move(kemu::current->open_group));
  kemu::current->open_group.clear();
}
inline void __pipeline_wait_prior(size_t prior) {
  auto& groups = kemu::current->committed;
  while (groups.size() > prior) {
    kemu::run_copies(groups.front());
    groups.pop_front();
  }
}
