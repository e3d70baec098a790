#include "contract/golden_stream.h"

#include <signal.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "util/json_io.h"
#include "util/memfd.h"

namespace kopt::contract {

Result<std::unique_ptr<GoldenStream>> GoldenStream::start(const std::filesystem::path& log, HarnessPreload preload) {
  const char* what = preload == HarnessPreload::kCuda ? "cuda" : "imports";
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, harness_process({"golden-batch", "--requests", "-", "--preload", what}, 0));
  // The socket the ephemeral seed's memfd comes back on: its other end inherited by the harness alone.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return internal_error(std::string("socketpair for the golden-data harness: ") + std::strerror(errno));
  util::Fd ours(sv[0]), theirs(sv[1]);
  spec.pass_fds = {theirs.get()};
  KOPT_TRY_ASSIGN(auto session, util::Session::start(spec, log));
  return std::unique_ptr<GoldenStream>(new GoldenStream(std::move(session), std::move(ours), theirs.get(), preload));
}

GoldenStream::~GoldenStream() { close(); }

void GoldenStream::abort() {
  if (const int pid = pid_.exchange(-1); pid > 0) ::kill(-pid, SIGKILL);
}

bool GoldenStream::alive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_ && session_->alive();
}

void GoldenStream::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_) return;
  pid_ = -1;
  if (session_->alive()) (void)session_->send("");  // the harness's end of stream
  session_->kill();
  session_.reset();
}

int GoldenStream::prefetch(std::vector<GoldenRequest> requests) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !session_->alive()) return 0;
  GoldenBatch b = golden_batch(std::move(requests));
  int made = 0;
  for (size_t i = 0; i < b.todo.size(); ++i) {
    const bool sent = session_->send(util::Json(b.args[i]).dump()).ok();
    if (sent) ++requests_;
    auto reply = sent ? session_->receive(b.todo[i].timeout_s) : util::Session::Reply{};
    if (!sent || reply.kind != util::Session::ReplyKind::kLine) {
      // Dead, hung or interrupted: the rest is make_golden's, alone, which says what is wrong.
      pid_ = -1;
      session_->kill();
      session_.reset();
      break;
    }
    if (adopt_batch_line(b, i, reply.line)) ++made;
  }
  return made;
}

}  // namespace kopt::contract

namespace kopt::contract {

Result<EphemeralSeedPtr> GoldenStream::make_ephemeral(const GoldenRequest& req) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_ || !session_->alive()) return internal_error("the golden-data harness is not running");
  KOPT_TRY_ASSIGN(auto args, ephemeral_args(req, child_socket_));
  if (!session_->send(util::Json(args).dump())) {  // it ended (or never started): closed, alive() says so
    pid_ = -1;
    session_->kill();
    session_.reset();
    return internal_error("the golden-data harness does not read its requests");
  }
  ++requests_;
  auto reply = session_->receive(req.timeout_s);
  if (reply.kind != util::Session::ReplyKind::kLine) {
    pid_ = -1;
    session_->kill();
    session_.reset();
    return internal_error("the golden-data harness ended while making the ephemeral seed: " + reply.how);
  }
  auto about = util::Json::parse(reply.line, nullptr, false);
  if (!about.is_object() || about.value("status", std::string()) != "ok")
    return input_error("the golden-data harness could not make the ephemeral seed: " +
                       (about.is_object() ? about.value("message", reply.line) : reply.line));
  // Sent before its summary line was printed: already waiting on the socket.
  KOPT_TRY_ASSIGN(util::Fd fd, util::receive_fd(socket_.get(), 10000));
  return EphemeralSeed::adopt(std::move(fd), std::move(about));
}

}  // namespace kopt::contract
