#pragma once
// The one subprocess runner. Each child gets an empty stdin (a pipe already closed) and its own process group; on timeout
// or interrupt the whole group is killed (SIGTERM, then SIGKILL after a grace period).
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kopt::util {

struct ProcessSpec {
  std::vector<std::string> argv;          // argv[0] is looked up in PATH
  std::string cwd;                        // empty: inherit
  std::map<std::string, std::string> env; // added to / overriding the parent's environment
  double timeout_s = 0;                   // 0: no timeout
  size_t max_output_bytes = 64u << 20;    // per stream; the rest is dropped (and flagged)
  bool merge_stderr = false;              // stderr goes into stdout_text
  // Descriptors the child inherits under the same numbers (their close-on-exec flag cleared in the child only: the
  // parent's copies stay close-on-exec, so no other child of kopt gets them). The ephemeral seed's memfd and the
  // harness's socket for it (contract/ephemeral_seed.h).
  std::vector<int> pass_fds;
};

// argv and envp for execvpe(2) of `spec`: the parent's environment with spec.env added or overriding. Built before
// fork (the child only reads it); argv points into spec.argv, which must outlive it.
class ExecVectors {
 public:
  explicit ExecVectors(const ProcessSpec& spec);
  ExecVectors(const ExecVectors&) = delete;
  ExecVectors& operator=(const ExecVectors&) = delete;
  std::vector<char*> argv, envp;

 private:
  std::vector<std::string> env_store_;  // what envp points into
};

struct ProcessResult {
  bool started = false;        // false: exec failed (start_error says why)
  std::string start_error;
  int exit_code = -1;          // valid when exited normally
  int term_signal = 0;         // non-zero when killed by a signal
  bool timed_out = false;
  bool interrupted = false;    // kopt received SIGINT while it ran
  bool output_truncated = false;
  std::string stdout_text, stderr_text;
  double wall_ms = 0;
  bool success() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit 0", "killed by SIGSEGV", "timed out after 3.0 s", ...
};

// Narrow interface so the logic above it can be tested with a fake.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual ProcessResult run(const ProcessSpec& spec) = 0;
};

class SystemRunner : public CommandRunner {
 public:
  ProcessResult run(const ProcessSpec& spec) override;
};

ProcessResult run_process(const ProcessSpec& spec);

// Looks a program up in PATH; empty when not found.
std::string find_in_path(const std::string& name);

// SIGINT handling: install once in main; children's groups are killed on interrupt.
void install_interrupt_handler();
bool interrupted();
void reset_interrupted_for_tests();

// The registry of children's process groups that SIGINT kills: run_process() keeps its children there, and so
// must any other code that starts a long-lived child (util/session.h).
void register_child_group(int pgid);
void unregister_child_group(int pgid);

// Held by kopt's own threads while they run GPU work that a timing beside it would feel, or that is itself timed and
// must not have kopt's other work beside it: the ceilings measured at a run's start, the doctor's counters probe
// (docs/GATES.md "The gates' early work"). Work begun on the main thread after both needs no lease.
std::mutex& gpu_lease();

}  // namespace kopt::util
