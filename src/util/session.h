#pragma once
// A long-lived child that answers one line for each line it is sent (kopt's measuring worker). Like every
// child of kopt it runs in its own process group, killed as a group on interrupt or when the session ends;
// its stdin carries requests, its stdout replies only, and its stderr goes to a log file.
#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/result.h"
#include "util/process.h"

namespace kopt::util {

class Session {
 public:
  enum class ReplyKind { kLine, kTimeout, kDied, kInterrupted };
  struct Reply {
    ReplyKind kind = ReplyKind::kDied;
    std::string line;  // kLine: the reply without its newline
    std::string how;   // otherwise: what happened ("timed out after 3.0 s", "killed by SIGSEGV", "exit 3")
    int exit_code = -1;   // kDied: the child's exit code when it exited
    int term_signal = 0;  // kDied: the signal that killed it
  };

  // Starts spec.argv (spec.timeout_s is ignored: each receive() has its own). stderr is appended to
  // `stderr_log` (created if needed).
  static Result<std::unique_ptr<Session>> start(const ProcessSpec& spec, const std::filesystem::path& stderr_log);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Status send(const std::string& line);  // a newline is appended
  // The next line the child writes, within timeout_s; on timeout or interrupt the child is killed (a session
  // that timed out is dead: start another). `client_fd`: a socket whose peer waits for this reply (the warm bench
  // worker's client, runner/warm.h); its hanging up counts as an interrupt, so a bench stopped by Ctrl-C stops the
  // candidate as a one-shot child's group kill would.
  Reply receive(double timeout_s, int client_fd = -1);
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  void kill();  // SIGTERM to the group, SIGKILL after a grace period, reaped

 private:
  Session() = default;
  std::string how_it_ended(Reply* r);
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1;
  std::string buffer_;
};

}  // namespace kopt::util
