#include "util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

extern char** environ;

namespace kopt::util {

ExecVectors::ExecVectors(const ProcessSpec& spec) {
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos && spec.env.count(kv.substr(0, eq))) continue;
    env_store_.push_back(kv);
  }
  for (const auto& [k, v] : spec.env) env_store_.push_back(k + "=" + v);
  for (auto& s : env_store_) envp.push_back(s.data());
  envp.push_back(nullptr);
}

namespace {

std::atomic<bool> g_interrupted{false};
std::mutex g_groups_mu;
std::set<pid_t> g_groups;  // process groups of running children

void on_sigint(int) {
  g_interrupted.store(true);
  // Async-signal-safe enough: we only read the set; killing a stale group is harmless.
  for (pid_t g : g_groups) ::kill(-g, SIGTERM);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa{};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}
bool interrupted() { return g_interrupted.load(); }

void register_child_group(int pgid) {
  std::lock_guard<std::mutex> lock(g_groups_mu);
  g_groups.insert(pgid);
}

void unregister_child_group(int pgid) {
  std::lock_guard<std::mutex> lock(g_groups_mu);
  g_groups.erase(pgid);
}
void reset_interrupted_for_tests() { g_interrupted.store(false); }

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return "timed out (killed)";
  if (interrupted) return "interrupted";
  if (term_signal != 0) {
    const char* name = ::sigabbrev_np(term_signal);
    return std::string("killed by SIG") + (name ? name : std::to_string(term_signal).c_str());
  }
  return "exit " + std::to_string(exit_code);
}

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::string p(path);
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (!dir.empty()) {
      std::string cand = dir + "/" + name;
      struct stat st{};
      if (::stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(cand.c_str(), X_OK) == 0) return cand;
    }
    start = end + 1;
  }
  return "";
}

ProcessResult SystemRunner::run(const ProcessSpec& spec) { return run_process(spec); }

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.start_error = "empty command";
    return r;
  }
  // stdin is an empty pipe (its write end closed at once), not /dev/null: a sandbox whose /dev/null is a regular
  // file (seen on a CI machine restored from a snapshot) would hand every child whatever had been written there.
  int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.start_error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const ExecVectors exec(spec);  // before fork: the child only reads it

  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    r.start_error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(spec.merge_stderr ? out_pipe[1] : err_pipe[1], 2);
    for (int fd : spec.pass_fds) ::fcntl(fd, F_SETFD, 0);  // inherited by this child only (ProcessSpec)
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
      int e = errno;
      (void)!::write(exec_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execvpe(exec.argv[0], exec.argv.data(), exec.envp.data());
    int e = errno;
    (void)!::write(exec_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.insert(pid);
  }
  ::close(in_pipe[0]);
  ::close(in_pipe[1]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t n = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    ::waitpid(pid, nullptr, 0);
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.erase(pid);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.start_error = spec.argv[0] + ": " + std::strerror(exec_errno);
    return r;
  }
  r.started = true;

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* bufs[2] = {&r.stdout_text, &r.stderr_text};
  int open_fds = 2;
  bool killed = false;
  double kill_at_ms = -1;
  char chunk[65536];
  while (open_fds > 0) {
    double elapsed = ms_since(t0);
    if (!killed && ((spec.timeout_s > 0 && elapsed > spec.timeout_s * 1000.0) || interrupted())) {
      if (interrupted()) r.interrupted = true; else r.timed_out = true;
      ::kill(-pid, SIGTERM);
      killed = true;
      kill_at_ms = elapsed + 2000;
    }
    if (killed && elapsed > kill_at_ms) ::kill(-pid, SIGKILL);
    int rc = ::poll(fds, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0) continue;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t got = ::read(fds[i].fd, chunk, sizeof chunk);
        if (got > 0) {
          size_t room = spec.max_output_bytes > bufs[i]->size() ? spec.max_output_bytes - bufs[i]->size() : 0;
          if (static_cast<size_t>(got) > room) r.output_truncated = true;
          bufs[i]->append(chunk, std::min(room, static_cast<size_t>(got)));
        } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
  }
  // Output closed; the child may still run (e.g. it closed stdout). Wait with the same timeout rules.
  int status = 0;
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    double elapsed = ms_since(t0);
    if (!killed && ((spec.timeout_s > 0 && elapsed > spec.timeout_s * 1000.0) || interrupted())) {
      if (interrupted()) r.interrupted = true; else r.timed_out = true;
      ::kill(-pid, SIGTERM);
      killed = true;
      kill_at_ms = elapsed + 2000;
    }
    if (killed && elapsed > kill_at_ms) ::kill(-pid, SIGKILL);
    ::usleep(5000);
  }
  ::kill(-pid, SIGKILL);  // reap any grandchildren left in the group
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.erase(pid);
  }
  r.wall_ms = ms_since(t0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

std::mutex& gpu_lease() {
  static std::mutex m;
  return m;
}

}  // namespace kopt::util
