#include "runner/sealed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>

#include "contract/safetensors.h"
#include "runner/golden.h"
#include "util/fs.h"

extern char** environ;

namespace kopt::runner {

namespace fs = std::filesystem;

// ---- Landlock ----------------------------------------------------------------------------------------------------

namespace {

// The kernel's ABI (linux/landlock.h), written out: the build machine's header may be older than the kernels kopt
// runs on, and each field is used only where the running kernel's ABI version has it.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI 4
  uint64_t scoped = 0;              // ABI 6
};
struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access = 0;
  int32_t parent_fd = -1;
};
constexpr uint64_t kFsExecute = 1ull << 0, kFsWriteFile = 1ull << 1, kFsReadFile = 1ull << 2, kFsReadDir = 1ull << 3,
                   kFsRemoveDir = 1ull << 4, kFsRemoveFile = 1ull << 5, kFsMakeChar = 1ull << 6, kFsMakeDir = 1ull << 7,
                   kFsMakeReg = 1ull << 8, kFsMakeSock = 1ull << 9, kFsMakeFifo = 1ull << 10, kFsMakeBlock = 1ull << 11,
                   kFsMakeSym = 1ull << 12, kFsRefer = 1ull << 13 /* ABI 2 */, kFsTruncate = 1ull << 14 /* ABI 3 */;
constexpr uint64_t kScopeSignal = 1ull << 1;  // ABI 6
constexpr int kRulePathBeneath = 1;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
// Rights that apply to a file (a rule on a file may hold only these).
constexpr uint64_t kFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate;
// Most entries in one ancestor directory kopt enumerates: beyond it, it does not seal (the reason says so).
constexpr size_t kMaxRules = 8192;

long ll_create_ruleset(const LandlockRulesetAttr* attr, size_t size, uint32_t flags) {
  return ::syscall(__NR_landlock_create_ruleset, attr, size, flags);
}
long ll_add_rule(int ruleset, const LandlockPathBeneathAttr* attr) {
  return ::syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, attr, 0);
}
long ll_restrict_self(int ruleset) { return ::syscall(__NR_landlock_restrict_self, ruleset, 0); }

// True when `inner` is `outer` or lies beneath it (both canonical).
bool within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

util::Json SealState::to_json() const {
  util::Json j = {{"sealed", sealed}, {"landlock_abi", landlock_abi}, {"signals_scoped", signals_scoped}};
  if (!off_reason.empty()) j["off_reason"] = off_reason;
  return j;
}

SealState seal_away(const fs::path& dir) {
  SealState st;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path target = fs::canonical(dir, ec);
  if (ec) {
    st.off_reason = "cannot resolve " + dir.string() + ": " + ec.message();
    return st;
  }
  const long abi = ll_create_ruleset(nullptr, 0, kCreateRulesetVersion);
  if (abi < 1) {
    st.off_reason = std::string("Landlock is not available on this kernel (") + std::strerror(errno) + ")";
    return st;
  }
  st.landlock_abi = static_cast<int>(abi);
  LandlockRulesetAttr attr;
  attr.handled_access_fs = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir | kFsRemoveFile |
                           kFsMakeChar | kFsMakeDir | kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
  if (abi >= 2) attr.handled_access_fs |= kFsRefer;
  if (abi >= 3) attr.handled_access_fs |= kFsTruncate;
  size_t size = sizeof(uint64_t);
  if (abi >= 6) {
    attr.scoped = kScopeSignal;
    size = sizeof(LandlockRulesetAttr);
  }
  const uint64_t all = attr.handled_access_fs;
  Fd ruleset(static_cast<int>(ll_create_ruleset(&attr, size, 0)));
  if (ruleset.fd < 0) {
    st.off_reason = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return st;
  }
  size_t rules = 0;
  auto add = [&](const fs::path& p, uint64_t rights) -> bool {
    Fd f(::open(p.c_str(), O_PATH | O_CLOEXEC));
    if (f.fd < 0) return true;  // gone, or not ours to open: it gets no rule
    struct stat sb {};
    if (::fstat(f.fd, &sb) != 0) return true;
    LandlockPathBeneathAttr rule;
    rule.allowed_access = S_ISDIR(sb.st_mode) ? rights : (rights & kFileRights);
    rule.parent_fd = f.fd;
    if (rule.allowed_access == 0) return true;
    if (ll_add_rule(ruleset.fd, &rule) != 0) {
      st.off_reason = "landlock_add_rule " + p.string() + ": " + std::strerror(errno);
      return false;
    }
    if (++rules > kMaxRules) {
      st.off_reason = "more than " + std::to_string(kMaxRules) + " directory entries to grant around " + target.string();
      return false;
    }
    return true;
  };
  // Each ancestor may be listed; each of its other entries is granted everything, unless following it leads to an
  // ancestor of the target (a symbolic link), which would grant the target too.
  fs::path ancestor;
  for (auto part = target.begin(); part != target.end(); ++part) {
    ancestor = ancestor.empty() ? fs::path(*part) : ancestor / *part;
    if (ancestor == target) break;
    if (!add(ancestor, kFsReadDir)) return st;
    auto next = std::next(part);
    for (const auto& e : fs::directory_iterator(ancestor, fs::directory_options::skip_permission_denied, ec)) {
      if (e.path().filename() == *next) continue;
      const fs::path resolved = fs::canonical(e.path(), ec);
      if (!ec && within(target, resolved)) continue;
      if (!add(e.path(), all)) return st;
    }
    if (ec) {
      st.off_reason = "cannot list " + ancestor.string() + ": " + ec.message();
      return st;
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    st.off_reason = std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno);
    return st;
  }
  if (ll_restrict_self(ruleset.fd) != 0) {
    st.off_reason = std::string("landlock_restrict_self: ") + std::strerror(errno);
    return st;
  }
  st.sealed = true;
  st.signals_scoped = abi >= 6;
  return st;
}

