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
#include <optional>
#include <random>
#include <span>

#include "contract/safetensors.h"
#include "runner/golden.h"
#include "runner/golden_store.h"
#include "runner/judge_wire.h"
#include "util/fs.h"
#include "util/memfd.h"

extern char** environ;

namespace kopt::runner {

namespace fs = std::filesystem;

// ---- The judge ---------------------------------------------------------------------------------------------------

namespace {

// What the judge and its client keep one golden data's sealed seed under: its identity (runner/golden_store.h), so
// that the same golden data under another folder (each `kopt bench` run's golden folder holds hard links to one cache
// entry) is read and sent once per process, not once per folder (0.4 s a request at 16M floats in a warm bench
// worker, H200 2026-12-04); its path where it cannot be read (the load then says what is wrong).
std::string sealed_cache_key(const fs::path& golden_dir) {
  std::string id = golden_identity(golden_dir);
  return id.empty() ? "path:" + golden_dir.lexically_normal().string() : id;
}

// The judge's record of one golden data: its manifest and the sealed seed's tensors.
struct SealedEntry {
  Golden golden;
  contract::TensorMap tensors;
};

// The golden data's sealed seed, or (`ephemeral` set) the ephemeral seed in its place, checked against its manifest.
Result<SealedEntry> load_sealed(const fs::path& golden_dir, const contract::TensorMap* ephemeral) {
  SealedEntry e;
  KOPT_TRY_ASSIGN(e.golden, load_golden(golden_dir));
  if (ephemeral) {
    e.tensors = *ephemeral;
  } else {
    auto token = sealed_token(e.golden.manifest);
    if (!token) return input_error("the golden data in " + golden_dir.string() + " has no sealed seed");
    KOPT_TRY_ASSIGN(e.tensors, contract::read_safetensors(sealed_seed_file(*token)));
  }
  const std::string which = ephemeral ? "the ephemeral seed" : "the sealed seed";
  for (const auto& [name, spec] : e.golden.buffers) {
    const char* prefix = spec.role == BufferRole::kOutput ? "out." : "in.";
    for (std::string key : {std::string(prefix) + name, spec.role == BufferRole::kInOut ? "out." + name : std::string()}) {
      if (key.empty()) continue;
      auto it = e.tensors.find(key);
      if (it == e.tensors.end() || static_cast<int64_t>(it->second.data.size()) != spec.nbytes)
        return input_error(which + " of " + golden_dir.string() + " lacks " + key + " of " + std::to_string(spec.nbytes) +
                           " bytes: " + (ephemeral ? "it was made for other golden data" : "make the golden data again"));
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

// What the judge keeps between requests.
struct JudgeState {
  std::map<std::string, SealedEntry> entries;
  int judged = 0;                    // judge requests read, answered or refused (the client counts the same)
  std::optional<SharedView> shared;  // the measuring process's buffer, once it passed one (runner/shared_buffer.h)
  // The judge's own copy of the output it compares: what is compared is one fixed set of bytes, whatever anyone does to
  // the shared buffer meanwhile. Kept between requests (no page faults on the next one).
  std::vector<unsigned char> copy;
  // The ephemeral seed (`__judge --ephemeral-fd`), served in the sealed seed's place; its error when unreadable.
  std::optional<contract::TensorMap> ephemeral;
  std::string ephemeral_error;
};

// The bytes of output `k` of a judge request: the k-th blob, or its range of the shared buffer copied into the
// judge's own memory.
Result<std::span<const unsigned char>> output_bytes(JudgeState& st, const util::Json& h,
                                                    std::vector<std::vector<unsigned char>>& blobs, size_t k, double& copy_ms) {
  if (!h.contains("shared")) return std::span<const unsigned char>(blobs[k]);
  if (!st.shared) return input_error("a request that names the shared buffer before passing it");
  const auto& sh = h["shared"];
  const auto offsets = sh.value("offsets", std::vector<uint64_t>()), sizes = sh.value("bytes", std::vector<uint64_t>());
  if (k >= offsets.size() || k >= sizes.size()) return input_error("a request whose names and shared ranges disagree");
  KOPT_TRY_ASSIGN(auto range, st.shared->range(offsets[k], sizes[k]));
  if (st.copy.size() < range.size()) st.copy.resize(range.size());
  const auto t0 = std::chrono::steady_clock::now();
  parallel_copy(st.copy.data(), range.data(), range.size());
  copy_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return std::span<const unsigned char>(st.copy.data(), range.size());
}

// The comparison of every output and in-out buffer with the sealed seed's expected outputs: figures and messages
// without any expected value.
util::Json judge_outputs(JudgeState& st, SealedEntry& e, const util::Json& h, std::vector<std::vector<unsigned char>>& blobs) {
  const Tolerance tol{h.value("atol", e.golden.tol.atol), h.value("rtol", e.golden.tol.rtol)};
  const auto names = h.value("names", std::vector<std::string>());
  if (!h.contains("shared") && names.size() != blobs.size()) return {{"error", "a judge request whose names and blobs disagree"}};
  util::Json outputs = util::Json::object();
  std::string status = "ok", message;
  double copy_ms = 0, compare_ms = 0;
  for (const auto& [name, spec] : e.golden.buffers) {
    if (spec.role == BufferRole::kInput) continue;
    auto pos = std::find(names.begin(), names.end(), name);
    if (pos == names.end()) return {{"error", "a judge request without output " + name}};
    auto got = output_bytes(st, h, blobs, static_cast<size_t>(pos - names.begin()), copy_ms);
    if (!got) return {{"error", got.error().message}};
    const auto& expected = e.tensors.at("out." + name);
    if (static_cast<int64_t>(got->size()) != spec.nbytes) return {{"error", "output " + name + " has the wrong size"}};
    const auto t0 = std::chrono::steady_clock::now();
    CompareResult c = compare(spec.dtype, spec.shape, expected.data.data(), got->data(), expected.numel(), tol);
    compare_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    c.expected_at_first_bad = 0;
    util::Json cj = to_json(c);
    cj.erase("expected_at_first_bad");
    cj["summary"] = c.ok ? c.summary() : sealed_summary(c);
    outputs[name] = cj;
    if (!c.ok && status == "ok") {
      status = c.still_poisoned > 0 && spec.role == BufferRole::kOutput ? "unwritten_output" : "wrong_result";
      message = "output " + name + ": " + sealed_summary(c);
    }
  }
  return {{"status", status},
          {"message", message},
          {"outputs", outputs},
          {"judged", st.judged},
          {"transport", h.contains("shared") ? "memfd" : "socket"},
          {"ms", {{"copy", copy_ms}, {"compare", compare_ms}}}};
}

// One request. `passed_fd`: a descriptor that came with it (taken here: mapped by a "map" request, else closed).
util::Json judge_request(JudgeState& st, const util::Json& h, std::vector<std::vector<unsigned char>>& blobs, int passed_fd,
                         std::vector<std::vector<unsigned char>>& reply_blobs) {
  const std::string op = h.value("op", std::string());
  if (op == "judge") ++st.judged;
  if (op == "map") {  // the measuring process's shared buffer, in place of the one before
    st.shared.reset();
    if (passed_fd < 0) return {{"error", "a map request without a descriptor"}};
    auto v = SharedView::map(passed_fd);
    if (!v) return {{"error", v.error().message}};
    st.shared = std::move(v).value();
    return {{"mapped", st.shared->size()}};
  }
  if (passed_fd >= 0) ::close(passed_fd);
  const fs::path dir = h.value("golden", std::string());
  const std::string key = sealed_cache_key(dir);
  auto it = st.entries.find(key);
  if (it == st.entries.end()) {
    if (!st.ephemeral_error.empty()) return {{"error", st.ephemeral_error}};
    auto e = load_sealed(dir, st.ephemeral ? &*st.ephemeral : nullptr);
    if (!e) return {{"error", e.error().message}};
    if (st.entries.size() >= 4) st.entries.clear();  // a worker serves a few golden data at a time
    it = st.entries.emplace(key, std::move(e).value()).first;
  }
  SealedEntry& e = it->second;
  if (op == "inputs") {
    util::Json names = util::Json::array();
    for (const auto& [name, spec] : e.golden.buffers) {
      if (spec.role == BufferRole::kOutput) continue;
      names.push_back(name);
      reply_blobs.push_back(e.tensors.at("in." + name).data);
    }
    return {{"names", names}};
  }
  if (op != "judge") return {{"error", "unknown request '" + op + "'"}};
  return judge_outputs(st, e, h, blobs);
}

}  // namespace

namespace {

// The ephemeral seed from its memfd (closed here): only a memfd sealed for good, so that its bytes are the ones the
// harness wrote and reading it can never fault.
Result<contract::TensorMap> read_ephemeral(int fd) {
  util::Fd owned(fd);
  KOPT_TRY_ASSIGN(const int seals, util::seals_of(fd));
  if ((seals & util::kFrozenSeals) != util::kFrozenSeals) return input_error("the ephemeral seed's memfd is not sealed for good");
  KOPT_TRY_ASSIGN(auto bytes, util::read_all_at(fd));
  return contract::parse_safetensors(bytes, "the ephemeral seed");
}

}  // namespace

std::string ephemeral_seed_unjudged(const util::Json& details) {
  if (details.is_object() && details.contains("seeds") && details["seeds"].is_array())
    for (const auto& s : details["seeds"])
      if (s.is_object() && s.value("seed", 0) == kEphemeralSeedId && s.value("ephemeral", false)) return {};
  std::string why = "the check run's result has no record of the ephemeral seed";
  if (details.is_object() && details.contains("answer_key") && details["answer_key"].is_object())
    if (const std::string r = details["answer_key"].value("reason", std::string()); !r.empty()) why += " (" + r + ")";
  return why;
}

int judge_main(int ephemeral_fd) {
  constexpr int fd = 3;
  // Not dumpable: another process of this user cannot read this one's memory (/proc/PID/mem, ptrace).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  JudgeState st;
  if (ephemeral_fd >= 0) {
    auto t = read_ephemeral(ephemeral_fd);
    if (t)
      st.ephemeral = std::move(t).value();
    else
      st.ephemeral_error = "the ephemeral seed: " + t.error().message;
  }
  util::Json h;
  std::vector<std::vector<unsigned char>> blobs;
  int passed_fd = -1;
  while (wire::receive_message(fd, h, blobs, &passed_fd)) {
    std::vector<std::vector<unsigned char>> reply_blobs;
    util::Json reply = judge_request(st, h, blobs, passed_fd, reply_blobs);
    std::vector<wire::Bytes> spans(reply_blobs.begin(), reply_blobs.end());
    if (!wire::send_message(fd, reply, spans)) return 1;
  }
  return 0;
}

// ---- The measuring process's side ----------------------------------------------------------------------------------

Result<std::unique_ptr<JudgeClient>> JudgeClient::spawn(const std::string& kopt_exe, int ephemeral_fd) {
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
  // Both descriptors first above the numbers they go to (dup2 onto 3 must not replace the other one), then dup2'd
  // there (dup2 clears close-on-exec on the copy).
  constexpr int kEphemeralFd = 4;
  util::Fd sock(::fcntl(sv[1], F_DUPFD_CLOEXEC, 10)), eph(ephemeral_fd >= 0 ? ::fcntl(ephemeral_fd, F_DUPFD_CLOEXEC, 10) : -1);
  ::close(sv[1]);
  if (!sock || (ephemeral_fd >= 0 && !eph)) {
    ::close(sv[0]);
    return internal_error(std::string("cannot pass the judge its descriptors: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sock.get(), 3);
  if (eph) posix_spawn_file_actions_adddup2(&fa, eph.get(), kEphemeralFd);
  const std::string ephemeral_arg = std::to_string(kEphemeralFd);
  const char* argv[] = {exe.c_str(), "__judge", ephemeral_fd >= 0 ? "--ephemeral-fd" : nullptr, ephemeral_arg.c_str(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
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

Result<util::Json> JudgeClient::exchange(const util::Json& header, const std::vector<wire::Bytes>& blobs,
                                         std::vector<std::vector<unsigned char>>* reply_blobs, int pass_fd) {
  std::vector<std::vector<unsigned char>> got;
  util::Json reply;
  if (!wire::send_message(fd_, header, blobs, pass_fd) || !wire::receive_message(fd_, reply, got))
    return internal_error("the judge process (pid " + std::to_string(pid_) +
                          ") did not answer: it ended, or something else in this process used its socket");
  if (reply.contains("error")) return input_error("the judge: " + reply["error"].get<std::string>());
  if (reply_blobs) *reply_blobs = std::move(got);
  return reply;
}

Result<const JudgeClient::Inputs*> JudgeClient::inputs(const fs::path& golden_dir) {
  const std::string key = sealed_cache_key(golden_dir);
  if (auto it = inputs_.find(key); it != inputs_.end()) return &it->second;
  std::vector<std::vector<unsigned char>> blobs;
  KOPT_TRY_ASSIGN(util::Json r, exchange({{"op", "inputs"}, {"golden", golden_dir.string()}}, {}, &blobs, -1));
  const auto names = r.value("names", std::vector<std::string>());
  if (names.size() != blobs.size()) return internal_error("the judge's inputs disagree with their names");
  Inputs out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = std::move(blobs[i]);
  if (inputs_.size() >= 4) inputs_.clear();  // a worker serves a few golden data at a time
  return &(inputs_[key] = std::move(out));
}

Result<JudgeClient::Verdict> JudgeClient::judge(const fs::path& golden_dir, Tolerance tol,
                                                const std::map<std::string, std::vector<unsigned char>>& outputs) {
  std::map<std::string, Bytes> spans;
  for (const auto& [name, bytes] : outputs) spans.emplace(name, bytes);
  return judge(golden_dir, tol, spans, nullptr);
}

Result<JudgeClient::Verdict> JudgeClient::judge(const fs::path& golden_dir, Tolerance tol,
                                                const std::map<std::string, Bytes>& outputs, const SharedBuffer* shared) {
  util::Json header = {{"op", "judge"}, {"golden", golden_dir.string()}, {"atol", tol.atol}, {"rtol", tol.rtol}};
  util::Json names = util::Json::array(), offsets = util::Json::array(), sizes = util::Json::array();
  bool in_shared = shared_ok_ && shared && shared->kind() == SharedBuffer::Kind::kMemfd;
  for (const auto& [name, bytes] : outputs) {
    names.push_back(name);
    in_shared = in_shared && shared->holds(bytes.data(), bytes.size());
    if (in_shared) {
      offsets.push_back(shared->offset_of(bytes.data()));
      sizes.push_back(bytes.size());
    }
  }
  header["names"] = names;
  // The buffer's descriptor goes once per buffer: the judge keeps its mapping until a new one comes.
  if (in_shared && shared->generation() != shared_generation_) {
    auto m = exchange({{"op", "map"}}, {}, nullptr, shared->fd());
    if (!m && m.error().code != ExitCode::kInput) return m.error();
    if (!m) {  // the judge refused it: this client sends outputs through the socket from now on
      shared_ok_ = false;
      shared_refusal_ = m.error().message;
      in_shared = false;
    } else {
      shared_generation_ = shared->generation();
    }
  }
  std::vector<Bytes> blobs;
  if (in_shared)
    header["shared"] = {{"offsets", offsets}, {"bytes", sizes}};
  else
    for (const auto& [name, bytes] : outputs) blobs.push_back(bytes);
  ++judged_;  // the judge counts every judge request it reads, answered or refused
  KOPT_TRY_ASSIGN(auto r, exchange(header, blobs, nullptr, -1));
  if (r.value("judged", -1) != judged_)
    return internal_error("the judge answered " + std::to_string(r.value("judged", -1)) + " comparisons where this process asked " +
                          std::to_string(judged_) + ": something else in this process consulted it");
  Verdict v;
  v.status = parse_status(r.value("status", std::string())).value_or(RunStatus::kInternal);
  v.message = r.value("message", std::string());
  v.outputs = r.value("outputs", util::Json::object());
  v.transport = r.value("transport", std::string("socket"));
  v.judge_ms = r.value("ms", util::Json::object());
  return v;
}

}  // namespace kopt::runner
