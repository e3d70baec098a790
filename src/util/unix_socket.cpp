#include "util/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "util/process.h"

namespace kopt::util {

namespace {

Result<sockaddr_un> address(const std::filesystem::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.empty() || p.size() > max_socket_path()) return internal_error("socket path too long: " + p);
  std::memcpy(a.sun_path, p.c_str(), p.size() + 1);
  return a;
}

}  // namespace

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

size_t max_socket_path() { return sizeof(sockaddr_un::sun_path) - 1; }

Result<Fd> listen_unix(const std::filesystem::path& path) {
  KOPT_TRY_ASSIGN(sockaddr_un a, address(path));
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return internal_error(std::string("socket: ") + std::strerror(errno));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return internal_error("bind " + path.string() + ": " + std::strerror(errno));
  if (::listen(fd.get(), 8) != 0) return internal_error(std::string("listen: ") + std::strerror(errno));
  return fd;
}

Result<Fd> connect_unix(const std::filesystem::path& path) {
  KOPT_TRY_ASSIGN(sockaddr_un a, address(path));
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return internal_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return internal_error("connect " + path.string() + ": " + std::strerror(errno));
  return fd;
}

Fd accept_unix(int listen_fd, int timeout_ms) {
  pollfd p{listen_fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return Fd();
  Fd c(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
  if (!c) return Fd();
  ucred cred{};
  socklen_t len = sizeof cred;
  // Requests name libraries the worker loads and runs: only this user's processes may send them.
  if (::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid()) return Fd();
  return c;
}

Status send_line(int fd, const std::string& line) {
  const std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return internal_error(std::string("send: ") + std::strerror(errno));
    }
    off += static_cast<size_t>(w);
  }
  return ok_status();
}

LineStatus read_line(int fd, double timeout_s, std::string* line) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string buf;
  char chunk[4096];
  while (true) {
    if (auto nl = buf.find('\n'); nl != std::string::npos) {
      *line = buf.substr(0, nl);
      return LineStatus::kLine;
    }
    if (interrupted()) return LineStatus::kInterrupted;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (timeout_s > 0 && elapsed > timeout_s) return LineStatus::kTimeout;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, 100);  // short slices: SIGINT and the deadline are looked at between them
    if (rc < 0 && errno != EINTR) return LineStatus::kClosed;
    if (rc <= 0) continue;
    ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got > 0) buf.append(chunk, static_cast<size_t>(got));
    else if (got == 0 || (errno != EINTR && errno != EAGAIN)) return LineStatus::kClosed;
  }
}

bool peer_gone(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

}  // namespace kopt::util
