#include "workload/working_set.h"

#include <gtest/gtest.h>

namespace kopt::workload {

namespace {

// A manifest as the harness writes it for a matmul C[M,N] = A[M,K] @ B[K,N] in fp32 at M=N=K=4096, with
// `shapes` entries (shape_expr) for A and C and a setup() buffer B.
util::Json matmul_manifest() {
  return util::Json::parse(R"({
    "dims": {"M": 4096, "N": 4096, "K": 4096},
    "buffers": [
      {"name": "A", "role": "input", "dtype": "float32", "shape": [4096, 4096], "nbytes": 67108864,
       "shape_source": "shapes", "shape_expr": ["M", "K"]},
      {"name": "B", "role": "input", "dtype": "float16", "shape": [4096, 4096], "nbytes": 33554432,
       "shape_source": "setup"},
      {"name": "C", "role": "output", "dtype": "float32", "shape": [4096, 4096], "nbytes": 67108864,
       "shape_source": "shapes", "shape_expr": ["M", "N"]}
    ]})");
}

}  // namespace

TEST(WorkingSet, ExactAtTheUsersDimsAndEvaluatedAtOthers) {
  auto m = model_from_manifest(matmul_manifest());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->exact());  // B comes from setup(): inferred
  EXPECT_EQ(m->buffers[0].method, SizeMethod::kExact);
  EXPECT_EQ(m->buffers[1].method, SizeMethod::kInferred);
  auto at_user = estimate(*m, {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  ASSERT_TRUE(at_user);
  EXPECT_EQ(at_user->bytes, 67108864 + 33554432 + 67108864);  // the manifest's own nbytes
  // M=1024 N=2048 K=512: A 1024x512 fp32, C 1024x2048 fp32; B's 4096s matched M, N and K alike: the largest
  // of them at the case (2048) for each extent, an upper bound of the real 512x2048.
  auto small = estimate(*m, {{"M", 1024}, {"N", 2048}, {"K", 512}});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->buffers[0].bytes, 1024 * 512 * 4);
  EXPECT_EQ(small->buffers[1].bytes, 2048 * 2048 * 2);
  EXPECT_EQ(small->buffers[2].bytes, 1024 * 2048 * 4);
  EXPECT_EQ(small->bytes, 1024 * 512 * 4 + 2048 * 2048 * 2 + 1024 * 2048 * 4);
  EXPECT_EQ(to_json(*small)["buffers"].size(), 3u);
}

TEST(WorkingSet, ConstantsGuessedRuleAndFlattenedSetupBuffers) {
  auto j = util::Json::parse(R"({
    "dims": {"rows": 1000, "cols": 64, "n": 7},
    "buffers": [
      {"name": "w", "dtype": "float32", "shape": [64, 3], "shape_source": "shapes", "shape_expr": ["cols", 3]},
      {"name": "x", "dtype": "float32", "shape": [64000], "shape_source": "guessed"},
      {"name": "y", "dtype": "bfloat16", "shape": [64000], "shape_source": "setup"},
      {"name": "lut", "dtype": "int32", "shape": [17], "shape_source": "setup"},
      {"name": "p", "dtype": "float64", "shape": [5], "shape_source": "guessed"}
    ]})");
  auto m = model_from_manifest(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->buffers[1].method, SizeMethod::kGuessedRule);  // rows x cols, the two largest
  EXPECT_EQ(m->buffers[2].method, SizeMethod::kInferred);     // 64000 = rows x cols, flattened
  EXPECT_EQ(m->buffers[3].method, SizeMethod::kConstant);     // 17 matches nothing
  EXPECT_EQ(m->buffers[4].method, SizeMethod::kConstant);     // --ptr-size 5
  auto w = estimate(*m, {{"rows", 500}, {"cols", 32}, {"n", 7}});
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->buffers[0].numel, 96);
  EXPECT_EQ(w->buffers[1].numel, 16000);
  EXPECT_EQ(w->buffers[2].numel, 16000);
  EXPECT_EQ(w->buffers[3].numel, 17);
  EXPECT_EQ(w->buffers[4].bytes, 40);
  EXPECT_EQ(w->bytes, 96 * 4 + 16000 * 4 + 16000 * 2 + 17 * 4 + 40);
}

