#pragma once
// The judge's wire format (runner/sealed.h), shared by both ends and by python/kopt_harness/sealed.py:
// a message is an 8-byte little-endian length, a JSON header of that length, then the blobs its "blobs" lists (their
// byte counts, in order). A file descriptor may ride with a message's first bytes (SCM_RIGHTS): the shared buffer
// (runner/shared_buffer.h), passed once, after which a request names outputs by offset and carries no blob.
#include <span>
#include <vector>

#include "util/json_io.h"

namespace kopt::runner::wire {

using Bytes = std::span<const unsigned char>;

// False when the socket is closed. `pass_fd` >= 0: that descriptor goes with the message (the caller keeps its own).
bool send_message(int fd, util::Json header, const std::vector<Bytes>& blobs, int pass_fd = -1);

// False on a closed socket or a malformed message. A descriptor that came with the message goes to `*received_fd`
// (the caller owns it; -1 when none came), or is closed when `received_fd` is null.
bool receive_message(int fd, util::Json& header, std::vector<std::vector<unsigned char>>& blobs, int* received_fd = nullptr);

}  // namespace kopt::runner::wire
