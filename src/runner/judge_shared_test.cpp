// The judge reading outputs from the measuring process's shared buffer (runner/shared_buffer.h), against the socket.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "contract/safetensors.h"
#include "contract/sealed_seed.h"
#include "runner/sealed.h"
#include "runner/shared_buffer.h"
#include "testing/golden_fixture.h"
#include "testing/test_support.h"

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {

using Outputs = std::map<std::string, std::vector<unsigned char>>;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("kopt_judge_shm_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return fs::canonical(d);
}

// KOPT_CACHE_DIR (sealed_root() is beneath it) or KOPT_JUDGE_SHM for one test.
struct Env {
  Env(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~Env() { ::unsetenv(name_); }
  const char* name_;
};

// `outputs` written into `buf` (each at a page boundary, as the child lays them out); the spans the judge is given.
std::map<std::string, JudgeClient::Bytes> place(SharedBuffer& buf, const Outputs& outputs) {
  size_t total = 0;
  for (const auto& [name, bytes] : outputs) total += (bytes.size() + 4095) / 4096 * 4096;
  EXPECT_TRUE(buf.reserve(total).ok());
  std::map<std::string, JudgeClient::Bytes> spans;
  size_t offset = 0;
  for (const auto& [name, bytes] : outputs) {
    std::memcpy(buf.data() + offset, bytes.data(), bytes.size());
    spans.emplace(name, JudgeClient::Bytes(buf.data() + offset, bytes.size()));
    offset += (bytes.size() + 4095) / 4096 * 4096;
  }
  return spans;
}

// The sealed seed's expected outputs (what a test may know and a candidate may not).
Outputs expected_outputs(const std::string& token) {
  auto sealed = contract::read_safetensors(contract::sealed_seed_file(token));
  EXPECT_TRUE(sealed.ok());
  Outputs out;
  for (const auto& [key, t] : *sealed)
    if (key.rfind("out.", 0) == 0) out[key.substr(4)] = t.data;
  return out;
}

void set_float(std::vector<unsigned char>& bytes, size_t i, float v) { std::memcpy(bytes.data() + 4 * i, &v, 4); }

struct Judged {
  JudgeClient::Verdict shared, socket;
};

// The same outputs judged through the shared buffer and through the socket.
Judged judge_both(JudgeClient& judge, SharedBuffer& buf, const fs::path& golden, const Outputs& outputs) {
  Judged j;
  auto s = judge.judge(golden, {1e-5, 1e-5}, place(buf, outputs), &buf);
  EXPECT_TRUE(s.ok()) << s.error().message;
  auto k = judge.judge(golden, {1e-5, 1e-5}, outputs);
  EXPECT_TRUE(k.ok()) << k.error().message;
  if (s.ok()) j.shared = *s;
  if (k.ok()) j.socket = *k;
  EXPECT_EQ(j.shared.transport, "memfd");
  EXPECT_EQ(j.socket.transport, "socket");
  EXPECT_EQ(j.shared.status, j.socket.status);
  EXPECT_EQ(j.shared.message, j.socket.message);
  EXPECT_EQ(j.shared.outputs, j.socket.outputs) << "the same figures, whichever way the bytes came";
  return j;
}

}  // namespace

TEST(JudgeShared, RightWrongAndUnwrittenOutputsGetTheSameVerdictsAsThroughTheSocket) {
  const fs::path d = temp_dir("verdicts");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 3000, 2, token);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  SharedBuffer buf;
  ASSERT_EQ(buf.kind(), SharedBuffer::Kind::kMemfd) << buf.private_reason();
  Outputs out = expected_outputs(token);
  EXPECT_EQ(judge_both(**judge, buf, d / "golden", out).shared.status, RunStatus::kOk);

  set_float(out["c"], 2999, 777.f);
  auto wrong = judge_both(**judge, buf, d / "golden", out).shared;
  EXPECT_EQ(wrong.status, RunStatus::kWrongResult);
  EXPECT_NE(wrong.message.find("first bad index 2999"), std::string::npos) << wrong.message;
  EXPECT_EQ(wrong.outputs.dump().find("expected"), std::string::npos) << "no expected value in the reply";

  std::fill(out["c"].begin(), out["c"].begin() + 400, 0xFF);  // never written: the poison pattern
  EXPECT_EQ(judge_both(**judge, buf, d / "golden", out).shared.status, RunStatus::kUnwrittenOutput);

  auto short_output = place(buf, out);
  short_output["c"] = short_output["c"].first(8);
  EXPECT_FALSE((*judge)->judge(d / "golden", {1e-5, 1e-5}, short_output, &buf).ok()) << "outputs of the wrong size";
  EXPECT_TRUE((*judge)->judge(d / "golden", {1e-5, 1e-5}, place(buf, expected_outputs(token)), &buf).ok())
      << "the judge serves on after a refused request";
}

