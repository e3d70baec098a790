#include "search/llm_generator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "search/annotations.h"
#include "search/builtin_generator.h"
#include "search/llm_testing.h"
#include "search/llm_usage.h"
#include "search/testing.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;
using util::Json;

// Checks as the loop would, without a GPU: a source marked BROKEN "does not compile", one marked WRONG
// "disagrees with the reference"; everything else passes. Records what it was asked.
class FakeChecker : public CandidateChecker {
 public:
  Result<CheckFeedback> check(const Candidate& c) override {
    checked.push_back(c.id);
    auto text = util::read_file(c.source);
    if (!text.ok()) return text.error();
    if (text->find("BROKEN") != std::string::npos)
      return CheckFeedback{CandidateStatus::kCompileFailed,
                           c.source.filename().string() + "(11): error: expected a \";\"\n1 error detected in the compilation"};
    if (text->find("WRONG") != std::string::npos)
      return CheckFeedback{CandidateStatus::kIncorrect,
                           "seed 1: y: 16777216 of 67108864 elements differ; first at [3]: expected 1.25, got -0.75"};
    return CheckFeedback{};
  }
  std::vector<std::string> checked;
};

class LlmGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!util::curl_client().ok()) GTEST_SKIP() << "libcurl is not loadable here";
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = fs::path(::testing::TempDir()) / ("kopt_llm_" + name);
    fs::remove_all(root_);
    dir_ = root_ / "iteration_1";
    fs::create_directories(dir_);
    baseline_ = testing_support::test_data_dir() + "/search/variants/saxpy/saxpy.cu";
    auto text = util::read_file(baseline_);
    ASSERT_TRUE(text.ok());
    auto a = parse_annotations(text.value(), baseline_.string());
    ASSERT_TRUE(a.ok());
    auto s = build_space(a.value(), testing::test_registry(), {});
    ASSERT_TRUE(s.ok());
    space_ = std::move(s).value();
    Candidate base = baseline_candidate(space_, testing::test_registry(), baseline_, text.value());
    base.id = "baseline";
    Measurement m{base, CandidateStatus::kOk, 0.231, 0};
    in_.registry = &testing::test_registry();
    in_.space = &space_;
    in_.baseline_source = baseline_;
    in_.iteration_dir = dir_;
    in_.k = 2;
    in_.plan.slots = {{Axis::kMemory, 2}, {Axis::kLatency, 1}};
    in_.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 70.81},
                   {"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", 2.0}};
    in_.champion = m;
    in_.history = {m};
    in_.context.dims = {{"n", 67108864}};
    opts_.model = "mock-coder";
    opts_.timeout_s = 10;
  }

  // The generator against `mock`, with waits between retries recorded instead of slept.
  std::unique_ptr<LlmGenerator> make(const testing::MockEndpoint& mock, ApiKey key = {}, RetryPolicy retry = {}) {
    opts_.url = mock.url();
    auto gen = std::make_unique<LlmGenerator>(opts_, key, *util::curl_client().value(), retry);
    gen->client().sleep = [this](double s) { waits_.push_back(s); };
    return gen;
  }
  Json usage() {
    auto j = util::read_json(dir_ / "llm_usage.json");
    EXPECT_TRUE(j.ok());
    return j.ok() ? *j : Json();
  }

  fs::path root_, dir_, baseline_;
  SearchSpace space_;
  GeneratorInput in_;
  LlmOptions opts_;
  std::vector<double> waits_;
};

