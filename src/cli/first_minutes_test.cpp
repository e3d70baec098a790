// The first five minutes of a new user, on a machine without a GPU (issue 20): every contract mistake is exit 4
// with a message naming what to fix, before any GPU is looked for; `kopt check` works without a GPU; --json -
// prints to stdout; `kopt help CMD`; CLI11's errors in kopt's voice. Runs the real kopt binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "testing/test_support.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

class FirstMinutes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("kopt-first-minutes-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("ok.cu", "extern \"C\" void solve(const float* a, const float* b, float* c, int n) {}\n");
    write("ref.py", "import numpy as np\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n\n"
                    "def reference(*, a, b, c, n):\n    c[:] = a + b\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(util::write_file_atomic(dir_ / name, text).ok());
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Runs kopt in dir_ (so a stray file named "-" would land there), with no GPU visible even where there is one.
  util::ProcessResult kopt(std::vector<std::string> args) {
    args.insert(args.begin(), testing_support::kopt_binary());
    util::ProcessSpec spec{args, dir_.string(), {{"CUDA_VISIBLE_DEVICES", ""}, {"KOPT_PROGRESS", "lines"}}, 120};
    return util::run_process(spec);
  }
  // bench and optimize, the two commands a new user tries first: both exit 4 naming `needle`, never "needs a GPU",
  // and optimize makes no run directory.
  void expect_contract_error(const std::vector<std::string>& args, const std::string& needle) {
    for (const char* cmd : {"bench", "optimize", "check"}) {
      std::vector<std::string> a = {cmd};
      a.insert(a.end(), args.begin(), args.end());
      a.insert(a.end(), {"--out", path("out")});
      auto r = kopt(a);
      EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.stderr_text;
      EXPECT_NE(r.stderr_text.find(needle), std::string::npos) << cmd << ": " << r.stderr_text;
      EXPECT_EQ(r.stderr_text.find("needs a GPU"), std::string::npos) << cmd << ": " << r.stderr_text;
      EXPECT_FALSE(fs::exists(dir_ / "out" / "kopt_runs")) << cmd << ": no run directory for a broken contract";
    }
  }
  fs::path dir_;
};