TEST(JudgeShared, InOutBuffersSeveralGoldenFoldersAndAGrowingBuffer) {
  const fs::path d = temp_dir("inout");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string small = contract::new_sealed_token(), large = contract::new_sealed_token(),
                    inout = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "small", 100, 1, small);
  testing_support::make_vadd_golden(d / "large", 1 << 20, 1, large);  // 4 MiB: beyond the first buffer's 2 MiB
  testing_support::make_inout_golden(d / "inout", 5000, inout);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  SharedBuffer buf;
  EXPECT_EQ(judge_both(**judge, buf, d / "small", expected_outputs(small)).shared.status, RunStatus::kOk);
  const uint64_t first = buf.generation();
  Outputs io = expected_outputs(inout);
  ASSERT_EQ(io.size(), 2u) << "the in-out buffer x and the output c";
  EXPECT_EQ(judge_both(**judge, buf, d / "inout", io).shared.status, RunStatus::kOk);
  set_float(io["x"], 17, 1e6f);
  auto wrong_x = judge_both(**judge, buf, d / "inout", io).shared;
  EXPECT_EQ(wrong_x.status, RunStatus::kWrongResult);
  EXPECT_NE(wrong_x.message.find("output x"), std::string::npos) << wrong_x.message;
  io = expected_outputs(inout);
  std::fill(io["x"].begin(), io["x"].end(), 0xFF);
  EXPECT_EQ(judge_both(**judge, buf, d / "inout", io).shared.status, RunStatus::kWrongResult)
      << "an in-out buffer left at the poison is wrong, not unwritten: it had a value before the call";
  EXPECT_EQ(buf.generation(), first);
  EXPECT_EQ(judge_both(**judge, buf, d / "large", expected_outputs(large)).shared.status, RunStatus::kOk);
  EXPECT_NE(buf.generation(), first) << "the buffer grew: a new one, passed to the judge again";
  EXPECT_EQ(judge_both(**judge, buf, d / "small", expected_outputs(small)).shared.status, RunStatus::kOk);
  Outputs wrong_large = expected_outputs(large);
  set_float(wrong_large["c"], (1 << 20) - 1, -5.f);
  EXPECT_EQ(judge_both(**judge, buf, d / "large", wrong_large).shared.status, RunStatus::kWrongResult);
}

// A candidate runs in the measuring process and can write the shared buffer while the judge reads it. The judge
// compares its own copy, and a pass needs every element it compares within tolerance of an expected value the
// candidate cannot read: rewriting wrong outputs, however timed, never turns them into a pass. The judge never writes
// the buffer: nothing of the expected outputs appears there.
TEST(JudgeShared, AWriterChangingTheBufferWhileTheJudgeReadsItCannotPassWrongOutputs) {
  const fs::path d = temp_dir("hostile");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string token = contract::new_sealed_token();
  const int n = 1 << 21;  // 8 MiB: the judge's copy and compare take long enough for writes to land during them
  testing_support::make_vadd_golden(d / "golden", n, 1, token);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok()) << judge.error().message;
  auto inputs = (*judge)->inputs(d / "golden");
  ASSERT_TRUE(inputs.ok());
  SharedBuffer buf;
  Outputs wrong = {{"c", (*inputs)->at("a")}};  // a plausible wrong answer: an input
  auto spans = place(buf, wrong);
  unsigned char* c = buf.data() + buf.offset_of(spans["c"].data());
  const size_t bytes = spans["c"].size();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> writes{0};
  std::thread hostile([&] {
    std::mt19937 rng(1);
    const auto& a = (*inputs)->at("a");
    const auto& b = (*inputs)->at("b");
    for (int pattern = 0; !stop; ++pattern) {
      const size_t at = rng() % (bytes / 4096) * 4096;
      if (pattern % 4 == 0)
        std::memset(c + at, 0xFF, 4096);  // the poison
      else if (pattern % 4 == 1)
        std::memcpy(c + at, b.data() + at, 4096);  // the other input
      else if (pattern % 4 == 2)
        std::memset(c, 0, bytes);
      else
        std::memcpy(c, a.data(), bytes);
      ++writes;
    }
  });
  int passes = 0, errors = 0;
  for (int i = 0; i < 12; ++i) {
    auto v = (*judge)->judge(d / "golden", {1e-5, 1e-5}, spans, &buf);
    if (!v)
      ++errors;
    else
      passes += v->status == RunStatus::kOk;
  }
  stop = true;
  hostile.join();
  EXPECT_EQ(passes, 0);
  EXPECT_EQ(errors, 0);
  EXPECT_GT(writes.load(), 12);
  // Nothing of the expected outputs reached the buffer (the judge maps it read-only and copies out of it).
  const Outputs expected = expected_outputs(token);
  size_t matches = 0;
  for (size_t i = 0; i + 4 <= bytes; i += 4) matches += std::memcmp(c + i, expected.at("c").data() + i, 4) == 0;
  EXPECT_LT(matches, 64u) << "expected values found in the shared buffer";
}

