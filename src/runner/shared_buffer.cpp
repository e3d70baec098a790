#include "runner/shared_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "util/memfd.h"

namespace kopt::runner {

namespace {

// Buffers are whole multiples of this (huge-page sized: few growths, and the driver pins them in large runs).
constexpr size_t kGranule = size_t{2} << 20;

std::atomic<uint64_t> next_generation{1};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

bool judge_shm_enabled() {
  const char* v = std::getenv("KOPT_JUDGE_SHM");
  return !(v && std::string_view(v) == "off");
}

SharedBuffer::SharedBuffer(bool want_shared) {
  if (!want_shared)
    private_reason_ = "not asked for";
  else if (!judge_shm_enabled())
    private_reason_ = "turned off by KOPT_JUDGE_SHM=off";
  else {
    // A probe: the kind is decided once, so that every later buffer goes the same way.
    auto probe = util::make_memfd("kopt-judge-probe");
    if (!probe)
      private_reason_ = probe.error().message;
    else
      kind_ = Kind::kMemfd;
  }
}

SharedBuffer::~SharedBuffer() { release(); }

void SharedBuffer::release() {
  if (base_ && pinned_ && pinning_.unpin) pinning_.unpin(base_);
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  size_ = 0;
  fd_ = -1;
  pinned_ = false;
}

Status SharedBuffer::reserve(size_t bytes) {
  if (bytes <= size_ && base_) return ok_status();
  // Growing by half again at least: a workload matrix's growing cases replace the buffer a few times, not each case.
  size_t want = std::max(bytes, size_ + size_ / 2);
  want = std::max(kGranule, (want + kGranule - 1) / kGranule * kGranule);
  release();
  void* p = MAP_FAILED;
  if (kind_ == Kind::kMemfd) {
    auto m = util::make_memfd("kopt-judge-outputs");
    if (!m) return m.error();
    fd_ = m->release();
    if (::ftruncate(fd_, static_cast<off_t>(want)) != 0 ||
        ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
      const std::string e = errno_text("sizing and sealing the shared buffer");
      release();
      return internal_error(e);
    }
    p = ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  } else {
    p = ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED) {
    const std::string e = errno_text("mapping the shared buffer");
    release();
    return internal_error(e);
  }
  base_ = static_cast<unsigned char*>(p);
  size_ = want;
  generation_ = next_generation++;
  if (pinning_.pin) pinned_ = pinning_.pin(base_, size_);
  return ok_status();
}

bool SharedBuffer::holds(const void* p, size_t n) const {
  auto* b = static_cast<const unsigned char*>(p);
  return base_ && b >= base_ && b <= base_ + size_ && n <= static_cast<size_t>(base_ + size_ - b);
}

void SharedBuffer::set_pinning(Pinning p) {
  if (base_ && pinned_ && pinning_.unpin) pinning_.unpin(base_);
  pinning_ = std::move(p);
  pinned_ = base_ && pinning_.pin ? pinning_.pin(base_, size_) : false;
}

// ---- the reader ------------------------------------------------------------------------------------------------------

Result<SharedView> SharedView::map(int fd) {
  auto refuse = [fd](std::string why) -> Result<SharedView> {
    ::close(fd);
    return input_error("the shared buffer was refused: " + why);
  };
  // Only a buffer whose size cannot shrink: a read beyond a shrunken file's end would kill the judge (SIGBUS).
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return refuse("not a memfd (" + std::string(std::strerror(errno)) + ")");
  if (!(seals & F_SEAL_SHRINK)) return refuse("it can shrink (no F_SEAL_SHRINK)");
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) return refuse("it is empty or not a file");
  const size_t size = static_cast<size_t>(sb.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return refuse(errno_text("mmap"));
  SharedView v;
  v.base_ = static_cast<const unsigned char*>(p);
  v.size_ = size;
  v.fd_ = fd;
  return v;
}

SharedView& SharedView::operator=(SharedView&& o) noexcept {
  if (this != &o) {
    reset();
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void SharedView::reset() {
  if (base_) ::munmap(const_cast<unsigned char*>(base_), size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

Result<std::span<const unsigned char>> SharedView::range(uint64_t offset, uint64_t bytes) const {
  if (!base_ || offset > size_ || bytes > size_ - offset)
    return input_error("bytes " + std::to_string(offset) + "+" + std::to_string(bytes) + " lie outside the shared buffer (" +
                       std::to_string(size_) + " bytes)");
  return std::span<const unsigned char>(base_ + offset, static_cast<size_t>(bytes));
}

namespace {

// Runs fn(begin, end) over [0, n) in parts of a few threads when n is large (one core moves memory at a fraction of
// its bandwidth); returns the parts' results in order.
template <typename Fn>
auto split(size_t n, const Fn& fn) {
  constexpr size_t kPerThread = size_t{8} << 20;  // below this a thread's start costs more than it saves
  const size_t threads =
      std::max<size_t>(1, std::min<size_t>({n / kPerThread, std::max(1u, std::thread::hardware_concurrency()), 8}));
  // Each part a whole number of cache lines, and together all n bytes: the share rounded up, then to 64 (rounding
  // n / threads down lost the last n % threads bytes wherever that share was already a multiple of 64: at 2^25 + 1
  // int32s on 8 threads, the judge compared a sealed seed's last element it had never copied).
  const size_t part = ((n + threads - 1) / threads + 63) / 64 * 64;
  using R = decltype(fn(size_t{0}, size_t{0}));
  std::unique_ptr<R[]> results(new R[threads]());  // not std::vector<bool>: threads write their own element
  std::vector<std::thread> pool;
  for (size_t k = 1; k < threads; ++k) {
    const size_t begin = std::min(n, k * part), end = std::min(n, begin + part);
    pool.emplace_back([&, k, begin, end] { results[k] = fn(begin, end); });
  }
  results[0] = fn(0, std::min(n, part));
  for (auto& t : pool) t.join();
  return std::vector<R>(results.get(), results.get() + threads);
}

}  // namespace

void parallel_copy(unsigned char* dst, const unsigned char* src, size_t n) {
  split(n, [&](size_t b, size_t e) {
    std::memcpy(dst + b, src + b, e - b);
    return true;
  });
}

void parallel_zero(unsigned char* dst, size_t n) {
  split(n, [&](size_t b, size_t e) {
    std::memset(dst + b, 0, e - b);
    return true;
  });
}

bool parallel_equal(const unsigned char* a, const unsigned char* b, size_t n) {
  const auto parts = split(n, [&](size_t lo, size_t hi) { return std::memcmp(a + lo, b + lo, hi - lo) == 0; });
  return std::all_of(parts.begin(), parts.end(), [](bool x) { return x; });
}

}  // namespace kopt::runner