TEST_F(FirstMinutes, AKernelWithoutSolveIsAContractError) {
  write("x.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
  expect_contract_error({path("x.cu"), "--ref", path("ref.py"), "--n=16"}, "extern \"C\" void solve(...)");
}

TEST_F(FirstMinutes, ABadParameterTypeIsAContractError) {
  write("x.cu", "extern \"C\" void solve(const float* a, const float* b, float* c, std::string n) {}\n");
  expect_contract_error({path("x.cu"), "--ref", path("ref.py"), "--n=16"}, "parameter 'n' has type 'string'");
}

TEST_F(FirstMinutes, AWrongDimensionNameIsAContractError) {
  expect_contract_error({path("ok.cu"), "--ref", path("ref.py"), "--N=16"}, "give --n=N");
}

TEST_F(FirstMinutes, ARefWithASyntaxErrorIsAContractError) {
  write("bad.py", "def reference(:\n    pass\n");
  expect_contract_error({path("ok.cu"), "--ref", path("bad.py"), "--n=16"}, "SyntaxError");
}

TEST_F(FirstMinutes, CheckRunsTheReferenceOnTheCpu) {
  auto ok = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16"});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  EXPECT_NE(ok.stdout_text.find("contract OK"), std::string::npos) << ok.stdout_text;
  EXPECT_NE(ok.stdout_text.find("ran once on the CPU (numpy"), std::string::npos) << ok.stdout_text;
  // A shape error only shows when the reference runs: the static check passes, the CPU run does not.
  write("shape.py", "import numpy as np\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n\n"
                    "def reference(*, a, b, c, n):\n    c[:] = a[: n // 2] + b\n");
  auto shape = kopt({"check", path("ok.cu"), "--ref", path("shape.py"), "--n=16"});
  EXPECT_EQ(shape.exit_code, 4) << shape.stderr_text;
  EXPECT_NE(shape.stderr_text.find("could not be broadcast"), std::string::npos) << shape.stderr_text;
  EXPECT_EQ(kopt({"check", path("ok.cu"), "--ref", path("shape.py"), "--n=16", "--static"}).exit_code, 0);
  // A dimension nothing uses is a warning, not an error.
  auto extra = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--m=3"});
  EXPECT_EQ(extra.exit_code, 0) << extra.stderr_text;
  EXPECT_NE(extra.stdout_text.find("dimension --m is used by nothing"), std::string::npos) << extra.stdout_text;
}

TEST_F(FirstMinutes, JsonDashPrintsToStdoutAndWritesNoFileNamedDash) {
  auto r = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  auto j = util::Json::parse(r.stdout_text);  // stdout carries the document alone
  EXPECT_EQ(j["meta"]["kind"], "check");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_NE(r.stderr_text.find("contract OK"), std::string::npos) << "the report moves to stderr";
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  auto file = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--json", path("c.json")});
  ASSERT_EQ(file.exit_code, 0) << file.stderr_text;
  EXPECT_NE(file.stdout_text.find("contract OK"), std::string::npos);
  EXPECT_TRUE(util::read_json(dir_ / "c.json").ok());
  auto methods = kopt({"methods", "--json", "-"});
  ASSERT_EQ(methods.exit_code, 0) << methods.stderr_text;
  EXPECT_EQ(util::Json::parse(methods.stdout_text)["meta"]["kind"], "methods");
  auto csv = kopt({"methods", "--csv", "-"});
  ASSERT_EQ(csv.exit_code, 0) << csv.stderr_text;
  EXPECT_EQ(csv.stdout_text.rfind("id,name,axis,numerics,min_arch,backends,flag_method\r\n", 0), 0u) << csv.stdout_text;
  auto bare = kopt({"methods", "--json"});  // the old flag form names what it needs now
  EXPECT_EQ(bare.exit_code, 4);
  EXPECT_NE(bare.stderr_text.find("--json needs a value"), std::string::npos) << bare.stderr_text;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
}

TEST_F(FirstMinutes, MetaBlocksCarryTheVersionsDoctorFound) {
  auto r = kopt({"doctor", "--no-counters", "--json", "-"});
  auto j = util::Json::parse(r.stdout_text);
  std::string nvcc;
  for (const auto& c : j["checks"])
    if (c["name"] == "nvcc" && c["details"].contains("version")) nvcc = c["details"]["version"];
  EXPECT_EQ(j["meta"]["nvcc"], nvcc) << "the meta block says what the nvcc check found";
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc here";
  EXPECT_NE(r.stdout_text.find("\"nvcc\": \"" + nvcc + "\""), std::string::npos);
  auto sass = kopt({"sass", path("ok.cu"), "--json", "-", "--cache-dir", path("cache")});
  ASSERT_EQ(sass.exit_code, 0) << sass.stderr_text;
  EXPECT_EQ(util::Json::parse(sass.stdout_text)["meta"]["nvcc"], nvcc);
}

TEST_F(FirstMinutes, HelpCmdShowsThatCommandsHelp) {
  auto r = kopt({"help", "bench"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("Usage: kopt bench"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("--max-time-s"), std::string::npos);
  EXPECT_EQ(r.stdout_text.find("Commands:"), std::string::npos) << "not the top-level help";
  auto typo = kopt({"help", "bnech"});
  EXPECT_EQ(typo.exit_code, 4);
  EXPECT_NE(typo.stderr_text.find("Did you mean 'bench'?"), std::string::npos) << typo.stderr_text;
  // --help lists every option.
  EXPECT_NE(kopt({"--help"}).stdout_text.find("--version"), std::string::npos);
  EXPECT_NE(kopt({"optimize", "--help"}).stdout_text.find("--resume"), std::string::npos);
  auto roofline = kopt({"help", "roofline"}).stdout_text;
  for (const char* opt : {"--ceilings-only", "--gpu", "--quick", "--json FILE|-"})
    EXPECT_NE(roofline.find(opt), std::string::npos) << opt;
}

TEST_F(FirstMinutes, ParseErrorsSpeakKoptsVoice) {
  auto r = kopt({"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--seeds", "abc"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.stderr_text.find("kopt bench: --seeds 'abc' is not a whole number (e.g. --seeds 3)"), std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("Could not convert"), std::string::npos) << r.stderr_text;
  auto l2 = kopt({"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--l2", "hot"});
  EXPECT_EQ(l2.exit_code, 4);
  EXPECT_NE(l2.stderr_text.find("--l2 'hot' is not one of cold, warm"), std::string::npos) << l2.stderr_text;
  auto missing = kopt({"bench", path("ok.cu"), "--n=16"});
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_NE(missing.stderr_text.find("--ref is missing"), std::string::npos) << missing.stderr_text;
}

}  // namespace
}  // namespace kopt::cli
