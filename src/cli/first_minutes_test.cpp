// The first five minutes of a new user, on a machine without a GPU (issue 20): every contract mistake is exit 4
// with a message naming what to fix, before any GPU is looked for; `kopt check` works without a GPU; --json -
// prints to stdout; `kopt help CMD`; CLI11's errors in kopt's voice. Runs the real kopt binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "cli/dims.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"
#include "util/strings.h"

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
  util::ProcessResult kopt(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), testing_support::kopt_binary());
    env.insert({{"CUDA_VISIBLE_DEVICES", ""}, {"KOPT_PROGRESS", "lines"}});
    util::ProcessSpec spec{args, dir_.string(), env, 120};
    return util::run_process(spec);
  }
  // bench and optimize, the two commands a new user tries first: both exit 4 naming `needle`, never "needs a GPU",
  // and optimize makes no run directory.
  void expect_contract_error(const std::vector<std::string>& args, const std::string& needle) {
    for (const char* cmd : {"bench", "optimize", "check"}) {
      std::vector<std::string> a = {cmd};
      a.insert(a.end(), args.begin(), args.end());
      a.insert(a.end(), {"--out-dir", path("out")});
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

// One contract check for every command (issue 37): `check` is as strict as `optimize` about annotations and --arch.
TEST_F(FirstMinutes, AnUnknownMethodOrArchitectureIsAContractErrorInEveryCommand) {
  write("m.cu", "// @kopt method vectorised_access guard=KOPT_VECTORISED_ACCESS\n"
                "#if KOPT_VECTORISED_ACCESS\n#endif\n"
                "extern \"C\" void solve(const float* a, const float* b, float* c, int n) {}\n");
  expect_contract_error({path("m.cu"), "--ref", path("ref.py"), "--n=16"},
                        "unknown method 'vectorised_access'; did you mean 'vectorized_access'?");
  expect_contract_error({path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--arch=sm_999"},
                        "--arch sm_999: not a GPU architecture nvcc 13 compiles for");
  auto ok = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--arch=sm_90a", "--static"});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
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

// Issue 37: at --n=2147483647 the CPU reference grew to 24 GB and was killed with nothing said. It now runs at scaled
// dims (every dim that sizes a buffer divided by one factor) and the report says which; where no scaling can shrink
// it (its buffers' sizes are constants), exit 4 naming the dims and --static. Bounded to 1 GB here.
TEST_F(FirstMinutes, CheckRunsALargeReferenceAtScaledDimsAndSaysWhich) {
  const std::map<std::string, std::string> one_gb = {{"KOPT_CHECK_MAX_GB", "1"}};
  auto big = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=2147483647", "--json", path("big.json")}, one_gb);
  ASSERT_EQ(big.exit_code, 0) << big.stderr_text;
  EXPECT_NE(big.stdout_text.find("reference  ran once on the CPU at scaled dims n=16777215 (the given dims need 24.0 GB; "
                                 "kopt check lets it use 1.0 GB"),
            std::string::npos)
      << big.stdout_text;
  auto j = util::read_json(dir_ / "big.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["harness"]["scaled_dims"]["n"], 16777215) << j->dump();
  write("fixed.py", "import numpy as np\nshapes = {'a': (1073741824,), 'b': (1073741824,), 'c': (1073741824,)}\n\n"
                    "def reference(*, a, b, c, n):\n    c[:] = a + b\n");
  auto fixed = kopt({"check", path("ok.cu"), "--ref", path("fixed.py"), "--n=16"}, one_gb);
  EXPECT_EQ(fixed.exit_code, 4) << fixed.stderr_text;
  for (const char* needle : {"needs more memory than kopt check lets it use", "--n=16", "no dimension sizes its buffers",
                             "--static"})
    EXPECT_NE(fixed.stderr_text.find(needle), std::string::npos) << needle << ": " << fixed.stderr_text;
  EXPECT_EQ(fixed.stderr_text.find("SIGKILL"), std::string::npos) << fixed.stderr_text;
}

// Where nvcc is, check compiles the kernel as bench would: a kernel that does not build is exit 4 with nvcc's log;
// --static skips the compile.
TEST_F(FirstMinutes, CheckCompilesTheKernelWhereNvccIs) {
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "nvcc not found";
  auto ok = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--json", path("ok.json")});
  ASSERT_EQ(ok.exit_code, 0) << ok.stderr_text;
  EXPECT_NE(ok.stdout_text.find("  compile    OK for sm_90"), std::string::npos) << ok.stdout_text;
  auto j = util::read_json(dir_ / "ok.json");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["compile"]["arch"], "sm_90") << (*j)["compile"].dump();
  write("broken.cu", "extern \"C\" void solve(const float* a, const float* b, float* c, int n) { this is not cuda; }\n");
  auto broken = kopt({"check", path("broken.cu"), "--ref", path("ref.py"), "--n=16"});
  EXPECT_EQ(broken.exit_code, 4) << broken.stderr_text;
  EXPECT_NE(broken.stderr_text.find("broken.cu does not compile"), std::string::npos) << broken.stderr_text;
  EXPECT_NE(broken.stderr_text.find("error"), std::string::npos) << "nvcc's log: " << broken.stderr_text;
  auto fixed_later = kopt({"check", path("broken.cu"), "--ref", path("ref.py"), "--n=16", "--static"});
  EXPECT_EQ(fixed_later.exit_code, 0) << "--static does not compile: " << fixed_later.stderr_text;
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
  EXPECT_NE(r.stdout_text.find("--measure-budget-s"), std::string::npos);
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

// Issue 37: a kernel whose solve() takes scalars named like kopt's options.
TEST_F(FirstMinutes, ADimensionNamedLikeAnOptionIsAmbiguousInEveryCommand) {
  write("it.cu", "extern \"C\" void solve(float* y, int n, int iterations) {}\n");
  write("it.py", "shapes = {'y': ('n',)}\n\ndef reference(*, y, n, iterations):\n    y[:] = iterations\n");
  for (const char* cmd : {"check", "bench", "profile", "roofline", "optimize"}) {
    auto r = kopt({cmd, path("it.cu"), "--ref", path("it.py"), "--n=16", "--iterations=3", "--out-dir", path("out")});
    EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("--iterations is ambiguous: it is solve()'s scalar parameter 'iterations'"),
              std::string::npos) << cmd << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("kopt optimize"), std::string::npos) << cmd << ": names the option's meaning: " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("--dim iterations=3"), std::string::npos) << cmd << ": " << r.stderr_text;
    EXPECT_FALSE(fs::exists(dir_ / "out" / "kopt_runs")) << cmd;
  }
  // --dim is the unambiguous form: the contract passes, and optimize's own --iterations keeps its meaning.
  auto ok = kopt({"check", path("it.cu"), "--ref", path("it.py"), "--n=16", "--dim", "iterations=3"});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  EXPECT_NE(ok.stdout_text.find("iterations=3"), std::string::npos) << ok.stdout_text;
  auto opt = kopt({"optimize", path("it.cu"), "--ref", path("it.py"), "--dim", "n=16", "--dim", "iterations=3",
                   "--iterations", "2", "--out-dir", path("out")});
  EXPECT_EQ(opt.exit_code, 3) << "past the contract, stopped at the hardware gate: " << opt.stderr_text;
  EXPECT_EQ(opt.stderr_text.find("ambiguous"), std::string::npos) << opt.stderr_text;
  // A scalar named seed: optimize has --seed, check has --seeds; neither is a "did you mean".
  write("seed.cu", "extern \"C\" void solve(float* y, int n, int seed) {}\n");
  write("seed.py", "shapes = {'y': ('n',)}\n\ndef reference(*, y, n, seed):\n    y[:] = seed\n");
  for (const char* cmd : {"check", "optimize"}) {
    auto r = kopt({cmd, path("seed.cu"), "--ref", path("seed.py"), "--n=16", "--seed=7"});
    EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("--seed is ambiguous"), std::string::npos) << cmd << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("--dim seed=7"), std::string::npos) << cmd << ": " << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("did you mean"), std::string::npos) << cmd << ": " << r.stderr_text;
  }
  EXPECT_EQ(kopt({"check", path("seed.cu"), "--ref", path("seed.py"), "--n=16", "--dim", "seed=7"}).exit_code, 0);
  // Help lists --dim.
  EXPECT_NE(kopt({"help", "check"}).stdout_text.find("--dim NAME=VALUE"), std::string::npos);
}

