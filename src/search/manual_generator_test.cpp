#include "search/manual_generator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "search/annotations.h"
#include "search/builtin_generator.h"
#include "search/testing.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

class ManualGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("kopt_manual_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    dir_ = root_ / "iter_01";
    fs::create_directories(dir_);
    variants_ = testing_support::test_data_dir() + "/search/variants/saxpy";
    baseline_ = variants_ + "/saxpy.cu";
    auto text = util::read_file(baseline_);
    ASSERT_TRUE(text.ok());
    auto a = parse_annotations(text.value(), baseline_.string());
    ASSERT_TRUE(a.ok());
    auto s = build_space(a.value(), testing::test_registry(), {});
    ASSERT_TRUE(s.ok());
    space_ = std::move(s).value();
    Candidate base = baseline_candidate(space_, testing::test_registry(), baseline_, text.value());
    Measurement m{base, CandidateStatus::kOk, 0.231, 0};
    in_.registry = &testing::test_registry();
    in_.space = &space_;
    in_.baseline_source = baseline_;
    in_.iteration_dir = dir_;
    in_.k = 2;
    in_.champion = m;
    in_.history = {m};
  }
  // A writer process, as a person or an agent would be: waits for the brief, then runs `answer` in the directory.
  std::thread writer(const std::string& answer) {
    util::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "for i in $(seq 200); do [ -f brief.md ] && break; sleep 0.05; done; " + answer};
    spec.cwd = dir_.string();
    spec.timeout_s = 30;
    return std::thread([this, spec] { writer_result_ = util::run_process(spec); });
  }

  fs::path root_, dir_, baseline_;
  std::string variants_;
  SearchSpace space_;
  GeneratorInput in_;
  util::ProcessResult writer_result_;
  std::vector<std::string> said_;
};

TEST_F(ManualGeneratorTest, AWriterProcessAnswersTheBrief) {
  // The reference generator answers it: read $KOPT_BRIEF, copy the variants, write manifest.json last, atomically.
  const std::string script = testing_support::source_dir() + "/examples/generators/prepared_variants.py";
  auto w = writer("KOPT_BRIEF=$PWD/brief.json python3 " + util::shell_quote(script) + " --variants " +
                  util::shell_quote(variants_ + "/variants.json"));
  ManualOptions o;
  o.timeout_s = 30;
  o.poll_s = 0.05;
  ManualGenerator gen(o, [this](const std::string& s) { said_.push_back(s); });
  auto out = gen.generate(in_);
  w.join();
  ASSERT_TRUE(out.ok()) << out.error().message << "\n" << writer_result_.stderr_text;
  EXPECT_TRUE(writer_result_.success()) << writer_result_.describe() << writer_result_.stderr_text;
  ASSERT_EQ(out->candidates.size(), 2u);
  EXPECT_EQ(out->candidates[0].id, "i1x1");
  EXPECT_EQ(out->candidates[0].methods, std::vector<std::string>{"vectorized_access"});
  EXPECT_EQ(out->candidates[0].origin, "external");
  ASSERT_GE(said_.size(), 2u);
  EXPECT_NE(said_[0].find((fs::canonical(dir_) / "brief.md").string()), std::string::npos) << said_[0];
  EXPECT_NE(said_[0].find((fs::canonical(dir_) / "manifest.json").string()), std::string::npos);
  EXPECT_NE(said_[0].find("kopt waits 30 s"), std::string::npos);
  EXPECT_NE(said_.back().find("kopt: read "), std::string::npos);
}

TEST_F(ManualGeneratorTest, AnInvalidManifestIsMovedAsideAndACorrectedOneIsRead) {
  const std::string base = util::shell_quote(baseline_.string());
  auto w = writer("cp " + base + R"( a.cu && echo '{"candidates": [{"file": "a.cu", "methods": ["no_such_method"]}]}' > manifest.json;)" +
                  R"( for i in $(seq 200); do [ -f rejected_manifest.json ] && break; sleep 0.05; done;)" +
                  R"( echo '{"candidates": [{"file": "a.cu", "params": {"THREADS": 128}}]}' > m.tmp && mv m.tmp manifest.json)");
  ManualOptions o;
  o.timeout_s = 30;
  o.poll_s = 0.05;
  ManualGenerator gen(o, [this](const std::string& s) { said_.push_back(s); });
  auto out = gen.generate(in_);
  w.join();
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 1u);
  EXPECT_EQ(out->candidates[0].defines.at("THREADS"), "128");
  bool rejected = false;
  for (const auto& s : said_) rejected |= s.find("unknown method 'no_such_method'") != std::string::npos;
  EXPECT_TRUE(rejected);
  EXPECT_TRUE(fs::exists(dir_ / "rejected_manifest.json"));
}

TEST_F(ManualGeneratorTest, TimesOutWithAResumableError) {
  ManualOptions o;
  o.timeout_s = 0.3;
  o.poll_s = 0.05;
  ManualGenerator gen(o, [this](const std::string& s) { said_.push_back(s); });
  ASSERT_TRUE(util::write_file_atomic(dir_ / "manifest.json", "{\"stale\": true}").ok());
  auto out = gen.generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("no valid manifest.json in"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("after 0.3 s (--manual-timeout-s)"), std::string::npos);
  EXPECT_NE(out.error().message.find("kopt optimize --resume"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "manifest.json"));  // a stale manifest is never read
}

TEST_F(ManualGeneratorTest, CtrlCStopsTheWait) {
  util::install_interrupt_handler();
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGINT);
  });
  ManualOptions o;
  o.timeout_s = 30;
  o.poll_s = 0.05;
  ManualGenerator gen(o, [this](const std::string& s) { said_.push_back(s); });
  auto t0 = std::chrono::steady_clock::now();
  auto out = gen.generate(in_);
  ctrl_c.join();
  util::reset_interrupted_for_tests();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInterrupted);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

}  // namespace
}  // namespace kopt::search
