#include "util/session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "util/unix_socket.h"


namespace kopt::util {

Result<std::unique_ptr<Session>> Session::start(const ProcessSpec& spec, const std::filesystem::path& stderr_log) {
  if (spec.argv.empty()) return internal_error("session: empty command");
  int in_pipe[2], out_pipe[2], exec_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0)
    return internal_error(std::string("session: pipe: ") + std::strerror(errno));
  std::error_code ec;
  if (!stderr_log.parent_path().empty()) std::filesystem::create_directories(stderr_log.parent_path(), ec);
  int err_fd = ::open(stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (err_fd < 0) return internal_error("session: cannot open " + stderr_log.string() + ": " + std::strerror(errno));
  const ExecVectors exec(spec);  // before fork: the child only reads it
  pid_t pid = ::fork();
  if (pid < 0) return internal_error(std::string("session: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_fd, 2);
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
  register_child_group(pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(exec_pipe[1]);
  ::close(err_fd);
  int exec_errno = 0;
  ssize_t n = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  ::close(exec_pipe[0]);
  std::unique_ptr<Session> s(new Session());
  s->pid_ = pid;
  s->in_fd_ = in_pipe[1];
  s->out_fd_ = out_pipe[0];
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    s->kill();
    return internal_error("session: " + spec.argv[0] + ": " + std::strerror(exec_errno));
  }
  return s;
}

Session::~Session() { kill(); }

Status Session::send(const std::string& line) {
  if (pid_ <= 0) return internal_error("session: the child is not running");
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::write(in_fd_, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return internal_error(std::string("session: write: ") + std::strerror(errno));
    }
    off += static_cast<size_t>(w);
  }
  return ok_status();
}

std::string Session::how_it_ended(Reply* r) {
  int status = 0;
  pid_t w = ::waitpid(pid_, &status, 0);
  std::string how = "ended";
  if (w == pid_) {
    if (WIFEXITED(status)) {
      how = "exit " + std::to_string(WEXITSTATUS(status));
      r->exit_code = WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
      r->term_signal = WTERMSIG(status);
      const char* name = ::sigabbrev_np(WTERMSIG(status));
      how = std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(status)).c_str());
    }
  }
  ::kill(-pid_, SIGKILL);  // anything it left in its group
  unregister_child_group(pid_);
  ::close(in_fd_);
  ::close(out_fd_);
  pid_ = -1;
  return how;
}

Session::Reply Session::receive(double timeout_s, int client_fd) {
  Reply r;
  if (pid_ <= 0) {
    r.how = "the child is not running";
    return r;
  }
  auto t0 = std::chrono::steady_clock::now();
  char chunk[4096];
  while (true) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      r.kind = ReplyKind::kLine;
      r.line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return r;
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (interrupted() || (client_fd >= 0 && peer_gone(client_fd))) {
      kill();
      r.kind = ReplyKind::kInterrupted;
      r.how = interrupted() ? "interrupted" : "interrupted: the client went away";
      return r;
    }
    if (timeout_s > 0 && elapsed > timeout_s) {
      kill();
      r.kind = ReplyKind::kTimeout;
      r.how = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
      return r;
    }
    pollfd fd{out_fd_, POLLIN, 0};
    int rc = ::poll(&fd, 1, 100);
    if (rc < 0 && errno != EINTR) {
      r.how = std::string("poll: ") + std::strerror(errno);
      kill();
      return r;
    }
    if (rc > 0 && (fd.revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = ::read(out_fd_, chunk, sizeof chunk);
      if (got > 0) {
        buffer_.append(chunk, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        r.kind = ReplyKind::kDied;
        r.how = how_it_ended(&r);
        return r;
      }
    }
  }
}

void Session::kill() {
  if (pid_ <= 0) return;
  ::close(in_fd_);  // a worker that reads its stdin leaves on EOF
  in_fd_ = -1;
  ::kill(-pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {  // 2 s grace
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) break;
    if (i == 199) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    ::usleep(10000);
  }
  ::kill(-pid_, SIGKILL);
  unregister_child_group(pid_);
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = -1;
  pid_ = -1;
}

}  // namespace kopt::util
