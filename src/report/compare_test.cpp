#include "report/compare.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kopt::report {
namespace {

using util::Json;

Json cand(const std::string& id, const std::string& role, const std::string& hash, double median, std::vector<double> samples,
          const std::string& status = "ok") {
  return {{"id", id}, {"role", role}, {"content_hash", hash}, {"status", status}, {"median_ms", median},
          {"ci95_low_ms", median * 0.99}, {"ci95_high_ms", median * 1.01}, {"samples", samples.size()}, {"samples_ms", samples}};
}

std::vector<double> around(double m, int n) {
  std::vector<double> s;
  for (int i = 0; i < n; ++i) s.push_back(m * (1 + 0.001 * ((i * 7) % 5 - 2)));
  return s;
}

Json run(const std::string& dir, std::vector<Json> cands) {
  return {{"run", {{"dir", dir}, {"kernel", "k.cu"}, {"dims_text", "N=1"}, {"gpu", "NVIDIA H200"}}}, {"candidates", cands}};
}

TEST(Compare, ChampionsBaselinesAndConfigurationsMeasuredInBoth) {
  Json a = run("A", {cand("baseline", "baseline", "h0", 5.0, around(5.0, 30)), cand("i1c1", "champion", "h1", 3.0, around(3.0, 30)),
                     cand("i1c2", "candidate", "h2", 4.0, around(4.0, 30)), cand("i1c3", "candidate", "h3", 0, {}, "compile_failed")});
  Json b = run("B", {cand("baseline", "baseline", "h0", 5.0, around(5.0, 40)), cand("i2c4", "champion", "h9", 2.0, around(2.0, 30)),
                     cand("i1c1", "finalist", "h1", 3.3, around(3.3, 30)), cand("x", "candidate", "h3", 3.9, around(3.9, 30))});
  Json cmp = compare_runs(a, b);
  ASSERT_EQ(cmp["rows"].size(), 3u) << cmp.dump(2);  // baseline, champion, h1 (h3 failed in A, h2 absent from B)
  EXPECT_EQ(cmp["rows"][0]["what"], "baseline");
  EXPECT_EQ(cmp["rows"][0]["ratio"]["verdict"], "same");
  EXPECT_NEAR(cmp["rows"][0]["ratio"]["median_ratio"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(cmp["rows"][0]["ratio"]["rounds"], 30);  // the shorter series
  const Json& champ = cmp["rows"][1];
  EXPECT_EQ(champ["what"], "champion");
  EXPECT_EQ(champ["id_a"], "i1c1");
  EXPECT_EQ(champ["id_b"], "i2c4");
  EXPECT_NEAR(champ["ratio"]["median_ratio"].get<double>(), 2.0 / 3.0, 0.01);
  EXPECT_LT(champ["ratio"]["ci95_high"].get<double>(), 0.99);
  EXPECT_EQ(champ["ratio"]["verdict"], "faster");
  const Json& same = cmp["rows"][2];
  EXPECT_EQ(same["what"], "same_configuration");
  EXPECT_EQ(same["id_b"], "i1c1");
  EXPECT_EQ(same["ratio"]["verdict"], "slower");
  EXPECT_NEAR(same["ratio_of_medians"].get<double>(), 1.1, 1e-9);
  std::string text = format_compare(cmp);
  EXPECT_NE(text.find("champion"), std::string::npos);
  EXPECT_NE(text.find("B faster"), std::string::npos) << text;
  EXPECT_TRUE(cmp["notes"].empty()) << cmp["notes"].dump();
  std::string csv = compare_csv(cmp);
  EXPECT_EQ(csv.rfind("what,id_a,id_b,a_median_ms,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\r\nchampion,i1c1,i2c4,3,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",30,faster\r\n"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4) << "a header and one line per row";
}

TEST(Compare, WithoutSamplesOnlyTheRatioOfMedians) {
  Json a = run("A", {cand("baseline", "baseline", "h0", 5.0, {})});
  Json b = run("B", {cand("baseline", "baseline", "h0", 4.0, {1, 2})});
  b["run"]["dims_text"] = "N=2";
  Json cmp = compare_runs(a, b);
  ASSERT_EQ(cmp["rows"].size(), 1u);
  EXPECT_TRUE(cmp["rows"][0]["ratio"].is_null());
  EXPECT_NEAR(cmp["rows"][0]["ratio_of_medians"].get<double>(), 0.8, 1e-12);
  EXPECT_NE(format_compare(cmp).find("too few samples for a CI"), std::string::npos);
  EXPECT_NE(compare_csv(cmp).find("\r\nbaseline,baseline,baseline,5,4.95,5.05,4,3.96,4.04,0.8,,,,\r\n"), std::string::npos) << compare_csv(cmp);
  std::string notes = cmp["notes"].dump();
  EXPECT_NE(notes.find("no measured champion in A"), std::string::npos);
  EXPECT_NE(notes.find("different dims"), std::string::npos);
}

}  // namespace
}  // namespace kopt::report
