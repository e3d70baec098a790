#pragma once
// A golden-data harness kept open for a whole run (`golden-batch --requests - --preload [imports]`): Python, torch and
// the CUDA context start once, early (while the hardware gate runs), and every later batch (the job's own data, the
// workload matrix's cases, the sanitizer's small case, the held-out shapes, the ephemeral seed) is a line to it
// instead of a new process (3-6 s each on the H200, issue 36). Like prefetch_golden, it only fills the golden cache:
// make_golden still places, and makes what the stream did not.
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>

#include "contract/ephemeral_seed.h"
#include "contract/golden_maker.h"
#include "util/session.h"
#include "util/unix_socket.h"

namespace kopt::contract {

// What the harness does before its first request (python/kopt_harness/cli.py _preload).
enum class HarnessPreload {
  kImports,  // imports torch and makes no CUDA call: no CUDA context, nothing on any GPU until a request comes
  kCuda,     // torch's CUDA context too (a stream whose first request follows at once)
};

class GoldenStream {
 public:
  // Starts the harness; its stderr is appended to `log`. Errors: python3 or the harness missing, the start failed.
  static Result<std::unique_ptr<GoldenStream>> start(const std::filesystem::path& log,
                                                     HarnessPreload preload = HarnessPreload::kCuda);
  ~GoldenStream();
  GoldenStream(const GoldenStream&) = delete;
  GoldenStream& operator=(const GoldenStream&) = delete;

  // prefetch_golden through the stream, one request a line. A request the harness fails is left to make_golden; a
  // stream that dies or times out is closed (later calls make nothing). Returns how many were made. Thread-safe.
  int prefetch(std::vector<GoldenRequest> requests);
  // The ephemeral seed of `req`'s golden data (contract/ephemeral_seed.h), made now by this harness: its memfd comes
  // on the socket the harness inherited at its start. Errors: the stream is closed, the harness failed the request
  // (its message; the stream stays open), no sealed memfd came. Thread-safe.
  Result<EphemeralSeedPtr> make_ephemeral(const GoldenRequest& req);
  bool alive() const;
  HarnessPreload preload() const { return preload_; }
  // The requests sent to the harness so far (golden data and ephemeral seeds; a cached request is never sent).
  int requests() const { return requests_; }
  void close();  // an empty line (the harness ends), then the process group killed if it is still there
  // Kills the harness now, from any thread, a request in flight included (its prefetch returns; close() after).
  void abort();

 private:
  GoldenStream(std::unique_ptr<util::Session> s, util::Fd socket, int child_socket, HarnessPreload preload)
      : session_(std::move(s)),
        pid_(session_->pid()),
        socket_(std::move(socket)),
        child_socket_(child_socket),
        preload_(preload) {}
  mutable std::mutex mu_;
  std::unique_ptr<util::Session> session_;
  std::atomic<int> pid_;  // the harness's process group (abort() needs no lock)
  util::Fd socket_;       // where the harness sends the ephemeral seed's memfd
  int child_socket_ = -1;  // the harness's end's number (in the harness)
  const HarnessPreload preload_;
  std::atomic<int> requests_{0};
};

}  // namespace kopt::contract