TEST_F(LlmGeneratorTest, GoodCandidatesGoThroughTheManifestValidation) {
  testing::MockEndpoint mock("good.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  auto gen = make(mock);
  auto out = gen->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 2u);
  const Candidate& vec = out->candidates[0];
  EXPECT_EQ(vec.id, "i1x1");
  EXPECT_EQ(vec.origin, "external");
  EXPECT_EQ(vec.source, fs::canonical(dir_ / "llm" / "c1" / "a0" / "v1.cu"));
  EXPECT_EQ(vec.methods, std::vector<std::string>{"vectorized_access"});
  EXPECT_EQ(vec.defines.at("KOPT_VECTORIZED_ACCESS"), "1");
  EXPECT_EQ(vec.defines.at("THREADS"), "256");
  const Candidate& ldg = out->candidates[1];  // named by the line before its block
  EXPECT_EQ(ldg.source.filename(), "v2.cu");
  EXPECT_EQ(ldg.not_ablatable, std::vector<std::string>{"readonly_cache_ldg"});
  EXPECT_EQ(ldg.flags, (std::vector<std::string>{"-Xptxas", "-dlcm=cg"}));
  EXPECT_FALSE(out->selection.picks.empty());
  EXPECT_TRUE(out->checked_failures.empty());

  // The brief is the prompt: the same brief.md the external command gets, then the task.
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 2u);
  auto md = util::read_file(dir_ / "brief.md");
  ASSERT_TRUE(md.ok());
  for (const auto& r : reqs) {
    EXPECT_EQ(r["model"], "mock-coder");
    EXPECT_EQ(r["roles"], (Json{"system", "user"}));
    const std::string last = r["last_user"];
    EXPECT_EQ(last.rfind("# kopt brief: iteration 1", 0), 0u) << last.substr(0, 200);
    EXPECT_NE(last.find("### Vectorized global loads (`vectorized_access`"), std::string::npos);
  }
  // Every request and reply is recorded; the totals add up the scripted usage.
  for (const char* f : {"request.json", "call.json", "reply.md", "v1.cu"})
    EXPECT_TRUE(fs::exists(dir_ / "llm" / "c1" / "a0" / f)) << f;
  Json u = usage();
  EXPECT_EQ(u["meta"]["kind"], "llm_usage");
  EXPECT_EQ(u["totals"]["requests"], 2);
  EXPECT_EQ(u["totals"]["retries"], 0);
  EXPECT_EQ(u["totals"]["accepted"], 2);
  EXPECT_EQ(u["totals"]["prompt_tokens"], 3660);
  EXPECT_EQ(u["totals"]["completion_tokens"], 652);
  EXPECT_GT(u["totals"]["request_wall_s"].get<double>(), 0);
  EXPECT_EQ(u["endpoint"]["model"], "mock-coder");

  // The run's summary fragment reads it back.
  fs::create_directories(root_ / "run" / "iter_01");
  fs::copy_file(dir_ / "llm_usage.json", root_ / "run" / "iter_01" / "llm_usage.json");
  Json summary = llm_usage_summary(root_ / "run");
  EXPECT_EQ(summary["totals"]["requests"], 2);
  EXPECT_EQ(summary["iterations"][0]["iteration"], 1);
  std::string section = render_llm_usage_markdown(summary);
  EXPECT_NE(section.find("- requests: 2 (2 HTTP attempts, 0 retried), of which 0 repair requests"), std::string::npos) << section;
  EXPECT_NE(section.find("- tokens: 3660 in, 652 out"), std::string::npos) << section;
  EXPECT_TRUE(llm_usage_summary(root_ / "nowhere").is_null());

  // Measured candidates are not returned again.
  for (const auto& c : out->candidates) in_.history.push_back({c, CandidateStatus::kOk, 0.2, 1});
  fs::remove_all(dir_ / "llm");
  auto again = gen->generate(in_);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->candidates.empty());
}

