// seal_away (runner/sealed.h): Landlock rules that keep the sealed seeds out of this process's reach.
#include "runner/sealed.h"

#include <fcntl.h>
#include <linux/prctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kopt::runner {

namespace fs = std::filesystem;

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
  attr.handled_access_fs = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir | kFsRemoveFile | kFsMakeChar |
                           kFsMakeDir | kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
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

}  // namespace kopt::runner
