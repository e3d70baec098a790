#include "runner/worker.h"

#include <chrono>
#include <cstdlib>

#include "toolchain/tools.h"
#include "util/fs.h"

namespace kopt::runner {

namespace {
// A worker loads every candidate library it is given; it is renewed after this many requests so a library that
// cannot be unloaded cleanly never accumulates.
constexpr int kRequestsPerWorker = 400;

// What the worker wrote to its log from byte `from` on (at most the last 4 KiB): what a one-shot child's stderr
// would have held, for the message of a request that killed it.
std::string log_tail(const std::filesystem::path& log, uintmax_t from) {
  auto text = util::read_file(log);
  if (!text || text->size() <= from) return "";
  std::string t = text->substr(static_cast<size_t>(from));
  return t.size() > 4096 ? t.substr(t.size() - 4096) : t;
}
}  // namespace

util::Json worker_request(const RunRequest& req) {
  auto argv = child_argv(req, "kopt");
  return {{"argv", std::vector<std::string>(argv.begin() + 2, argv.end())}};  // without "kopt __runner"
}

WorkerSpec ray_worker_spec(const std::string& address, int slot, const std::vector<std::string>& extra) {
  WorkerSpec w;
  w.argv = {toolchain::find_python(), "-m", "kopt_harness", "ray-worker", "--address", address,
            "--kopt", (util::executable_dir() / "kopt").string(), "--slot", std::to_string(slot)};
  w.argv.insert(w.argv.end(), extra.begin(), extra.end());
  if (const std::string harness = toolchain::python_harness_dir(); !harness.empty()) {
    const char* pp = std::getenv("PYTHONPATH");
    w.env["PYTHONPATH"] = harness + (pp && *pp ? std::string(":") + pp : "");
  }
  return w;
}

MeasuringWorker::MeasuringWorker(std::filesystem::path log, std::string kopt_exe, WorkerSpec spec)
    : log_(std::move(log)), exe_(std::move(kopt_exe)), spec_(std::move(spec)) {
  if (exe_.empty()) exe_ = (util::executable_dir() / "kopt").string();
  if (spec_.argv.empty()) spec_.argv = {exe_, "__worker"};
}

RunOutcome MeasuringWorker::run(const RunRequest& req) {
  if (!serves(req)) {
    util::SystemRunner sys;
    auto one_shot = req;
    for (const auto& [k, v] : spec_.env) one_shot.env.emplace(k, v);
    return run_candidate(one_shot, sys);
  }
  std::error_code ec;
  std::filesystem::remove(req.result_json, ec);
  const util::ProcessResult proc = relay(worker_request(req), req.timeout_s);
  std::optional<util::Json> result;
  if (std::filesystem::exists(req.result_json, ec)) {
    auto j = util::read_json(req.result_json);
    if (j) result = std::move(j).value();
  }
  return interpret(proc, result);
}

Status MeasuringWorker::start() {
  if (session_ && served_by_this_ >= kRequestsPerWorker) session_.reset();
  if (session_ && session_->alive()) return ok_status();
  util::ProcessSpec ps{spec_.argv};
  ps.env = spec_.env;
  auto s = util::Session::start(ps, log_);
  if (!s) return s.error();
  session_ = std::move(s).value();
  ++starts_;
  served_by_this_ = 0;
  return ok_status();
}

util::ProcessResult MeasuringWorker::relay(const util::Json& request, double timeout_s, int client_fd) {
  auto t0 = std::chrono::steady_clock::now();
  util::ProcessResult proc;
  proc.started = true;
  if (auto st = start(); !st) {
    proc.started = false;
    proc.start_error = st.error().message;
    return proc;
  }
  std::error_code ec;
  const auto log_at = std::filesystem::file_size(log_, ec);
  auto sent = session_->send(request.dump());
  util::Session::Reply reply;
  if (sent) reply = session_->receive(timeout_s, client_fd);
  else reply.how = sent.error().message;
  ++served_;
  ++served_by_this_;
  proc.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  switch (reply.kind) {
    case util::Session::ReplyKind::kLine: {
      auto j = util::Json::parse(reply.line, nullptr, false);
      proc.exit_code = j.is_object() ? j.value("rc", 1) : 1;
      if (!j.is_object()) proc.stderr_text = "the worker answered '" + reply.line + "'";
      if (j.is_object() && j.value("restart", false)) session_.reset();  // its CUDA context is broken
      break;
    }
    case util::Session::ReplyKind::kTimeout: proc.timed_out = true; break;
    case util::Session::ReplyKind::kInterrupted: proc.interrupted = true; break;
    case util::Session::ReplyKind::kDied:
      proc.exit_code = reply.exit_code;
      proc.term_signal = reply.term_signal;
      proc.stderr_text = log_tail(log_, ec ? 0 : log_at) + "\n" + reply.how + " (the worker's log: " + log_.string() + ")";
      break;
  }
  if (session_ && !session_->alive()) session_.reset();
  if (!session_) served_by_this_ = 0;
  return proc;
}

}  // namespace kopt::runner