TEST_F(LlmGeneratorTest, ABrokenCandidateIsRepairedWithTheCompilerErrors) {
  testing::MockEndpoint mock("repair.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  FakeChecker checker;
  in_.checker = &checker;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 1u);
  EXPECT_EQ(out->candidates[0].source, fs::canonical(dir_ / "llm" / "c1" / "a1" / "v1.cu"));
  EXPECT_EQ(checker.checked, (std::vector<std::string>{"i1llm1a0", "i1llm1a1"}));
  // The repair request carried the conversation and the compiler's errors.
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1]["roles"], (Json{"system", "user", "assistant", "user"}));
  const std::string repair = reqs[1]["last_user"];
  EXPECT_NE(repair.find("Your candidate `v1.cu` did not compile"), std::string::npos) << repair;
  EXPECT_NE(repair.find("error: expected a \";\""), std::string::npos) << repair;
  // Each attempt is recorded.
  auto first = util::read_json(dir_ / "llm" / "c1" / "a0" / "check.json");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["status"], "compile_failed");
  auto second = util::read_json(dir_ / "llm" / "c1" / "a1" / "check.json");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)["status"], "ok");
  Json t = usage()["totals"];
  EXPECT_EQ(t["requests"], 2);
  EXPECT_EQ(t["repair_requests"], 1);
  EXPECT_EQ(t["repaired"], 1);
  EXPECT_EQ(t["prompt_tokens"], 1830 + 2400);
}

TEST_F(LlmGeneratorTest, AWrongAnswerThatStaysWrongIsDroppedAndReportedForTheHistory) {
  testing::MockEndpoint mock("wrong_twice.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  opts_.repairs = 1;
  FakeChecker checker;
  in_.checker = &checker;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->candidates.empty());
  ASSERT_EQ(out->checked_failures.size(), 1u);
  EXPECT_EQ(out->checked_failures[0].status, CandidateStatus::kIncorrect);
  EXPECT_EQ(out->checked_failures[0].candidate.id, "i1llm1");
  EXPECT_EQ(out->checked_failures[0].iteration, 1);
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 2u);  // the first try and one repair: --llm-repairs 1
  EXPECT_NE(reqs[1]["last_user"].get<std::string>().find("first at [3]: expected 1.25, got -0.75"), std::string::npos);
  bool noted = false;
  for (const auto& n : out->notes) noted |= n.find("no passing candidate after 1 repair(s)") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(usage()["totals"]["failed"], 1);
}

TEST_F(LlmGeneratorTest, AReplyWithoutCodeIsARejectionSentBack) {
  testing::MockEndpoint mock("no_code.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  opts_.repairs = 1;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->candidates.empty());
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[1]["last_user"].get<std::string>().find("was rejected by kopt before compiling"), std::string::npos);
  EXPECT_NE(reqs[1]["last_user"].get<std::string>().find("the reply has no manifest block"), std::string::npos);
  auto check = util::read_json(dir_ / "llm" / "c1" / "a1" / "check.json");
  ASSERT_TRUE(check.ok());
  EXPECT_EQ((*check)["status"], "rejected");
  EXPECT_EQ(usage()["totals"]["no_candidate"], 1);
}

TEST_F(LlmGeneratorTest, MalformedAnswersAreRetriedAndAMalformedManifestIsRepaired) {
  testing::MockEndpoint mock("malformed_json.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 1u);
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 3u);  // the proxy page (retried), the bad manifest, its repair
  EXPECT_NE(reqs[2]["last_user"].get<std::string>().find("the manifest block (line"), std::string::npos);
  EXPECT_NE(reqs[2]["last_user"].get<std::string>().find("is not valid JSON"), std::string::npos);
  Json t = usage()["totals"];
  EXPECT_EQ(t["requests"], 2);
  EXPECT_EQ(t["http_attempts"], 3);
  EXPECT_EQ(t["repaired"], 1);
  ASSERT_EQ(waits_.size(), 1u);
}

