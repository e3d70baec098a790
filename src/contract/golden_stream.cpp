#include "contract/golden_stream.h"

#include <signal.h>

#include "util/json_io.h"

namespace kopt::contract {

Result<std::unique_ptr<GoldenStream>> GoldenStream::start(const std::filesystem::path& log) {
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, harness_process({"golden-batch", "--requests", "-", "--preload"}, 0));
  KOPT_TRY_ASSIGN(auto session, util::Session::start(spec, log));
  return std::unique_ptr<GoldenStream>(new GoldenStream(std::move(session)));
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
    if (!session_->send(util::Json(b.args[i]).dump())) break;
    auto reply = session_->receive(b.todo[i].timeout_s);
    if (reply.kind != util::Session::ReplyKind::kLine) {
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
