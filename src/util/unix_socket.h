#pragma once
// Unix stream sockets carrying one JSON line each way (the warm bench worker's protocol, runner/warm.h). Only this
// user's processes may talk: the socket lives in a folder of mode 0700 and accept() refuses a peer of another uid.
#include <filesystem>
#include <string>

#include "core/result.h"

namespace kopt::util {

// A file descriptor closed when this goes out of scope; -1 holds none.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Binds and listens on `path` (replacing nothing: an existing file is an error). Close-on-exec.
Result<Fd> listen_unix(const std::filesystem::path& path);
// Connects to `path`; an error when nobody listens there (ENOENT, ECONNREFUSED) or the path is too long.
Result<Fd> connect_unix(const std::filesystem::path& path);
// The next connection within timeout_ms (-1: wait); an empty Fd on timeout, on EINTR, or from a peer of another user.
Fd accept_unix(int listen_fd, int timeout_ms);
// Writes `line` and a newline. MSG_NOSIGNAL: a peer gone is an error, not SIGPIPE.
Status send_line(int fd, const std::string& line);

enum class LineStatus { kLine, kTimeout, kClosed, kInterrupted };
// The next line on `fd` within timeout_s (0: no limit), without its newline, in *line. kInterrupted when SIGINT
// reached kopt (util::interrupted()). Bytes after the newline are dropped: each side sends one line per exchange.
LineStatus read_line(int fd, double timeout_s, std::string* line);

// Whether the peer of a connected socket has hung up (or sent something unexpected) without blocking.
bool peer_gone(int fd);

// The longest path a Unix socket address holds (sun_path, less its terminating zero).
size_t max_socket_path();

}  // namespace kopt::util
