#pragma once
// Memory files (memfd_create(2)): bytes that live in memory only, under no path, reachable only through a descriptor.
// The judge's shared buffer (runner/shared_buffer.h) and the ephemeral seed (contract/ephemeral_seed.h) are memfds;
// seals (F_ADD_SEALS) fix what may still change: its size (F_SEAL_SHRINK, F_SEAL_GROW), its bytes (F_SEAL_WRITE),
// its seals (F_SEAL_SEAL).
#include <fcntl.h>

#include <cstddef>
#include <string>

#include "core/result.h"
#include "util/unix_socket.h"

namespace kopt::util {

// Every seal: the memfd's contents and size are fixed for good.
constexpr int kFrozenSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;

// A new memfd, close-on-exec and sealable. Errors: the kernel makes none (no memfd_create, or out of memory).
Result<Fd> make_memfd(const char* name);
// The seals `fd` carries; an error when it is no memfd (or carries no seals).
Result<int> seals_of(int fd);
// Every byte of `fd`, read from offset 0 with pread (the offset, shared with every copy of the descriptor, is not
// moved). At most `max_bytes`.
Result<std::string> read_all_at(int fd, size_t max_bytes = size_t{64} << 30);
// A descriptor sent with one byte on a Unix socket (SCM_RIGHTS), within timeout_ms; close-on-exec. Errors: none
// came, or the peer closed.
Result<Fd> receive_fd(int socket_fd, int timeout_ms);
// Sends n bytes on a socket, every one (EINTR retried; no SIGPIPE). False: the peer is gone.
bool send_all(int socket_fd, const void* data, size_t n);
// The same with `pass_fd` beside their first bytes (SCM_RIGHTS): what receive_fd and the judge's wire read.
bool send_with_fd(int socket_fd, const void* data, size_t n, int pass_fd);
// This process's "dumpable" attribute (prctl PR_SET_DUMPABLE): while false, no other process of the user can read
// its memory or open its descriptors through /proc/PID (ptrace access). Returns what it was.
bool set_dumpable(bool dumpable);

}  // namespace kopt::util
