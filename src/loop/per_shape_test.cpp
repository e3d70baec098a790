// The per-shape dispatch's selection and bucket rule (pure), and the dispatcher's emitted source compiled with the real
// nvcc (compile only: no GPU is needed to load it and ask its rule).
#include "loop/per_shape.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "compile/pool.h"
#include "contract/signature.h"
#include "pipeline/prepare.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::loop {
namespace {

namespace fs = std::filesystem;

runner::PairedComparison cmp(double ratio, double lo, double hi) {
  runner::PairedComparison c;
  c.rounds = 30;
  c.median_ratio = ratio;
  c.ci95_low = lo;
  c.ci95_high = hi;
  return c;
}

std::vector<DispatchCase> rows_cases() {
  return {{"small", 1, {{"rows", 4096}, {"cols", 256}}},
          {"mid", 1, {{"rows", 4096}, {"cols", 4096}}},
          {"wide", 2, {{"rows", 4096}, {"cols", 65536}}}};
}

TEST(PerShapeDispatch, VaryingKeysAreTheDimsThatDiffer) {
  EXPECT_EQ(varying_keys(rows_cases()), std::vector<std::string>{"cols"});
  EXPECT_TRUE(varying_keys({{"a", 1, {{"n", 8}}}, {"b", 1, {{"n", 8}}}}).empty());
}

TEST(PerShapeDispatch, TheChampionStaysWhereAGainIsInsideTheNoise) {
  // c1 is 0.5% faster at every case with a CI that crosses 1 - 1%: inside the noise, never chosen.
  std::vector<DispatchContender> cs = {{"c1", {cmp(0.995, 0.985, 1.004), cmp(0.995, 0.99, 1.0), cmp(0.98, 0.95, 1.0)}}};
  auto p = plan_dispatch(rows_cases(), "champ", cs);
  EXPECT_FALSE(p.worthwhile);
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"champ", "champ", "champ"}));
  EXPECT_NE(p.reason.find("beyond the noise"), std::string::npos) << p.reason;
  ASSERT_EQ(p.buckets.size(), 1u);
  EXPECT_EQ(p.buckets[0].cases.size(), 3u);
}

TEST(PerShapeDispatch, AGainBeyondTheNoiseAtOneCaseAddsAConfigurationAndAdjacentCasesMerge) {
  std::vector<DispatchContender> cs = {
      {"narrow", {cmp(0.70, 0.68, 0.72), cmp(1.05, 1.03, 1.07), cmp(1.3, 1.2, 1.4)}},
      {"nothing", {cmp(0.95, 0.90, 1.001), std::nullopt, std::nullopt}},  // inside the noise at small: not chosen
  };
  auto p = plan_dispatch(rows_cases(), "champ", cs);
  ASSERT_TRUE(p.worthwhile) << p.reason;
  EXPECT_EQ(p.keys, std::vector<std::string>{"cols"});
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"narrow", "champ", "champ"}));
  EXPECT_EQ(p.configs, (std::vector<std::string>{"champ", "narrow"}));
  ASSERT_EQ(p.buckets.size(), 2u);
  EXPECT_EQ(p.buckets[0].config, "narrow");
  EXPECT_EQ(p.buckets[1].config, "champ");
  EXPECT_EQ(p.buckets[1].cases, (std::vector<std::string>{"mid", "wide"}));
}

TEST(PerShapeDispatch, BucketsFollowTheVaryingDimsNotTheListOrder) {
  auto cases = rows_cases();
  std::swap(cases[0], cases[2]);  // wide, mid, small
  std::vector<DispatchContender> cs = {{"x", {cmp(0.8, 0.78, 0.82), std::nullopt, cmp(0.8, 0.78, 0.82)}}};
  auto p = plan_dispatch(cases, "champ", cs);
  ASSERT_EQ(p.buckets.size(), 3u) << "small (x), mid (champ), wide (x): not adjacent, not merged";
  EXPECT_EQ(p.buckets[0].cases, std::vector<std::string>{"small"});
  EXPECT_EQ(p.buckets[1].cases, std::vector<std::string>{"mid"});
  EXPECT_EQ(p.buckets[2].cases, std::vector<std::string>{"wide"});
}

