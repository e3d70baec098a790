#include "profile/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "profile/report.h"
#include "profile/test_data.h"
#include "util/fs.h"
#include "util/json_io.h"

namespace kopt::profile {

namespace fs = std::filesystem;

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
std::vector<std::string> sections_of(const std::vector<std::string>& cmd) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == "--section") out.push_back(cmd[i + 1]);
  return out;
}

// Records every command and answers with real captured ncu output.
class FakeNcu : public util::CommandRunner {
 public:
  std::vector<util::ProcessSpec> calls;
  // Returns a replacement result for a profiling run (by its 0-based index among profiling runs), or nullopt.
  std::function<std::optional<util::ProcessResult>(int)> on_profile;
  std::string raw_page = testing::ncu_capture("ncu_raw.csv");
  std::string details_csv = testing::assembled("details_saxpy.csv");
  bool print_raw = false;     // a profiling run prints the raw page it was asked for (--page raw), as ncu can
  bool write_report = false;  // a profiling run writes its -o report (an empty file)

  util::ProcessResult run(const util::ProcessSpec& spec) override {
    calls.push_back(spec);
    const auto& a = spec.argv;
    util::ProcessResult r;
    r.started = true;
    r.exit_code = 0;
    r.wall_ms = 10;
    if (contains(a, "--version")) {
      r.stdout_text = testing::ncu_capture("ncu_version.txt");
    } else if (contains(a, "--query-metrics")) {
      r.stdout_text = testing::ncu_capture("gh100_tensor_and_stall_metric_bases.txt");
    } else if (contains(a, "--import")) {
      if (contains(a, "raw")) r.stdout_text = raw_page;
      else if (contains(a, "--csv")) r.stdout_text = details_csv;
      else r.stdout_text = testing::ncu_capture("ncu_details.txt");
    } else {
      int index = profile_runs++;
      r.stdout_text = "==PROF== Connected to process 696 (/tmp/k)\n==PROF== Disconnected from process 696\n";
      if (print_raw && contains(a, "raw")) r.stdout_text += raw_page;
      if (write_report)
        if (auto o = std::find(a.begin(), a.end(), "-o"); o != a.end() && o + 1 != a.end()) (void)util::write_file_atomic(*(o + 1) + ".ncu-rep", "");
      if (on_profile) {
        if (auto replaced = on_profile(index)) return *replaced;
      }
    }
    return r;
  }
  std::vector<std::vector<std::string>> profile_commands() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls)
      if (contains(c.argv, "--profile-from-start")) out.push_back(c.argv);
    return out;
  }
  int profile_runs = 0;
  int imports(const std::string& page) const {
    int n = 0;
    for (const auto& c : calls) n += contains(c.argv, "--import") && contains(c.argv, page);
    return n;
  }
};