TEST_F(LlmGeneratorTest, RateLimitsAndServerErrorsAreRetriedWithBackoff) {
  testing::MockEndpoint mock("rate_limit.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 1u);
  ASSERT_EQ(waits_.size(), 2u);
  EXPECT_EQ(waits_[0], 0);  // Retry-After: 0 honoured
  EXPECT_GE(waits_[1], 1.0);  // the second retry: 2 s with equal jitter, in [1, 2]
  EXPECT_LE(waits_[1], 2.0);
  auto call = util::read_json(dir_ / "llm" / "c1" / "a0" / "call.json");
  ASSERT_TRUE(call.ok());
  ASSERT_EQ((*call)["attempts"].size(), 3u);
  EXPECT_EQ((*call)["attempts"][0]["status"], 429);
  EXPECT_EQ((*call)["attempts"][1]["status"], 503);
  EXPECT_EQ((*call)["attempts"][2]["status"], 200);
  EXPECT_EQ(usage()["totals"]["retries"], 2);
}

TEST_F(LlmGeneratorTest, ATimedOutEndpointStopsTheIterationAndAResumeLosesNothing) {
  testing::MockEndpoint mock("timeout.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 1;
  opts_.timeout_s = 0.5;
  RetryPolicy two;
  two.max_attempts = 2;
  auto out = make(mock, {}, two)->generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kGate);
  EXPECT_NE(out.error().message.find("did not answer within --llm-timeout-s 0.5 s"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("gave up after 2 attempts; the run is resumable"), std::string::npos) << out.error().message;
  Json first = usage();
  EXPECT_EQ(first["totals"]["http_attempts"], 2);
  // The same iteration again (what --resume does): the endpoint answers now; the failed request stays counted.
  opts_.timeout_s = 10;
  auto again = make(mock)->generate(in_);
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(again->candidates.size(), 1u);
  Json t = usage()["totals"];
  EXPECT_EQ(t["requests"], 2);
  EXPECT_EQ(t["reused_requests"], 1);
  EXPECT_EQ(t["http_attempts"], 3);
  // And once more: the finished conversation is reused, not asked again.
  size_t asked = mock.requests().size();
  auto third = make(mock)->generate(in_);
  ASSERT_TRUE(third.ok()) << third.error().message;
  ASSERT_EQ(third->candidates.size(), 1u);
  EXPECT_EQ(mock.requests().size(), asked);
}

TEST_F(LlmGeneratorTest, AWrongKeyIsAnInputErrorThatNeverShowsTheKey) {
  testing::MockEndpoint mock("wrong_key.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  const std::string secret = "sk-test-SECRET-do-not-echo-4242";
  auto out = make(mock, ApiKey{"KOPT_LLM_API_KEY", secret})->generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("refused the key from $KOPT_LLM_API_KEY (HTTP 401): set KOPT_LLM_API_KEY to a valid key"),
            std::string::npos)
      << out.error().message;
  EXPECT_EQ(out.error().message.find(secret), std::string::npos);
  EXPECT_EQ(out.error().message.find("SECRET"), std::string::npos);
  EXPECT_TRUE(testing::files_containing(root_ / "iteration_1", "SECRET").empty());
  // The mock did receive it (and echoed it in its answer): kopt redacted it.
  auto reqs = mock.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_FALSE(reqs[0]["auth_ok"].get<bool>());

  // The right key works; an unknown model is named.
  auto good = make(mock, ApiKey{"KOPT_LLM_API_KEY", "sk-mock-right-key-0123456789"})->generate(in_);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->candidates.size(), 2u);
  opts_.model = "no-such-model";
  auto unknown = make(mock, ApiKey{"KOPT_LLM_API_KEY", "sk-mock-right-key-0123456789"})->generate(in_);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ExitCode::kInput);
  EXPECT_NE(unknown.error().message.find("does not serve the model 'no-such-model' (HTTP 404"), std::string::npos)
      << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("check --llm-model"), std::string::npos);
}

TEST_F(LlmGeneratorTest, ABadUrlIsNamed) {
  testing::MockEndpoint mock("good.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  // A wrong path on a live server: 404 without the model's name.
  opts_.url = mock.url().substr(0, mock.url().size() - 3) + "/api";
  LlmGenerator wrong_path(opts_, {}, *util::curl_client().value());
  auto out = wrong_path.generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("/api/chat/completions does not exist (HTTP 404): check --llm-url"), std::string::npos)
      << out.error().message;
  // Nothing listening: retried, then named.
  std::string dead = mock.url();
  mock.stop();
  opts_.url = dead;
  RetryPolicy two;
  two.max_attempts = 2;
  LlmGenerator refused(opts_, {}, *util::curl_client().value(), two);
  refused.client().sleep = [](double) {};
  out = refused.generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("cannot connect to " + dead + "/chat/completions"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("check --llm-url"), std::string::npos);
}

