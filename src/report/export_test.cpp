#include "report/export.h"

#include <gtest/gtest.h>

#include <set>

#include "report/run_data.h"
#include "testing/test_support.h"
#include "util/strings.h"

namespace kopt::report {
namespace {

using util::Json;

Json run_with_samples() {
  auto r = load_run(std::filesystem::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200", {.samples = true});
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : Json::object();
}

TEST(Export, T4OneResultPerMeasuredCandidate) {
  Json run = run_with_samples();
  Json t4 = t4_results(run);
  EXPECT_EQ(t4["schema_version"], "1.0.0");
  EXPECT_EQ(t4["metadata"]["timeunit"], "milliseconds");
  ASSERT_EQ(t4["results"].size(), run["candidates"].size());
  for (size_t i = 0; i < t4["results"].size(); ++i) {
    const Json& r = t4["results"][i];
    const Json& c = run["candidates"][i];
    EXPECT_EQ(r["kopt"]["id"], c["id"]);
    EXPECT_EQ(r["objectives"], Json::array({"time"}));
    EXPECT_EQ(r["configuration"]["BM"], c["params"]["BM"]);
    EXPECT_TRUE(r["configuration"].contains("KOPT_VECTORIZED_ACCESS"));
    if (c["status"] == "ok") {
      EXPECT_EQ(r["invalidity"], "correct");
      EXPECT_EQ(r["correctness"], 1);
      EXPECT_EQ(r["times"]["runtimes"].size(), c["samples"].get<size_t>());
      EXPECT_EQ(r["measurements"][0]["name"], "time");
      EXPECT_EQ(r["measurements"][0]["value"], c["median_ms"]);
      EXPECT_EQ(r["measurements"][0]["unit"], "ms");
      EXPECT_FALSE(r["timestamp"].get<std::string>().empty());
    } else {
      EXPECT_NE(r["invalidity"], "correct");
      EXPECT_EQ(r["correctness"], 0);
      EXPECT_TRUE(r["times"]["runtimes"].empty());
    }
  }
  bool compile = false, correctness = false;
  for (const auto& r : t4["results"]) {
    compile = compile || r["invalidity"] == "compile";
    correctness = correctness || r["invalidity"] == "correctness";
  }
  EXPECT_TRUE(compile);
  EXPECT_TRUE(correctness);
}

// Candidates of a generator that writes sources carry different guards and params (the H200's llm run of
// 2026-12-01: Kernel Tuner's reader found 4 key sets among 8 results): every configuration gets them all.
TEST(Export, T4ConfigurationsShareTheirKeys) {
  Json run = {{"candidates", Json::array({
      {{"id", "baseline"}, {"status", "ok"}, {"origin", "baseline"}, {"params", Json::object()},
       {"guards", {{"l1_bypass_loads", false}}}},
      {{"id", "i1x1"}, {"status", "ok"}, {"origin", "external"}, {"params", {{"BK", 16}}},
       {"guards", {{"register_tiling", true}}}, {"flags", Json::array({"-Xptxas -dlcm=cg"})}},
      {{"id", "i1x2"}, {"status", "compile_failed"}, {"origin", "external"}, {"params", Json::object()},
       {"guards", {{"vectorized_access", true}}}}})}};
  Json t4 = t4_results(run);
  ASSERT_EQ(t4["results"].size(), 3u);
  std::set<std::string> first;
  for (const auto& [k, v] : t4["results"][0]["configuration"].items()) first.insert(k);
  EXPECT_EQ(first, (std::set<std::string>{"BK", "KOPT_L1_BYPASS_LOADS", "KOPT_REGISTER_TILING", "KOPT_VECTORIZED_ACCESS",
                                          "nvcc_flags", "source"}));
  for (const auto& r : t4["results"]) {
    std::set<std::string> ks;
    for (const auto& [k, v] : r["configuration"].items()) ks.insert(k);
    EXPECT_EQ(ks, first);
  }
  EXPECT_TRUE(t4["results"][0]["configuration"]["BK"].is_null());
  EXPECT_EQ(t4["results"][0]["configuration"]["KOPT_REGISTER_TILING"], 0);
  EXPECT_EQ(t4["results"][1]["configuration"]["KOPT_REGISTER_TILING"], 1);
  EXPECT_EQ(t4["results"][0]["configuration"]["source"], "baseline");
  EXPECT_EQ(t4["results"][1]["configuration"]["source"], "i1x1");
  EXPECT_FALSE(t4_results(run_with_samples())["results"][0]["configuration"].contains("source"));  // built-in only
  EXPECT_EQ(t4["results"][2]["configuration"]["nvcc_flags"], "");
}

TEST(Export, CsvOneRowPerMeasuredCandidate) {
  Json run = run_with_samples();
  std::string csv = candidates_csv(run);
  auto lines = util::split_lines(csv);
  ASSERT_EQ(lines.size(), run["candidates"].size() + 1);
  EXPECT_EQ(util::trim(lines[0]), "id,iteration,role,BK,BM,BN,STAGES,TM,TN,methods,median_ms,ci95_low_ms,ci95_high_ms,status,reason");
  EXPECT_EQ(lines[1].rfind("baseline,0,baseline,8,64,64,2,4,4,,", 0), 0u) << lines[1];
  // A reason with a comma is quoted; methods are joined with '+'.
  EXPECT_NE(csv.find("cp_async_pipeline+smem_padding"), std::string::npos);
  EXPECT_NE(csv.find(",\"compile failed: ptxas error"), std::string::npos);
}

TEST(Export, CsvQuotesAndLeavesUnknownsEmpty) {
  Json run = {{"candidates", Json::array({{{"id", "a\"b"}, {"iteration", 1}, {"role", "candidate"}, {"params", {{"X", 2}}},
                                            {"methods", Json::array()}, {"status", "crashed"}, {"median_ms", 1.5},
                                            {"reason", "crashed: line1\nline2"}}})}};
  EXPECT_EQ(candidates_csv(run), "id,iteration,role,X,methods,median_ms,ci95_low_ms,ci95_high_ms,status,reason\r\n"
                                 "\"a\"\"b\",1,candidate,2,,,,,crashed,\"crashed: line1\nline2\"\r\n");
}

}  // namespace
}  // namespace kopt::report
