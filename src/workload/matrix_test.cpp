#include "workload/matrix.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kopt::workload {

namespace {
double weight_sum(const std::vector<Case>& cs) {
  double s = 0;
  for (const auto& c : cs) s += c.weight;
  return s;
}
}  // namespace

TEST(WorkloadMatrix, AlignmentIsThePowerOfTwoTheValueHasCappedAt256AndAQuarter) {
  EXPECT_EQ(alignment_of(4096), 256);
  EXPECT_EQ(alignment_of(1000), 8);
  EXPECT_EQ(alignment_of(1030), 2);
  EXPECT_EQ(alignment_of(512), 128);  // v/4: 0.5 and 0.75 stay apart (256, 384)
  EXPECT_EQ(alignment_of(96), 16);    // 32 divides 96 but 32 > 96/4
  EXPECT_EQ(alignment_of(97), 1);
  EXPECT_EQ(alignment_of(2), 1);
}

TEST(WorkloadMatrix, ScaledValuesRoundDownToTheUsersAlignment) {
  EXPECT_EQ(scale_dim(4096, 0.5), 2048);
  EXPECT_EQ(scale_dim(4096, 0.75), 3072);
  EXPECT_EQ(scale_dim(1000, 0.5), 496);   // 500 -> a multiple of 8
  EXPECT_EQ(scale_dim(1000, 0.75), 744);  // 750 -> a multiple of 8
  EXPECT_EQ(scale_dim(1030, 0.5), 514);
  EXPECT_EQ(scale_dim(512, 0.75), 384);
  EXPECT_EQ(scale_dim(512, 0.5), 256);
  EXPECT_EQ(scale_dim(4096, 1.0), 4096);
  EXPECT_EQ(scale_dim(64, 0.01), 16);  // never below one alignment unit
}

TEST(WorkloadMatrix, DefaultMatrixScalesUpToThreeLargestAxesWithSeedWeights) {
  auto cs = default_matrix({{"M", 4096}, {"N", 4096}, {"K", 1000}});
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[0].name, "full");
  EXPECT_EQ(cs[0].requested, (Dims{{"M", 4096}, {"N", 4096}, {"K", 1000}}));
  EXPECT_DOUBLE_EQ(cs[0].weight, 0.5);
  EXPECT_EQ(cs[0].origin, CaseOrigin::kUser);
  EXPECT_EQ(cs[1].name, "scale_0.75");
  EXPECT_EQ(cs[1].requested, (Dims{{"M", 3072}, {"N", 3072}, {"K", 744}}));
  EXPECT_DOUBLE_EQ(cs[1].weight, 0.3);
  EXPECT_EQ(cs[2].name, "scale_0.5");
  EXPECT_EQ(cs[2].requested, (Dims{{"M", 2048}, {"N", 2048}, {"K", 496}}));
  EXPECT_DOUBLE_EQ(cs[2].weight, 0.2);
  EXPECT_EQ(cs[2].origin, CaseOrigin::kMatrix);
  for (const auto& c : cs) EXPECT_EQ(c.realised, c.requested);
  EXPECT_NEAR(weight_sum(cs), 1.0, 1e-12);
}

TEST(WorkloadMatrix, MoreThanThreeDimsScaleTheThreeLargestAndKeepSmallOnes) {
  // B=8 and H=16 are below 64: never scaled. Of S=2048, D=128, E=128, F=4096: the three largest; the tie
  // between D and E goes to D (alphabetical).
  Dims d{{"B", 8}, {"H", 16}, {"S", 2048}, {"D", 128}, {"E", 128}, {"F", 4096}};
  EXPECT_EQ(scaled_axes(d), (std::vector<std::string>{"D", "F", "S"}));
  auto cs = default_matrix(d);
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[2].requested.at("B"), 8);
  EXPECT_EQ(cs[2].requested.at("H"), 16);
  EXPECT_EQ(cs[2].requested.at("E"), 128);
  EXPECT_EQ(cs[2].requested.at("D"), 64);
  EXPECT_EQ(cs[2].requested.at("S"), 1024);
  EXPECT_EQ(cs[2].requested.at("F"), 2048);
}

TEST(WorkloadMatrix, CasesThatCoincideAreMergedWithTheirWeights) {
  auto cs = default_matrix({{"r", 3}, {"c", 40}});  // nothing >= 64: one case
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].name, "full");
  EXPECT_DOUBLE_EQ(cs[0].weight, 1.0);
  EXPECT_NE(cs[0].note.find("no dimension"), std::string::npos);
  auto off = matrix_cases(MatrixMode::kOff, {{"n", 1 << 20}});
  ASSERT_EQ(off.size(), 1u);
  EXPECT_DOUBLE_EQ(off[0].weight, 1.0);
  EXPECT_EQ(matrix_cases(MatrixMode::kDefault, {{"n", 1 << 20}}).size(), 3u);
}

