#include "report/run_data.h"

#include <gtest/gtest.h>

#include <set>

#include <unistd.h>

#include "loop/state.h"
#include "roofline/ceilings.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::report {
namespace {

namespace fs = std::filesystem;
using util::Json;

fs::path fixture() { return fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200"; }

TEST(RunData, ParsesUtcTimestamps) {
  EXPECT_EQ(parse_utc_iso("1970-01-01T00:01:40Z"), 100);
  EXPECT_EQ(parse_utc_iso("2026-11-30T07:12:04Z").value() - parse_utc_iso("2026-11-30T07:11:04Z").value(), 60);
  EXPECT_FALSE(parse_utc_iso("2026-11-30 07:12:04"));
  EXPECT_FALSE(parse_utc_iso(""));
}

TEST(RunData, ConvergenceIsTheBestSoFarInEvaluationOrder) {
  Json c = Json::array({{{"id", "b"}, {"eval", 1}, {"status", "ok"}, {"median_ms", 4.0}, {"time_s", 10}},
                        {{"id", "a"}, {"eval", 0}, {"status", "ok"}, {"median_ms", 5.0}, {"time_s", 0}},
                        {{"id", "x"}, {"eval", 2}, {"status", "compile_failed"}, {"median_ms", nullptr}},
                        {{"id", "slow"}, {"eval", 3}, {"status", "ok"}, {"median_ms", 6.0}},
                        {{"id", "abl"}, {"status", "ok"}, {"median_ms", 1.0}}});  // no eval: an ablation build
  Json conv = convergence(c);
  ASSERT_EQ(conv.size(), 4u);
  EXPECT_EQ(conv[0]["id"], "a");
  EXPECT_EQ(conv[0]["best_ms"], 5.0);
  EXPECT_EQ(conv[1]["best_ms"], 4.0);
  EXPECT_EQ(conv[1]["best_id"], "b");
  EXPECT_TRUE(conv[2]["median_ms"].is_null());
  EXPECT_EQ(conv[2]["best_ms"], 4.0);
  EXPECT_EQ(conv[3]["best_id"], "b");
  EXPECT_TRUE(conv[3]["time_s"].is_null());
}

TEST(RunData, ReasonsSayWhyACandidateLost) {
  EXPECT_EQ(candidate_reason({{"id", "c1"}, {"status", "ok"}}, "c1"), "");
  EXPECT_EQ(candidate_reason({{"id", "c2"}, {"status", "compile_failed"}, {"note", "ptxas error"}}, "c1"),
            "compile failed: ptxas error");
  EXPECT_EQ(candidate_reason({{"id", "c3"}, {"status", "ok"}, {"selection", {{"decision", "keep"}, {"reason", "CI reaches 0.99"}}}}, "c1"),
            "finalist, kept the incumbent: CI reaches 0.99");
  EXPECT_NE(candidate_reason({{"id", "c4"}, {"status", "ok"}}, "c1").find("not a finalist"), std::string::npos);
  EXPECT_NE(candidate_reason({{"id", "c1_no_x"}, {"role", "ablation"}, {"ablation_of", "x"}, {"status", "ok"}}, "c1").find("ablation of x"),
            std::string::npos);
}

TEST(RunData, CompileErrorLineAndMixSum) {
  EXPECT_EQ(compile_error_line("nvcc ...\nk.cu(12): error: expected a ;\nmore\n"), "k.cu(12): error: expected a ;");
  EXPECT_EQ(compile_error_line("line one\n\nlast line\n"), "last line");
  Json sass = {{"kernels", Json::array({{{"function", "f"}, {"mix", {{"fp32", 10}, {"total", 30}}}},
                                         {{"function", "g"}, {"mix", {{"fp32", 5}, {"ldg", 2}, {"total", 9}}}}})}};
  Json m = summed_mix(record::sass_record_from_json(sass));
  EXPECT_EQ(m["fp32"], 15);
  EXPECT_EQ(m["ldg"], 2);
  EXPECT_EQ(m["total"], 39);
  EXPECT_TRUE(summed_mix(record::sass_record_from_json(Json::object())).empty());
}

TEST(RunData, RejectsWhatIsNotARunDirectory) {
  auto missing = load_run("/nonexistent/kopt/run");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kInput);
  fs::path empty = fs::path(::testing::TempDir()) / "kopt_not_a_run";
  fs::create_directories(empty);
  auto r = load_run(empty);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("neither state.json nor summary.json"), std::string::npos);
}

