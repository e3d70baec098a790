#include "cli/dims.h"

#include <gtest/gtest.h>

namespace kopt::cli {

TEST(Dims, ParsesNamedPositiveIntegers) {
  auto d = parse_dims({"--M=4096", "--N=128", "--K=1", "--batch_size=7"});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->at("M"), 4096);
  EXPECT_EQ(d->at("N"), 128);
  EXPECT_EQ(d->at("K"), 1);
  EXPECT_EQ(d->at("batch_size"), 7);
  EXPECT_EQ(format_dims(*d), "K=1 M=4096 N=128 batch_size=7");
}

TEST(Dims, RejectsBadValuesWithClearMessages) {
  auto not_int = parse_dims({"--M=abc"});
  ASSERT_FALSE(not_int.ok());
  EXPECT_EQ(not_int.error().code, ExitCode::kInput);
  EXPECT_NE(not_int.error().message.find("not an integer"), std::string::npos);
  auto frac = parse_dims({"--M=4.5"});
  ASSERT_FALSE(frac.ok());
  auto zero = parse_dims({"--N=0"});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("positive"), std::string::npos);
  auto neg = parse_dims({"--N=-3"});
  ASSERT_FALSE(neg.ok());
  auto big = parse_dims({"--N=99999999999999999999999"});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("too large"), std::string::npos);
  auto empty = parse_dims({"--N="});
  ASSERT_FALSE(empty.ok());
}

TEST(Dims, RejectsNamesThatAreNotIdentifiers) {
  for (const char* arg : {"--1M=4", "--M-N=4", "--=4", "--M.x=3"}) {
    auto d = parse_dims({arg});
    ASSERT_FALSE(d.ok()) << arg;
    EXPECT_NE(d.error().message.find("identifier"), std::string::npos) << arg << ": " << d.error().message;
  }
}

TEST(Dims, RejectsPositionalsMissingValuesAndDuplicates) {
  EXPECT_FALSE(parse_dims({"M=4"}).ok());
  auto noval = parse_dims({"--M"});
  ASSERT_FALSE(noval.ok());
  EXPECT_NE(noval.error().message.find("--M=VALUE"), std::string::npos);
  auto dup = parse_dims({"--M=4", "--M=8"});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("twice"), std::string::npos);
}

TEST(Dims, ANearMissOfAKnownOptionIsReportedAsMistypedOption) {
  auto d = parse_dims({"--iteration=3"}, {"iterations", "branches"});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("did you mean '--iterations'"), std::string::npos) << d.error().message;
  // Short names such as M are never mistaken for options.
  EXPECT_TRUE(parse_dims({"--M=3"}, {"ref", "json"}).ok());
}

TEST(Dims, TheDimOptionIsTheUnambiguousForm) {
  DimContext c;
  c.command = "kopt optimize";
  c.dim_args = {"M=4096", "iterations=3"};
  c.short_args = {"--N=128"};
  auto d = resolve_dims(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(format_dims(*d), "M=4096 N=128 iterations=3");
  c.dim_args = {"M"};
  auto bad = resolve_dims(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kInput);
  EXPECT_NE(bad.error().message.find("--dim needs NAME=VALUE"), std::string::npos) << bad.error().message;
  c.dim_args = {"N=4"};  // N is also given in the short form
  auto twice = resolve_dims(c);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("N is given twice"), std::string::npos) << twice.error().message;
}

TEST(Dims, AnOptionThatTookAKernelsDimensionIsAmbiguous) {
  // optimize --iterations=3 with solve(float* y, int n, int iterations): CLI11 gave 3 to --iterations.
  DimContext c;
  c.command = "kopt optimize";
  c.short_args = {"--n=16"};
  c.own_options = {"iterations", "seed"};
  c.given_options["iterations"] = {"a cap on the number of iterations", "3"};
  c.kernel_names = {{"n", "solve()'s scalar parameter"}, {"iterations", "solve()'s scalar parameter"}};
  auto d = resolve_dims(c);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ExitCode::kInput);
  const std::string& m = d.error().message;
  EXPECT_NE(m.find("--iterations is ambiguous"), std::string::npos) << m;
  EXPECT_NE(m.find("solve()'s scalar parameter 'iterations'"), std::string::npos) << m;
  EXPECT_NE(m.find("kopt optimize's own option --iterations (a cap on the number of iterations)"), std::string::npos) << m;
  EXPECT_NE(m.find("--dim iterations=3"), std::string::npos) << m;
  // Given as --dim, the option keeps its own meaning.
  c.dim_args = {"iterations=3"};
  auto ok = resolve_dims(c);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->at("iterations"), 3);
  // An option whose name the kernel does not take is only an option.
  c.dim_args.clear();
  c.kernel_names.erase("iterations");
  EXPECT_TRUE(resolve_dims(c).ok());
}

TEST(Dims, AShortFormNameThatIsAnotherCommandsOptionIsAmbiguousWhereTheKernelTakesIt) {
  // check --seed=3 with solve(..., int seed): check has no --seed, optimize has: the same line must not change meaning.
  DimContext c;
  c.command = "kopt check";
  c.short_args = {"--seed=3", "--n=16"};
  c.own_options = {"seeds", "ref"};
  c.kernel_names = {{"n", "solve()'s scalar parameter"}, {"seed", "solve()'s scalar parameter"}};
  auto d = resolve_dims(c);
  ASSERT_FALSE(d.ok());
  const std::string& m = d.error().message;
  EXPECT_NE(m.find("--seed is ambiguous"), std::string::npos) << m;
  EXPECT_NE(m.find("an option of kopt optimize"), std::string::npos) << m;
  EXPECT_NE(m.find("--dim seed=3"), std::string::npos) << m;
  EXPECT_EQ(m.find("did you mean"), std::string::npos) << m;
  c.short_args = {"--n=16"};
  c.dim_args = {"seed=3"};
  EXPECT_TRUE(resolve_dims(c).ok());
  // Where the kernel does not take it, the short form is a dimension as before (its contract check warns if unused).
  c.dim_args.clear();
  c.short_args = {"--iterations=3", "--n=16"};
  auto plain = resolve_dims(c);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->at("iterations"), 3);
}

TEST(Dims, ANameTheKernelTakesIsNeverAMistypedOption) {
  DimContext c;
  c.command = "kopt bench";
  c.own_options = {"seeds"};
  c.short_args = {"--seedz=5"};
  auto typo = resolve_dims(c);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean '--seeds'"), std::string::npos) << typo.error().message;
  c.kernel_names = {{"seedz", "solve()'s scalar parameter"}};
  auto d = resolve_dims(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->at("seedz"), 5);
}

TEST(Dims, TheKernelsDimensionNamesComeFromItsEntryPoint) {
  auto cuda = kernel_dim_names("extern \"C\" void solve(const float* x, float* y, int n, int iterations) {}\n", false);
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda.at("iterations"), "solve()'s scalar parameter");
  EXPECT_TRUE(cuda.count("n"));
  auto triton = kernel_dim_names("def setup(seed, n_rows, n_cols: int = 4, *, eps=1e-5):\n    pass\n\n"
                                 "def run_kernel(x, y, BLOCK=128):\n    pass\n", true);
  EXPECT_EQ(triton.size(), 3u);
  for (const char* n : {"n_rows", "n_cols", "eps"}) EXPECT_EQ(triton[n], "setup()'s argument") << n;
  EXPECT_TRUE(kernel_dim_names("__global__ void k() {}\n", false).empty()) << "no solve(): nothing known";
}

}  // namespace kopt::cli
