#pragma once
// Expected outputs out of the candidate's reach (docs/GATES.md "The sealed seed", issue 40 item 4).
//
// The golden data's public seeds (golden/seed_*.safetensors) hold inputs and expected outputs; the measuring
// process reads them, and so could a solve() that searches the disk or its own memory for them. The sealed seed
// is one more seed, drawn from a secret random number when the golden data is made and written only beneath
// sealed_root(). The measuring process never opens it:
//   * before it loads any candidate, it starts a judge (`kopt __judge`, a fresh executable image, not dumpable:
//     another process of the same user cannot read its memory) and then seals itself with Landlock, so that
//     neither it nor anything it starts can read, change or remove anything beneath sealed_root();
//   * the judge reads the sealed seed, hands the measuring process its inputs and keeps its expected outputs; the
//     measuring process sends the outputs a call wrote, and the judge answers with the comparison.
// Every check run checks the sealed seed once, and every timed series audits it (runner/fresh_inputs.h): a solve()
// that answers from expected outputs it found (on disk, in memory) is wrong there, because nothing it can read
// holds that seed's outputs.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "contract/sealed_seed.h"
#include "core/result.h"
#include "runner/compare.h"
#include "runner/outcome.h"
#include "runner/shared_buffer.h"
#include "util/json_io.h"

namespace kopt::runner {

using contract::sealed_root;
using contract::sealed_seed_file;
using contract::sealed_token;

// The seed number results give the sealed seed (its real number is secret), with "sealed": true beside it.
constexpr int kSealedSeedId = -1;
// The same for the ephemeral seed (contract/ephemeral_seed.h), with "ephemeral": true beside it.
constexpr int kEphemeralSeedId = -2;

// Whether a check run given the ephemeral seed (RunRequest::ephemeral_fd) judged the candidate on it: its result's
// seeds hold that seed's record (kEphemeralSeedId, "ephemeral": true). A child whose judge did not take the seed checks
// the public seeds alone; its "ok" is no verdict on the ephemeral seed. Empty: it did; else why not (the answer key's
// reason where the result gives one).
std::string ephemeral_seed_unjudged(const util::Json& details);

// What this process did to keep the sealed seeds out of reach.
struct SealState {
  bool sealed = false;  // Landlock enforces it: nothing beneath sealed_root() can be read, changed or removed
  int landlock_abi = 0;
  bool signals_scoped = false;  // Landlock ABI 6+: no signal to a process outside the sandbox (the judge)
  std::string off_reason;       // why not sealed
  util::Json to_json() const;
};

// Seals `dir` away from this process and every process it starts: Landlock grants every access right beneath
// every other directory entry (each ancestor's other entries), listing only on the ancestors, and nothing beneath
// `dir`. Irreversible. Where Landlock is missing or refused, returns sealed = false with the reason.
SealState seal_away(const std::filesystem::path& dir);

// The measuring process's side of the judge.
class JudgeClient {
 public:
  // Starts `KOPT __judge` on a socket pair (KOPT: kopt's executable; empty: this process's own). Call before any
  // candidate is loaded and before seal_away: the judge must be able to read the sealed seeds.
  // `ephemeral_fd` >= 0: the ephemeral seed's memfd (contract/ephemeral_seed.h), inherited by the judge alone
  // (`__judge --ephemeral-fd`), which then serves that seed in the sealed seed's place for every golden data it is
  // asked about (a one-shot check of the final champion); the caller closes its own copy before loading a candidate.
  static Result<std::unique_ptr<JudgeClient>> spawn(const std::string& kopt_exe = "", int ephemeral_fd = -1);
  ~JudgeClient();
  JudgeClient(const JudgeClient&) = delete;
  JudgeClient& operator=(const JudgeClient&) = delete;

  using Inputs = std::map<std::string, std::vector<unsigned char>>;
  // The sealed seed's inputs (and in-out initial values) of the golden data in `golden_dir`, by buffer name; asked
  // once per folder (kept here). A measuring process asks before it loads any candidate: the judge reads the sealed
  // seed then.
  Result<const Inputs*> inputs(const std::filesystem::path& golden_dir);

  struct Verdict {
    RunStatus status = RunStatus::kOk;  // kOk, kWrongResult or kUnwrittenOutput
    std::string message;                // the first failing output's summary, without the expected value
    util::Json outputs;                 // per output: the comparison's figures, without expected values
    std::string transport;              // "memfd": read from the shared buffer; "socket": sent as blobs
    util::Json judge_ms;                // the judge's own time: {copy, compare}
  };
  using Bytes = std::span<const unsigned char>;
  // The judge compares `outputs` (every output and in-out buffer, by name) with the sealed seed's expected outputs.
  // Where every output lies within `shared` (a memfd: runner/shared_buffer.h) the judge reads them there, the
  // buffer's descriptor passed to it once; otherwise, or once the judge refused the buffer, they go through the
  // socket. An error: the judge could not answer (it ended, or a request it did not expect reached it).
  Result<Verdict> judge(const std::filesystem::path& golden_dir, Tolerance tol, const std::map<std::string, Bytes>& outputs,
                        const SharedBuffer* shared);
  // The same through the socket.
  Result<Verdict> judge(const std::filesystem::path& golden_dir, Tolerance tol,
                        const std::map<std::string, std::vector<unsigned char>>& outputs);
  // Why outputs go through the socket although a shared buffer was offered (empty: they do not).
  const std::string& shared_refusal() const { return shared_refusal_; }

  int pid() const { return pid_; }

 private:
  JudgeClient(int fd, int pid) : fd_(fd), pid_(pid) {}
  Result<util::Json> exchange(const util::Json& header, const std::vector<std::span<const unsigned char>>& blobs,
                              std::vector<std::vector<unsigned char>>* reply_blobs, int pass_fd);
  int fd_ = -1;
  int pid_ = -1;
  std::map<std::string, Inputs> inputs_;
  int judged_ = 0;  // judge requests this client sent: the judge's own count must match (no one else asked it)
  uint64_t shared_generation_ = 0;  // the SharedBuffer generation whose descriptor the judge has (0: none)
  bool shared_ok_ = true;           // false once the judge refused a shared buffer
  std::string shared_refusal_;
};

// `kopt __judge`: serves a measuring process on file descriptor 3 until it closes. Returns the exit code.
// `ephemeral_fd` >= 0: the ephemeral seed, read from that memfd (only a memfd sealed for good) and closed at once,
// serves in the sealed seed's place.
int judge_main(int ephemeral_fd = -1);

}  // namespace kopt::runner
