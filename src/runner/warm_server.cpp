// `kopt __bench-server`, the warm bench worker's server (runner/warm.h): one Unix socket, one request at a time,
// each relayed to a `kopt __worker --one-shot-verdicts` it keeps between requests.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "runner/golden_store.h"
#include "runner/sealed.h"
#include "runner/warm.h"
#include "runner/worker.h"
#include "util/unix_socket.h"

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {

struct ServerOptions {
  fs::path socket, log;
  std::string key, golden_identity, exe;
  double idle_s = 600;
  std::vector<std::string> worker_argv;
};

Result<ServerOptions> parse_server_options(const std::vector<std::string>& args) try {
  ServerOptions o;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--socket") o.socket = v;
    else if (k == "--log") o.log = v;
    else if (k == "--key") o.key = v;
    else if (k == "--golden-identity") o.golden_identity = v;
    else if (k == "--exe") o.exe = v;
    else if (k == "--idle-s") o.idle_s = std::stod(v);
    else if (k == "--worker-json") o.worker_argv = util::Json::parse(v).get<std::vector<std::string>>();
    else return input_error("kopt __bench-server: unknown option " + k);
  }
  if (o.socket.empty() || o.key.empty() || o.golden_identity.empty() || o.exe.empty() || o.worker_argv.empty())
    return input_error("kopt __bench-server: --socket, --key, --golden-identity, --exe and --worker-json are required");
  return o;
} catch (const std::exception& e) {
  return input_error(std::string("kopt __bench-server: ") + e.what());
}

// The value after `name` in a __runner argv ("" when absent).
std::string option_value(const std::vector<std::string>& argv, const std::string& name) {
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == name) return argv[i + 1];
  return "";
}

// The worker seals itself away from sealed_root() with Landlock by granting rights beneath each entry the root's
// ancestors held when it started (runner/sealed.h): an entry made in one of those folders later (a first run
// folder in $HOME, say) is out of its reach. Those entries, by name and inode, as a worker starts.
using Snapshot = std::map<fs::path, std::map<std::string, ino_t>>;

Snapshot snapshot_ancestors() {
  Snapshot s;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(sealed_root(), ec);
  for (fs::path a = root.parent_path(); !a.empty(); a = a.parent_path()) {
    auto& names = s[a];
    for (const auto& e : fs::directory_iterator(a, ec)) {
      struct stat st {};
      if (::lstat(e.path().c_str(), &st) == 0) names[e.path().filename().string()] = st.st_ino;
    }
    if (a == a.parent_path()) break;
  }
  return s;
}

// Whether `p` lies beneath entries the snapshot holds (the worker started then can reach it).
bool reachable(const Snapshot& s, const fs::path& p) {
  std::error_code ec;
  const fs::path q = fs::weakly_canonical(p, ec);
  for (const auto& [a, names] : s) {
    auto rel = q.lexically_relative(a);
    if (rel.empty() || rel.begin()->string() == ".." || rel.begin()->string() == ".") continue;
    const std::string entry = rel.begin()->string();
    struct stat st {};
    auto it = names.find(entry);
    if (it == names.end() || ::lstat((a / entry).c_str(), &st) != 0 || st.st_ino != it->second) return false;
  }
  return true;
}

// The paths a __runner argv reads or writes.
std::vector<fs::path> request_paths(const std::vector<std::string>& argv) {
  std::vector<fs::path> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--lib" || argv[i] == "--golden" || argv[i] == "--out" || argv[i] == "--dump-outputs")
      out.emplace_back(argv[i + 1]);
  return out;
}

ino_t inode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

class Server {
 public:
  Server(ServerOptions o, util::Fd listener)
      : o_(std::move(o)), listener_(std::move(listener)), exe_identity_(file_identity(o_.exe)),
        socket_inode_(inode_of(o_.socket)), worker_(o_.log, o_.exe, WorkerSpec{o_.worker_argv, {}}) {}

