#include "search/derive.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "search/derive_text.h"
#include "search/registry.h"
#include "search/space.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;
using testing_support::source_dir;
using testing_support::test_data_dir;

std::string data_path(const std::string& name) { return test_data_dir() + "/derive/" + name; }
std::string example_path(const std::string& name) { return source_dir() + "/examples/plain/" + name; }

Derivation derive_file(const std::string& path) {
  auto text = util::read_file(path);
  EXPECT_TRUE(text.ok()) << path;
  auto d = derive(text.ok() ? *text : "", fs::path(path).filename().string());
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : Derivation{};
}

const DerivedParam* param(const Derivation& d, const std::string& name) {
  for (const auto& p : d.params)
    if (p.name == name) return &p;
  return nullptr;
}

bool has_constraint(const Derivation& d, const std::string& expr) {
  for (const auto& c : d.constraints)
    if (c.expr == expr) return true;
  return false;
}

bool has_note(const Derivation& d, const std::string& part) {
  for (const auto& n : d.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The space an annotated copy declares (without compiler-flag methods).
SearchSpace space_of(const std::string& instrumented, const std::string& file) {
  auto ann = parse_annotations(instrumented, file);
  auto reg = registry();
  if (!ann.ok() || !reg.ok()) {
    ADD_FAILURE() << (ann.ok() ? reg.error().message : ann.error().message);
    return {};
  }
  SpaceOptions so;
  so.offer_flag_methods = false;
  auto space = build_space(*ann, reg->get(), so);
  EXPECT_TRUE(space.ok()) << space.error().message;
  return space.ok() ? *space : SearchSpace{};
}

// Every point of the space that its constraints allow, as its bindings.
std::vector<Bindings> valid_points(const SearchSpace& space) {
  std::vector<Bindings> out;
  Config c(space.dims.size(), 0);
  for (int i = 0; i < static_cast<int>(space.size()); ++i) {
    int k = i;
    for (size_t j = 0; j < c.size(); ++j) {
      int n = static_cast<int>(space.dims[j].values.size());
      c[j] = k % n, k /= n;
    }
    if (space.valid(c)) out.push_back(space.bindings(c));
  }
  return out;
}

TEST(DeriveMask, BlanksCommentsAndStringsKeepingPositions) {
  std::string cu = "int a = 1; // BLOCK\nconst char* s = \"BLOCK\"; /* BLOCK\n */ int b;";
  std::string m = mask_code(cu, SourceLanguage::kCuda);
  ASSERT_EQ(m.size(), cu.size());
  EXPECT_EQ(m.find("BLOCK"), std::string::npos);
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 2);
  EXPECT_NE(m.find("int b;"), std::string::npos);
  std::string py = "x = 1  # BLOCK\ns = 'BLOCK'\n\"\"\"BLOCK\"\"\"\ny = 2\n";
  std::string pm = mask_code(py, SourceLanguage::kPython);
  EXPECT_EQ(pm.find("BLOCK"), std::string::npos);
  EXPECT_NE(pm.find("y = 2"), std::string::npos);
}

// Issue 35: a wrapper that calls a project's host launcher has no launch of its own; its note names the launches of
// the local files it includes (kopt derives from the wrapper only), and says so plainly where there are none.
TEST(DeriveCuda, AWrapperWithoutALaunchNamesTheLaunchesOfTheFilesItIncludes) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("kopt_derive_includes_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "project");
  ASSERT_TRUE(util::write_file_atomic(dir / "project" / "launcher.cu",
                                      "template <int B> __global__ void scale(float* x) {}\n"
                                      "// not a launch: noise<<<1, 1>>>(x);\n"
                                      "void launch(float* x, int n) {\n"
                                      "  scale<128><<<(n + 127) / 128, 128>>>(x);\n"
                                      "}\n")
                  .ok());
  const std::string wrapper =
      "#include <cstdio>\n#include \"project/launcher.cu\"\n#include \"project/missing.h\"\n"
      "extern \"C\" void solve(float* x, int n) { launch(x, n); }\n";
  ASSERT_TRUE(util::write_file_atomic(dir / "kernel.cu", wrapper).ok());
  auto included = local_includes(dir / "kernel.cu", wrapper);
  ASSERT_EQ(included.size(), 1u) << "a quoted include that exists; not <cstdio>, not a missing one";
  EXPECT_EQ(included[0].spelled, "project/launcher.cu");
  auto d = derive(wrapper, "kernel.cu", included);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty()) << "nothing derived from another file";
  EXPECT_TRUE(has_note(*d, "project/launcher.cu: scale (line 4)")) << fmt::format("{}", d->notes);
  EXPECT_FALSE(has_note(*d, "noise")) << "a launch in a comment is no launch";
  EXPECT_TRUE(has_note(*d, "copy its launcher into this file"));
  auto alone = derive(wrapper, "kernel.cu");
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(has_note(*alone, "launched by code it includes")) << fmt::format("{}", alone->notes);
  fs::remove_all(dir);
}

TEST(DeriveCuda, SgemmTiledNamedConstantsAndTheirStaticAsserts) {
  Derivation d = derive_file(example_path("sgemm_tiled/kernel.cu"));
  ASSERT_EQ(d.params.size(), 5u);
  for (const char* n : {"BM_VALUE", "BN_VALUE", "BK_VALUE", "TM_VALUE", "TN_VALUE"}) ASSERT_NE(param(d, n), nullptr) << n;
  const DerivedParam& bm = *param(d, "BM_VALUE");
  EXPECT_EQ(bm.origin, "BM");
  EXPECT_EQ(bm.site, DeriveSite::kNamedConstant);
  EXPECT_EQ(bm.default_value, 128);
  EXPECT_EQ(bm.values, (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024}));  // d/8..8d
  EXPECT_EQ(bm.line, 60);
  EXPECT_TRUE(contains(bm.reason, "template argument of sgemm2DBlocktiling<...> at line 68")) << bm.reason;
  EXPECT_EQ(param(d, "BK_VALUE")->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  // TM and TN size the per-thread accumulators acc[TM * TN]: per-thread work, at most 64 elements a thread.
  EXPECT_EQ(param(d, "TM_VALUE")->role, ValueRole::kPerThread);
  EXPECT_EQ(param(d, "TN_VALUE")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(has_constraint(d, "(TM_VALUE * TN_VALUE) <= 64"));
  // The static_asserts, NUM_THREADS expanded; the block's threads; the shared memory of As and Bs.
  EXPECT_TRUE(has_constraint(d, "BM_VALUE % TM_VALUE == 0 && BN_VALUE % TN_VALUE == 0"));
  EXPECT_TRUE(has_constraint(d, "(BM_VALUE * BK_VALUE) % ((BM_VALUE * BN_VALUE) / (TM_VALUE * TN_VALUE)) == 0"));
  EXPECT_TRUE(has_constraint(d, "(((BM_VALUE * BN_VALUE) / (TM_VALUE * TN_VALUE))) <= 1024"));
  EXPECT_TRUE(has_constraint(d, "4 * (BM_VALUE * BK_VALUE) + 4 * (BK_VALUE * BN_VALUE) <= 49152"));
  // The copy: macros with the defaults, the constants initialised from them, the launch untouched.
  EXPECT_TRUE(contains(d.instrumented, "#ifndef BM_VALUE\n#define BM_VALUE 128\n#endif"));
  EXPECT_TRUE(contains(d.instrumented, "const uint BM = BM_VALUE;"));
  EXPECT_TRUE(contains(d.instrumented, "// @kopt param BM_VALUE values=16,32,64,128,256,512,1024 default=128\n"));
  EXPECT_TRUE(contains(d.instrumented, "sgemm2DBlocktiling<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>"));
  EXPECT_TRUE(contains(d.instrumented, "static_assert(BM % TM == 0 && BN % TN == 0"));
  EXPECT_TRUE(d.methods.empty());  // its block is an expression of parameters, not one parameter

  // The copy declares exactly the derived space; its constraints keep it modest.
  const SearchSpace space = space_of(d.instrumented, "kernel.cu");
  // 7 x 7 x 7 values of the block tile, 5 x 5 of the thread tile; the constraints (threads, shared memory,
  // accumulators, divisibility) leave a fraction, and none with more than 64 accumulators a thread.
  EXPECT_EQ(space.size(), 8575);
  int valid = 0, over_64 = 0;
  for (const auto& b : valid_points(space)) {
    ++valid;
    over_64 += b.at("TM_VALUE") * b.at("TN_VALUE") > 64;
  }
  EXPECT_GT(valid, 100);
  EXPECT_LT(valid, 8575 / 4);
  EXPECT_EQ(over_64, 0);
  EXPECT_TRUE(space.valid(space.default_config()));
}

TEST(DeriveCuda, NamedConstantUsedAsBlockSizeAndLoopBoundIsOneParameter) {
  Derivation d = derive_file(data_path("named_constants.cu"));
  ASSERT_EQ(d.params.size(), 2u);
  const DerivedParam* block = param(d, "BLOCK_VALUE");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->role, ValueRole::kBlockThreads);
  EXPECT_EQ(block->values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_TRUE(contains(block->reason, "block size of the launch of rows_sum at line 33")) << block->reason;
  const DerivedParam* rows = param(d, "kRows_VALUE");
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->site, DeriveSite::kStaticMember);
  EXPECT_EQ(rows->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_TRUE(contains(d.instrumented, "constexpr int BLOCK = BLOCK_VALUE;"));
  EXPECT_TRUE(contains(d.instrumented, "static constexpr int kRows = kRows_VALUE;"));
  // Uses are untouched (the constant changes), and so are the string and the comment.
  EXPECT_TRUE(contains(d.instrumented, "for (int t = 0; t < BLOCK; ++t)"));
  EXPECT_TRUE(contains(d.instrumented, "rows_sum<<<blocks, BLOCK>>>"));
  EXPECT_TRUE(contains(d.instrumented, "const char* banner = \"BLOCK = 999\";  // BLOCK = 999 in a comment"));
  EXPECT_TRUE(has_constraint(d, "4 * (BLOCK_VALUE) <= 49152"));
}

TEST(DeriveCuda, DefinesRedefinedReservedAndCollidingNames) {
  Derivation d = derive_file(data_path("defines.cu"));
  const DerivedParam* threads = param(d, "THREADS");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->site, DeriveSite::kDefine);
  EXPECT_EQ(threads->role, ValueRole::kBlockThreads);
  EXPECT_EQ(threads->default_value, 256);
  EXPECT_EQ(threads->line, 5);
  EXPECT_TRUE(contains(d.instrumented, "#ifndef THREADS\n#define THREADS 256\n#endif"));
  // TILE (defined twice), DEPTH (#undef'd), KOPT_WIDTH (reserved), COMMENTED (a comment) are not derived.
  for (const char* n : {"TILE", "DEPTH", "KOPT_WIDTH", "COMMENTED"}) EXPECT_EQ(param(d, n), nullptr) << n;
  EXPECT_TRUE(has_note(d, "TILE is defined more than once or #undef'd (lines 6, 23, 22 (#undef))"));
  EXPECT_TRUE(has_note(d, "DEPTH is defined more than once or #undef'd"));
  EXPECT_TRUE(has_note(d, "KOPT_WIDTH: the KOPT_ prefix is reserved"));
  EXPECT_TRUE(contains(d.instrumented, "#define TILE 16\n#define DEPTH 4\n"));  // left as written
  // twice's literal block would be TWICE_BLOCK, which the file already defines.
  const DerivedParam* tb = param(d, "TWICE_BLOCK_2");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(param(d, "TWICE_BLOCK"), nullptr);
  EXPECT_TRUE(contains(d.instrumented, "twice<<<(n + (TWICE_BLOCK_2 - 1)) / TWICE_BLOCK_2, TWICE_BLOCK_2>>>(x, n);"));
  EXPECT_TRUE(contains(d.instrumented, "#define TWICE_BLOCK 1\n"));
  for (const auto& p : d.params) EXPECT_NE(p.name.rfind("KOPT_", 0), 0u) << p.name;
}