// The table of one-word options (cli/dims.h) holds every one-word option of the kernel commands' --help.
TEST_F(FirstMinutes, TheTableOfOptionWordsMatchesTheCommandsHelp) {
  const auto& words = kernel_command_words();
  for (const char* cmd : {"check", "bench", "profile", "roofline", "optimize"}) {
    // Each option line of CLI11's help starts with its names: "  -h,--help ...", "  --ref TEXT REQUIRED ...".
    for (const auto& line : util::split_lines(kopt({"help", cmd}).stdout_text)) {
      std::string t = util::trim(line);
      if (t.rfind("--", 0) != 0 && t.rfind("-h,", 0) != 0) continue;
      std::string names = t.substr(0, t.find(' '));
      for (auto& n : util::split(names, ',')) {
        std::string word = n.rfind("--", 0) == 0 ? n.substr(2) : "";
        if (word.empty() || !util::is_identifier(word)) continue;
        EXPECT_TRUE(words.count(word)) << "kopt " << cmd << " has --" << word << ", missing from kernel_command_words()";
      }
    }
  }
}

TEST_F(FirstMinutes, JsonDashGivesAnErrorObjectOnEveryFailure) {
  write("x.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
  fs::create_directories(dir_ / "folder.cu");
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {{"check", path("x.cu"), "--ref", path("ref.py"), "--n=16"}, 4},                 // the contract
      {{"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--seeds", "abc"}, 4},  // a parse error
      {{"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16"}, 3},                // no GPU
      {{"profile", path("ok.cu"), "--ref", path("ref.py"), "--n=16"}, 3},
      {{"roofline", path("ok.cu"), "--ref", path("ref.py"), "--n=16"}, 3},
      {{"optimize", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--out-dir", path("out")}, 3},
      {{"optimize", "--resume", path("nothing")}, 4},
      {{"methods", "--axis", "sideways"}, 4},
      {{"annotate", path("folder.cu")}, 4},
      {{"compare", path("no_run_a"), path("no_run_b")}, 4},
      {{"export", path("no_run")}, 4},
      {{"sass", path("folder.cu")}, 4},
  };
  for (const auto& [args, code] : cases) {
    auto a = args;
    a.insert(a.end(), {"--json", "-"});
    auto r = kopt(a);
    std::string what = args[0] + " " + args.back();
    EXPECT_EQ(r.exit_code, code) << what << ": " << r.stderr_text;
    util::Json j;
    try {
      j = util::Json::parse(r.stdout_text);
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": stdout is not one JSON document (" << e.what() << "): " << r.stdout_text;
      continue;
    }
    EXPECT_EQ(j["exit_code"], r.exit_code) << what;
    ASSERT_TRUE(j["error"].is_object()) << what << ": " << r.stdout_text;
    EXPECT_EQ(j["error"]["kind"], code == 4 ? "input" : "gate") << what;
    std::string message = j["error"]["message"];
    EXPECT_FALSE(message.empty()) << what;
    EXPECT_NE(r.stderr_text.find(message), std::string::npos) << what << ": the message is stderr's: " << message;
  }
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "kopt_runs")) << "optimize without a GPU leaves no run directory";
  // A command that wrote its document keeps stdout to it alone: doctor without a GPU fails its gate with its report.
  auto doctor = kopt({"doctor", "--no-counters", "--json", "-"});
  auto d = util::Json::parse(doctor.stdout_text);
  EXPECT_TRUE(d.contains("checks")) << doctor.stdout_text;
  EXPECT_FALSE(d.contains("error"));
}