  // Serves until idle, invalidated or asked to leave; returns the exit code.
  int loop() {
    while (!leaving_) {
      util::Fd client = util::accept_unix(listener_.get(), 1000);
      if (client) {
        serve(client.get());
        last_ = Clock::now();
        continue;
      }
      std::string why;
      if (invalid(&why)) return leave("invalidated: " + why);
      if (seconds(last_) > o_.idle_s && idle_exit_allowed()) return leave("idle for " + std::to_string(o_.idle_s) + " s");
    }
    return leave("asked to leave");
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  // What changed beneath this server since it started: its executable, its socket, the golden data last served.
  bool invalid(std::string* why) const {
    if (file_identity(o_.exe) != exe_identity_) *why = "the kopt executable " + o_.exe + " changed";
    else if (inode_of(o_.socket) != socket_inode_) *why = "its socket was removed or replaced";
    else if (!last_golden_.empty() && fs::exists(last_golden_) && golden_identity(last_golden_) != o_.golden_identity)
      *why = "the golden data in " + last_golden_.string() + " changed";
    return !why->empty();
  }

  // A client queued on the lock file is about to send a request: then this server stays.
  bool idle_exit_allowed() {
    fs::path lock_path = o_.socket;
    lock_path.replace_extension(".lock");
    idle_lock_.reset(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC));
    return !idle_lock_ || ::flock(idle_lock_.get(), LOCK_EX | LOCK_NB) == 0;  // held until the process ends
  }

  int leave(const std::string& why) {
    if (inode_of(o_.socket) == socket_inode_) {
      std::error_code ec;
      fs::remove(o_.socket, ec);  // only its own: a newer server may have taken the name
    }
    listener_.reset();
    std::fprintf(stderr, "kopt __bench-server %d: leaving (%s) after %d request(s)\n", ::getpid(), why.c_str(), served_);
    return 0;
  }

  void serve(int fd) {
    std::string line;
    if (util::read_line(fd, 10, &line) != util::LineStatus::kLine) return;
    auto req = util::Json::parse(line, nullptr, false);
    if (!req.is_object()) return;
    if (req.value("op", std::string()) == "exit") {
      leaving_ = true;
      return;
    }
    const auto argv = req.value("argv", std::vector<std::string>());
    const fs::path golden = option_value(argv, "--golden");
    std::string why;
    if (req.value("key", std::string()) != o_.key) why = "another key";
    else if (golden_identity(golden) != o_.golden_identity) why = "the golden data changed";
    else (void)invalid(&why);
    if (!why.empty()) {  // never serves stale state: the client starts a new server
      leaving_ = true;
      leave("invalidated: " + why);
      (void)util::send_line(fd, util::Json({{"invalidated", why}}).dump());
      return;
    }
    for (const auto& p : request_paths(argv))
      if (worker_.running() && !reachable(sealed_at_start_, p)) {
        std::fprintf(stderr, "kopt __bench-server: %s is newer than the worker's seal: a fresh worker\n", p.c_str());
        worker_.retire();
      }
    if (!worker_.running()) sealed_at_start_ = snapshot_ancestors();
    const bool reused = worker_.running() && worker_.served_by_this() > 0;
    const util::ProcessResult proc = worker_.relay({{"argv", argv}}, req.value("timeout_s", 120.0), fd);
    last_golden_ = golden;
    ++served_;
    util::Json server = {{"pid", ::getpid()},
                         {"server_age_s", seconds(started_)},
                         {"requests_served", served_},
                         {"worker_starts", worker_.starts()},
                         {"measuring_process_reused", reused},
                         {"idle_s", o_.idle_s}};
    (void)util::send_line(fd, util::Json({{"proc", process_result_to_json(proc)}, {"server", server}}).dump());
  }

  ServerOptions o_;
  util::Fd listener_, idle_lock_;
  const std::string exe_identity_;
  const ino_t socket_inode_;
  MeasuringWorker worker_;
  Clock::time_point started_ = Clock::now(), last_ = Clock::now();
  fs::path last_golden_;
  Snapshot sealed_at_start_;  // the sealed root's ancestors' entries as the running worker started
  int served_ = 0;
  bool leaving_ = false;
};

}  // namespace

int bench_server_main(const std::vector<std::string>& args) {
  ::signal(SIGPIPE, SIG_IGN);  // a worker or client gone is an error return, not the end of the server
  auto o = parse_server_options(args);
  if (!o) {
    std::fprintf(stderr, "%s\n", o.error().message.c_str());
    return 2;
  }
  ::umask(077);
  auto listener = util::listen_unix(o->socket);
  if (!listener) {  // another server took the name first: it serves
    std::fprintf(stderr, "kopt __bench-server: %s\n", listener.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "kopt __bench-server %d: serving on %s (idle exit after %g s)\n", ::getpid(), o->socket.c_str(),
               o->idle_s);
  Server server(std::move(o).value(), std::move(listener).value());
  return server.loop();
}

}  // namespace kopt::runner
