#include "search/space.h"

#include <gtest/gtest.h>

#include "search/testing.h"

#include <algorithm>

#include "search/candidate.h"

namespace kopt::search {
namespace {

const Registry& reg() { return testing::test_registry(); }

const char* kKernel = R"(// @kopt param BM values=64,128 default=128
// @kopt param UNROLL range=1..4
// @kopt method vectorized_access
// @kopt method tma_loads
// @kopt constraint BM * UNROLL <= 256
#if KOPT_VECTORIZED_ACCESS
#endif
#if KOPT_TMA_LOADS
#endif
extern "C" void solve(float* x, int n) {}
)";

SearchSpace build(const SpaceOptions& opts, const char* text = kKernel, const std::string& file = "k.cu") {
  auto a = parse_annotations(text, file);
  EXPECT_TRUE(a.ok()) << a.error().message;
  auto s = build_space(a.value(), reg(), opts);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(s).value() : SearchSpace{};
}

std::vector<std::string> flag_methods(const SearchSpace& s) {
  std::vector<std::string> out;
  for (const auto& d : s.dims)
    if (d.kind == DimKind::kFlag) out.push_back(d.method);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(SearchSpace, ParamsGuardsAndFlagMethods) {
  SpaceOptions opts;  // CUDA, sm_90, reference numerics
  SearchSpace s = build(opts);
  ASSERT_GE(s.dims.size(), 4u);
  EXPECT_EQ(s.dims[0].name, "BM");
  EXPECT_EQ(s.dims[0].default_index, 1);
  EXPECT_EQ(s.dims[1].values, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(s.dims[2].kind, DimKind::kGuard);
  EXPECT_EQ(s.dims[2].name, "KOPT_VECTORIZED_ACCESS");
  EXPECT_EQ(s.dims[2].values, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.method_dim("tma_loads"), 3);
  auto flags = flag_methods(s);
  EXPECT_TRUE(has(flags, "l1_bypass_loads"));
  EXPECT_TRUE(has(flags, "register_cap"));
  EXPECT_TRUE(has(flags, "sm90a_target"));   // sm_90 device
  EXPECT_FALSE(has(flags, "fast_math"));     // tolerance_changing: approximate mode only
  const Dim& cap = s.dims[static_cast<size_t>(s.method_dim("register_cap"))];
  EXPECT_EQ(cap.values.front(), 0);  // off
  EXPECT_EQ(cap.values.size(), 9u);  // off + 8 caps
  EXPECT_TRUE(s.valid(s.default_config()));
  EXPECT_EQ(s.key(s.default_config()).find("BM=128,UNROLL=1,KOPT_VECTORIZED_ACCESS=0,KOPT_TMA_LOADS=0,KOPT_L1_CACHE_LOADS=0"), 0u)
      << s.key(s.default_config());

  Config c = s.default_config();
  c[1] = 3;  // UNROLL=4: 128*4 > 256
  EXPECT_FALSE(s.valid(c));
  c[0] = 0;  // BM=64
  EXPECT_TRUE(s.valid(c));
}

TEST(SearchSpace, OfferingFollowsNumericsArchAndBackend) {
  SpaceOptions opts;
  opts.numerics = NumericsMode::kApproximate;
  EXPECT_TRUE(has(flag_methods(build(opts)), "fast_math"));
  opts.numerics = NumericsMode::kStrict;
  auto strict = flag_methods(build(opts));
  EXPECT_FALSE(has(strict, "fast_math"));
  EXPECT_TRUE(has(strict, "register_cap"));  // bitwise preserving

  opts.numerics = NumericsMode::kReference;
  opts.arch = 80;
  SearchSpace a100 = build(opts);
  EXPECT_FALSE(has(flag_methods(a100), "sm90a_target"));
  // tma_loads needs sm_90: still a dimension (its guard must be defined) but pinned off, with a note.
  const Dim& tma = a100.dims[static_cast<size_t>(a100.method_dim("tma_loads"))];
  EXPECT_EQ(tma.values, std::vector<int64_t>{0});
  ASSERT_FALSE(a100.notes.empty());
  EXPECT_NE(a100.notes[0].find("k.cu:4: method 'tma_loads' needs sm_90"), std::string::npos);

  opts.arch = 100;  // sm_90a code does not run on later GPUs
  EXPECT_FALSE(has(flag_methods(build(opts)), "sm90a_target"));

  opts.arch = 90;
  opts.offer_flag_methods = false;
  EXPECT_TRUE(flag_methods(build(opts)).empty());
}

TEST(SearchSpace, RegistryErrorsNameTheAnnotation) {
  auto a = parse_annotations("// @kopt method vectorised_access\n#if KOPT_VECTORISED_ACCESS\n#endif\n", "k.cu");
  ASSERT_TRUE(a.ok());
  auto s = build_space(a.value(), reg(), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "k.cu:1: unknown method 'vectorised_access'; did you mean 'vectorized_access'? (kopt methods lists them)");
  EXPECT_EQ(s.error().code, ExitCode::kInput);

  a = parse_annotations("# @kopt method register_tiling\nif KOPT_REGISTER_TILING:\n  pass\n", "k.py");
  ASSERT_TRUE(a.ok());
  SpaceOptions triton;
  triton.backend = Backend::kTriton;
  s = build_space(a.value(), reg(), triton);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "k.py:1: method 'register_tiling' does not apply to triton kernels");

  a = parse_annotations("// @kopt param BM values=64,128\n// @kopt param BN values=256\n// @kopt constraint BM*BN <= 8192\n", "k.cu");
  ASSERT_TRUE(a.ok());
  s = build_space(a.value(), reg(), {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("k.cu:3: constraint 'BM*BN <= 8192' fails for the default values (BM=64,BN=256"),
            std::string::npos)
      << s.error().message;
}

TEST(SearchSpace, UnannotatedKernelStillHasASpace) {
  SearchSpace s = build({}, "extern \"C\" void solve(float* x, int n) {}\n");
  EXPECT_GE(s.dims.size(), 4u);  // the compiler-flag methods
  EXPECT_GT(s.size(), 16);
  for (const auto& d : s.dims) EXPECT_EQ(d.kind, DimKind::kFlag);
}

TEST(Candidate, ConfigBecomesDefinesFlagsAndAHash) {
  SearchSpace s = build({});
  Config c = s.default_config();
  c[2] = 1;  // vectorized_access on
  const int cap = s.method_dim("register_cap");
  const int bypass = s.method_dim("l1_bypass_loads");
  c[static_cast<size_t>(cap)] = 4;  // -maxrregcount=64
  c[static_cast<size_t>(bypass)] = 1;
  Candidate k = candidate_from_config(s, reg(), c, "k.cu", kKernel, "builtin");
  EXPECT_EQ(k.defines.at("BM"), "128");
  EXPECT_EQ(k.defines.at("UNROLL"), "1");
  EXPECT_EQ(k.defines.at("KOPT_VECTORIZED_ACCESS"), "1");
  EXPECT_EQ(k.defines.at("KOPT_TMA_LOADS"), "0");
  EXPECT_EQ(k.defines.count("KOPT_REGISTER_CAP"), 0u);  // flag methods are flags, not macros
  EXPECT_TRUE(has(k.flags, "-maxrregcount=64"));
  EXPECT_TRUE(has(k.flags, "-dlcm=cg"));
  EXPECT_EQ(k.methods, (std::vector<std::string>{"l1_bypass_loads", "register_cap", "vectorized_access"}));
  EXPECT_TRUE(k.guards.at("vectorized_access"));
  EXPECT_FALSE(k.guards.at("tma_loads"));
  EXPECT_EQ(k.params.at("MAXRREGCOUNT"), 64);
  EXPECT_EQ(k.content_hash.size(), 32u);

  Candidate base = candidate_from_config(s, reg(), s.default_config(), "k.cu", kKernel, "baseline");
  EXPECT_NE(base.content_hash, k.content_hash);
  EXPECT_EQ(candidate_from_config(s, reg(), c, "elsewhere.cu", kKernel, "builtin").content_hash, k.content_hash)
      << "the hash is about content, not paths";
  EXPECT_NE(candidate_from_config(s, reg(), c, "k.cu", std::string(kKernel) + " ", "builtin").content_hash, k.content_hash);
  auto j = to_json(k);
  EXPECT_EQ(j["defines"]["BM"], "128");
  EXPECT_EQ(j["config"].size(), s.dims.size());
}

TEST(Candidate, TritonConfigBecomesConstexprsAndLaunchOptions) {
  const char* py = R"(# @kopt param BLOCK values=64,128
# @kopt param num_warps values=4,8
# @kopt param num_stages values=2,3
# @kopt method grouped_launch_ordering
def kernel(KOPT_GROUPED_LAUNCH_ORDERING):
    if KOPT_GROUPED_LAUNCH_ORDERING:
        pass
)";
  SpaceOptions opts;
  opts.backend = Backend::kTriton;
  SearchSpace s = build(opts, py, "k.py");
  ASSERT_EQ(s.dims.size(), 4u);
  EXPECT_TRUE(flag_methods(s).empty());  // nvcc flags do not apply to Triton
  Config c = s.default_config();
  c[3] = 1;
  Candidate k = candidate_from_config(s, reg(), c, "k.py", py, "builtin");
  EXPECT_EQ(k.constexprs.at("BLOCK"), 64);
  EXPECT_EQ(k.constexprs.at("KOPT_GROUPED_LAUNCH_ORDERING"), 1);
  EXPECT_EQ(k.launch.at("num_warps"), 4);
  EXPECT_EQ(k.launch.at("num_stages"), 2);
  EXPECT_TRUE(k.defines.empty());
  EXPECT_TRUE(k.flags.empty());
}

}  // namespace
}  // namespace kopt::search