// A profiling run ncu could not do.
util::ProcessResult failed_run() {
  util::ProcessResult failed;
  failed.started = true;
  failed.exit_code = 1;
  failed.stdout_text = "==ERROR== Failed to profile kernel\n";
  return failed;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

ProfileRequest request(const fs::path& dir) {
  ProfileRequest req;
  req.target_argv = {"/usr/bin/kopt", "__runner", "--lib", "k.so", "--golden", "g", "--mode", "profile"};
  req.out_dir = dir;
  req.name = "baseline";
  req.ncu_path = "/usr/local/cuda/bin/ncu";
  req.chip = "gh100";
  return req;
}

class ProfileCall : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kopt_profile_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

// Issue 36: what ncu says about itself and the chip, known to the caller (the lab keeps both), is not asked again, and
// the profile is the same.
TEST_F(ProfileCall, TheVersionAndTheChipsMetricsKnownAlreadyAreNotAskedAgain) {
  FakeNcu asked, told;
  ProfilePlan plan_asked, plan_told;
  auto a = profile_call(request(dir_ / "asked"), plan_asked, asked, 3);
  ProfileRequest req = request(dir_ / "told");
  req.ncu_version_text = testing::ncu_capture("ncu_version.txt");
  req.query_metrics_text = testing::ncu_capture("gh100_tensor_and_stall_metric_bases.txt");
  auto t = profile_call(req, plan_told, told, 3);
  ASSERT_TRUE(a && t) << (a ? t.error().message : a.error().message);
  for (const auto& c : told.calls) {
    EXPECT_FALSE(contains(c.argv, "--version")) << "the version was given";
    EXPECT_FALSE(contains(c.argv, "--query-metrics")) << "the chip's metrics were given";
  }
  EXPECT_EQ(asked.calls.size(), told.calls.size() + 2);
  EXPECT_EQ(t->ncu_version, a->ncu_version);
  EXPECT_EQ(to_json(plan_told).dump(), to_json(plan_asked).dump()) << "the same plan, the same unavailable metrics";
  // Text that is not ncu's (a stale or foreign cache): asked after all.
  FakeNcu again;
  ProfilePlan plan_again;
  req.ncu_version_text = "not a version";
  req.query_metrics_text = "";
  ASSERT_TRUE(profile_call(req, plan_again, again, 3));
  EXPECT_EQ(again.calls.front().argv, (std::vector<std::string>{"/usr/local/cuda/bin/ncu", "--version"}));
}

TEST_F(ProfileCall, AdaptiveFirstCallThenFixedPlan) {
  FakeNcu ncu;
  ProfilePlan plan;
  auto r = profile_call(request(dir_), plan, ncu, 3);
  ASSERT_TRUE(r) << r.error().message;

  auto profiles = ncu.profile_commands();
  ASSERT_EQ(profiles.size(), 2u);  // pass 1, pass 2
  EXPECT_EQ(sections_of(profiles[0]), (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy"}));
  // saxpy: memory SOL 70.81 % binds, so pass 2 adds the memory sections.
  EXPECT_EQ(sections_of(profiles[1]),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "MemoryWorkloadAnalysis",
                                      "MemoryWorkloadAnalysis_Tables", "MemoryWorkloadAnalysis_Chart"}));
  for (const auto& cmd : profiles) {
    EXPECT_TRUE(contains(cmd, "--profile-from-start"));
    EXPECT_EQ(*(std::find(cmd.begin(), cmd.end(), "--profile-from-start") + 1), "off");
    EXPECT_EQ(*(std::find(cmd.begin(), cmd.end(), "--clock-control") + 1), "none");
    EXPECT_EQ(cmd.back(), "profile");  // the runner's argv ends the command
  }
  EXPECT_TRUE(contains(profiles[0], (dir_ / "baseline_pass1").string()));
  EXPECT_TRUE(contains(profiles[1], (dir_ / "baseline").string()));
  // The gh100 listing has none of the memory registry metrics: no --metrics, and each is reported missing.
  EXPECT_FALSE(contains(profiles[1], "--metrics"));
  EXPECT_EQ(ncu.calls.front().argv, (std::vector<std::string>{"/usr/local/cuda/bin/ncu", "--version"}));

  EXPECT_TRUE(plan.fixed);
  EXPECT_EQ(plan.axes, std::vector<Axis>{Axis::kMemory});
  EXPECT_EQ(plan.level, PlanLevel::kFull);
  EXPECT_EQ(plan.sections, sections_of(profiles[1]));
  EXPECT_TRUE(contains(plan.unavailable, "lts__t_sector_hit_rate.pct"));
  EXPECT_FALSE(contains(plan.unavailable, "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"));

  const ProfileResult& res = *r;
  EXPECT_EQ(res.ncu_version, "2025.3.1.0");
  EXPECT_EQ(res.report_path, dir_ / "baseline.ncu-rep");
  EXPECT_EQ(res.cache_control, "all");
  ASSERT_EQ(res.kernels.size(), 1u);
  EXPECT_EQ(res.kernels[0].duration_ns, 230912.0);
  EXPECT_EQ(res.kernels[0].rules.size(), 4u);  // from the details CSV
  EXPECT_EQ(res.classification.binding, std::vector<Axis>{Axis::kMemory});
  ASSERT_EQ(res.top_for(Axis::kMemory).size(), 3u);
  EXPECT_EQ(res.top_for(Axis::kLatency)[0].spec->name,
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio");
  ASSERT_EQ(res.top_for(Axis::kLatency)[0].rules.size(), 1u);
  EXPECT_EQ(res.top_for(Axis::kLatency)[0].rules[0].speedup_pct, 85.36);
  EXPECT_DOUBLE_EQ(res.profiling_wall_ms, 10.0 * ncu.calls.size());
  bool query_missing = false, report_missing = false;
  for (const auto& m : res.missing) {
    if (m.name == "lts__t_sector_hit_rate.pct") query_missing = m.where == "query-metrics";
    if (m.name == "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum" && m.where == "report")
      report_missing = true;
  }
  EXPECT_TRUE(query_missing);
  EXPECT_FALSE(report_missing);  // already listed as missing on the chip, not listed twice

  // Outputs: the metrics JSON (with its meta block) and the summary.
  auto j = util::read_json(res.json_path);
  ASSERT_TRUE(j) << j.error().message;
  EXPECT_EQ((*j)["meta"]["kind"], "profile");
  EXPECT_EQ((*j)["kernels"][0]["name"], "saxpy(int, float, const float *, float *)");
  EXPECT_TRUE((*j)["kernels"][0]["metrics"]["derived__local_spilling_requests_pct"]["value"].is_null());
  EXPECT_EQ((*j)["kernels"][0]["metrics"]["derived__local_spilling_requests_pct"]["text"], "no data");
  EXPECT_EQ((*j)["plan"]["sections"].size(), 6u);
  EXPECT_EQ((*j)["top_metrics"]["memory"].size(), 3u);
  EXPECT_EQ((*j)["aggregate"]["total_duration_ns"], 230912.0);
  EXPECT_TRUE(fs::exists(res.summary_path));

  // Second call of the run: exactly the fixed sections, one profiling run, no new query.
  FakeNcu again;
  ProfilePlan before = plan;
  auto r2 = profile_call(request(dir_), plan, again, 3);
  ASSERT_TRUE(r2) << r2.error().message;
  auto p2 = again.profile_commands();
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(sections_of(p2[0]), before.sections);
  for (const auto& c : again.calls) EXPECT_FALSE(contains(c.argv, "--query-metrics"));
  EXPECT_EQ(to_json(plan), to_json(before));
  bool still_missing = false;
  for (const auto& m : r2->missing) still_missing |= m.name == "lts__t_sector_hit_rate.pct" && m.where == "query-metrics";
  EXPECT_TRUE(still_missing);  // the chip's missing metrics are reported on every call of the run
}

// Issue 36: a profiling run prints the raw page as it writes its report, so no `ncu --import` reads it back: the same
// plan, the same analysis, two processes fewer on a first call (each a 1-2 s ncu start).
TEST_F(ProfileCall, TheRawPagePrintedByTheRunIsReadWithoutAnImport) {
  FakeNcu importing, printing;
  printing.print_raw = true;
  ProfilePlan plan_imported, plan_printed;
  auto a = profile_call(request(dir_ / "imported"), plan_imported, importing, 3);
  auto b = profile_call(request(dir_ / "printed"), plan_printed, printing, 3);
  ASSERT_TRUE(a && b) << (a ? b.error().message : a.error().message);
  EXPECT_EQ(importing.imports("raw"), 2);
  EXPECT_EQ(printing.imports("raw"), 0);
  EXPECT_EQ(printing.imports("details"), 1) << "the rule messages still come from the report";
  EXPECT_EQ(printing.calls.size() + 2, importing.calls.size());
  EXPECT_EQ(to_json(plan_printed).dump(), to_json(plan_imported).dump());
  EXPECT_EQ(b->aggregate.number("gpu__time_duration.sum"), a->aggregate.number("gpu__time_duration.sum"));
  EXPECT_EQ(b->classification.binding, a->classification.binding);
  EXPECT_EQ(b->kernels.at(0).rules.size(), a->kernels.at(0).rules.size());
  // A run that printed something else (an ncu that prints nothing beside -o): the report is imported as before.
  FakeNcu silent;
  silent.print_raw = true;
  silent.raw_page = "";
  ProfilePlan plan_silent;
  ASSERT_FALSE(profile_call(request(dir_ / "silent"), plan_silent, silent, 3)) << "an empty import fails the gate as before";
  EXPECT_EQ(silent.imports("raw"), 1);
}

// Issue 36: the axes the caller expects (the roofline's: memory-bound near the floor, compute-bound past half of it)
// collected with pass 1 in one run; kept when every axis pass 1's classification names is among them. saxpy's capture
// is memory-bound (SOL memory 70.81 %).
TEST_F(ProfileCall, ExpectedAxesCoveringTheBindingOnesMakeOneRunWrongOnesFallBackToPass2) {
  FakeNcu two_passes;
  ProfilePlan plan_two;
  auto ref = profile_call(request(dir_ / "two"), plan_two, two_passes, 3);
  ASSERT_TRUE(ref) << ref.error().message;

  // A first call in `dir_ / name` expecting `axes`.
  auto guessed = [&](const std::string& name, std::vector<Axis> axes, FakeNcu& ncu, ProfilePlan& plan) {
    ProfileRequest req = request(dir_ / name);
    req.expected_axes = std::move(axes);
    return profile_call(req, plan, ncu, 3);
  };
  FakeNcu right;
  right.print_raw = right.write_report = true;
  ProfilePlan plan_right;
  auto r = guessed("right", {Axis::kMemory}, right, plan_right);
  ASSERT_TRUE(r) << r.error().message;
  auto runs = right.profile_commands();
  ASSERT_EQ(runs.size(), 1u) << "pass 1 and pass 2 in one run";
  EXPECT_EQ(sections_of(runs[0]), plan_two.sections);
  EXPECT_EQ(to_json(plan_right).dump(), to_json(plan_two).dump()) << "the plan a second pass would have fixed";
  EXPECT_EQ(r->report_path, dir_ / "right" / "baseline.ncu-rep") << "under pass 2's name";
  EXPECT_TRUE(fs::exists(r->report_path));
  EXPECT_EQ(r->classification.binding, ref->classification.binding);
  EXPECT_EQ(right.imports("raw"), 0);
  EXPECT_EQ(right.imports("details"), 1);

  // More axes than bind (a compute-bound guess, {compute, memory}, for this memory-bound capture): every binding
  // axis's sections were collected, so the run is kept, and the plan is what ran.
  FakeNcu wider;
  wider.print_raw = wider.write_report = true;
  ProfilePlan plan_wider;
  auto wd = guessed("wider", {Axis::kCompute, Axis::kMemory}, wider, plan_wider);
  ASSERT_TRUE(wd) << wd.error().message;
  ASSERT_EQ(wider.profile_commands().size(), 1u) << "the binding axes were covered: no pass 2";
  EXPECT_EQ(sections_of(wider.profile_commands()[0]), sections_for({Axis::kCompute, Axis::kMemory}, PlanLevel::kFull));
  EXPECT_EQ(plan_wider.axes, std::vector<Axis>{Axis::kMemory});
  EXPECT_EQ(plan_wider.sections, sections_for({Axis::kCompute, Axis::kMemory}, PlanLevel::kFull));
  EXPECT_EQ(plan_wider.level, PlanLevel::kFull);
  EXPECT_EQ(wd->classification.binding, ref->classification.binding);
  EXPECT_NE(joined(wd->notes).find("cover the binding ones (memory)"), std::string::npos) << joined(wd->notes);
  FakeNcu later;  // the run's next profile: the fixed plan, one run
  ASSERT_TRUE(profile_call(request(dir_ / "wider2"), plan_wider, later, 3));
  ASSERT_EQ(later.profile_commands().size(), 1u);
  EXPECT_EQ(sections_of(later.profile_commands()[0]), plan_wider.sections);

  FakeNcu wrong;
  ProfilePlan plan_wrong;
  auto w = guessed("wrong", {Axis::kCompute}, wrong, plan_wrong);
  ASSERT_TRUE(w) << w.error().message;
  auto wruns = wrong.profile_commands();
  ASSERT_EQ(wruns.size(), 2u) << "the expected axes' run stood as pass 1; pass 2 followed for the binding ones";
  EXPECT_EQ(sections_of(wruns[0]), sections_for({Axis::kCompute}, PlanLevel::kFull));
  EXPECT_EQ(sections_of(wruns[1]), plan_two.sections);
  EXPECT_EQ(to_json(plan_wrong).dump(), to_json(plan_two).dump());
  EXPECT_EQ(w->report_path, dir_ / "wrong" / "baseline.ncu-rep");
  EXPECT_NE(joined(w->notes).find("memory bind, so pass 2 runs for them"), std::string::npos) << joined(w->notes);

  // Pass 2 failing after a wrong guess: the guess's report stands, its sections said.
  FakeNcu failing;
  failing.on_profile = [](int i) -> std::optional<util::ProcessResult> {
    if (i == 0) return std::nullopt;
    return failed_run();
  };
  ProfilePlan plan_failed;
  auto f = guessed("wrong", {Axis::kCompute}, failing, plan_failed);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(plan_failed.level, PlanLevel::kBase);
  EXPECT_EQ(plan_failed.sections, sections_for({Axis::kCompute}, PlanLevel::kFull));
  EXPECT_EQ(f->report_path, dir_ / "wrong" / "baseline_pass1.ncu-rep");
}

TEST_F(ProfileCall, Pass2OverBudgetFallsBackToLighterSets) {
  FakeNcu ncu;
  ncu.on_profile = [](int i) -> std::optional<util::ProcessResult> {
    if (i == 0) return std::nullopt;  // pass 1 fine
    util::ProcessResult killed;
    killed.started = true;
    killed.timed_out = true;
    killed.term_signal = 9;
    return killed;  // every pass 2 runs past its budget
  };
  ProfilePlan plan;
  ProfileRequest req = request(dir_);
  req.pass2_budget_s = 42;
  auto r = profile_call(req, plan, ncu);
  ASSERT_TRUE(r) << r.error().message;
  auto profiles = ncu.profile_commands();
  ASSERT_EQ(profiles.size(), 3u);  // pass 1, full, light
  EXPECT_EQ(sections_of(profiles[2]),
            (std::vector<std::string>{"SpeedOfLight", "LaunchStats", "Occupancy", "MemoryWorkloadAnalysis"}));
  // Calls: version, query-metrics, pass 1, its raw import, pass 2 (full) under the budget.
  EXPECT_TRUE(contains(ncu.calls[4].argv, "--profile-from-start"));
  EXPECT_DOUBLE_EQ(ncu.calls[4].timeout_s, 42);
  EXPECT_EQ(plan.level, PlanLevel::kBase);
  EXPECT_EQ(plan.sections, pass1_sections());
  EXPECT_EQ(r->report_path, dir_ / "baseline_pass1.ncu-rep");
  ASSERT_GE(r->notes.size(), 3u);
  const std::string notes = joined(r->notes);
  EXPECT_NE(notes.find("pass 2 (full) failed"), std::string::npos) << notes;
  EXPECT_NE(notes.find("pass 2 (light) failed"), std::string::npos) << notes;

  // Only the full set fails: the light set is kept.
  FakeNcu ncu2;
  ncu2.on_profile = [](int i) -> std::optional<util::ProcessResult> {
    if (i != 1) return std::nullopt;
    return failed_run();
  };
  ProfilePlan plan2;
  auto r2 = profile_call(request(dir_), plan2, ncu2);
  ASSERT_TRUE(r2) << r2.error().message;
  EXPECT_EQ(plan2.level, PlanLevel::kLight);
  EXPECT_EQ(r2->report_path, dir_ / "baseline_light.ncu-rep");
}

TEST_F(ProfileCall, GateFailures) {
  {
    FakeNcu ncu;
    ncu.on_profile = [](int) -> std::optional<util::ProcessResult> {
      util::ProcessResult r;
      r.started = true;
      r.exit_code = 1;
      r.stdout_text = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                      "Performance Counters on the target device 0.\n";
      return r;
    };
    ProfilePlan plan;
    auto r = profile_call(request(dir_), plan, ncu);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::kGate);
    EXPECT_NE(r.error().message.find("ERR_NVGPUCTRPERM"), std::string::npos);
    EXPECT_FALSE(plan.fixed);  // a failed call leaves the plan open
  }
  {
    FakeNcu ncu;
    ncu.on_profile = [](int) -> std::optional<util::ProcessResult> {
      util::ProcessResult r;
      r.started = true;
      r.exit_code = 0;
      r.stdout_text = "==PROF== Connected to process 9 (/usr/bin/kopt)\n==WARNING== No kernels were profiled.\n";
      return r;
    };
    ProfilePlan plan;
    auto r = profile_call(request(dir_), plan, ncu);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::kGate);
    EXPECT_NE(r.error().message.find("the profiler range caught no kernel"), std::string::npos);
  }
  {
    FakeNcu ncu;
    std::string raw = ncu.raw_page;
    ncu.raw_page = raw.substr(0, raw.rfind("\"0\",\"696\""));  // header and units, no kernel
    ProfilePlan plan;
    auto r = profile_call(request(dir_), plan, ncu);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no kernel profiled"), std::string::npos);
  }
  {
    FakeNcu ncu;
    size_t at = ncu.raw_page.find("\"launch__registers_per_thread\"");
    ASSERT_NE(at, std::string::npos);
    ncu.raw_page.replace(at, 30, "\"launch__registers_per_threadX\"");
    ProfilePlan plan;
    auto r = profile_call(request(dir_), plan, ncu);
    ASSERT_FALSE(r);
    EXPECT_EQ(to_int(r.error().code), 3);
    EXPECT_NE(r.error().message.find("required metrics missing: the report has no value for "
                                     "launch__registers_per_thread"),
              std::string::npos)
        << r.error().message;
  }
  {
    FakeNcu ncu;
    ProfilePlan plan;
    ProfileRequest req = request(dir_);
    req.ncu_path.clear();
    auto r = profile_call(req, plan, ncu);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::kGate);
    EXPECT_TRUE(ncu.calls.empty());
  }
}

