// The warm bench worker, client side (runner/warm.h): find or start the server of a request's key, send it the
// request, read the verdict as a one-shot child's.
#include "runner/warm.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "runner/golden_store.h"
#include "runner/worker.h"
#include "util/fs.h"
#include "util/unix_socket.h"

extern char** environ;

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {

constexpr double kStartWaitS = 20;  // a fresh server listens at once; this is only a bound for a loaded machine

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An flock held until destroyed: one client of a key at a time talks to its server (and starts it).
// Waits in slices so SIGINT still ends the wait; an empty Fd after an interrupt.
util::Fd lock_file(const fs::path& path) {
  util::Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return fd;
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (util::interrupted()) return util::Fd();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fd;
}

// Starts argv in a session of its own, not a child of this process (a double fork): it outlives kopt bench and no
// group kill of this process reaches it. stdin and stdout are /dev/null, stderr goes to `log`.
Status spawn_detached(const std::vector<std::string>& argv, const fs::path& log) {
  const util::ProcessSpec spec{argv};
  const util::ExecVectors exec(spec);
  pid_t pid = ::fork();
  if (pid < 0) return internal_error("fork failed");
  if (pid == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int null_fd = ::open("/dev/null", O_RDWR);
    int err_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(err_fd >= 0 ? err_fd : null_fd, 2);
    ::execvpe(exec.argv[0], exec.argv.data(), exec.envp.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return ok_status();
}

// Asks the other servers of this GPU to leave (fire and forget; each finishes the request it serves first): an idle
// one holds a CUDA context and golden data in GPU memory the next candidate measured may need.
void retire_others(const fs::path& dir, const std::string& gpu_prefix, const std::string& own_name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".sock" || !name.starts_with(gpu_prefix) || name == own_name + ".sock") continue;
    if (auto fd = util::connect_unix(e.path())) (void)util::send_line(fd->get(), R"({"op": "exit"})");
  }
}

// A connection to the server at `sock`, started (with `argv`) when none answers.
Result<util::Fd> connect_or_start(const fs::path& sock, const std::vector<std::string>& argv, const fs::path& log,
                                  bool* started) {
  *started = false;
  if (auto fd = util::connect_unix(sock)) return std::move(fd).value();
  std::error_code ec;
  fs::remove(sock, ec);  // a server that died left it
  {
    std::FILE* f = std::fopen(log.c_str(), "w");  // a new server, a new log
    if (f) std::fclose(f);
  }
  KOPT_TRY(spawn_detached(argv, log));
  *started = true;
  const auto t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < kStartWaitS && !util::interrupted()) {
    if (auto fd = util::connect_unix(sock)) return std::move(fd).value();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return internal_error("the bench worker did not listen on " + sock.string() + " (its log: " + log.string() + ")");
}

}  // namespace

WarmRun run_warm(const RunRequest& req, util::CommandRunner& fallback, const WarmConfig& cfg) {
  WarmRun run;
  auto one_shot = [&](const std::string& why) {
    run.outcome = run_candidate(req, fallback);
    run.info = {{"used", false}, {"reason", why}};
    return run;
  };
  if (!MeasuringWorker::serves(req) || !req.env.empty())
    return one_shot("a request the worker does not serve (Triton, profile, a slot's environment)");
  auto dir = cfg.dir.empty() ? warm_dir() : Result<fs::path>(cfg.dir);
  if (!dir) return one_shot(dir.error().message);
  const std::string exe = cfg.kopt_exe.empty() ? (util::executable_dir() / "kopt").string() : cfg.kopt_exe;
  WarmKeyInputs in{file_identity(exe), golden_identity(req.golden_dir), system_gpu_identity(), warm_env(environ),
                   cfg.worker_argv.empty() ? std::vector<std::string>{exe, "__worker", "--one-shot-verdicts"}
                                           : cfg.worker_argv};
  if (in.kopt_identity.empty()) return one_shot("no kopt executable at " + exe);
  if (in.golden_identity.empty()) return one_shot("the golden folder could not be read: " + req.golden_dir.string());
  const std::string key = warm_key(in), name = warm_gpu_key(in).substr(0, 8) + "-" + key.substr(0, 16);
  const fs::path sock = *dir / (name + ".sock"), log = *dir / (name + ".log");
  if (sock.string().size() > util::max_socket_path()) return one_shot("the socket path is too long: " + sock.string());
  const auto t0 = std::chrono::steady_clock::now();
  util::Fd lock = lock_file(*dir / (name + ".lock"));
  if (!lock && util::interrupted()) {
    run.outcome.status = RunStatus::kInterrupted;
    run.outcome.message = "interrupted";
    return run;
  }
  if (!lock) return one_shot("cannot lock " + (*dir / (name + ".lock")).string());
  const double lock_wait_s = seconds_since(t0);
  const std::vector<std::string> server_argv = {exe, "__bench-server", "--socket", sock.string(), "--key", key,
                                                "--golden-identity", in.golden_identity, "--idle-s",
                                                std::to_string(cfg.idle_s), "--log", log.string(), "--exe", exe,
                                                "--worker-json", util::Json(in.worker_argv).dump()};
  std::error_code ec;
  fs::remove(req.result_json, ec);
  const util::Json request = {{"argv", worker_request(req)["argv"]}, {"timeout_s", req.timeout_s}, {"key", key}};
  util::Json reply;
  bool started = false;
  for (int attempt = 0; attempt < 2 && reply.is_null(); ++attempt) {
    auto fd = connect_or_start(sock, server_argv, log, &started);
    if (!fd) return one_shot(fd.error().message);
    if (started) retire_others(*dir, name.substr(0, 8), name);
    std::string line;
    util::LineStatus st = util::send_line(fd->get(), request.dump())
                              ? util::read_line(fd->get(), req.timeout_s + 30, &line)
                              : util::LineStatus::kClosed;
    if (st == util::LineStatus::kInterrupted) {  // closing the socket stops the candidate (the server kills it)
      run.outcome.status = RunStatus::kInterrupted;
      run.outcome.message = "interrupted";
      run.info = {{"used", true}, {"interrupted", true}};
      return run;
    }
    auto j = st == util::LineStatus::kLine ? util::Json::parse(line, nullptr, false) : util::Json();
    if (j.is_object() && j.contains("proc")) reply = j;
    // Otherwise the server was leaving (idle, invalidated) as this client came, or died: once more with a new one.
    else if (started || attempt == 1) return one_shot("the bench worker gave no answer (its log: " + log.string() + ")");
  }
  std::optional<util::Json> result;
  if (fs::exists(req.result_json, ec))
    if (auto j = util::read_json(req.result_json)) result = std::move(j).value();
  run.outcome = interpret(process_result_from_json(reply["proc"]), result);
  run.info = reply.value("server", util::Json::object());
  run.info["used"] = true;
  run.info["reused"] = !started;
  run.info["lock_wait_s"] = lock_wait_s;
  run.info["key"] = name;
  run.info["log"] = log.string();
  return run;
}

}  // namespace kopt::runner