TEST(WorkloadMatrix, ModeNames) {
  EXPECT_EQ(parse_matrix_mode("default"), MatrixMode::kDefault);
  EXPECT_EQ(parse_matrix_mode("off"), MatrixMode::kOff);
  EXPECT_FALSE(parse_matrix_mode("on"));
  EXPECT_EQ(matrix_mode_name(MatrixMode::kOff), "off");
}

const Dims kUser{{"M", 4096}, {"N", 4096}, {"K", 4096}};

TEST(ShapesFile, ParsesCasesWeightsAndComments) {
  auto r = parse_shapes("# my shapes\n\nM=1024 N=1024 K=1024   # square\nM=1000\tN=1030 K=64 weight=3\n", "s.txt", kUser);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "line3");
  EXPECT_EQ((*r)[0].line, 3);
  EXPECT_EQ((*r)[0].requested, (Dims{{"M", 1024}, {"N", 1024}, {"K", 1024}}));
  EXPECT_DOUBLE_EQ((*r)[0].weight, 0.25);  // 1 and 3, normalised
  EXPECT_DOUBLE_EQ((*r)[1].weight, 0.75);
  EXPECT_EQ((*r)[1].requested.at("N"), 1030);
  EXPECT_EQ((*r)[1].origin, CaseOrigin::kShapesFile);
  EXPECT_EQ((*r)[1].realised, (*r)[1].requested);
}

struct BadLine {
  const char* text;
  const char* expect;  // a fragment of the message
};

TEST(ShapesFile, EveryMalformedLineNamesFileLineAndTheFix) {
  const BadLine cases[] = {
      {"M=1 N=1 K=1\nM=2 N=2 Q=2 K=2\n", "s.txt:2: unknown dimension 'Q' (the kernel's dimensions are K, M, N)"},
      {"M=2 N=2\n", "s.txt:1: missing dimension K"},
      {"M=2\n", "missing dimensions K, N"},
      {"M=2 N=2 K=abc\n", "s.txt:1: K='abc' is not an integer"},
      {"M=2 N=2 K=1.5\n", "K='1.5' is not an integer"},
      {"M=2 N=2 K=0\n", "s.txt:1: K=0 is not positive"},
      {"M=2 N=2 K=-4\n", "K=-4 is not positive"},
      {"M=2 N=2 K=2 M=3\n", "dimension M is given twice"},
      {"M=2 N=2 K=2 weight=0\n", "weight '0' is not a positive number"},
      {"M=2 N=2 K=2 weight=x\n", "weight 'x' is not a positive number"},
      {"M=2 N=2 K=2 weight=1 weight=2\n", "weight is given twice"},
      {"M=2 N=2 K=2 fast\n", "'fast' is not NAME=VALUE"},
      {"=3 M=2 N=2 K=2\n", "'=3' is not NAME=VALUE"},
      {"M=2 N=2 K=99999999999999999999\n", "too large"},
      {"M=2 N=2 K=2\n# again\nK=2 M=2 N=2 weight=2\n", "s.txt:3: the same case as line 1"},
      {"# nothing\n\n", "s.txt: no cases"},
  };
  for (const auto& c : cases) {
    auto r = parse_shapes(c.text, "s.txt", kUser);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, ExitCode::kInput) << c.text;
    EXPECT_NE(r.error().message.find(c.expect), std::string::npos) << "got: " << r.error().message;
  }
}

TEST(ShapesFile, TooManyCasesIsAnError) {
  std::string text;
  for (size_t i = 1; i <= kMaxShapesFileCases + 1; ++i) text += "M=" + std::to_string(i) + " N=1 K=1\n";
  auto r = parse_shapes(text, "s.txt", kUser);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("at most"), std::string::npos);
}

TEST(ShapesFile, ReadsAFileAndSaysWhenItIsMissing) {
  auto path = std::filesystem::temp_directory_path() / "kopt_shapes_test.txt";
  std::ofstream(path) << "M=8 N=8 K=8\n";
  auto r = read_shapes_file(path, kUser, CaseOrigin::kHoldoutFile);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->front().origin, CaseOrigin::kHoldoutFile);
  std::filesystem::remove(path);
  auto missing = read_shapes_file(path, kUser);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ExitCode::kInput);
  auto sc = search_cases(MatrixMode::kOff, std::nullopt, kUser);
  ASSERT_TRUE(sc);
  EXPECT_EQ(sc->size(), 1u);
}

TEST(WorkloadMatrix, CasesRoundTripThroughJson) {
  auto cs = default_matrix(kUser);
  cs[1].realised["M"] = 1024;
  cs[1].note += "; fitted";
  auto back = cases_from_json(to_json(cs));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), cs.size());
  EXPECT_EQ((*back)[1].realised.at("M"), 1024);
  EXPECT_TRUE((*back)[1].fitted());
  EXPECT_FALSE((*back)[0].fitted());
  EXPECT_EQ((*back)[2].origin, CaseOrigin::kMatrix);
  EXPECT_DOUBLE_EQ((*back)[2].weight, cs[2].weight);
  EXPECT_EQ(to_json(cs)[1]["fitted"], true);
}

}  // namespace kopt::workload
