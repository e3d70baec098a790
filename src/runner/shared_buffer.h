#pragma once
// The host buffer a measuring process downloads a check's buffers into, shared with its judge (runner/sealed.h) so
// that the sealed seed's outputs reach the judge without going through the socket (issue 40: per-candidate cost).
//
// The writer (the measuring process) makes a memfd of a fixed size, sealed so that its size can never change
// (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL), maps it read-write and passes its descriptor to the judge once; a larger
// need makes a new one. The reader (the judge) accepts only a memfd that cannot shrink (reading it can never fault),
// maps it read-only, and copies what it compares into its own memory before comparing: a writer that changes the
// buffer while the judge reads it changes which bytes are compared, never that one fixed set of bytes is compared.
// A memfd is not a path: Landlock (seal_away) does not see it, and a sealed process keeps using it.
// Where memfd is unavailable (or KOPT_JUDGE_SHM=off) the buffer is this process's own memory and the outputs go
// through the socket as before.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "core/result.h"

namespace kopt::runner {

class SharedBuffer {
 public:
  enum class Kind { kMemfd, kPrivate };
  // Pins each new buffer for fast device copies (cuMemHostRegister) and unpins it before it is unmapped. `pin`
  // returns whether it pinned.
  struct Pinning {
    std::function<bool(void*, size_t)> pin;
    std::function<void(void*)> unpin;
  };
  // `want_shared`: a memfd where the kernel makes one (else private, with the reason); false: private.
  explicit SharedBuffer(bool want_shared = true);
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  // At least `bytes`: a larger need replaces the buffer by a new one (its contents are not kept, generation() changes).
  Status reserve(size_t bytes);
  unsigned char* data() const { return base_; }
  size_t size() const { return size_; }
  Kind kind() const { return kind_; }
  int fd() const { return fd_; }                       // the memfd; -1 when private
  uint64_t generation() const { return generation_; }  // 0 until the first reserve; unique in this process
  bool holds(const void* p, size_t n) const;           // [p, p + n) lies within the buffer
  size_t offset_of(const void* p) const { return static_cast<size_t>(static_cast<const unsigned char*>(p) - base_); }
  // Pins the present buffer and every later one; pinned(): the present one is.
  void set_pinning(Pinning p);
  bool pinned() const { return pinned_; }
  const std::string& private_reason() const { return private_reason_; }

 private:
  void release();
  Kind kind_ = Kind::kPrivate;
  unsigned char* base_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
  uint64_t generation_ = 0;
  bool pinned_ = false;
  Pinning pinning_;
  std::string private_reason_;
};

// The judge's read-only mapping of a measuring process's SharedBuffer.
class SharedView {
 public:
  // Takes `fd` (closed when the view ends, or here on a refusal). Accepts only a memfd sealed against shrinking.
  static Result<SharedView> map(int fd);
  SharedView() = default;
  SharedView(SharedView&& o) noexcept { *this = std::move(o); }
  SharedView& operator=(SharedView&& o) noexcept;
  ~SharedView() { reset(); }
  // The bytes [offset, offset + bytes), or an error when they are not all within the buffer.
  Result<std::span<const unsigned char>> range(uint64_t offset, uint64_t bytes) const;
  size_t size() const { return size_; }

 private:
  void reset();
  const unsigned char* base_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

// Copies, zeroes, compares `n` bytes, on several threads when they are many (one core moves memory at a fraction of
// its bandwidth): the judge's copy of a shared buffer, the measuring process's checks of inputs and its scrub of the
// sealed seed's outputs.
void parallel_copy(unsigned char* dst, const unsigned char* src, size_t n);
void parallel_zero(unsigned char* dst, size_t n);
bool parallel_equal(const unsigned char* a, const unsigned char* b, size_t n);

// KOPT_JUDGE_SHM=off: outputs go to the judge through the socket (a diagnostic, and the fallback's test).
bool judge_shm_enabled();

}  // namespace kopt::runner