// ---- The judge's wire format ---------------------------------------------------------------------------------------
// A message: an 8-byte little-endian length, a JSON header of that length, then the blobs the header's "blobs" lists
// (their byte counts, in order).

namespace {

bool write_all(int fd, const void* data, size_t n) {
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

bool read_all(int fd, void* data, size_t n) {
  auto p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Blobs beyond this in one message are refused (a header that asks for more is not kopt's).
constexpr uint64_t kMaxMessageBytes = 64ull << 30;
constexpr uint64_t kMaxHeaderBytes = 1 << 20;

bool send_message(int fd, util::Json header, const std::vector<const std::vector<unsigned char>*>& blobs) {
  util::Json sizes = util::Json::array();
  for (const auto* b : blobs) sizes.push_back(b->size());
  header["blobs"] = sizes;
  const std::string h = header.dump();
  uint64_t len = h.size();
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(len >> (8 * i));
  if (!write_all(fd, le, 8) || !write_all(fd, h.data(), h.size())) return false;
  for (const auto* b : blobs)
    if (!b->empty() && !write_all(fd, b->data(), b->size())) return false;
  return true;
}

// False on a closed socket or a malformed message.
bool receive_message(int fd, util::Json& header, std::vector<std::vector<unsigned char>>& blobs) {
  unsigned char le[8];
  if (!read_all(fd, le, 8)) return false;
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<uint64_t>(le[i]) << (8 * i);
  if (len == 0 || len > kMaxHeaderBytes) return false;
  std::string h(len, '\0');
  if (!read_all(fd, h.data(), h.size())) return false;
  header = util::Json::parse(h, nullptr, false);
  if (!header.is_object() || !header.contains("blobs") || !header["blobs"].is_array()) return false;
  blobs.clear();
  uint64_t total = 0;
  for (const auto& s : header["blobs"]) {
    if (!s.is_number_unsigned()) return false;
    total += s.get<uint64_t>();
    if (total > kMaxMessageBytes) return false;
    blobs.emplace_back(s.get<uint64_t>());
    if (!blobs.back().empty() && !read_all(fd, blobs.back().data(), blobs.back().size())) return false;
  }
  return true;
}

// The judge's record of one golden data: its manifest and the sealed seed's tensors.
struct SealedEntry {
  Golden golden;
  contract::TensorMap tensors;
};

Result<SealedEntry> load_sealed(const fs::path& golden_dir) {
  SealedEntry e;
  KOPT_TRY_ASSIGN(e.golden, load_golden(golden_dir));
  auto token = sealed_token(e.golden.manifest);
  if (!token) return input_error("the golden data in " + golden_dir.string() + " has no sealed seed");
  KOPT_TRY_ASSIGN(e.tensors, contract::read_safetensors(sealed_seed_file(*token)));
  for (const auto& [name, spec] : e.golden.buffers) {
    const char* prefix = spec.role == "output" ? "out." : "in.";
    for (std::string key : {std::string(prefix) + name, spec.role == "inout" ? "out." + name : std::string()}) {
      if (key.empty()) continue;
      auto it = e.tensors.find(key);
      if (it == e.tensors.end() || static_cast<int64_t>(it->second.data.size()) != spec.nbytes)
        return input_error("the sealed seed of " + golden_dir.string() + " lacks " + key + " of " +
                           std::to_string(spec.nbytes) + " bytes: make the golden data again");
    }
  }
  return e;
}

// The comparison's message without the expected value (a wrong solve() learns nothing it could answer with).
std::string sealed_summary(const CompareResult& c) {
  std::string coords;
  for (size_t i = 0; i < c.first_bad_coords.size(); ++i) coords += (i ? "," : "") + std::to_string(c.first_bad_coords[i]);
  std::string s = fmt::format("MISMATCH {}/{} elements; first bad index {} [{}]: got {:.6g}; max_abs={:.3g} rel_l2={:.3g}",
                              c.mismatches, c.numel, c.first_bad_index, coords, c.actual_at_first_bad, c.max_abs_err,
                              c.rel_l2_err);
  if (c.still_poisoned > 0) s += fmt::format("; {} elements never written (still poisoned)", c.still_poisoned);
  return s;
}

util::Json judge_request(std::map<std::string, SealedEntry>& entries, const util::Json& h,
                         std::vector<std::vector<unsigned char>>& blobs, int& judged,
                         std::vector<std::vector<unsigned char>>& reply_blobs) {
  const std::string op = h.value("op", std::string());
  if (op == "judge") ++judged;  // every judge request read, answered or refused (the client counts the same)
  const fs::path dir = h.value("golden", std::string());
  auto it = entries.find(dir.string());
  if (it == entries.end()) {
    auto e = load_sealed(dir);
    if (!e) return {{"error", e.error().message}};
    if (entries.size() >= 4) entries.clear();  // a worker serves a few golden data at a time
    it = entries.emplace(dir.string(), std::move(e).value()).first;
  }
  SealedEntry& e = it->second;
  if (op == "inputs") {
    util::Json names = util::Json::array();
    for (const auto& [name, spec] : e.golden.buffers) {
      if (spec.role == "output") continue;
      names.push_back(name);
      reply_blobs.push_back(e.tensors.at("in." + name).data);
    }
    return {{"names", names}};
  }
  if (op != "judge") return {{"error", "unknown request '" + op + "'"}};
  const Tolerance tol{h.value("atol", e.golden.tol.atol), h.value("rtol", e.golden.tol.rtol)};
  const auto names = h.value("names", std::vector<std::string>());
  if (names.size() != blobs.size()) return {{"error", "a judge request whose names and blobs disagree"}};
  util::Json outputs = util::Json::object();
  std::string status = "ok", message;
  for (const auto& [name, spec] : e.golden.buffers) {
    if (spec.role == "input") continue;
    auto pos = std::find(names.begin(), names.end(), name);
    if (pos == names.end()) return {{"error", "a judge request without output " + name}};
    const auto& got = blobs[static_cast<size_t>(pos - names.begin())];
    const auto& expected = e.tensors.at("out." + name);
    if (static_cast<int64_t>(got.size()) != spec.nbytes) return {{"error", "output " + name + " has the wrong size"}};
    CompareResult c = compare(spec.dtype, spec.shape, expected.data.data(), got.data(), expected.numel(), tol);
    c.expected_at_first_bad = 0;
    util::Json cj = to_json(c);
    cj.erase("expected_at_first_bad");
    cj["summary"] = c.ok ? c.summary() : sealed_summary(c);
    outputs[name] = cj;
    if (!c.ok && status == "ok") {
      status = c.still_poisoned > 0 && spec.role == "output" ? "unwritten_output" : "wrong_result";
      message = "output " + name + ": " + sealed_summary(c);
    }
  }
  return {{"status", status}, {"message", message}, {"outputs", outputs}, {"judged", judged}};
}

}  // namespace

int judge_main() {
  constexpr int fd = 3;
  // Not dumpable: another process of this user cannot read this one's memory (/proc/PID/mem, ptrace).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  std::map<std::string, SealedEntry> entries;
  int judged = 0;
  util::Json h;
  std::vector<std::vector<unsigned char>> blobs;
  while (receive_message(fd, h, blobs)) {
    std::vector<std::vector<unsigned char>> reply_blobs;
    util::Json reply = judge_request(entries, h, blobs, judged, reply_blobs);
    std::vector<const std::vector<unsigned char>*> ptrs;
    for (const auto& b : reply_blobs) ptrs.push_back(&b);
    if (!send_message(fd, reply, ptrs)) return 1;
  }
  return 0;
}

// ---- The measuring process's side ----------------------------------------------------------------------------------

Result<std::unique_ptr<JudgeClient>> JudgeClient::spawn(const std::string& kopt_exe) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return internal_error(std::string("socketpair for the judge: ") + std::strerror(errno));
  std::error_code ec;
  const std::string exe = kopt_exe.empty() ? fs::read_symlink("/proc/self/exe", ec).string() : kopt_exe;
  if (ec) {
    ::close(sv[0]);
    ::close(sv[1]);
    return internal_error("cannot find kopt's own executable for the judge: " + ec.message());
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);  // dup2 clears close-on-exec on the copy
  const char* argv[] = {exe.c_str(), "__judge", nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return internal_error(std::string("cannot start the judge: ") + std::strerror(rc));
  }
  return std::unique_ptr<JudgeClient>(new JudgeClient(sv[0], pid));
}

JudgeClient::~JudgeClient() {
  if (fd_ >= 0) ::close(fd_);  // the judge sees the end of its input and exits
  if (pid_ > 0) {
    int status = 0;
    for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(5000);
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
}

Result<util::Json> JudgeClient::exchange(const util::Json& header, const std::vector<const std::vector<unsigned char>*>& blobs,
                                         std::vector<std::vector<unsigned char>>* reply_blobs) {
  std::vector<std::vector<unsigned char>> got;
  util::Json reply;
  if (!send_message(fd_, header, blobs) || !receive_message(fd_, reply, got))
    return internal_error("the judge process (pid " + std::to_string(pid_) +
                          ") did not answer: it ended, or something else in this process used its socket");
  if (reply.contains("error")) return input_error("the judge: " + reply["error"].get<std::string>());
  if (reply_blobs) *reply_blobs = std::move(got);
  return reply;
}

Result<const JudgeClient::Inputs*> JudgeClient::inputs(const fs::path& golden_dir) {
  if (auto it = inputs_.find(golden_dir.string()); it != inputs_.end()) return &it->second;
  std::vector<std::vector<unsigned char>> blobs;
  KOPT_TRY_ASSIGN(util::Json r, exchange({{"op", "inputs"}, {"golden", golden_dir.string()}}, {}, &blobs));
  const auto names = r.value("names", std::vector<std::string>());
  if (names.size() != blobs.size()) return internal_error("the judge's inputs disagree with their names");
  Inputs out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = std::move(blobs[i]);
  if (inputs_.size() >= 4) inputs_.clear();  // a worker serves a few golden data at a time
  return &(inputs_[golden_dir.string()] = std::move(out));
}

Result<JudgeClient::Verdict> JudgeClient::judge(const fs::path& golden_dir, Tolerance tol,
                                                const std::map<std::string, std::vector<unsigned char>>& outputs) {
  util::Json names = util::Json::array();
  std::vector<const std::vector<unsigned char>*> blobs;
  for (const auto& [name, bytes] : outputs) {
    names.push_back(name);
    blobs.push_back(&bytes);
  }
  ++judged_;  // the judge counts every judge request it reads, answered or refused
  KOPT_TRY_ASSIGN(util::Json r, exchange({{"op", "judge"}, {"golden", golden_dir.string()}, {"atol", tol.atol},
                                          {"rtol", tol.rtol}, {"names", names}},
                                         blobs, nullptr));
  if (r.value("judged", -1) != judged_)
    return internal_error("the judge answered " + std::to_string(r.value("judged", -1)) + " comparisons where this process asked " +
                          std::to_string(judged_) + ": something else in this process consulted it");
  Verdict v;
  v.status = parse_status(r.value("status", std::string())).value_or(RunStatus::kInternal);
  v.message = r.value("message", std::string());
  v.outputs = r.value("outputs", util::Json::object());
  return v;
}

}  // namespace kopt::runner