TEST(PerShapeDispatch, AConfigurationChosenElsewhereStandsInWhenTheFastestIsNotToldApartFromIt) {
  std::vector<DispatchContender> cs = {
      {"a", {cmp(0.60, 0.58, 0.62), cmp(0.81, 0.79, 0.83), std::nullopt}},
      {"b", {std::nullopt, cmp(0.80, 0.78, 0.82), cmp(0.9, 0.88, 0.92)}},
      {"c", {std::nullopt, std::nullopt, cmp(0.7, 0.68, 0.72)}},
  };
  auto p = plan_dispatch(rows_cases(), "champ", cs);
  // mid: b is fastest (0.80) but a (chosen at small) overlaps it: a serves mid. wide: c is faster beyond b's CI.
  EXPECT_EQ(p.chosen, (std::vector<std::string>{"a", "a", "c"}));
  EXPECT_EQ(p.configs, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(p.buckets.size(), 2u);
}

TEST(PerShapeDispatch, OneConfigurationFastestEverywhereIsNoDispatch) {
  std::vector<DispatchContender> cs = {{"all", {cmp(0.8, 0.78, 0.82), cmp(0.8, 0.78, 0.82), cmp(0.8, 0.78, 0.82)}}};
  auto p = plan_dispatch(rows_cases(), "champ", cs);
  EXPECT_FALSE(p.worthwhile);
  EXPECT_NE(p.reason.find("single configuration"), std::string::npos) << p.reason;
}

TEST(PerShapeDispatch, CasesThatDifferInNoScalarParameterGiveNoDispatch) {
  std::vector<DispatchCase> cases = {{"a", 1, {{"n", 8}}}, {"b", 1, {{"n", 8}}}};
  std::vector<DispatchContender> cs = {{"x", {cmp(0.5, 0.4, 0.6), std::nullopt}}};
  auto p = plan_dispatch(cases, "champ", cs);
  EXPECT_FALSE(p.worthwhile);
  EXPECT_NE(p.reason.find("no scalar parameter"), std::string::npos) << p.reason;
}

TEST(PerShapeDispatch, TheRuleAtBetweenAndOutsideTheCases) {
  auto cases = rows_cases();  // cols 256, 4096, 65536
  const std::vector<std::string> keys = {"cols"};
  EXPECT_EQ(nearest_case(cases, keys, {{"rows", 4096}, {"cols", 256}}), 0u);  // at
  EXPECT_EQ(nearest_case(cases, keys, {{"rows", 4096}, {"cols", 4096}}), 1u);
  EXPECT_EQ(nearest_case(cases, keys, {{"rows", 1}, {"cols", 65536}}), 2u) << "a dim outside the keys is not read";
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", 512}}), 0u);  // between: nearer small in log space
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", 2048}}), 1u);
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", 1024}}), 1u) << "ln 1024 is halfway from 256 to 4096: the tie goes to the larger";
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", 1}}), 0u);                 // below every case
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", 0}}), 0u);                 // not positive: as 1
  EXPECT_EQ(nearest_case(cases, keys, {{"cols", int64_t{1} << 40}}), 2u);  // above every case
  EXPECT_EQ(nearest_case(cases, keys, {}), 0u);                            // absent: as 1
}

TEST(PerShapeDispatch, TheRuleOverTwoVaryingDims) {
  std::vector<DispatchCase> cases = {
      {"a", 1, {{"M", 128}, {"N", 128}}}, {"b", 1, {{"M", 8192}, {"N", 128}}}, {"c", 1, {{"M", 128}, {"N", 8192}}}};
  auto keys = varying_keys(cases);
  ASSERT_EQ(keys, (std::vector<std::string>{"M", "N"}));
  EXPECT_EQ(nearest_case(cases, keys, {{"M", 8192}, {"N", 8192}}), 2u) << "b and c are as far: the later of equal size";
  EXPECT_EQ(nearest_case(cases, keys, {{"M", 4096}, {"N", 256}}), 1u);
  EXPECT_EQ(nearest_case(cases, keys, {{"M", 200}, {"N", 200}}), 0u);
}

// Two configurations of the loop's tile kernel built by the compile pool, the dispatcher emitted for them and built by
// the pool too; loaded (no GPU needed to load), its exported rule agrees with nearest_case at, between and outside the
// cases.
TEST(PerShapeDispatch, TheEmittedCudaDispatcherCompilesAndItsRuleIsTheSame) {
  if (!testing_support::executable(toolchain::find_nvcc())) GTEST_SKIP() << "nvcc not found";
  fs::path src = fs::path(testing_support::test_data_dir()) / "loop" / "tile_kernel.cu";
  fs::path out = fs::temp_directory_path() / ("kopt-dispatch-nvcc-" + std::to_string(::getpid()));
  fs::remove_all(out);
  pipeline::KernelJob job;
  job.kernel = src;
  std::vector<compile::CompileRequest> reqs;
  job.defines = {{"TILE", "32"}};
  reqs.push_back(pipeline::compile_request(job, "c0", src, out / "c0"));
  job.defines = {{"TILE", "128"}};
  reqs.push_back(pipeline::compile_request(job, "c1", src, out / "c1"));
  util::SystemRunner runner;
  auto built = compile::compile_batch(reqs, {2, ""}, runner);
  ASSERT_EQ(built.size(), 2u);
  fs::path dir = out / "dispatch";
  fs::create_directories(dir);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(built[i].ok()) << built[i].log_text.substr(0, 4000);
    fs::copy_file(built[i].library, dir / ("config_" + std::to_string(i) + ".so"));
  }
  auto text = util::read_file(src);
  ASSERT_TRUE(text.ok());
  auto sig = contract::parse_solve_signature(*text);
  ASSERT_TRUE(sig.ok());
  std::vector<DispatchCase> cases = {{"s", 1, {{"n", 4096}}}, {"m", 1, {{"n", 1 << 20}}}, {"l", 1, {{"n", 1 << 26}}}};
  auto keys = varying_keys(cases);
  ASSERT_TRUE(util::write_file_atomic(dir / "dispatch.cu",
                                      dispatcher_source(*sig, cases, keys, {1, 0, 0}, {"config_0.so", "config_1.so"}))
                  .ok());
  job.defines.clear();
  auto disp = compile::compile_batch({pipeline::compile_request(job, "dispatch", dir / "dispatch.cu", dir)}, {1, ""}, runner);
  ASSERT_EQ(disp.size(), 1u);
  ASSERT_TRUE(disp[0].ok()) << disp[0].log_text.substr(0, 6000);
  void* h = dlopen(disp[0].library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  using Rule = int (*)(const long long*);
  auto rule = reinterpret_cast<Rule>(dlsym(h, "kopt_dispatch_case"));
  ASSERT_NE(rule, nullptr);
  EXPECT_NE(dlsym(h, "solve"), nullptr);
  using Error = const char* (*)();
  auto load_error = reinterpret_cast<Error>(dlsym(h, "kopt_dispatch_load_error"));
  ASSERT_NE(load_error, nullptr);
  EXPECT_STREQ(load_error(), "") << "both configurations' solve() found beside the dispatcher when it loaded";
  for (long long n : {0LL, 1LL, 4096LL, 20000LL, 65536LL, 1LL << 20, 1LL << 23, 1LL << 26, 1LL << 40}) {
    const long long v[1] = {n};
    EXPECT_EQ(static_cast<size_t>(rule(v)), nearest_case(cases, keys, {{"n", n}})) << "n=" << n;
  }
  dlclose(h);
  // Without a configuration's library beside it, loading says which.
  fs::copy_file(disp[0].library, out / "moved.so");
  void* h2 = dlopen((out / "moved.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h2, nullptr) << dlerror();
  auto err2 = reinterpret_cast<Error>(dlsym(h2, "kopt_dispatch_load_error"));
  ASSERT_NE(err2, nullptr);
  EXPECT_NE(std::string(err2()).find("config_0.so"), std::string::npos) << err2();
  dlclose(h2);
  // A kernel over fp16 with int64 and size_t scalars (a corpus norm's signature): its dispatcher needs none of the
  // kernel's headers (pointers as void*) and compiles.
  auto half_sig = contract::parse_solve_signature(
      "extern \"C\" void solve(const __half* input, const __half* weight, __half* output, int64_t batch_size, size_t d) {}");
  ASSERT_TRUE(half_sig.ok()) << half_sig.error().message;
  std::vector<DispatchCase> half_cases = {{"s", 1, {{"batch_size", 64}, {"d", 512}}},
                                          {"l", 1, {{"batch_size", 64}, {"d", 16384}}}};
  const std::string half_src =
      dispatcher_source(*half_sig, half_cases, varying_keys(half_cases), {0, 1}, {"config_0.so", "config_1.so"});
  EXPECT_NE(half_src.find("void solve(const void* input, const void* weight, void* output, int64_t batch_size, size_t d)"),
            std::string::npos)
      << half_src;
  fs::create_directories(out / "half");
  ASSERT_TRUE(util::write_file_atomic(out / "half" / "dispatch.cu", half_src).ok());
  auto half_built = compile::compile_batch({pipeline::compile_request(job, "half", out / "half" / "dispatch.cu", out / "half")},
                                           {1, ""}, runner);
  ASSERT_EQ(half_built.size(), 1u);
  EXPECT_TRUE(half_built[0].ok()) << half_built[0].log_text.substr(0, 6000);
  fs::remove_all(out);
}

}  // namespace
}  // namespace kopt::loop
