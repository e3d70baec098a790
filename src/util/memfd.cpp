#include "util/memfd.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kopt::util {

namespace {
std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }
}  // namespace

Result<Fd> make_memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return internal_error(errno_text("memfd_create"));
  return Fd(fd);
}

Result<int> seals_of(int fd) {
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return input_error(errno_text("not a memfd (F_GET_SEALS)"));
  return seals;
}

Result<std::string> read_all_at(int fd, size_t max_bytes) {
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) return internal_error(errno_text("fstat"));
  const auto size = static_cast<size_t>(sb.st_size);
  if (size > max_bytes)
    return input_error("a memory file of " + std::to_string(size) + " bytes, more than " + std::to_string(max_bytes));
  std::string out(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return internal_error(n < 0 ? errno_text("pread") : "a memory file shorter than its size");
    done += static_cast<size_t>(n);
  }
  return out;
}

Result<Fd> receive_fd(int socket_fd, int timeout_ms) {
  pollfd p{socket_fd, POLLIN, 0};
  int r = 0;
  while ((r = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {}
  if (r == 0) return internal_error("no descriptor came within " + std::to_string(timeout_ms) + " ms");
  if (r < 0) return internal_error(errno_text("poll"));
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = 0;
  while ((n = ::recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
  if (n <= 0) return internal_error(n < 0 ? errno_text("recvmsg") : "the peer closed its socket");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      // Only one: any other that came is closed.
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t k = 1; k < count; ++k) {
        int extra = -1;
        std::memcpy(&extra, CMSG_DATA(c) + k * sizeof(int), sizeof extra);
        ::close(extra);
      }
      return Fd(fd);
    }
  return internal_error("a message without a descriptor");
}

bool set_dumpable(bool dumpable) {
  const bool was = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1;
  ::prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0);
  return was;
}

bool send_all(int fd, const void* data, size_t n) {
  auto p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The first bytes of a message with a descriptor beside them: the descriptor goes with whatever part sendmsg sends
// (at least its first byte), the rest follows with send_all.
bool send_with_fd(int fd, const void* data, size_t n, int pass_fd) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{const_cast<void*>(data), n};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  ssize_t w;
  do w = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w <= 0) return false;
  return send_all(fd, static_cast<const char*>(data) + w, n - static_cast<size_t>(w));
}


}  // namespace kopt::util