TEST(DeriveCuda, LiteralTemplateArgumentsLaunchesAndLaunchBounds) {
  Derivation d = derive_file(data_path("launch_literals.cu"));
  const DerivedParam* fb = param(d, "FILL_BLOCK");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(fb->site, DeriveSite::kTemplateLiteral);
  EXPECT_EQ(fb->role, ValueRole::kBlockThreads);  // the launch's block size is the same parameter
  EXPECT_TRUE(contains(fb->reason, "template argument BLOCK = 128 of fill<...> at line 29; also the block size")) << fb->reason;
  ASSERT_NE(param(d, "FILL_ITEMS"), nullptr);
  EXPECT_EQ(param(d, "FILL_ITEMS")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(param(d, "FILL_KCHECK"), nullptr);  // bool template arguments are not integers
  EXPECT_TRUE(contains(d.instrumented, "fill<FILL_BLOCK, FILL_ITEMS, true><<<(n + 255) / 256, FILL_BLOCK>>>"));
  EXPECT_TRUE(has_note(d, "the grid of fill does not divide by its literal block size 128"));
  // (n + 255) / 256, 256: one parameter, and add_one's __launch_bounds__(256) follows it.
  const DerivedParam* ab = param(d, "ADD_ONE_BLOCK");
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(ab->site, DeriveSite::kLaunchLiteral);
  EXPECT_EQ(ab->values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_TRUE(contains(ab->reason, "also __launch_bounds__ of add_one at line 16")) << ab->reason;
  EXPECT_TRUE(contains(d.instrumented, "add_one<<<(n + (ADD_ONE_BLOCK - 1)) / ADD_ONE_BLOCK, ADD_ONE_BLOCK>>>(x, n);"));
  EXPECT_TRUE(contains(d.instrumented, "__global__ void __launch_bounds__(ADD_ONE_BLOCK) add_one("));
  // twice: its block size is the caller's, so its bound only grows (always safe); the min-blocks argument too.
  EXPECT_EQ(param(d, "TWICE_MAX_THREADS")->values, (std::vector<int64_t>{128, 256, 512, 1024}));
  EXPECT_EQ(param(d, "TWICE_MIN_BLOCKS")->values, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(param(d, "TWICE_MIN_BLOCKS")->default_value, 4);
  EXPECT_TRUE(contains(d.instrumented, "__launch_bounds__(TWICE_MAX_THREADS, TWICE_MIN_BLOCKS) twice("));
  EXPECT_TRUE(contains(d.instrumented, "const char* msg = \"256 threads\";"));  // strings are never rewritten
  // fill gets the launch_bounds variant (its block is FILL_BLOCK); add_one and twice already have bounds.
  ASSERT_EQ(d.methods.size(), 1u);
  EXPECT_TRUE(contains(d.methods[0].reason, "__launch_bounds__(FILL_BLOCK) on fill")) << d.methods[0].reason;
  EXPECT_FALSE(contains(d.methods[0].reason, "add_one"));
  EXPECT_EQ(d.params.size(), 5u);
}

TEST(DeriveCuda, ElementwiseTemplatedGridFollowsBlockAndItems) {
  Derivation d = derive_file(example_path("elementwise_templated/kernel.cu"));
  ASSERT_EQ(d.params.size(), 2u);
  EXPECT_EQ(param(d, "AXPBY_KERNEL_BLOCK")->values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(param(d, "AXPBY_KERNEL_ITEMS")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));  // items per thread
  EXPECT_TRUE(contains(d.instrumented,
                       "int blocks = (n + AXPBY_KERNEL_BLOCK * AXPBY_KERNEL_ITEMS - 1) / (AXPBY_KERNEL_BLOCK * AXPBY_KERNEL_ITEMS);"));
  EXPECT_TRUE(contains(d.instrumented,
                       "axpby_kernel<float, AXPBY_KERNEL_BLOCK, AXPBY_KERNEL_ITEMS><<<blocks, AXPBY_KERNEL_BLOCK>>>"));
}

TEST(DeriveCuda, ReductionDefineIsBlockSizeAndTreeLoopBound) {
  Derivation d = derive_file(example_path("reduction_define/kernel.cu"));
  const DerivedParam* b = param(d, "BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->role, ValueRole::kBlockThreads);
  EXPECT_TRUE(contains(b->reason, "#define BLOCK_SIZE 256 at line 6: block size of the launch of block_sum at line 28")) << b->reason;
  ASSERT_NE(param(d, "ITEMS_PER_THREAD"), nullptr);
  EXPECT_TRUE(contains(param(d, "ITEMS_PER_THREAD")->reason, "launch configuration of block_sum"));
  // The tree loop keeps reading the macro, so block size and loop bound change together.
  EXPECT_TRUE(contains(d.instrumented, "for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1)"));
  EXPECT_TRUE(contains(d.instrumented, "#ifndef BLOCK_SIZE\n#define BLOCK_SIZE 256\n#endif"));
  EXPECT_TRUE(has_constraint(d, "4 * (BLOCK_SIZE) <= 49152"));
  // __launch_bounds__ from the compile-time block size: a guarded method variant, off in the baseline.
  ASSERT_EQ(d.methods.size(), 1u);
  EXPECT_EQ(d.methods[0].id, "launch_bounds");
  EXPECT_TRUE(contains(d.methods[0].reason, "__launch_bounds__(BLOCK_SIZE) on block_sum")) << d.methods[0].reason;
  EXPECT_TRUE(contains(d.instrumented, "__global__ void \n#if KOPT_LAUNCH_BOUNDS\n__launch_bounds__(BLOCK_SIZE)\n#endif\nblock_sum("));
  EXPECT_TRUE(contains(d.instrumented, "#ifndef KOPT_LAUNCH_BOUNDS\n#define KOPT_LAUNCH_BOUNDS 0\n#endif"));
  EXPECT_TRUE(contains(d.instrumented, "// @kopt method launch_bounds\n"));
}

TEST(DeriveCuda, PragmaUnrollFactorsBecomeConstexprs) {
  Derivation d = derive_file(data_path("unroll.cu"));
  ASSERT_EQ(d.params.size(), 3u);
  // The launcher's `const int threads = n > 1 << 20 ? 512 : 256;`: a block size computed at run time (0 keeps it).
  const DerivedParam* threads = param(d, "threads_VALUE");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->role, ValueRole::kLauncherThreads);
  EXPECT_EQ(threads->values, (std::vector<int64_t>{0, 32, 64, 128, 256, 512, 1024}));
  EXPECT_TRUE(contains(d.instrumented, "const int threads = (threads_VALUE == 0 ? (n > 1 << 20 ? 512 : 256) : threads_VALUE);"));
  EXPECT_EQ(param(d, "UNROLL_L9")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(param(d, "UNROLL_L11")->default_value, 8);
  // nvcc does not expand macros in #pragma unroll: the pragma names a constexpr the macro initialises.
  EXPECT_TRUE(contains(d.instrumented, "constexpr int derived_unroll_l9 = UNROLL_L9;"));
  EXPECT_TRUE(contains(d.instrumented, "#pragma unroll derived_unroll_l9\n"));
  EXPECT_TRUE(contains(d.instrumented, "  #pragma unroll derived_unroll_l11\n"));
  EXPECT_TRUE(contains(d.instrumented, "#pragma unroll\n  for (int k = 0; k < 4; ++k)"));
  EXPECT_TRUE(contains(d.instrumented, "/* #pragma unroll 16 */"));
  EXPECT_TRUE(contains(d.instrumented, "comment (never rewritten): #pragma unroll 2\n"));
}

TEST(DeriveCuda, Dim3LiteralBlocksOneParameterPerDimensionGridFollows) {
  Derivation d = derive_file(data_path("dim3_blocks.cu"));
  ASSERT_EQ(d.params.size(), 5u);
  const DerivedParam* sx = param(d, "SCALE2D_BLOCK_X");
  ASSERT_NE(sx, nullptr);
  EXPECT_EQ(sx->site, DeriveSite::kLaunchLiteral);
  EXPECT_EQ(sx->role, ValueRole::kBlockDim);
  EXPECT_EQ(sx->default_value, 16);
  EXPECT_EQ(sx->values, (std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128}));  // d/8..8d
  EXPECT_EQ(sx->line, 36);
  EXPECT_TRUE(contains(sx->reason, "literal block x = 16 of dim3(16, 16) at the launch of scale2d at line 36")) << sx->reason;
  EXPECT_EQ(param(d, "SCALE2D_BLOCK_Y")->values, (std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(param(d, "ADD2D_BLOCK_X")->values, (std::vector<int64_t>{4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(param(d, "ADD2D_BLOCK_Y")->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(param(d, "FILL1D_BLOCK_X")->values, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(param(d, "FILL1D_BLOCK_Y"), nullptr);
  EXPECT_TRUE(has_constraint(d, "SCALE2D_BLOCK_X * SCALE2D_BLOCK_Y <= 1024"));
  EXPECT_TRUE(has_constraint(d, "ADD2D_BLOCK_X * ADD2D_BLOCK_Y <= 1024"));
  EXPECT_EQ(d.constraints.size(), 2u);  // one dimension's values are within 1024 already
  // The block and, per axis, the grid (its expression and the statement defining its variable).
  EXPECT_TRUE(contains(d.instrumented, "dim3 block(SCALE2D_BLOCK_X, SCALE2D_BLOCK_Y);"));
  EXPECT_TRUE(contains(d.instrumented, "dim3 grid((w + (SCALE2D_BLOCK_X - 1)) / SCALE2D_BLOCK_X, (h + (SCALE2D_BLOCK_Y - 1)) / SCALE2D_BLOCK_Y);"));
  EXPECT_TRUE(contains(d.instrumented, "int gx = (w + (ADD2D_BLOCK_X - 1)) / ADD2D_BLOCK_X;"));
  EXPECT_TRUE(contains(d.instrumented,
                       "add2d<<<dim3(gx, (h + (ADD2D_BLOCK_Y - 1)) / ADD2D_BLOCK_Y), dim3(ADD2D_BLOCK_X, ADD2D_BLOCK_Y)>>>"));
  EXPECT_TRUE(contains(d.instrumented, "fill1d<<<(w * h + (FILL1D_BLOCK_X - 1)) / FILL1D_BLOCK_X, dim3(FILL1D_BLOCK_X)>>>"));
  EXPECT_TRUE(contains(d.instrumented, "#ifndef ADD2D_BLOCK_Y\n#define ADD2D_BLOCK_Y 8\n#endif"));
  EXPECT_TRUE(contains(d.instrumented, "// @kopt param SCALE2D_BLOCK_X values=2,4,8,16,32,64,128 default=16\n"));
  // The tiled transpose hard-codes 16 (its __shared__ tile, its indexing): its launch is left as written.
  EXPECT_EQ(param(d, "TRANSPOSE_TILED_BLOCK_X"), nullptr);
  EXPECT_TRUE(contains(d.instrumented, "dim3 tb(16, 16);\n  dim3 tg((w + 15) / 16, (h + 15) / 16);"));
  EXPECT_TRUE(has_note(d, "line 42: the dim3(16, 16) block of the launch of transpose_tiled is left alone: 16 also appears in "
                          "the kernel's code (line 23): it may hard-code its block"));
  EXPECT_TRUE(d.methods.empty());
}

TEST(DeriveCuda, Dim3BlocksTheKernelMayHardCodeAreLeftAlone) {
  const char* cu = R"(#include <cuda_runtime.h>
__global__ void padded(float* x) {
  __shared__ float t[32][33];
  t[threadIdx.y][threadIdx.x] = x[threadIdx.x];
  x[threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
__global__ void other(float* x);
__global__ void shared_block(float* x) { x[threadIdx.x] = 0.0f; }
extern "C" void solve(float* x, int n) {
  padded<<<1, dim3(32, 8)>>>(x);
  other<<<1, dim3(64, 2)>>>(x);
  dim3 b(64, 2);
  shared_block<<<1, b>>>(x);
  shared_block<<<2, b>>>(x);
  dim3 named(n, 4);
  shared_block<<<1, named>>>(x);
}
)";
  auto d = derive(cu, "hard.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->empty());
  EXPECT_TRUE(has_note(*d, "line 10: the dim3(32, 8) block of the launch of padded is left alone: 32 also appears in the "
                           "kernel's code (line 3)"));
  EXPECT_TRUE(has_note(*d, "line 11: the dim3(64, 2) block of the launch of other is left alone: other is not defined in this file"));
  EXPECT_TRUE(has_note(*d, "line 13: the dim3(64, 2) block of the launch of shared_block is left alone: b is used by more than one launch"));
}

TEST(DeriveCuda, AConstantDeclaredTwiceIsNotDerived) {
  const char* cu = R"(#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] = 0.0f; }
#if USE_WIDE
constexpr int kThreads = 256;
#else
constexpr int kThreads = 128;
#endif
extern "C" void solve(float* x, int n) {
  k<<<1, kThreads>>>(x);
  dim3 block(16, 16);
  k<<<1, block>>>(x);
}
)";
  auto d = derive(cu, "twice.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  // Only the literal dim3 block of the second launch is derived.
  ASSERT_EQ(d->params.size(), 2u);
  EXPECT_EQ(d->params[0].name, "K_BLOCK_X");
  EXPECT_EQ(d->params[1].name, "K_BLOCK_Y");
  EXPECT_TRUE(has_constraint(*d, "K_BLOCK_X * K_BLOCK_Y <= 1024"));
  EXPECT_TRUE(has_note(*d, "line 4: kThreads is declared 2 times (lines 4, 6): not one constant"));
}

// The published 2D-blocktiling SGEMM launcher (issue 35): BM/BN named once in each branch of an if/else pair.
// Each declaration is its own parameter (the reason keeps the branch's condition), each launch gets its own
// constraints (threads, shared memory), and the thread tile TM x TN is per-thread work: at most 64 accumulators.
TEST(DeriveCuda, ConstantsDeclaredInEachBranchAreOneParameterPerBranch) {
  Derivation d = derive_file(data_path("branch_tiles.cu"));
  const DerivedParam* bm = param(d, "BM_VALUE");
  const DerivedParam* bm2 = param(d, "BM_VALUE_2");
  ASSERT_NE(bm, nullptr);
  ASSERT_NE(bm2, nullptr);
  EXPECT_EQ(bm->default_value, 128);
  EXPECT_EQ(bm2->default_value, 64);
  EXPECT_TRUE(contains(bm->reason, "in the branch if (M >= 128 && N >= 128) at line 58")) << bm->reason;
  EXPECT_TRUE(contains(bm2->reason, "in the branch else at line 64")) << bm2->reason;
  // Each branch's condition over solve's arguments: at the run's dims the search keeps the other branch's at its default.
  EXPECT_EQ(bm->when, "M >= 128 && N >= 128");
  EXPECT_EQ(bm2->when, "!(M >= 128 && N >= 128)");
  EXPECT_TRUE(param(d, "TM_VALUE")->when.empty()) << "declared outside the branches";
  EXPECT_TRUE(contains(d.instrumented, "// @kopt param BM_VALUE_2 values=8,16,32,64,128,256,512 default=64 when=!(M >= 128 && N >= 128)\n"))
      << annotation_text(d);
  EXPECT_EQ(bm->values, (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(param(d, "TM_VALUE")->role, ValueRole::kPerThread);
  EXPECT_EQ(param(d, "TM_VALUE")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(param(d, "TN_VALUE")->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(has_constraint(d, "(TM_VALUE * TN_VALUE) <= 64"));
  EXPECT_FALSE(has_constraint(d, "(TM_VALUE) <= 64"));  // always holds: not written
  EXPECT_TRUE(has_constraint(d, "((BM_VALUE * BN_VALUE) / (TM_VALUE * TN_VALUE)) <= 1024"));
  EXPECT_TRUE(has_constraint(d, "((BM_VALUE_2 * BN_VALUE_2) / (TM_VALUE * TN_VALUE)) <= 1024"));
  EXPECT_TRUE(has_constraint(d, "4 * (BM_VALUE * BK_VALUE) + 4 * (BK_VALUE * BN_VALUE) <= 49152"));
  EXPECT_TRUE(has_constraint(d, "4 * (BM_VALUE_2 * BK_VALUE) + 4 * (BK_VALUE * BN_VALUE_2) <= 49152"));
  EXPECT_TRUE(contains(d.instrumented, "    const unsigned BM = BM_VALUE;"));
  EXPECT_TRUE(contains(d.instrumented, "    const unsigned BM = BM_VALUE_2;"));
  // No point of the space has a thread tile past 64 accumulators (the 256-1024 of issue 35's first design).
  auto ann = parse_annotations(d.instrumented, "branch_tiles.cu");
  ASSERT_TRUE(ann.ok()) << ann.error().message;
  for (const auto& p : ann->params)
    if (p.name == "BN_VALUE_2") {
      EXPECT_EQ(p.when, "!(M >= 128 && N >= 128)");
    }
  Bindings b;
  for (const auto& p : d.params) b[p.name] = p.default_value;
  b["TM_VALUE"] = 16;
  b["TN_VALUE"] = 8;
  bool ok = true;
  for (const auto& c : ann->constraints) ok = ok && c.expr.holds(b);
  EXPECT_FALSE(ok);
}

// Overlapping declarations (#if / #else at namespace scope) stay one note, not two parameters.
TEST(DeriveCuda, BranchDeclarationsMustEachHaveTheirOwnBraces) {
  std::string cu = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
                   "extern \"C\" void solve(float* x, int n) {\n"
                   "  const int T = 128;\n"
                   "  { const int T = 64; k<<<1, T>>>(x); }\n"
                   "  k<<<1, T>>>(x);\n"
                   "}\n";
  auto d = derive(cu, "nested.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(param(*d, "T_VALUE"), nullptr);
  EXPECT_TRUE(has_note(*d, "T is declared 2 times (lines 3, 4): not one constant")) << fmt::format("{}", fmt::join(d->notes, "\n"));
}

// Launchers as the corpus writes them: block sizes computed at run time, helpers taking the block size as a template
// or function argument, items per thread, a grid-stride loop.
TEST(DeriveCuda, LauncherComputedBlocksHelpersItemsAndGridStride) {
  Derivation d = derive_file(data_path("launchers.cu"));
  // `const int block_size = std::min(...)`: 0 keeps the launcher's value, 32..1024 replace it.
  const DerivedParam* bs = param(d, "block_size_VALUE");
  ASSERT_NE(bs, nullptr);
  EXPECT_EQ(bs->site, DeriveSite::kLauncherLocal);
  EXPECT_EQ(bs->role, ValueRole::kLauncherThreads);
  EXPECT_EQ(bs->default_value, 0);
  EXPECT_EQ(bs->values, (std::vector<int64_t>{0, 32, 64, 128, 256, 512, 1024}));
  EXPECT_TRUE(contains(d.instrumented,
                       "const int block_size = (block_size_VALUE == 0 ? (std::min(1024, (n / 8 + 31) / 32 * 32)) : block_size_VALUE);"));
  // `dim3 block(std::min<uint32_t>(n / vec_size, 1024U))`: the dim3's computed axis; vec_size (a divisor) is not a block.
  EXPECT_NE(param(d, "ROW_SCALE_BLOCK"), nullptr);
  EXPECT_EQ(param(d, "vec_size_VALUE"), nullptr);
  EXPECT_TRUE(contains(d.instrumented, "dim3 block((ROW_SCALE_BLOCK == 0 ? (std::min<uint32_t>(n / vec_size, 1024U)) : ROW_SCALE_BLOCK));"));
  // What the launcher's expression reads (not std, min, uint32_t or the U of 1024U): a warm start scales by the dims among them.
  EXPECT_EQ(bs->follows, (std::vector<std::string>{"n"}));
  EXPECT_EQ(param(d, "ROW_SCALE_BLOCK")->follows, (std::vector<std::string>{"n", "vec_size"}));
  EXPECT_TRUE(
      contains(d.instrumented, "@kopt param ROW_SCALE_BLOCK values=0,32,64,128,256,512,1024 default=0 follows=n,vec_size\n"));
  // `bs` reaches the block through num_warps (dim3(32, num_warps)); num_warps follows it and is not its own parameter.
  EXPECT_NE(param(d, "bs_VALUE"), nullptr);
  EXPECT_EQ(param(d, "num_warps_VALUE"), nullptr);
  EXPECT_EQ(param(d, "ROW_SHIFT_BLOCK_Y"), nullptr);
  // launch_add<256>(...): the helper's template argument; launch_saxpy(..., 128): its function argument.
  const DerivedParam* la = param(d, "LAUNCH_ADD_BLOCK");
  ASSERT_NE(la, nullptr);
  EXPECT_EQ(la->site, DeriveSite::kHelperArgument);
  EXPECT_EQ(la->role, ValueRole::kBlockThreads);
  EXPECT_TRUE(contains(d.instrumented, "launch_add<LAUNCH_ADD_BLOCK>(x, y, rows * n);"));
  const DerivedParam* ls = param(d, "LAUNCH_SAXPY_THREADS");
  ASSERT_NE(ls, nullptr);
  EXPECT_EQ(ls->default_value, 128);
  EXPECT_TRUE(contains(d.instrumented, "launch_saxpy(x, y, rows * n, LAUNCH_SAXPY_THREADS);"));
  // add_items<4>: items per thread, 1..16.
  const DerivedParam* items = param(d, "ADD_ITEMS_ITEMS_PER_THREAD");
  ASSERT_NE(items, nullptr);
  EXPECT_EQ(items->role, ValueRole::kPerThread);
  EXPECT_EQ(items->values, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  // saxpy_stride<<<1024, threads>>> strides over the grid: the grid is free.
  const DerivedParam* grid = param(d, "SAXPY_STRIDE_GRID");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->role, ValueRole::kGridBlocks);
  EXPECT_EQ(grid->values, (std::vector<int64_t>{128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_TRUE(contains(d.instrumented, "saxpy_stride<<<SAXPY_STRIDE_GRID, threads>>>(x, y, n);"));
}

// Dynamic shared memory given at the launch, over derived names (sizeof of a known type read as its bytes): within
// 227 KiB a block, the H100/H200 limit with the opt-in.
TEST(DeriveCuda, DynamicSharedMemoryOfALaunchIsAConstraint) {
  std::string cu = "template <int TILE>\n"
                   "__global__ void k(float* x) { extern __shared__ float s[]; s[threadIdx.x] = x[threadIdx.x]; }\n"
                   "extern \"C\" void solve(float* x, int n) {\n"
                   "  constexpr int kTile = 1024;\n"
                   "  k<kTile><<<n / 256, 256, kTile * 4 * sizeof(float)>>>(x);\n"
                   "}\n";
  auto d = derive(cu, "dyn.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(has_constraint(*d, "kTile_VALUE * 4 * 4 <= 232448"));
}

// Value sets span the legal range instead of a band around the default (issue 35: a layernorm at 1024 threads whose
// best block, 128, was outside {256, 512, 1024}).
TEST(DeriveValues, SetsSpanTheLegalRange) {
  EXPECT_EQ(derive_detail::values_for(ValueRole::kBlockThreads, 1024), (std::vector<int64_t>{32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kBlockThreads, 96), (std::vector<int64_t>{32, 64, 96, 128, 256, 512, 1024}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kPerThread, 8), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kPerThread, 32), (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kTile, 128), (std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kLauncherThreads, 0), (std::vector<int64_t>{0, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(derive_detail::values_for(ValueRole::kNumWarps, 8), (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_TRUE(derive_detail::per_thread_name("TM"));
  EXPECT_TRUE(derive_detail::per_thread_name("ITEMS_PER_THREAD"));
  EXPECT_TRUE(derive_detail::per_thread_name("kItemsPerThread"));
  EXPECT_TRUE(derive_detail::per_thread_name("vec_size"));
  EXPECT_FALSE(derive_detail::per_thread_name("BM"));
  EXPECT_FALSE(derive_detail::per_thread_name("block_size"));
}

// A Triton kernel imported from the project's package (the corpus's Liger wrappers): its upper-case keywords with
// literal locals are derived; where the launch gives no num_warps, 0 (the project's own) and 1..32 are searched.
TEST(DeriveTriton, ImportedKernelKeywordsAreDerived) {
  std::string py = "import torch\n"
                   "from liger_kernel.ops.softmax import _softmax_single_block_forward_kernel\n"
                   "from fla.ops.utils.softmax import softmax_fwd_kernel as fwd\n\n"
                   "def run_kernel(*, x, y, n_rows, n_cols):\n"
                   "    BLOCK_SIZE = 4096  # calculate_settings(n_cols)\n"
                   "    num_warps = 8\n"
                   "    _softmax_single_block_forward_kernel[(n_rows,)](y, y.stride(0), x, x.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,\n"
                   "                                                    num_warps=num_warps)\n"
                   "    fwd[(n_rows,)](x=x, p=y, D=n_cols, B=triton.next_power_of_2(n_cols))\n";
  auto d = derive(py, "kernel.py");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->params.size(), 2u);
  const DerivedParam* b = param(*d, "BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->kind, ParamKind::kConstexpr);
  EXPECT_EQ(b->values, (std::vector<int64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(param(*d, "num_warps")->default_value, 8);
  EXPECT_EQ(param(*d, "D"), nullptr);  // a signature name, and not upper case
  EXPECT_TRUE(contains(d->instrumented, "    BLOCK_SIZE = BLOCK_SIZE  # calculate_settings(n_cols)\n"));
  // Without num_warps at the launch of an imported kernel: num_warps 0 is the project's own choice (its autotune's, or
  // Triton's default), and the copy launches through a helper that pins any other value.
  std::string bare = "from fla.ops.utils.softmax import softmax_fwd_kernel as fwd\n\n"
                     "def run_kernel(*, x, y, N, D):\n"
                     "    fwd[(N,)](x=x, p=y, D=D, B=4096)\n";
  auto e = derive(bare, "kernel.py");
  ASSERT_TRUE(e.ok()) << e.error().message;
  const DerivedParam* w = param(*e, "num_warps");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->role, ValueRole::kOwnNumWarps);
  EXPECT_EQ(w->default_value, 0);
  EXPECT_EQ(w->values, (std::vector<int64_t>{0, 1, 2, 4, 8, 16, 32}));
  EXPECT_NE(param(*e, "B"), nullptr);
  EXPECT_TRUE(contains(e->instrumented, "def run_kernel(*, x, y, N, D, B=4096, num_warps=0):\n")) << e->instrumented;
  EXPECT_TRUE(contains(e->instrumented, "    _kopt_launch_options(fwd, num_warps=num_warps)[(N,)](x=x, p=y, D=D, B=B)\n"))
      << e->instrumented;
  EXPECT_EQ(e->instrumented.find("def _kopt_launch_options(kernel, **options):"),
            e->instrumented.rfind("def _kopt_launch_options(kernel, **options):"))
      << "the helper is appended once";
  EXPECT_NE(e->instrumented.find("def _kopt_launch_options(kernel, **options):"), std::string::npos);
  // Two launches of imported kernels: one num_warps for both (as for launches in the file), one helper.
  std::string two = "from pkg import a, b\n\ndef run_kernel(*, x, N):\n    a[(N,)](x)\n    b[(N,)](x)\n";
  auto t = derive(two, "kernel.py");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->params.size(), 1u);
  EXPECT_TRUE(contains(t->instrumented, "    _kopt_launch_options(a, num_warps=num_warps)[(N,)](x)\n    b[(N,)](x)\n"))
      << t->instrumented;
  // A keyword computed at run time is left alone, and the note shows how it is computed.
  EXPECT_TRUE(has_note(*d, "B=triton.next_power_of_2(n_cols) of the launch of fwd[...] is computed at run time")) << fmt::format("{}", fmt::join(d->notes, "\n"));
}

// Public kernels as their projects write them (a 2026-12-07 survey of llm.c, cuda-samples and SGEMM_CUDA): what is
// no tunable stays alone, with a note saying why.
TEST(DeriveCuda, WarpWidthsDispatchesAndReassignedArgumentsAreLeftAlone) {
  auto derive_cu = [](const std::string& cu) {
    auto d = derive(cu, "k.cu");
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    return d.ok() ? *d : Derivation{};
  };
  const std::string kernel =
      "__global__ void k(float* out, const float* x, int n) {\n"
      "  __shared__ float partial[WARP_SIZE];\n"
      "  int lane = threadIdx.x % WARP_SIZE;\n"
      "  if (lane == 0) partial[threadIdx.x / WARP_SIZE] = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
      "  for (int w = 0; w < WARP_SIZE; ++w) out[blockIdx.x] += partial[w];\n"
      "}\n";
  // The warp's width, as a #define (llm.c's `32U` too) or a constant: left alone; the block is still derived.
  for (const std::string decl : {"#define WARP_SIZE 32U\n", "#define WARP_SIZE 32\n", "constexpr int WARP_SIZE = 32;\n"}) {
    Derivation d = derive_cu(decl + kernel + "extern \"C\" void solve(float* out, const float* x, int n) { k<<<n / 256, 256>>>(out, x, n); }\n");
    EXPECT_EQ(param(d, "WARP_SIZE"), nullptr) << decl;
    EXPECT_EQ(param(d, "WARP_SIZE_VALUE"), nullptr) << decl;
    EXPECT_TRUE(has_note(d, "line 1: WARP_SIZE = 32 is the warp's width")) << decl;
    ASSERT_NE(param(d, "K_BLOCK"), nullptr) << decl;
  }
  // In an expression of derived names it reads as 32 (llm.c's `block_y = block_size / WARP_SIZE`): the block follows
  // the derived argument, no parameter of its own.
  Derivation ln = derive_cu("#define WARP_SIZE 32U\n" + kernel +
                            "void launch(float* out, const float* x, int n, int block_size) {\n"
                            "  int block_y = block_size / WARP_SIZE;\n"
                            "  k<<<n / block_y, dim3(32, block_y)>>>(out, x, n);\n}\n"
                            "extern \"C\" void solve(float* out, const float* x, int n) { launch(out, x, n, 512); }\n");
  ASSERT_EQ(ln.params.size(), 1u) << annotation_text(ln);
  EXPECT_EQ(ln.params[0].name, "LAUNCH_BLOCK_SIZE");
  // A suffixed #define is not an int: a candidate's -D would change its type, so it is left alone.
  Derivation sf = derive_cu("#define BLOCK 256u\n__global__ void s(float* x) { x[blockIdx.x * BLOCK + threadIdx.x] = 0; }\n"
                            "extern \"C\" void solve(float* x, int n) { s<<<n / BLOCK, BLOCK>>>(x); }\n");
  EXPECT_TRUE(sf.params.empty()) << annotation_text(sf);
  EXPECT_TRUE(has_note(sf, "line 1: #define BLOCK 256u has a suffix (its type is not int): left alone"));
  // Another value under that name is a project's own choice: derived as before.
  Derivation d = derive_cu("#define WARP_SIZE 64\n" + kernel +
                           "extern \"C\" void solve(float* out, const float* x, int n) { k<<<n / 256, 256>>>(out, x, n); }\n");
  EXPECT_NE(param(d, "WARP_SIZE"), nullptr);

  // Instantiations picked by a run-time value (cuda-samples' reduction and matrixMul): each literal is left alone.
  const std::string red =
      "template <unsigned int B> __global__ void red(const float* x, float* y) { y[blockIdx.x] = x[blockIdx.x * B + threadIdx.x]; }\n";
  d = derive_cu(red +
                "void launch(const float* x, float* y, int n, int threads) {\n"
                "  switch (threads) {\n"
                "    case 256: red<256><<<n / threads, threads>>>(x, y); break;\n"
                "    case 128: red<128><<<n / threads, threads>>>(x, y); break;\n"
                "  }\n}\n"
                "extern \"C\" void solve(const float* x, float* y, int n) { int t = 256; launch(x, y, n, t); }\n");
  EXPECT_TRUE(d.params.empty()) << annotation_text(d);
  EXPECT_TRUE(has_note(d, "line 4: template argument B = 256 of red<...> is chosen by `case 256:` at line 4"));
  EXPECT_TRUE(has_note(d, "line 5: template argument B = 128 of red<...> is chosen by `case 128:` at line 5"));
  d = derive_cu(red +
                "extern \"C\" void solve(const float* x, float* y, int n, int bs) {\n"
                "  if (bs == 16) red<16><<<n / 16, 16>>>(x, y);\n"
                "  else red<32><<<n / 32, 32>>>(x, y);\n}\n");
  EXPECT_EQ(param(d, "RED_B"), nullptr);
  EXPECT_TRUE(has_note(d, "line 4: template argument B = 32 of red<...> is chosen by `== 16` at line 3"));
  // One launch, or the same literal at every launch: no dispatch, derived as before.
  d = derive_cu(red + "extern \"C\" void solve(const float* x, float* y, int n) { red<256><<<n / 256, 256>>>(x, y); }\n");
  EXPECT_NE(param(d, "RED_B"), nullptr);

  // A helper's argument assigned again before its launch: the value passed is not the one launched.
  d = derive_cu("__global__ void c(float* o, const float* x) { int i = blockIdx.x * 32 + threadIdx.x; o[i] = x[i]; }\n"
                "void launch(float* o, const float* x, int n, int block_size) {\n"
                "  block_size = 32;\n  c<<<n / block_size, block_size>>>(o, x);\n}\n"
                "extern \"C\" void solve(float* o, const float* x, int n) { launch(o, x, n, 256); }\n");
  EXPECT_TRUE(d.params.empty()) << annotation_text(d);
  EXPECT_TRUE(has_note(d, "argument block_size = 256 of launch(...) is assigned again in launch before its launch"));
}

// A dim3 block of two named constants, declared in a list after the grid (cuda-samples' transpose): each is one
// dimension (values d/8..8d), their product at most 1024.
TEST(DeriveCuda, NamedDimensionsOfADim3BlockInADeclarationList) {
  auto d = derive(
      "#define TILE_DIM 32\n#define BLOCK_ROWS 8\n"
      "__global__ void tr(float* o, const float* in, int w, int h) {\n"
      "  __shared__ float tile[TILE_DIM][TILE_DIM + 1];\n"
      "  int x = blockIdx.x * TILE_DIM + threadIdx.x, y = blockIdx.y * TILE_DIM + threadIdx.y;\n"
      "  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];\n"
      "  __syncthreads();\n"
      "  x = blockIdx.y * TILE_DIM + threadIdx.x; y = blockIdx.x * TILE_DIM + threadIdx.y;\n"
      "  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) o[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];\n"
      "}\n"
      "extern \"C\" void solve(float* o, const float* in, int w, int h) {\n"
      "  dim3 grid(w / TILE_DIM, h / TILE_DIM), threads(TILE_DIM, BLOCK_ROWS);\n"
      "  tr<<<grid, threads>>>(o, in, w, h);\n}\n",
      "tr.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const DerivedParam* rows = param(*d, "BLOCK_ROWS");
  const DerivedParam* tile = param(*d, "TILE_DIM");
  ASSERT_NE(rows, nullptr);
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(rows->role, ValueRole::kBlockDim);
  EXPECT_EQ(rows->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(tile->role, ValueRole::kBlockDim);
  EXPECT_TRUE(contains(rows->reason, "block dimension y of the launch of tr at line 13")) << rows->reason;
  EXPECT_TRUE(has_constraint(*d, "(TILE_DIM) * (BLOCK_ROWS) <= 1024")) << annotation_text(*d);
}

// SGEMM_CUDA's kernel 4 pattern (written here, not copied): the kernel asserts that its tile matches the block the
// launcher computes. Each assert is a constraint with blockDim.x read as that launch's block (914 points before, of
// which 18 can run; 18 after). The constants come as one declaration list.
TEST(DeriveCuda, DeviceAssertsOnTheBlockAreConstraintsAndADeclarationListIsRead) {
  const std::string kernel =
      "#include <cassert>\n"
      "template <const int BM, const int BN, const int BK, const int TM>\n"
      "__global__ void tile1d(int M, int N, int K, const float* A, const float* B, float* C) {\n"
      "  __shared__ float As[BM * BK];\n"
      "  __shared__ float Bs[BK * BN];\n"
      "  assert(BM * BK == blockDim.x);\n"
      "  assert(BN * BK == blockDim.x && blockDim.y == 1);\n"
      "  assert(M % BM == 0);\n"
      "  float acc[TM] = {0.0f};\n"
      "  As[threadIdx.x] = A[threadIdx.x]; Bs[threadIdx.x] = B[threadIdx.x];\n"
      "  for (int t = 0; t < TM; ++t) C[t] = acc[t] + As[t] * Bs[t];\n"
      "}\n";
  auto d = derive(kernel +
                      "extern \"C\" void solve(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                      "  const unsigned BM = 64, BN = 64, BK = 8, TM = 8;\n"
                      "  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);\n"
                      "  dim3 block((BM * BN) / TM);\n"
                      "  tile1d<BM, BN, BK, TM><<<grid, block>>>(M, N, K, A, B, C);\n"
                      "}\n",
                  "tile1d.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  for (const char* n : {"BM_VALUE", "BN_VALUE", "BK_VALUE", "TM_VALUE"}) ASSERT_NE(param(*d, n), nullptr) << n << annotation_text(*d);
  EXPECT_EQ(param(*d, "BN_VALUE")->line, 14);
  EXPECT_TRUE(contains(d->instrumented, "const unsigned BM = BM_VALUE, BN = BN_VALUE, BK = BK_VALUE, TM = TM_VALUE;")) << d->instrumented;
  EXPECT_TRUE(has_constraint(*d, "BM_VALUE * BK_VALUE == ((BM_VALUE * BN_VALUE) / TM_VALUE)")) << annotation_text(*d);
  EXPECT_TRUE(has_constraint(*d, "BN_VALUE * BK_VALUE == ((BM_VALUE * BN_VALUE) / TM_VALUE) && 1 == 1")) << annotation_text(*d);
  for (const auto& c : d->constraints) EXPECT_FALSE(contains(c.expr, "M %")) << "M is a run-time value: " << c.expr;
  bool reason = false;
  for (const auto& c : d->constraints) reason = reason || contains(c.reason, "assert(BM * BK == blockDim.x) in tile1d at line 6 (the launch at line 17)");
  EXPECT_TRUE(reason) << annotation_text(*d);

  // The copy's space holds only points whose block is what the kernel asserts.
  const SearchSpace space = space_of(d->instrumented, "tile1d.cu");
  const auto valid = valid_points(space);
  for (const auto& b : valid)
    EXPECT_EQ(b.at("BM_VALUE") * b.at("BK_VALUE"), b.at("BM_VALUE") * b.at("BN_VALUE") / b.at("TM_VALUE"));
  EXPECT_EQ(valid.size(), 18u) << "of " << space.size();

  // Without a launch there is no block to read the assert against: nothing is derived from it.
  auto alone = derive(kernel, "tile1d.cu");
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(alone->constraints.empty());
}

// A relation over a derived name and a constant kopt leaves alone (declared once, used in no launch): the constant is
// read as its value, so the static_assert is a constraint, not a note.
TEST(DeriveCuda, AStaticAssertOverAFixedConstantIsAConstraint) {
  auto d = derive(
      "constexpr int kVec = 4;\n"
      "template <int BLOCK>\n"
      "__global__ void k(float4* y, int n) {\n"
      "  static_assert(BLOCK % (kVec * 8) == 0, \"whole vectors a warp\");\n"
      "  y[blockIdx.x * BLOCK + threadIdx.x] = make_float4(0, 0, 0, 0);\n"
      "}\n"
      "extern \"C\" void solve(float4* y, int n) { k<256><<<n / 256, 256>>>(y, n); }\n",
      "vec.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_NE(param(*d, "K_BLOCK"), nullptr) << annotation_text(*d);
  EXPECT_TRUE(has_constraint(*d, "K_BLOCK % (4 * 8) == 0")) << annotation_text(*d);
  EXPECT_FALSE(has_note(*d, "is not over derived names")) << fmt::format("{}", d->notes);
}

// A per-thread array larger than the limit in the original (a warp tile's 128 accumulators): the limit is the
// original's size, so the project's choice stays in the space and nothing larger joins it.
TEST(DeriveCuda, APerThreadArrayLargerThanTheLimitIsCappedAtTheOriginalsSize) {
  auto d = derive(
      "const int WARPSIZE = 32;\n"
      "template <const int WM, const int NT>\n"
      "__global__ void __launch_bounds__(NT) wt(float* C) {\n"
      "  constexpr int WITER = (WM * 64) / (WARPSIZE * 8);\n"
      "  float acc[WITER * 8] = {0.0f};\n"
      "  for (int i = 0; i < WITER * 8; ++i) C[threadIdx.x * WITER * 8 + i] = acc[i];\n"
      "}\n"
      "extern \"C\" void solve(float* C, int M) {\n"
      "  const int WM = 64;\n"
      "  const int NT = 128;\n"
      "  wt<WM, NT><<<M / 128, NT>>>(C);\n"
      "}\n",
      "wt.cu");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(has_constraint(*d, "(((WM_VALUE * 64) / (32 * 8)) * 8) <= 128")) << annotation_text(*d);
  EXPECT_FALSE(has_note(*d, "does not hold for the original values")) << fmt::format("{}", d->notes);
}

TEST(DeriveCuda, NothingToDerive) {
  Derivation d = derive_file(data_path("nothing.cu"));
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(d.instrumented.empty());
  EXPECT_FALSE(d.annotated);
}

TEST(DeriveCuda, AnnotatedKernelKeepsItsDeclaredSpace) {
  Derivation d = derive_file(source_dir() + "/examples/vector_add/kernel.cu");
  EXPECT_TRUE(d.annotated);
  EXPECT_TRUE(d.instrumented.empty());
  EXPECT_EQ(param(d, "BLOCK"), nullptr);  // declared: the annotation is the authority
  EXPECT_EQ(param(d, "ITEMS"), nullptr);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_TRUE(contains(d.notes[0], "already declares its space with @kopt lines")) << d.notes[0];
}

TEST(DeriveCuda, AnnotationErrorsAreInputErrors) {
  auto d = derive("// @kopt parm X values=1\n", "k.cu");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ExitCode::kInput);
  EXPECT_TRUE(contains(d.error().message, "k.cu:1")) << d.error().message;
}

TEST(DeriveTriton, LiteralConstexprsLaunchOptionsAndGrid) {
  Derivation d = derive_file(data_path("literal.py"));
  const DerivedParam* b = param(d, "BLOCK");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->kind, ParamKind::kConstexpr);
  EXPECT_EQ(b->values, (std::vector<int64_t>{256, 512, 1024, 2048, 4096}));  // a Triton tile: d/4..4d
  EXPECT_EQ(b->line, 27);
  EXPECT_EQ(param(d, "CHUNKS")->values, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(param(d, "num_stages")->kind, ParamKind::kNumStages);
  EXPECT_EQ(param(d, "num_stages")->default_value, 2);
  const DerivedParam* w = param(d, "num_warps");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->default_value, 4);  // not given: Triton's default
  EXPECT_TRUE(contains(d.instrumented, "def run_kernel(*, x, y, out, n, BLOCK=1024, CHUNKS=1, num_stages=2, num_warps=4):"));
  EXPECT_TRUE(contains(d.instrumented, "grid = ((n + (BLOCK - 1)) // BLOCK,)"));
  EXPECT_TRUE(contains(d.instrumented,
                       "add_kernel[grid](x, y, out, n, 1, BLOCK=BLOCK, CHUNKS=CHUNKS, num_stages=num_stages, num_warps=num_warps)"));
  EXPECT_TRUE(contains(d.instrumented, "label = \"BLOCK=1024\"  # BLOCK=1024 in a comment"));
  EXPECT_TRUE(contains(d.instrumented, "# @kopt param BLOCK values=256,512,1024,2048,4096 default=1024 kind=constexpr\n"));
  auto ann = parse_annotations(d.instrumented, "literal.py");
  ASSERT_TRUE(ann.ok()) << ann.error().message;
  EXPECT_EQ(ann->params.size(), 4u);
}

// A kernel whose loop loads in each step (a K loop of tl.dot) launched without num_stages: num_stages is derived with
// Triton's default, 3, as the baseline, in the same edit as num_warps. A loop that only stores, a tl.static_range
// (unrolled), or a launch that gives num_stages: none.
TEST(DeriveTriton, NumStagesOfAPipelinedLoopNotGivenAtTheLaunch) {
  auto source = [](const std::string& loop, const std::string& options) {
    return "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
           "def mm(a_ptr, c_ptr, K, BLOCK_K: tl.constexpr):\n"
           "    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)\n" +
           loop +
           "    tl.store(c_ptr + tl.arange(0, BLOCK_K), acc)\n\n\n"
           "def run_kernel(*, a, c, K):\n"
           "    mm[(1,)](a, c, K, BLOCK_K=32" +
           options + ")\n";
  };
  const std::string pipelined =
      "    for k0 in range(0, K, BLOCK_K):\n"
      "        # a comment\n\n"
      "        acc += tl.load(a_ptr + k0 + tl.arange(0, BLOCK_K))\n";
  auto d = derive(source(pipelined, ""), "mm.py");
  ASSERT_TRUE(d.ok()) << d.error().message;
  const DerivedParam* st = param(*d, "num_stages");
  ASSERT_NE(st, nullptr) << annotation_text(*d);
  EXPECT_EQ(st->kind, ParamKind::kNumStages);
  EXPECT_EQ(st->default_value, 3);
  EXPECT_EQ(st->values, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(contains(st->reason, "the loop of mm at line 8")) << st->reason;
  EXPECT_TRUE(contains(d->instrumented, "def run_kernel(*, a, c, K, BLOCK_K=32, num_warps=4, num_stages=3):")) << d->instrumented;
  EXPECT_TRUE(contains(d->instrumented, "mm[(1,)](a, c, K, BLOCK_K=BLOCK_K, num_warps=num_warps, num_stages=num_stages)"))
      << d->instrumented;
  auto ann = parse_annotations(d->instrumented, "mm.py");
  ASSERT_TRUE(ann.ok()) << ann.error().message;

  for (const std::string& other :
       {std::string("    for k0 in range(0, K, BLOCK_K):\n        tl.store(c_ptr + k0 + tl.arange(0, BLOCK_K), acc)\n"),
        std::string("    for k0 in tl.static_range(4):\n        acc += tl.load(a_ptr + k0 + tl.arange(0, BLOCK_K))\n"),
        std::string("    acc += tl.load(a_ptr + tl.arange(0, BLOCK_K))\n")}) {
    auto n = derive(source(other, ""), "mm.py");
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(param(*n, "num_stages"), nullptr) << other;
  }
  auto given = derive(source(pipelined, ", num_stages=2"), "mm.py");
  ASSERT_TRUE(given.ok()) << given.error().message;
  ASSERT_NE(param(*given, "num_stages"), nullptr);
  EXPECT_EQ(param(*given, "num_stages")->default_value, 2) << "the launch's own value";
}

// The notes on what a launch passes that kopt leaves alone say what it is: switches (a bool, None, a string, a test)
// once for the launch, not as "computed at run time"; a computed local with every assignment, strings shown, and not
// the launch's own `NAME=NAME`.
TEST(DeriveTriton, NotesOnSwitchesAndComputedLocalsSayWhatTheyAre) {
  auto d = derive(
      "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
      "def k(x_ptr, w_ptr, n, HAS_W: tl.constexpr, ACT: tl.constexpr, BLOCK_SIZE: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
      "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n\n"
      "def run_kernel(*, x, w, n, act):\n"
      "    has_w = w is not None\n"
      "    mode = \"tanh\" if act else \"none\"\n"
      "    if n > 4096:\n"
      "        BLOCK_SIZE = triton.next_power_of_2(n // 4)\n"
      "    else:\n"
      "        BLOCK_SIZE = triton.next_power_of_2(n)\n"
      "    k[(triton.cdiv(n, BLOCK_SIZE),)](\n"
      "        x, w, n,\n"
      "        HAS_W=has_w,\n"
      "        ACT=mode,\n"
      "        BLOCK_SIZE=BLOCK_SIZE,\n"
      "    )\n",
      "k.py");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(has_note(*d, "HAS_W, ACT of the launch of k[...] are a switch (a bool, None, a string or a test), not a size"))
      << fmt::format("{}", d->notes);
  EXPECT_FALSE(has_note(*d, "HAS_W=has_w of the launch of k[...] is computed at run time")) << fmt::format("{}", d->notes);
  EXPECT_TRUE(has_note(*d, "BLOCK_SIZE = triton.next_power_of_2(n // 4); triton.next_power_of_2(n)")) << fmt::format("{}", d->notes);
  EXPECT_FALSE(has_note(*d, "BLOCK_SIZE = BLOCK_SIZE")) << fmt::format("{}", d->notes);
}

TEST(DeriveTriton, NamedLocalsOfRunKernelBecomeItsParameters) {
  Derivation d = derive_file(data_path("named.py"));
  ASSERT_EQ(d.params.size(), 2u);
  const DerivedParam* b = param(d, "BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->default_value, 1024);
  EXPECT_TRUE(contains(b->reason, "run_kernel's BLOCK_SIZE = 1024 at line 21")) << b->reason;
  const DerivedParam* w = param(d, "num_warps");  // a launch option arrives as num_warps= whatever the local's name
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->default_value, 8);
  EXPECT_EQ(param(d, "ROWS"), nullptr);  // assigned twice
  EXPECT_TRUE(contains(d.instrumented, "def run_kernel(*, x, y, n, BLOCK_SIZE=1024, num_warps=8):\n"
                                       "    BLOCK_SIZE = BLOCK_SIZE\n    NW = num_warps\n    ROWS = 1\n"));
  EXPECT_TRUE(contains(d.instrumented, "copy_kernel[grid](x, y, n, BLOCK_SIZE=BLOCK_SIZE, ROWS=ROWS, num_warps=NW)"));
}

TEST(DeriveTriton, LiteralBlockSizesExample) {
  Derivation d = derive_file(example_path("triton_literal/kernel.py"));
  ASSERT_EQ(d.params.size(), 3u);
  EXPECT_EQ(param(d, "BLOCK_M")->values, (std::vector<int64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(param(d, "BLOCK_N")->values, (std::vector<int64_t>{32, 64, 128, 256, 512}));
  EXPECT_EQ(param(d, "num_warps")->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_TRUE(contains(d.instrumented, "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))"));
}

TEST(DeriveTriton, AutotuneConfigsBecomeTheSpace) {
  Derivation d = derive_file(data_path("autotune.py"));
  ASSERT_EQ(d.params.size(), 2u);
  const DerivedParam* b = param(d, "BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->site, DeriveSite::kTritonAutotune);
  EXPECT_EQ(b->values, (std::vector<int64_t>{512, 1024, 2048}));
  EXPECT_EQ(b->default_value, 1024);  // the first config's
  EXPECT_EQ(param(d, "num_warps")->values, (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(contains(d.instrumented, "# @triton.autotune(\n#     configs=[\n"));
  EXPECT_TRUE(contains(d.instrumented, "# )\n@triton.jit\n"));
  EXPECT_TRUE(contains(d.instrumented, "def run_kernel(*, x, y, n, BLOCK_SIZE=1024, num_warps=4, **extra):"));
  EXPECT_TRUE(contains(d.instrumented, "scale_kernel[grid](x, y, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)"));
  EXPECT_TRUE(has_note(d, "comments out @triton.autotune of scale_kernel"));
}

Derivation derive_text(const std::string& text, const std::string& name) {
  auto d = derive(text, name);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : Derivation{};
}

// Public kernels as their projects write them (a 2026-12-07 survey of Triton's tutorials, Unsloth, flash-attention,
// vLLM and Liger): what the autotuner or the kernel's body says is kept.
TEST(DeriveTriton, WhatTheAutotunerOrTheKernelsBodySaysIsKept) {
  const std::string head = "import triton\nimport triton.language as tl\n\n";
  const std::string body =
      "def k(y_ptr, x_ptr, n, BLOCK_SIZE: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
      "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n\n";
  // A comment between the decorators (blank once masked), and one inside the configs: the autotune is still read, and
  // no num_warps is added to the launch of an autotuned kernel (Triton's Autotuner would get it twice).
  Derivation d = derive_text(head +
                                 "def helper(x):\n    return min(x, 4)\n\n"
                                 "@triton.autotune(\n    configs=[\n        triton.Config({'BLOCK_SIZE': 512}, num_warps=4),\n"
                                 "        # the larger one\n        triton.Config({'BLOCK_SIZE': 1024}, num_warps=8),\n    ],\n"
                                 "    key=['n'],\n)\n# a comment between the decorators\n@triton.jit\n" +
                                 body + "def run_kernel(*, x, y, n):\n    k[(triton.cdiv(n, 512),)](y, x, n)\n",
                             "k.py");
  ASSERT_NE(param(d, "BLOCK_SIZE"), nullptr);
  EXPECT_EQ(param(d, "BLOCK_SIZE")->site, DeriveSite::kTritonAutotune);
  EXPECT_EQ(param(d, "BLOCK_SIZE")->values, (std::vector<int64_t>{512, 1024}));
  EXPECT_EQ(param(d, "num_warps")->values, (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(contains(d.instrumented, "# @triton.autotune(\n")) << d.instrumented;
  EXPECT_TRUE(contains(d.instrumented, "def helper(x):\n    return min(x, 4)\n")) << d.instrumented;  // not a decorator

  // Configs kopt cannot read in full (a comprehension; a pre_hook the autotuner calls before each run): the
  // autotune stays, nothing is added to the launch.
  for (const std::string configs :
       {"[triton.Config({'BLOCK_SIZE': 1024}, num_warps=w) for w in [2, 4, 8]]",
        "[triton.Config({'BLOCK_SIZE': 1024}, num_warps=4, pre_hook=zero_out)]",
        "[triton.Config({'BLOCK_SIZE': 1024, 'EVEN': True}, num_warps=4)]"}) {
    d = derive_text(head + "@triton.autotune(configs=" + configs + ", key=['n'])\n@triton.jit\n" + body +
                        "def run_kernel(*, x, y, n):\n    k[(triton.cdiv(n, 1024),)](y, x, n)\n",
                    "k.py");
    EXPECT_TRUE(d.params.empty()) << configs;
    EXPECT_TRUE(has_note(d, "@triton.autotune of k has configs kopt cannot read in full")) << configs;
    EXPECT_FALSE(contains(d.instrumented, "num_warps=num_warps")) << configs;
  }

  // A literal constexpr the body never reads as a tile says what the kernel computes (vLLM's kv_group_num, a
  // sliding window): left alone. One that sizes a tl.arange, or goes to a helper kopt does not follow, is a tile.
  d = derive_text(head +
                      "@triton.jit\ndef g(q_ptr, o_ptr, n, GROUP: tl.constexpr, WINDOW: tl.constexpr, HEAD: tl.constexpr, "
                      "BLOCK: tl.constexpr):\n"
                      "    kv = tl.program_id(0) // GROUP\n    d = tl.arange(0, HEAD)\n"
                      "    x = tl.load(q_ptr + kv * HEAD + d)\n    if WINDOW > 0:\n        x = x * 2\n"
                      "    x = _inner(x, BLOCK)\n    tl.store(o_ptr + d, x)\n\n\n"
                      "def run_kernel(*, q, o, n):\n    g[(n,)](q, o, n, GROUP=4, WINDOW=4096, HEAD=128, BLOCK=64)\n",
                  "g.py");
  EXPECT_EQ(param(d, "GROUP"), nullptr);
  EXPECT_EQ(param(d, "WINDOW"), nullptr);
  EXPECT_TRUE(has_note(d, "GROUP=4 of g[...] sizes no tile in g's body"));
  EXPECT_TRUE(has_note(d, "WINDOW=4096 of g[...] sizes no tile in g's body"));
  EXPECT_NE(param(d, "HEAD"), nullptr);
  EXPECT_NE(param(d, "BLOCK"), nullptr);

  // A launch kopt cannot name (Unsloth's alias, flash-attention's wrap_triton): said, not silently skipped.
  d = derive_text(head + "@triton.jit\n" + body +
                      "def run_kernel(*, x, y, n, gemma=False):\n    fx = k if gemma else k\n"
                      "    fx[(triton.cdiv(n, 1024),)](y, x, n, BLOCK_SIZE=1024)\n"
                      "    torch.library.wrap_triton(k)[(1,)](y, x, n, BLOCK_SIZE=1024)\n",
                  "k.py");
  EXPECT_TRUE(d.params.empty()) << annotation_text(d);
  EXPECT_TRUE(has_note(d, "line 12: fx[...](...) launches a kernel kopt cannot name")) << annotation_text(d);
  EXPECT_TRUE(has_note(d, "line 13: torch.library.wrap_triton(k)[...](...) launches a kernel kopt cannot name")) << annotation_text(d);
}

// A tile run_kernel computes (Triton's layer-norm tutorial, Liger's calculate_settings, flash-attention's rotary):
// 0 keeps run_kernel's own value, the others replace it, where the kernel loops over tiles of it or no
// next_power_of_2 says it spans the whole extent.
TEST(DeriveTriton, TilesRunKernelComputesAreParametersWhereAnyTileIsRight) {
  const std::string head = "import triton\nimport triton.language as tl\n\n";
  const std::string loop =
      "@triton.jit\ndef k(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):\n"
      "    row = tl.program_id(0)\n"
      "    for off in range(0, n_cols, BLOCK_SIZE):\n"
      "        cols = off + tl.arange(0, BLOCK_SIZE)\n"
      "        tl.store(y_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols), mask=cols < n_cols)\n\n\n";
  for (const std::string assign : {"    BLOCK_SIZE = min(65536 // 4, triton.next_power_of_2(n_cols))\n    num_warps = 8\n",
                                   "    BLOCK_SIZE, num_warps = calculate_settings(n_cols)\n"}) {
    Derivation d = derive_text(head + loop + "def run_kernel(*, x, y, n_rows, n_cols):\n" + assign +
                                   "    k[(n_rows,)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)\n",
                               "k.py");
    const DerivedParam* b = param(d, "P_BLOCK_SIZE");
    ASSERT_NE(b, nullptr) << assign << annotation_text(d);
    EXPECT_EQ(b->site, DeriveSite::kLauncherLocal);
    EXPECT_EQ(b->role, ValueRole::kLauncherTile);
    EXPECT_EQ(b->default_value, 0);
    EXPECT_EQ(b->values.front(), 0);
    EXPECT_EQ(b->values.back(), 16384);
    EXPECT_TRUE(contains(d.instrumented, "def run_kernel(*, x, y, n_rows, n_cols, P_BLOCK_SIZE=0")) << d.instrumented;
    EXPECT_TRUE(contains(d.instrumented, assign.substr(0, assign.find('\n') + 1) +
                                             "    BLOCK_SIZE = BLOCK_SIZE if P_BLOCK_SIZE == 0 else P_BLOCK_SIZE\n"))
        << d.instrumented;
    auto ann = parse_annotations(d.instrumented, "k.py");  // the space the search builds from the copy
    ASSERT_TRUE(ann.ok()) << ann.error().message;
    bool found = false;
    for (const auto& p : ann->params)
      if (p.name == "P_BLOCK_SIZE") found = p.values.size() == b->values.size() && p.values.front() == 0;
    EXPECT_TRUE(found) << d.instrumented;
  }
  // No next_power_of_2: the project's own small tile (`8 if rotary_dim <= 128 else 4`) is a choice, derived.
  Derivation d = derive_text(head + loop + "def run_kernel(*, x, y, n_rows, n_cols):\n    BLOCK_SIZE = 8 if n_cols <= 128 else 4\n"
                                     "    k[(n_rows,)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE)\n",
                             "k.py");
  EXPECT_NE(param(d, "P_BLOCK_SIZE"), nullptr) << annotation_text(d);

  // The whole row in one block, or a tile a program id scales (the grid and the outputs follow it): left alone.
  const std::string one_block =
      "@triton.jit\ndef r(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):\n"
      "    cols = tl.arange(0, BLOCK_SIZE)\n    mask = cols < n_cols\n"
      "    tl.store(y_ptr + cols, tl.load(x_ptr + cols, mask=mask), mask=mask)\n\n\n";
  const std::string split =
      "@triton.jit\ndef r(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):\n"
      "    o = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
      "    tl.store(y_ptr + tl.program_id(1), tl.sum(tl.load(x_ptr + o, mask=o < n_cols), 0))\n\n\n";
  for (const std::string& kernel : {one_block, split}) {
    d = derive_text(head + kernel + "def run_kernel(*, x, y, n_cols):\n    BLOCK_SIZE = triton.next_power_of_2(n_cols)\n"
                                    "    r[(1, triton.cdiv(n_cols, BLOCK_SIZE))](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE)\n",
                    "r.py");
    EXPECT_EQ(param(d, "P_BLOCK_SIZE"), nullptr) << annotation_text(d);
    EXPECT_TRUE(has_note(d, "BLOCK_SIZE=BLOCK_SIZE of the launch of r[...] is computed by run_kernel")) << annotation_text(d);
  }
}

TEST(DeriveTriton, CopiesAreValidPython) {
  std::string py = util::find_in_path("python3");
  if (py.empty()) GTEST_SKIP() << "no python3";
  fs::path dir = fs::temp_directory_path() / fmt::format("kopt_derive_py_{}", ::getpid());
  fs::create_directories(dir);
  for (const std::string& f :
       {data_path("literal.py"), data_path("autotune.py"), data_path("named.py"), example_path("triton_literal/kernel.py")}) {
    Derivation d = derive_file(f);
    fs::path out = dir / fs::path(f).filename();
    ASSERT_TRUE(util::write_file_atomic(out, d.instrumented).ok());
    auto r = util::run_process({{py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", out.string()}, "", {}, 60});
    EXPECT_EQ(r.exit_code, 0) << f << "\n" << r.stderr_text;
  }
  fs::remove_all(dir);
}

// The CUDA copies, compiled: with every default the cubin is byte-for-byte the original's; every parameter at its
// smallest and largest value (the others at their defaults, where the constraints allow) still builds.
class DeriveCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(DeriveCompile, DefaultCopyIsTheSameCubinAndDerivedPointsBuild) {
  std::string nvcc = toolchain::find_nvcc();
  if (!testing_support::executable(nvcc)) GTEST_SKIP() << "nvcc not found";
  std::string src = source_dir() + "/" + GetParam();
  Derivation d = derive_file(src);
  ASSERT_FALSE(d.instrumented.empty());
  fs::path dir = fs::temp_directory_path() / fmt::format("kopt_derive_cc_{}_{}", ::getpid(), fs::path(src).parent_path().filename().string() + fs::path(src).stem().string());
  fs::create_directories(dir);
  fs::path copy = dir / "copy.cu";
  ASSERT_TRUE(util::write_file_atomic(copy, d.instrumented).ok());
  auto cubin = [&](const std::string& file, const std::string& out, const std::vector<std::string>& defines) {
    std::vector<std::string> argv{nvcc, "-arch=sm_90", "-cubin", "-o", (dir / out).string()};
    argv.insert(argv.end(), defines.begin(), defines.end());
    argv.push_back(file);
    return util::run_process({argv, "", {}, 300});
  };
  auto orig = cubin(src, "orig.cubin", {});
  ASSERT_EQ(orig.exit_code, 0) << orig.stderr_text;
  auto def = cubin(copy.string(), "copy.cubin", {});
  ASSERT_EQ(def.exit_code, 0) << def.stderr_text;
  auto a = util::read_file(dir / "orig.cubin"), b = util::read_file(dir / "copy.cubin");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b) << src << ": the copy with every default does not compile to the original's cubin";

  auto ann = parse_annotations(d.instrumented, "copy.cu");
  ASSERT_TRUE(ann.ok()) << ann.error().message;
  Bindings defaults;
  for (const auto& p : d.params) defaults[p.name] = p.default_value;
  int built = 0;
  for (const auto& p : d.params) {
    for (int64_t v : {p.values.front(), p.values.back()}) {
      if (v == p.default_value) continue;
      Bindings b2 = defaults;
      b2[p.name] = v;
      bool ok = true;
      for (const auto& c : ann->constraints) ok = ok && c.expr.holds(b2);
      if (!ok) continue;
      auto r = cubin(copy.string(), "point.cubin", {fmt::format("-D{}={}", p.name, v)});
      EXPECT_EQ(r.exit_code, 0) << src << " with " << p.name << "=" << v << "\n" << r.stderr_text;
      ++built;
    }
  }
  if (!d.methods.empty()) {  // the derived launch_bounds variant, on
    auto r = cubin(copy.string(), "method.cubin", {"-DKOPT_LAUNCH_BOUNDS=1"});
    EXPECT_EQ(r.exit_code, 0) << src << " with KOPT_LAUNCH_BOUNDS=1\n" << r.stderr_text;
  }
  EXPECT_GT(built, 0);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(DeriveKernels, DeriveCompile,
                         ::testing::Values("examples/plain/sgemm_tiled/kernel.cu", "examples/plain/elementwise_templated/kernel.cu",
                                           "examples/plain/reduction_define/kernel.cu", "tests/data/derive/named_constants.cu",
                                           "tests/data/derive/defines.cu", "tests/data/derive/launch_literals.cu",
                                           "tests/data/derive/unroll.cu", "tests/data/derive/dim3_blocks.cu",
                                           "tests/data/derive/branch_tiles.cu", "tests/data/derive/launchers.cu"));

}  // namespace
}  // namespace kopt::search