TEST_F(FirstMinutes, FailuresNameWhatIsWrong) {
  fs::create_directories(dir_ / "folder.cu");
  // A directory given as the kernel is a directory, not "not found".
  auto folder = kopt({"check", path("folder.cu"), "--ref", path("ref.py"), "--n=16"});
  EXPECT_EQ(folder.exit_code, 4);
  EXPECT_NE(folder.stderr_text.find("kernel file " + path("folder.cu") + " is a directory"), std::string::npos)
      << folder.stderr_text;
  // annotate on a directory or a binary file: exit 4 with a message, not an empty derivation.
  auto ann_dir = kopt({"annotate", path("folder.cu")});
  EXPECT_EQ(ann_dir.exit_code, 4);
  EXPECT_NE(ann_dir.stderr_text.find("is a directory"), std::string::npos) << ann_dir.stderr_text;
  write("bin.cu", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0", 12));
  auto ann_bin = kopt({"annotate", path("bin.cu")});
  EXPECT_EQ(ann_bin.exit_code, 4);
  EXPECT_NE(ann_bin.stderr_text.find("is not a text file"), std::string::npos) << ann_bin.stderr_text;
  // An int32 scalar given a value it cannot hold: the dimension is named, not ref.py, and no --dims option.
  auto big = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=2147483648", "--static"});
  EXPECT_EQ(big.exit_code, 4) << big.stderr_text;
  EXPECT_NE(big.stderr_text.find("the dimension n=2147483648 does not fit solve()'s int32 parameter 'n'"), std::string::npos)
      << big.stderr_text;
  EXPECT_EQ(big.stderr_text.find("--dims"), std::string::npos) << big.stderr_text;
  EXPECT_EQ(big.stderr_text.find("ref.py"), std::string::npos) << big.stderr_text;
}

TEST_F(FirstMinutes, HelpShowsNoParserArtifacts) {
  for (const char* cmd : {"optimize", "check", "bench", "profile", "sass", "roofline", "doctor", "report", "export",
                          "compare", "methods", "annotate", "llm-check"}) {
    std::string help = kopt({"help", cmd}).stdout_text;
    ASSERT_FALSE(help.empty()) << cmd;
    for (const char* artifact : {"TEXT:", "INT:", "FLOAT:", ":{", " in [", "Excludes:", "Needs:"})
      EXPECT_EQ(help.find(artifact), std::string::npos) << "kopt " << cmd << " --help shows '" << artifact << "':\n" << help;
  }
  EXPECT_NE(kopt({"help", "bench"}).stdout_text.find("--l2 cold|warm"), std::string::npos);
}

TEST_F(FirstMinutes, RenamedOptionsKeepTheirOldNamesWithANote) {
  std::string help = kopt({"help", "optimize"}).stdout_text;
  for (const char* now : {"--search-seed", "--run-timeout-s", "--methods-per-iteration", "--methods-per-axis"})
    EXPECT_NE(help.find(now), std::string::npos) << now;
  for (const char* old : {"--seed ", "--timeout ", "--budget-total", "--budget-per-axis"})
    EXPECT_EQ(help.find(old), std::string::npos) << old << " is hidden from --help";
  // The old names still work, and say what they are now (past the parser: the hardware gate stops it here).
  auto r = kopt({"optimize", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--seed", "3", "--budget-total", "4",
                 "--timeout", "60", "--out", path("out")});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("note: --seed is deprecated: it is now --search-seed"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("note: --budget-total is deprecated: it is now --methods-per-iteration"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("note: --timeout is deprecated: it is now --run-timeout-s"), std::string::npos);
  auto now = kopt({"optimize", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--search-seed", "3", "--out-dir", path("out")});
  EXPECT_EQ(now.exit_code, 3) << now.stderr_text;
  EXPECT_EQ(now.stderr_text.find("deprecated"), std::string::npos) << now.stderr_text;
}

// The second review of the names as a set (issue 37 item 5): `--out` is a file everywhere (export, db export), the
// folder a run directory goes in is `--out-dir`; a time limit on one wait is `--…-timeout-s`, time to spend is a
// budget (`--measure-budget-s` per kernel, `--time-budget` for the search). Old names work, with one note each.
TEST_F(FirstMinutes, OptionNamesSayOneThingAndTheOldOnesStillWork) {
  for (const char* cmd : {"check", "bench", "profile", "roofline", "optimize"}) {
    std::string help = kopt({"help", cmd}).stdout_text;
    EXPECT_NE(help.find("--out-dir DIR"), std::string::npos) << cmd << ":\n" << help;
    EXPECT_EQ(help.find("--out "), std::string::npos) << cmd << " still shows --out in --help";
    EXPECT_EQ(help.find("--max-time-s"), std::string::npos) << cmd;
    EXPECT_EQ(help.find("--timeout "), std::string::npos) << cmd;
  }
  for (const char* cmd : {"bench", "roofline", "optimize"})
    EXPECT_NE(kopt({"help", cmd}).stdout_text.find("--measure-budget-s"), std::string::npos) << cmd;
  std::string triton_sass = kopt({"sass", testing_support::source_dir() + "/examples/triton_softmax/kernel.py", "--help"}).stdout_text;
  EXPECT_NE(triton_sass.find("--out-dir DIR"), std::string::npos) << triton_sass;
  EXPECT_NE(triton_sass.find("--compile-timeout-s"), std::string::npos) << triton_sass;
  EXPECT_NE(kopt({"help", "export"}).stdout_text.find("--out FILE|-"), std::string::npos);
  // The old spellings parse (the hardware gate stops bench here) and each prints its note once.
  auto r = kopt({"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--max-time-s", "2", "--out", path("out")});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  for (const char* note : {"note: --max-time-s is deprecated: it is now --measure-budget-s",
                           "note: --out is deprecated: it is now --out-dir"}) {
    auto at = r.stderr_text.find(note);
    EXPECT_NE(at, std::string::npos) << note << ": " << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find(note, at + 1), std::string::npos) << "printed twice: " << r.stderr_text;
  }
  auto now = kopt({"bench", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--measure-budget-s", "2", "--out-dir", path("out")});
  EXPECT_EQ(now.exit_code, 3) << now.stderr_text;
  EXPECT_EQ(now.stderr_text.find("deprecated"), std::string::npos) << now.stderr_text;
  auto check = kopt({"check", path("ok.cu"), "--ref", path("ref.py"), "--n=16", "--static", "--out", path("out")});
  EXPECT_EQ(check.exit_code, 0) << check.stderr_text;
  EXPECT_NE(check.stderr_text.find("note: --out is deprecated: it is now --out-dir"), std::string::npos) << check.stderr_text;
}

}  // namespace
}  // namespace kopt::cli