// The recorded run (tests/data/report/README.md): its files are in the formats kopt writes, and load_run reads
// every part of it.
TEST(RunData, TheFixtureIsInKoptsOwnFormats) {
  auto state = util::read_json(fixture() / "state.json");
  ASSERT_TRUE(state) << state.error().message;
  auto st = loop::state_from_json(*state);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_TRUE(st->finished());
  auto ceil = util::read_json(fixture() / "ceilings.json");
  ASSERT_TRUE(ceil);
  auto c = roofline::ceilings_from_json(*ceil);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->gpu_name, "NVIDIA H200");
}

TEST(RunData, LoadsTheRecordedRun) {
  auto loaded = load_run(fixture());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const Json& d = *loaded;
  EXPECT_EQ(d["schema"], kReportDataSchema);
  auto state = util::read_json(fixture() / "state.json").value();
  std::string champion = state["champion"]["candidate"]["id"];
  EXPECT_EQ(d["champion_id"], champion);
  EXPECT_EQ(d["run"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(d["run"]["dims"]["K"], 4096);

  // Every evaluation of state.json, in order, then the ablation builds.
  const Json& cands = d["candidates"];
  size_t evals = 0, ablations = 0, champions = 0;
  for (const auto& c : cands) {
    if (c["role"] == "ablation") {
      ++ablations;
      EXPECT_FALSE(c.contains("eval"));
      EXPECT_NE(c["reason"].get<std::string>().find("ablation of"), std::string::npos);
      continue;
    }
    EXPECT_EQ(c["eval"], evals);
    EXPECT_EQ(c["id"], state["history"][evals]["candidate"]["id"]);
    EXPECT_EQ(c["status"], state["history"][evals]["status"]);
    ++evals;
    if (c["role"] == "champion") ++champions;
    if (c["status"] == "ok") {
      ASSERT_TRUE(c["median_ms"].is_number()) << c["id"];
      EXPECT_LE(c["ci95_low_ms"].get<double>(), c["median_ms"].get<double>()) << c["id"];
      EXPECT_GE(c["ci95_high_ms"].get<double>(), c["median_ms"].get<double>()) << c["id"];
      EXPECT_TRUE(c["time_s"].is_number()) << c["id"];
      EXPECT_FALSE(c.contains("samples_ms"));  // only with LoadOptions::samples
    } else {
      EXPECT_FALSE(c["reason"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(evals, state["history"].size());
  EXPECT_GT(ablations, 0u);
  EXPECT_EQ(champions, 1u);
  EXPECT_EQ(d["candidates"][0]["role"], "baseline");

  // The compile failure names nvcc's error line; the incorrect run says what differed.
  bool compile_failed = false, incorrect = false;
  for (const auto& c : cands) {
    if (c["status"] == "compile_failed") compile_failed = c["reason"].get<std::string>().find("ptxas error") != std::string::npos;
    if (c["status"] == "incorrect") incorrect = c["reason"].get<std::string>().find("reference has") != std::string::npos;
  }
  EXPECT_TRUE(compile_failed);
  EXPECT_TRUE(incorrect);

  // Convergence: one point per evaluation, never getting worse, ending at the best correct median.
  const Json& conv = d["convergence"];
  ASSERT_EQ(conv.size(), evals);
  double best = 1e300;
  for (const auto& p : conv) {
    ASSERT_TRUE(p["best_ms"].is_number());
    EXPECT_LE(p["best_ms"].get<double>(), best);
    best = p["best_ms"].get<double>();
  }

  // Roofline inputs, ablation, mix, profile.
  ASSERT_TRUE(d["ceilings"].is_object());
  EXPECT_EQ(d["ceilings"]["origin"], "run");
  EXPECT_GE(d["ceilings"]["roofs"].size(), 3u);
  ASSERT_TRUE(d["workload"].is_object());
  EXPECT_DOUBLE_EQ(d["workload"]["flops"].get<double>(), 2.0 * 4096 * 4096 * 4096);
  EXPECT_FALSE(d["ablation"].empty());
  for (const auto& a : d["ablation"]) {
    EXPECT_FALSE(a["verdict"].get<std::string>().empty());
    EXPECT_FALSE(a["sass"].get<std::string>().empty());
  }
  for (const char* who : {"baseline", "champion"})
    for (const char* axis : {"compute", "memory", "latency"}) EXPECT_FALSE(d["profile"][who]["top_metrics"][axis].empty()) << who << axis;
  // The fixture may lack SASS captures (tests/data/report/README.md): then the page says so, and nothing else is missing.
  if (fs::exists(fixture() / "iter_00_baseline" / "sass.json")) {
    EXPECT_TRUE(d["mix"]["baseline"].is_object());
    EXPECT_TRUE(d["notes"].empty()) << d["notes"].dump();
  } else {
    EXPECT_TRUE(d["mix"]["baseline"].is_null());
    ASSERT_EQ(d["notes"].size(), 1u) << d["notes"].dump();
    EXPECT_NE(d["notes"][0].get<std::string>().find("iter_00_baseline/sass.json"), std::string::npos);
  }
}

TEST(RunData, InstructionMixBaselineToChampion) {
  // sass.json as the loop writes it (Optimizer::sass_check), for the baseline and the champion of a copy.
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_mix_run";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  auto sass = [](int fp32, int ldg) {
    return Json{{"kernels", Json::array({{{"function", "sgemm_tiled"}, {"mix", {{"fp32", fp32}, {"ldg", ldg}, {"total", fp32 + ldg}}}}})},
                {"methods", Json::object()}};
  };
  ASSERT_TRUE(util::write_json_atomic(copy / "iter_00_baseline" / "sass.json", "sass", sass(512, 64)).ok());
  auto state = util::read_json(copy / "state.json").value();
  std::string champion = state["champion"]["candidate"]["id"];
  fs::path champ_dir;
  for (const auto& e : fs::recursive_directory_iterator(copy))
    if (e.is_directory() && e.path().filename() == champion && e.path().parent_path().filename() == "candidates") champ_dir = e.path();
  ASSERT_FALSE(champ_dir.empty());
  ASSERT_TRUE(util::write_json_atomic(champ_dir / "sass.json", "sass", sass(2048, 16)).ok());
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const Json& mix = (*loaded)["mix"];
  EXPECT_EQ(mix["champion_id"], champion);
  EXPECT_EQ(mix["baseline"]["fp32"], 512);
  EXPECT_EQ(mix["champion"]["fp32"], 2048);
  EXPECT_EQ(mix["champion"]["ldg"], 16);
  EXPECT_TRUE((*loaded)["notes"].empty()) << (*loaded)["notes"].dump();
}

TEST(RunData, SamplesOnlyWhenAsked) {
  auto loaded = load_run(fixture(), {.samples = true});
  ASSERT_TRUE(loaded);
  for (const auto& c : (*loaded)["candidates"]) {
    if (c["status"] == "ok") {
      EXPECT_EQ(c["samples_ms"].size(), c["samples"].get<size_t>()) << c["id"];
    }
  }
}

// A derived parameter the derivation found to be a launch's threads per block (derived/derivation.json's role), whatever
// its name, gives the candidates' occupancy; without that file the same run's block size is not known (found on a
// live H200 run of the corpus's cutlass_rmsnorm, whose derived block_size_VALUE the page showed as unknown).
TEST(RunData, TheDerivationsBlockSizeRoleGivesTheOccupancy) {
  const fs::path run = fs::path(::testing::TempDir()) / ("kopt_run_data_roles_" + std::to_string(::getpid()));
  fs::remove_all(run);
  fs::copy(fixture(), run, fs::copy_options::recursive);
  auto before = load_run(run);
  ASSERT_TRUE(before) << before.error().message;
  for (const auto& c : (*before)["candidates"])
    if (c.value("resources_recorded", false)) {
      EXPECT_EQ(c["occupancy"], "unknown (block size not known)") << c.dump();
    }
  // BM as if it were a launcher's block size (the fixture's values are 64 and 128).
  fs::create_directories(run / "derived");
  ASSERT_TRUE(util::write_file_atomic(run / "derived" / "derivation.json",
                                      R"({"params": [{"name": "BM", "role": "launcher_threads"}, {"name": "BN", "role": "tile"}]})"));
  auto after = load_run(run);
  ASSERT_TRUE(after) << after.error().message;
  int known = 0;
  for (const auto& c : (*after)["candidates"]) {
    if (!c.value("resources_recorded", false)) continue;
    const int bm = c["params"].value("BM", 0);
    EXPECT_EQ(c["block_threads"], bm) << c.dump();
    EXPECT_TRUE(c["occupancy_pct"].is_number()) << c.dump();
    known += c["occupancy_pct"].is_number();
  }
  EXPECT_GT(known, 0);
  fs::remove_all(run);
}

TEST(RunData, ARunStoppedAtAGateStillLoads) {
  // What stop() leaves when the correctness gate fails: state.json without history, summary.json, no iterations.
  fs::path dir = fs::path(::testing::TempDir()) / "kopt_report_gate_failed";
  fs::remove_all(dir);
  fs::create_directories(dir);
  loop::RunState st;
  st.stop_reason = loop::StopReason::kGateFailed;
  st.stop_detail = "correctness: the baseline is not correct";
  ASSERT_TRUE(util::write_json_atomic(dir / "state.json", "state", loop::to_json(st)).ok());
  ASSERT_TRUE(util::write_json_atomic(dir / "summary.json", "summary", {{"schema", "kopt.summary/1"}, {"kernel", "k.cu"}}).ok());
  auto loaded = load_run(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE((*loaded)["candidates"].empty());
  EXPECT_TRUE((*loaded)["convergence"].empty());
  EXPECT_EQ((*loaded)["run"]["stop_reason"], "gate_failed");
  EXPECT_FALSE((*loaded)["notes"].empty());
}

TEST(RunData, ARunOnSeveralGpusHasItsPerGpuRows) {
  fs::path dir = fs::path(::testing::TempDir()) / "kopt_report_gpus";
  fs::remove_all(dir);
  fs::create_directories(dir);
  loop::RunState st;
  st.measuring = {{"wall_s", 10.0},
                  {"per_slot", {{{"slot", 0}, {"name", "GPU 0 (NVIDIA H200)"}, {"runs", 5}, {"lost", 0}, {"busy_s", 8.0}},
                                {{"slot", 1}, {"name", "GPU 1 (NVIDIA H200)"}, {"runs", 4}, {"lost", 1}, {"busy_s", 6.0}}}}};
  ASSERT_TRUE(util::write_json_atomic(dir / "state.json", "state", loop::to_json(st)).ok());
  ASSERT_TRUE(util::write_json_atomic(dir / "summary.json", "summary", {{"schema", "kopt.summary/1"}, {"kernel", "k.cu"}}).ok());
  auto loaded = load_run(dir);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const auto& g = (*loaded)["gpus"];
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1]["slot"], "GPU 1 (NVIDIA H200)");
  EXPECT_EQ(g[1]["worker_lost"], 1);
  EXPECT_DOUBLE_EQ(g[0]["utilisation"].get<double>(), 0.8);
  // One GPU (today's path): no rows, the page hides the section.
  st.measuring["per_slot"].erase(1);
  ASSERT_TRUE(util::write_json_atomic(dir / "state.json", "state", loop::to_json(st)).ok());
  EXPECT_TRUE((*load_run(dir))["gpus"].empty());
}

TEST(RunData, MissingPartsBecomeNotes) {
  // A copy without ceilings.json, the baseline's SASS or its profile: still loads, and says what is missing.
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_partial_run";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  fs::remove(copy / "ceilings.json");
  fs::remove(copy / "iter_00_baseline" / "sass.json");
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ((*loaded)["ceilings"]["origin"], "datasheet");  // the H200's datasheet, labelled
  EXPECT_TRUE((*loaded)["mix"]["baseline"].is_null());
  std::string notes = (*loaded)["notes"].dump();
  EXPECT_NE(notes.find("no ceilings.json"), std::string::npos) << notes;
  EXPECT_NE(notes.find("iter_00_baseline/sass.json"), std::string::npos) << notes;
}

// The run directory is read as typed run records (record/run_record.h): a file with a field of the wrong type is a note
// that names the file and the field, and the rest of the run still loads; in state.json it is an error.
TEST(RunData, AWrongTypeInARecordNamesTheFileAndTheField) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_wrong_type_run";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  const fs::path run_json = copy / "iter_01" / "candidates" / "i1c1" / "run.json";
  auto run = util::read_json(run_json).value();
  run["timing"]["median_ms"] = "fast";
  ASSERT_TRUE(util::write_file_atomic(run_json, run.dump()).ok());
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  std::string notes = (*loaded)["notes"].dump();
  EXPECT_NE(notes.find(run_json.string() + ": timing.median_ms: expected a number, found a string"), std::string::npos) << notes;
  EXPECT_GT((*loaded)["candidates"].size(), 20u);

  auto state = util::read_json(copy / "state.json").value();
  state["iterations_done"] = "three";
  ASSERT_TRUE(util::write_file_atomic(copy / "state.json", state.dump()).ok());
  auto bad = load_run(copy);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("state.json: iterations_done: expected an integer, found a string"), std::string::npos)
      << bad.error().message;
}

TEST(RunData, TheChampionsSourceItsDiffAndTheCommandThatReproducesIt) {
  auto loaded = load_run(fixture());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const Json& c = (*loaded)["champion"];
  EXPECT_EQ(c["file"], "champion/kernel.cu");
  EXPECT_EQ(c["baseline_file"], "champion/baseline_kernel.cu");
  EXPECT_EQ(c["source"], util::read_file(fixture() / "champion" / "kernel.cu").value());
  // The change is the parameter values and the method guards (the source below them is the same).
  const std::string diff = c["diff"];
  EXPECT_EQ(diff.rfind("--- champion/baseline_kernel.cu\n+++ champion/kernel.cu\n@@ ", 0), 0u) << diff;
  EXPECT_NE(diff.find("\n-#define BM 64\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("\n+#define BM 128\n"), std::string::npos) << diff;
  EXPECT_NE(diff.find("\n+#define KOPT_VECTORIZED_ACCESS 1\n"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("sgemm_tunable("), std::string::npos) << "the kernel's code is unchanged: " << diff;
  EXPECT_EQ(c["diff_added"], c["diff_removed"]);
  // Run from the run directory: ref.py relative to where the run was recorded, every dim unambiguous.
  EXPECT_EQ(c["reproduce"],
            "kopt bench champion/kernel.cu --ref ../../examples/sgemm_tunable/ref.py --dim K=4096 --dim M=4096 --dim N=4096 "
            "--arch sm_90 --seeds 3 --measure-budget-s 2");
}

TEST(RunData, ARunWithoutABaselineFileGetsItsDiffFromTheChampionsFileAndSaysSo) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_no_baseline_file";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  fs::remove(copy / "champion" / "baseline_kernel.cu");
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto with_file = load_run(fixture());
  const Json& c = (*loaded)["champion"];
  EXPECT_TRUE(c["baseline_file"].is_null());
  EXPECT_NE(c["baseline_note"].get<std::string>().find("no baseline file"), std::string::npos);
  // The same changed lines as with the file.
  auto changed = [](const std::string& d) {
    std::string out;
    for (const auto& line : util::split_lines(d))
      if ((line[0] == '+' || line[0] == '-') && line.rfind("+++", 0) != 0 && line.rfind("---", 0) != 0) out += line + "\n";
    return out;
  };
  EXPECT_EQ(changed(c["diff"]), changed((*with_file)["champion"]["diff"]));
  // No champion file at all: said, no invented source.
  fs::remove_all(copy / "champion");
  auto none = load_run(copy);
  ASSERT_TRUE(none);
  EXPECT_FALSE((*none)["champion"].contains("source"));
  EXPECT_NE((*none)["notes"].dump().find("no champion file"), std::string::npos);
}

// options.json is read through its record (record/options_record.h): a run directory written before most of its keys
// existed loads, its page shows what the file has, and the reproduce command gives only what was recorded.
TEST(RunData, AnOldOptionsFileLackingKeysStillLoads) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_old_options_run";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  const auto full = util::read_json(fixture() / "options.json").value();
  Json old = {{"meta", full["meta"]}, {"kernel", full["kernel"]}, {"ref", full["ref"]}, {"dims", full["dims"]}};
  ASSERT_TRUE(util::write_file_atomic(copy / "options.json", old.dump()).ok());
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  const Json& run = (*loaded)["run"];
  EXPECT_EQ(run["dims"], full["dims"]);
  EXPECT_EQ(run["started_at"], "2026-11-30T07:12:04Z");
  old.erase("meta");
  EXPECT_EQ(run["options"], old) << "as written, without its meta block";
  EXPECT_EQ((*loaded)["notes"].dump().find("options.json"), std::string::npos) << "nothing to say: absent keys are not errors";
  const std::string cmd = (*loaded)["champion"]["reproduce"];
  EXPECT_NE(cmd.find("--dim K=4096 --dim M=4096 --dim N=4096"), std::string::npos) << cmd;
  for (const char* flag : {"--arch", "--seeds", "--measure-budget-s", "--numerics-mode", "--atol"})
    EXPECT_EQ(cmd.find(flag), std::string::npos) << flag << " in " << cmd;
  // Without options.json at all: the summary's kernel and no dims.
  fs::remove(copy / "options.json");
  auto none = load_run(copy);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ((*none)["run"]["dims"], Json::object());
  EXPECT_EQ((*none)["run"]["options"], Json::object());
  EXPECT_EQ((*none)["run"]["started_at"], "");
}

TEST(RunData, ReproduceCommandCarriesFlagsIncludesDefinesAndNumerics) {
  Json options = {{"dims", {{"n", 1048576}}}, {"arch", "sm_90a"}, {"nvcc_flags", {"-Xptxas=-O3"}}, {"include_dirs", {"/opt/cutlass/include"}},
                  {"defines", {{"USE_X", "1"}}}, {"numerics", "approximate"}, {"atol", 0.01}, {"seeds", 2}, {"max_time_s", 5.0}};
  Json champ = {{"flags", {"--use_fast_math", "-Xptxas=-O3"}}};
  EXPECT_EQ(reproduce_command(record::options_record_from_json(options), record::candidate_config_from_json(champ), "champion/k.cu", "/home/u/ref.py"),
            "kopt bench champion/k.cu --ref /home/u/ref.py --dim n=1048576 --arch sm_90a --nvcc-flag=-Xptxas=-O3 "
            "--nvcc-flag=--use_fast_math -I /opt/cutlass/include -D USE_X=1 --numerics-mode approximate --atol 0.01 --seeds 2 "
            "--measure-budget-s 5");
  // A Triton champion: its values as run_kernel's arguments; a path with a space is quoted.
  Json triton = {{"constexprs", {{"BLOCK", 128}}}, {"launch", {{"num_warps", 4}}}};
  EXPECT_EQ(reproduce_command(record::options_record_from_json({{"dims", {{"N", 4096}}}}), record::candidate_config_from_json(triton), "champion/k.py", "my ref.py"),
            "kopt bench champion/k.py --ref 'my ref.py' --dim N=4096 -D BLOCK=128 -D num_warps=4");
}

TEST(RunData, RatesResourcesParameterAblationAndLostMethods) {
  auto loaded = load_run(fixture());
  ASSERT_TRUE(loaded) << loaded.error().message;
  const Json& d = *loaded;
  ASSERT_TRUE(d["rates"]["available"].get<bool>());
  const double flops = d["workload"]["flops"], bytes = d["workload"]["bytes_min"];
  for (const auto& c : d["candidates"]) {
    if (c["status"] != "ok") {
      EXPECT_FALSE(c.contains("achieved_tflops")) << c["id"];
      continue;
    }
    const double ms = c["median_ms"];
    EXPECT_NEAR(c["achieved_tflops"].get<double>(), flops / (ms * 1e-3) / 1e12, 1e-9) << c["id"];
    EXPECT_NEAR(c["achieved_gbps"].get<double>(), bytes / (ms * 1e-3) / 1e9, 1e-6) << c["id"];
    if (c["id"] == "baseline") {  // iter_00_baseline/build.json
      EXPECT_TRUE(c["registers"].is_number()) << c.dump();
      EXPECT_TRUE(c["resources_recorded"].get<bool>());
    }
    if (c["id"] == "i2c1") {  // ptxas -v for sm_90 (tests/data/report/README.md)
      EXPECT_EQ(c["registers"], 126);
      EXPECT_EQ(c["shared_bytes"], 16384);
      EXPECT_EQ(c["spill_bytes"], 0);
      EXPECT_TRUE(c["resources_recorded"].get<bool>());
    }
  }
  // Parameter ablation: as ablation.json records it, each with its iteration; its variants are ablation rows.
  size_t in_files = 0;
  for (const char* it : {"iter_01", "iter_02", "iter_03"}) in_files += util::read_json(fixture() / it / "ablation.json").value()["params"].size();
  ASSERT_EQ(d["param_ablation"].size(), in_files);
  ASSERT_GT(in_files, 0u);
  for (const auto& p : d["param_ablation"]) {
    EXPECT_NE(p["champion_value"], p["baseline_value"]);
    EXPECT_TRUE(p["iteration"].is_number());
  }
  bool param_row = false;
  for (const auto& c : d["candidates"])
    if (c.value("ablation_param", std::string()) == "BM") {
      param_row = true;
      EXPECT_NE(c["reason"].get<std::string>().find("ablation of parameter BM"), std::string::npos) << c["reason"];
    }
  EXPECT_TRUE(param_row);
  // Methods tried that the champion (vectorized_access only) lacks, each with its fastest candidate.
  std::set<std::string> lost;
  for (const auto& m : d["lost_methods"]) {
    lost.insert(m["method"].get<std::string>());
    EXPECT_GT(m["vs_champion"].get<double>(), 1.0) << m.dump();
  }
  EXPECT_EQ(lost, (std::set<std::string>{"cp_async_pipeline", "smem_padding"}));
}

TEST(RunData, WithoutAWorkloadModelTheRatesAreOmittedAndSaid) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_no_workload";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  for (const char* it : {"iter_00_baseline", "iter_01", "iter_02"}) fs::remove(copy / it / "roofline.json");
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE((*loaded)["rates"]["available"].get<bool>());
  EXPECT_NE((*loaded)["rates"]["note"].get<std::string>().find("no workload model"), std::string::npos);
  for (const auto& c : (*loaded)["candidates"]) EXPECT_FALSE(c.contains("achieved_tflops")) << c["id"];
}

TEST(RunData, LostMethodsCountTriesAndTakeTheLastAblation) {
  Json cands = {{{"id", "baseline"}, {"role", "baseline"}, {"status", "ok"}, {"median_ms", 4.0}, {"methods", Json::array()}},
                {{"id", "a"}, {"role", "candidate"}, {"status", "ok"}, {"median_ms", 3.0}, {"methods", {"x", "y"}}},
                {{"id", "b"}, {"role", "candidate"}, {"status", "incorrect"}, {"methods", {"y"}}},
                {{"id", "c"}, {"role", "champion"}, {"status", "ok"}, {"median_ms", 2.0}, {"methods", {"x"}}},
                {{"id", "c_no_x"}, {"role", "ablation"}, {"status", "ok"}, {"median_ms", 2.5}, {"methods", Json::array()}}};
  Json ablation = {{{"iteration", 1}, {"champion_id", "a"}, {"method", "y"}, {"verdict", "ineffective"},
                    {"attribution_ms", {{"median", 0.01}, {"ci95_low", -0.02}, {"ci95_high", 0.03}}}},
                   {{"iteration", 2}, {"champion_id", "a2"}, {"method", "y"}, {"verdict", "unverified"}}};
  Json lost = lost_methods(cands, ablation, "c");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0]["method"], "y");
  EXPECT_EQ(lost[0]["candidates"], 2);
  EXPECT_EQ(lost[0]["correct"], 1);
  EXPECT_EQ(lost[0]["best_id"], "a");
  EXPECT_DOUBLE_EQ(lost[0]["vs_champion"].get<double>(), 1.5);
  EXPECT_EQ(lost[0]["last_ablation"]["champion_id"], "a2");
  EXPECT_TRUE(lost[0]["last_ablation"]["attribution_ms"].is_null());
}