TEST(WorkingSet, BadManifestsAndMissingDimsAreErrors) {
  auto bad_dtype = model_from_manifest(util::Json::parse(R"({"dims": {"n": 4}, "buffers": [{"name": "a", "dtype": "float7", "shape": [4]}]})"));
  ASSERT_FALSE(bad_dtype);
  EXPECT_NE(bad_dtype.error().message.find("float7"), std::string::npos);
  auto bad_dim = model_from_manifest(util::Json::parse(
      R"({"dims": {"n": 4}, "buffers": [{"name": "a", "dtype": "float32", "shape": [4], "shape_expr": ["m"]}]})"));
  ASSERT_FALSE(bad_dim);
  EXPECT_EQ(bad_dim.error().code, ExitCode::kInput);
  auto m = model_from_manifest(matmul_manifest());
  ASSERT_TRUE(m);
  auto missing = estimate(*m, {{"M", 4}, {"N", 4}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("dimension K"), std::string::npos);
  auto overflow = estimate(*m, {{"M", int64_t{1} << 40}, {"N", int64_t{1} << 40}, {"K", 4}});
  ASSERT_FALSE(overflow);
  EXPECT_NE(overflow.error().message.find("overflow"), std::string::npos);
}

TEST(WorkingSet, DefaultLimitIsASixteenthOfTheGpusMemory) {
  const int64_t h200 = 150'754'820'096;  // cuDeviceTotalMem on an H200 (140.4 GiB)
  EXPECT_EQ(default_max_working_set_bytes(h200), h200 / 16);
  EXPECT_GT(default_max_working_set_bytes(h200), int64_t{8} << 30);
  EXPECT_EQ(default_max_working_set_bytes(0), 0);
  EXPECT_EQ(max_working_set_bytes(100, h200), 100 << 20);  // the option wins
  EXPECT_EQ(max_working_set_bytes(0, h200), h200 / 16);
}

TEST(WorkingSet, ACaseAboveTheLimitIsScaledDownOnItsLargestAxes) {
  auto m = model_from_manifest(matmul_manifest());
  ASSERT_TRUE(m);
  const Dims req{{"M", 4096}, {"N", 4096}, {"K", 4096}};
  auto same = fit_to_limit(*m, req, int64_t{1} << 30);
  ASSERT_TRUE(same);
  EXPECT_FALSE(same->fitted());
  EXPECT_EQ(same->realised, req);
  const int64_t limit = 40 << 20;  // 40 MiB, the case needs 160 MiB
  auto f = fit_to_limit(*m, req, limit);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_TRUE(f->fitted());
  EXPECT_EQ(f->requested_bytes, 160 << 20);
  EXPECT_LE(f->realised_bytes, limit);
  // Every axis shrunk alike to a multiple of 256 (4096's alignment): 2048^2 x (4+2+4) bytes = 40 MiB exactly.
  EXPECT_EQ(f->realised, (Dims{{"M", 2048}, {"N", 2048}, {"K", 2048}}));
  EXPECT_EQ(f->realised_bytes, limit);
  EXPECT_NEAR(f->factor, 0.5, 0.07);
  auto tiny = fit_to_limit(*m, req, 1000);  // below the smallest scaling (256^3 ...)
  ASSERT_FALSE(tiny);
  EXPECT_EQ(tiny.error().code, ExitCode::kInput);
  EXPECT_NE(tiny.error().message.find("--max-working-set-mb"), std::string::npos);
}

TEST(WorkingSet, FittingCasesRecordsRequestedAndRealisedAndMergesCollisions) {
  auto m = model_from_manifest(matmul_manifest());
  ASSERT_TRUE(m);
  auto cases = default_matrix({{"M", 4096}, {"N", 4096}, {"K", 4096}});
  // 40 MiB: full (160 MiB) and scale_0.75 (90 MiB) both fit to 2048^3, the same as scale_0.5: one case left.
  auto fitted = fit_cases(cases, *m, 40 << 20);
  ASSERT_TRUE(fitted) << fitted.error().message;
  ASSERT_EQ(fitted->size(), 1u);
  const auto& c = fitted->front();
  EXPECT_EQ(c.name, "full");
  EXPECT_EQ(c.requested.at("M"), 4096);
  EXPECT_EQ(c.realised.at("M"), 2048);
  EXPECT_TRUE(c.fitted());
  EXPECT_NEAR(c.weight, 1.0, 1e-12);
  EXPECT_NE(c.note.find("fitted to the working-set limit of 40.0 MiB"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("merged with scale_0.75"), std::string::npos) << c.note;
  // With room for all, nothing changes.
  auto roomy = fit_cases(cases, *m, int64_t{1} << 30);
  ASSERT_TRUE(roomy);
  ASSERT_EQ(roomy->size(), 3u);
  for (const auto& k : *roomy) EXPECT_FALSE(k.fitted());
}

TEST(OutOfMemory, RecognisesDriverRuntimeAndTorchMessages) {
  EXPECT_TRUE(is_out_of_memory("cuMemAlloc y (4000 bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory (2)"));
  EXPECT_TRUE(is_out_of_memory("solve() left a CUDA runtime error (cudaError 2, e.g. a failed launch)"));
  EXPECT_TRUE(is_out_of_memory("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB"));
  EXPECT_FALSE(is_out_of_memory("solve() left a CUDA runtime error (cudaError 209, e.g. a failed launch)"));
  EXPECT_FALSE(is_out_of_memory("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered (700)"));
}

TEST(OutOfMemory, RetriesTheBaselineSmallerUpToTheLimitButNeverACandidate) {
  const int64_t ws = 1000 << 20;
  auto first = decide_oom_retry(OomWho::kBaseline, true, 0, ws);
  EXPECT_TRUE(first.retry);
  EXPECT_EQ(first.next_max_bytes, 500 << 20);
  EXPECT_NE(first.reason.find("retry 1 of 2"), std::string::npos);
  auto golden = decide_oom_retry(OomWho::kGoldenData, true, 1, 500 << 20);
  EXPECT_TRUE(golden.retry);
  EXPECT_EQ(golden.next_max_bytes, 250 << 20);
  auto spent = decide_oom_retry(OomWho::kBaseline, true, 2, 250 << 20);
  EXPECT_FALSE(spent.retry);
  EXPECT_NE(spent.reason.find("giving up"), std::string::npos);
  EXPECT_FALSE(decide_oom_retry(OomWho::kCandidate, true, 0, ws).retry);
  EXPECT_FALSE(decide_oom_retry(OomWho::kBaseline, false, 0, ws).retry);
  OomPolicy p{3, 0.25};
  EXPECT_EQ(decide_oom_retry(OomWho::kBaseline, true, 2, ws, p).next_max_bytes, 250 << 20);
}

}  // namespace kopt::workload
