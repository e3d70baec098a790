// `kopt llm-check` and `kopt optimize --generator llm` against a local mock endpoint: what the user sees on
// stderr and the exit code, with the key never echoed.
#include <gtest/gtest.h>

#include <filesystem>

#include "search/llm_testing.h"
#include "testing/test_support.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

const std::string kRightKey = "sk-mock-right-key-0123456789";
const std::string kWrongKey = "sk-test-WRONGSECRET-77";

class LlmCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!util::curl_client().ok()) GTEST_SKIP() << "libcurl is not loadable here";
    root_ = fs::path(::testing::TempDir()) / ("kopt_llm_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  util::ProcessResult kopt(std::vector<std::string> args, std::map<std::string, std::string> env) {
    args.insert(args.begin(), testing_support::kopt_binary());
    return util::run_process({args, root_.string(), env, 60});
  }
  fs::path root_;
};

TEST_F(LlmCliTest, CheckReportsTheModelAndTokens) {
  search::testing::MockEndpoint mock("wrong_key.json", root_ / "mock");
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  auto r = kopt({"llm-check", "--llm-url", mock.url(), "--llm-model", "mock-coder", "--llm-key-env", "MY_KEY"},
                {{"MY_KEY", kRightKey}});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("kopt llm-check: mock-coder at " + mock.url() + " answered \"ready\" in "), std::string::npos)
      << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("(1 HTTP attempt(s); tokens: 21 in, 1 out)"), std::string::npos) << r.stdout_text;
}

TEST_F(LlmCliTest, AWrongKeyExitsWith4AndIsNeverEchoed) {
  search::testing::MockEndpoint mock("wrong_key.json", root_ / "mock");
  ASSERT_TRUE(mock.ok()) << mock.server_output();
  auto r = kopt({"llm-check", "--llm-url", mock.url(), "--llm-model", "mock-coder"}, {{"KOPT_LLM_API_KEY", kWrongKey}});
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("refused the key from $KOPT_LLM_API_KEY (HTTP 401)"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("WRONGSECRET"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("WRONGSECRET"), std::string::npos);

  // kopt optimize checks the endpoint before any GPU work: exit 4, no run directory, the key nowhere.
  const std::string ex = testing_support::source_dir() + "/examples/vector_add/";
  r = kopt({"optimize", ex + "kernel.cu", "--ref", ex + "ref.py", "--n=1048576", "--out-dir", (root_ / "runs").string(),
            "--generator", "llm", "--llm-url", mock.url(), "--llm-model", "mock-coder"},
           {{"KOPT_LLM_API_KEY", kWrongKey}});
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("kopt optimize: "), std::string::npos);
  EXPECT_NE(r.stderr_text.find("set KOPT_LLM_API_KEY to a valid key"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("WRONGSECRET"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("WRONGSECRET"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "runs"));
  EXPECT_TRUE(search::testing::files_containing(root_, "WRONGSECRET").empty());
}

TEST_F(LlmCliTest, ConfigurationErrorsNameTheOptionBeforeAnyRequest) {
  auto r = kopt({"llm-check", "--llm-url", "localhost:8000/v1", "--llm-model", "m"}, {});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("--llm-url: URL 'localhost:8000/v1': no scheme"), std::string::npos) << r.stderr_text;
  r = kopt({"llm-check", "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--llm-key-env", "KOPT_TEST_UNSET_VARIABLE"}, {});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("the environment variable KOPT_TEST_UNSET_VARIABLE is not set"), std::string::npos) << r.stderr_text;
  const std::string ex = testing_support::source_dir() + "/examples/vector_add/";
  r = kopt({"optimize", ex + "kernel.cu", "--ref", ex + "ref.py", "--n=1048576", "--out-dir", (root_ / "runs").string(),
            "--generator", "llm", "--llm-model", "m"}, {});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("--generator llm needs --llm-url"), std::string::npos) << r.stderr_text;
  EXPECT_FALSE(fs::exists(root_ / "runs"));
}

}  // namespace
}  // namespace kopt::cli
