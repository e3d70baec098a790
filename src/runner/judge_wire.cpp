#include "runner/judge_wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/memfd.h"

namespace kopt::runner::wire {

namespace {

// Reads n bytes; descriptors that come with them are kept in `fds` (every one the kernel delivered, so none leaks).
bool read_all(int fd, void* data, size_t n, std::vector<int>* fds) {
  auto p = static_cast<char*>(data);
  while (n > 0) {
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    iovec iov{p, n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fds) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
    }
    ssize_t r = ::recvmsg(fd, &msg, fds ? MSG_CMSG_CLOEXEC : 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    for (cmsghdr* c = fds ? CMSG_FIRSTHDR(&msg) : nullptr; c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int got = -1;
        std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->push_back(got);
      }
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Blobs beyond this in one message are refused (a header that asks for more is not kopt's).
constexpr uint64_t kMaxMessageBytes = 64ull << 30;
constexpr uint64_t kMaxHeaderBytes = 1 << 20;

}  // namespace

bool send_message(int fd, util::Json header, const std::vector<Bytes>& blobs, int pass_fd) {
  util::Json sizes = util::Json::array();
  for (const auto& b : blobs) sizes.push_back(b.size());
  header["blobs"] = sizes;
  const std::string h = header.dump();
  uint64_t len = h.size();
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(len >> (8 * i));
  if (!(pass_fd >= 0 ? util::send_with_fd(fd, le, 8, pass_fd) : util::send_all(fd, le, 8))) return false;
  if (!util::send_all(fd, h.data(), h.size())) return false;
  for (const auto& b : blobs)
    if (!b.empty() && !util::send_all(fd, b.data(), b.size())) return false;
  return true;
}

bool receive_message(int fd, util::Json& header, std::vector<std::vector<unsigned char>>& blobs, int* received_fd) {
  std::vector<int> fds;
  if (received_fd) *received_fd = -1;
  // Only the length's bytes may carry a descriptor (send_message puts it there); any that came are this call's.
  unsigned char le[8];
  const bool got_length = read_all(fd, le, 8, &fds);
  if (received_fd && !fds.empty()) *received_fd = fds.front();
  for (size_t i = received_fd ? 1 : 0; i < fds.size(); ++i) ::close(fds[i]);
  auto fail = [&] {
    if (received_fd && *received_fd >= 0) ::close(*received_fd);
    if (received_fd) *received_fd = -1;
    return false;
  };
  if (!got_length) return fail();
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(le[i]) << (8 * i);
  if (len == 0 || len > kMaxHeaderBytes) return fail();
  std::string h(len, '\0');
  if (!read_all(fd, h.data(), h.size(), nullptr)) return fail();
  header = util::Json::parse(h, nullptr, false);
  if (!header.is_object() || !header.contains("blobs") || !header["blobs"].is_array()) return fail();
  blobs.clear();
  uint64_t total = 0;
  for (const auto& s : header["blobs"]) {
    if (!s.is_number_unsigned()) return fail();
    total += s.get<uint64_t>();
    if (total > kMaxMessageBytes) return fail();
    blobs.emplace_back(s.get<uint64_t>());
    if (!blobs.back().empty() && !read_all(fd, blobs.back().data(), blobs.back().size(), nullptr)) return fail();
  }
  return true;
}

}  // namespace kopt::runner::wire