TEST(JudgeShared, WithoutMemfdTheOutputsGoThroughTheSocket) {
  const fs::path d = temp_dir("fallback");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 1000, 1, token);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok());
  Env off("KOPT_JUDGE_SHM", "off");
  SharedBuffer buf;
  ASSERT_EQ(buf.kind(), SharedBuffer::Kind::kPrivate);
  Outputs out = expected_outputs(token);
  auto right = (*judge)->judge(d / "golden", {1e-5, 1e-5}, place(buf, out), &buf);
  ASSERT_TRUE(right.ok()) << right.error().message;
  EXPECT_EQ(right->status, RunStatus::kOk);
  EXPECT_EQ(right->transport, "socket");
  set_float(out["c"], 5, 3.f);
  auto wrong = (*judge)->judge(d / "golden", {1e-5, 1e-5}, place(buf, out), &buf);
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, RunStatus::kWrongResult);
  EXPECT_EQ((*judge)->shared_refusal(), "");
}

// The measuring process seals itself (Landlock) after it starts the judge; a memfd is not a path, so the sealed
// process still makes shared buffers (growing ones too), passes them and is judged through them.
TEST(JudgeShared, ASealedProcessStillExchangesThroughTheSharedBuffer) {
  const fs::path d = temp_dir("sealed");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string small = contract::new_sealed_token(), large = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "small", 256, 1, small);
  testing_support::make_vadd_golden(d / "large", 1 << 20, 1, large);
  const Outputs right_small = expected_outputs(small), right_large = expected_outputs(large);
  pid_t pid = ::fork();
  if (pid == 0) {
    auto judge = JudgeClient::spawn(testing_support::kopt_binary());
    if (!judge) ::_exit(100);
    SealState s = seal_away(sealed_root());
    if (!s.sealed) ::_exit(101);  // Landlock missing: the parent skips
    int bad = 0;
    if (std::ifstream(contract::sealed_seed_file(small)).good()) bad |= 1;
    SharedBuffer buf;
    auto ok = [&](const fs::path& g, const Outputs& out) {
      auto v = (*judge)->judge(g, {1e-5, 1e-5}, place(buf, out), &buf);
      return v.ok() && v->status == RunStatus::kOk && v->transport == "memfd";
    };
    if (!ok(d / "small", right_small)) bad |= 2;
    if (!ok(d / "large", right_large)) bad |= 4;  // a new memfd made after the seal
    Outputs wrong = right_small;
    set_float(wrong["c"], 3, 9.f);
    auto v = (*judge)->judge(d / "small", {1e-5, 1e-5}, place(buf, wrong), &buf);
    if (!v.ok() || v->status != RunStatus::kWrongResult) bad |= 8;
    ::_exit(bad);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 101) GTEST_SKIP() << "Landlock is not available on this kernel";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 the sealed seed readable, 2 small not judged ok through the memfd, "
                                       "4 large (a grown buffer) not, 8 wrong outputs not wrong; 100 no judge";
}

// Not a check: what the judge costs at 16M floats (64 MiB), each way. Run with --gtest_also_run_disabled_tests.
TEST(JudgeShared, DISABLED_CostAt16MFloats) {
  const fs::path d = temp_dir("cost");
  Env cache("KOPT_CACHE_DIR", (d / "cache").string());
  const std::string token = contract::new_sealed_token();
  testing_support::make_vadd_golden(d / "golden", 1 << 24, 1, token);
  auto judge = JudgeClient::spawn(testing_support::kopt_binary());
  ASSERT_TRUE(judge.ok());
  SharedBuffer buf;
  const Outputs out = expected_outputs(token);
  auto spans = place(buf, out);
  for (int i = 0; i < 4; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto s = (*judge)->judge(d / "golden", {1e-5, 1e-5}, spans, &buf);
    auto t1 = std::chrono::steady_clock::now();
    auto k = (*judge)->judge(d / "golden", {1e-5, 1e-5}, out);
    auto t2 = std::chrono::steady_clock::now();
    ASSERT_TRUE(s.ok() && k.ok());
    std::printf("judge 64 MiB: memfd %.1f ms (judge %s), socket %.1f ms (judge %s)\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count(), s->judge_ms.dump().c_str(),
                std::chrono::duration<double, std::milli>(t2 - t1).count(), k->judge_ms.dump().c_str());
  }
}

}  // namespace kopt::runner
