#pragma once
// The ephemeral seed (docs/GATES.md "The ephemeral seed", issue 40 item 4): one more seed, made during the run by the
// run's own golden-data harness from a fresh secret number, whose inputs and expected outputs are never written to
// any file. The sealed seed (contract/sealed_seed.h) is on disk, out of a candidate's reach only while Landlock holds;
// this one lives in memory only:
//   * the harness (kopt's child, started with one end of a socket pair it inherits) makes itself not dumpable, draws
//     the seed as it draws the sealed seed (setup(), the reference), writes its safetensors bytes into a memfd of its
//     own, seals it for good (util::kFrozenSeals) and sends the descriptor on the socket (SCM_RIGHTS). A socket
//     cannot be opened through /proc/PID/fd, and the memfd exists only in a process no other can inspect, so no
//     other process can hold it before kopt does;
//   * kopt keeps the descriptor (never the bytes: it does not read or map them) and is not dumpable while it holds
//     one (restored when the last EphemeralSeed goes): a candidate cannot open it through /proc/<kopt>/fd;
//   * the one-shot measuring process that checks the final champion inherits it (runner::RunRequest::ephemeral_fd),
//     hands it to its judge and closes its own copy before loading the candidate; the judge serves that seed in the
//     sealed seed's place. A Triton candidate's process does the same in Python (python/kopt_harness/sealed.py),
//     through the fork server where it runs there (the client sends the descriptor; forkserver.py).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "contract/golden_maker.h"
#include "core/result.h"
#include "util/json_io.h"
#include "util/unix_socket.h"

namespace kopt::contract {

class EphemeralSeed {
 public:
  // A descriptor the harness sent: accepted only when it is a memfd with every seal (its size and bytes fixed).
  // `about`: the harness's summary line (no seed number).
  static Result<std::shared_ptr<const EphemeralSeed>> adopt(util::Fd fd, util::Json about);
  ~EphemeralSeed();
  EphemeralSeed(const EphemeralSeed&) = delete;
  EphemeralSeed& operator=(const EphemeralSeed&) = delete;
  int fd() const { return fd_.get(); }
  uint64_t bytes() const { return bytes_; }
  const util::Json& about() const { return about_; }
  // What results record: {bytes, made_s, backend, device, in_memory_only: true}.
  util::Json to_json() const;

 private:
  EphemeralSeed(util::Fd fd, uint64_t bytes, util::Json about) : fd_(std::move(fd)), bytes_(bytes), about_(std::move(about)) {}
  util::Fd fd_;
  uint64_t bytes_ = 0;
  util::Json about_;
};
using EphemeralSeedPtr = std::shared_ptr<const EphemeralSeed>;

// The harness's arguments (after `python3 -m kopt_harness golden`) for the ephemeral seed of `req`'s golden data:
// its ref.py, signature (a Triton kernel: `--triton-kernel`, whose setup() gives the buffers), dims, seeds and pointer
// size (the public seeds it must not be), no sealed folder, no reference timing, and `--ephemeral-socket socket_fd`.
// A CUDA kernel's signature is written to req.out_dir as for golden data.
Result<std::vector<std::string>> ephemeral_args(GoldenRequest req, int socket_fd);

}  // namespace kopt::contract