TEST_F(LlmGeneratorTest, ConversationsRunConcurrentlyWithinTheLimit) {
  testing::MockEndpoint mock("concurrency.json", root_);
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  in_.k = 4;
  opts_.concurrency = 2;
  opts_.repairs = 0;
  auto out = make(mock)->generate(in_);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->candidates.size(), 2u);
  auto reqs = mock.requests();
  ASSERT_EQ(reqs.size(), 4u);
  int most = 0;
  for (const auto& r : reqs) most = std::max(most, r["in_flight"].get<int>());
  EXPECT_EQ(most, 2);
  // Each conversation starts from a different method of the brief where there are several.
  auto brief = util::read_json(dir_ / "brief.json");
  ASSERT_TRUE(brief.ok());
  if ((*brief)["methods"].size() >= 2) {
    Json u = usage();
    EXPECT_NE(u["conversations"][0]["focus"], u["conversations"][1]["focus"]);
  }
}

TEST(LlmOptions, ValidationNamesTheOption) {
  LlmOptions o;
  auto expect = [&](const std::string& needle) {
    auto st = validate(o);
    ASSERT_FALSE(st.ok()) << needle;
    EXPECT_EQ(st.error().code, ExitCode::kInput);
    EXPECT_NE(st.error().message.find(needle), std::string::npos) << st.error().message;
  };
  expect("needs --llm-url");
  o.url = "127.0.0.1:8000/v1";
  expect("--llm-url: URL '127.0.0.1:8000/v1': no scheme");
  o.url = "ftp://host/v1";
  expect("scheme 'ftp' is not http or https");
  o.url = "http://127.0.0.1:8000/v1";
  expect("needs --llm-model");
  o.model = "m";
  o.temperature = 3;
  expect("--llm-temperature 3 must be within [0, 2]");
  o.temperature = 0;
  o.concurrency = 0;
  expect("--llm-concurrency must be >= 1");
  o.concurrency = 2;
  o.repairs = -1;
  expect("--llm-repairs must be >= 0");
  o.repairs = 0;
  EXPECT_TRUE(validate(o).ok());
  auto back = llm_options_from_json(to_json(o));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->url, o.url);
  EXPECT_EQ(back->concurrency, 2);
  EXPECT_EQ(back->repairs, 0);
}

TEST(LlmPrompts, TaskAndRepairSayHowToAnswer) {
  std::string task = llm_task_prompt("# kopt brief: iteration 3\n", 2, 4, "v2.cu", "vectorized_access", SourceLanguage::kCuda);
  EXPECT_EQ(task.rfind("# kopt brief: iteration 3", 0), 0u);
  EXPECT_NE(task.find("## Your task: candidate 2 of 4"), std::string::npos);
  EXPECT_NE(task.find("applies the method `vectorized_access` first"), std::string::npos);
  EXPECT_NE(task.find("opened with ```cuda file=v2.cu"), std::string::npos);
  EXPECT_NE(task.find("{\"candidates\": [{\"file\": \"v2.cu\""), std::string::npos);
  std::string repair = llm_repair_prompt("v2.cu", "did not compile", "v2.cu(3): error: x", SourceLanguage::kPython);
  EXPECT_NE(repair.find("Your candidate `v2.cu` did not compile:\n\n```\nv2.cu(3): error: x\n```"), std::string::npos);
  EXPECT_NE(repair.find("```python file=v2.cu"), std::string::npos);
  EXPECT_NE(llm_system_prompt(SourceLanguage::kPython).find("Triton"), std::string::npos);
}

}  // namespace
}  // namespace kopt::search