TEST_F(ProfileCall, TextDetailsPageWhenTheCsvHasNoRuleColumns) {
  FakeNcu ncu;
  ncu.details_csv = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  ProfilePlan plan;
  auto r = profile_call(request(dir_), plan, ncu);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kernels[0].rules.size(), 6u);  // the real text page's rules
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("text details page") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(ProfileSummary, ReadableSummaryOfTheRealSaxpyReport) {
  auto page = parse_raw_page(testing::ncu_capture("ncu_raw.csv"));
  ASSERT_TRUE(page);
  ProfilePlan plan;
  plan.axes = {Axis::kMemory};
  plan.sections = sections_for(plan.axes, PlanLevel::kFull);
  plan.level = PlanLevel::kFull;
  ProfileResult r = analyse(*page, parse_details_text(testing::ncu_capture("ncu_details.txt")), plan, 2);
  r.ncu_version = "2025.3.1.0";
  r.cache_control = "all";
  std::string s = format_summary(r, 2);
  EXPECT_NE(s.find("saxpy(int, float, const float *, float *)"), std::string::npos) << s;
  EXPECT_NE(s.find("230.9 us"), std::string::npos) << s;
  EXPECT_NE(s.find("SOL compute 34.8 % memory 70.8 %"), std::string::npos) << s;
  EXPECT_NE(s.find("achieved occupancy 74.2 %"), std::string::npos) << s;
  EXPECT_NE(s.find("16 regs/thread"), std::string::npos) << s;
  EXPECT_NE(s.find("1. smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio = 59.35 cycle"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("OPT [WarpStateStats, est. speedup 85.4 %] On average, each warp"), std::string::npos) << s;
  // Registry metrics of the memory axis the capture lacks are listed as missing, not ranked as 0.
  EXPECT_NE(s.find("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (report)"), std::string::npos) << s;
}

}  // namespace kopt::profile