TEST(RunData, TheCaseTableAndTheHeldOutShapesAsTheLoopRecordsThem) {
  fs::path copy = fs::path(::testing::TempDir()) / "kopt_report_shapes";
  fs::remove_all(copy);
  fs::copy(fixture(), copy, fs::copy_options::recursive);
  auto summary = util::read_json(copy / "summary.json").value();
  summary.erase("meta");
  // summary.json's cases is multi_case.cpp's case_table_json: {"cases": [...], "geomean": {...}}
  summary["cases"] = {{"cases", {{{"name", "user"}, {"baseline_ms", 5.0}, {"champion_ms", 3.0}, {"speedup", 5.0 / 3.0}},
                                 {{"name", "small"}, {"baseline_ms", 1.0}, {"champion_ms", 0.8}, {"speedup", 1.25}}}},
                      {"geomean", {{"cases", 2}, {"ratio", 0.68}, {"speedup", 1.47}}}};
  summary["holdout"] = {{"passed", 1}, {"champion_fails", 0}, {"cases", {{{"verdict", "pass"}, {"text", "odd: both correct"}}}}};
  ASSERT_TRUE(util::write_json_atomic(copy / "summary.json", "summary", summary).ok());
  auto loaded = load_run(copy);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ((*loaded)["cases"].size(), 2u);
  EXPECT_EQ((*loaded)["cases"][1]["name"], "small");
  EXPECT_DOUBLE_EQ((*loaded)["cases_geomean"]["speedup"].get<double>(), 1.47);
  EXPECT_EQ((*loaded)["holdout"]["cases"].size(), 1u);
  // A run without them: null, the page hides both sections.
  auto plain = load_run(fixture());
  EXPECT_TRUE((*plain)["cases"].is_null());
  EXPECT_TRUE((*plain)["holdout"].is_null());
}

}  // namespace
}  // namespace kopt::report
