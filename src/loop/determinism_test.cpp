#include "loop/determinism.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace kopt::loop {

namespace {

contract::Tensor f32(const std::vector<float>& v, std::vector<int64_t> shape) {
  contract::Tensor t;
  t.dtype = contract::DType::kF32;
  t.shape = std::move(shape);
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

const std::vector<float> kBase = {0.5f, -1.25f, 3.0f, 7.75f, -0.125f, 2.5f};
const runner::Tolerance kTol{1e-4, 1e-4};

}  // namespace

TEST(Determinism, IdenticalRunsAreBitwiseEqual) {
  contract::TensorMap a = {{"out.y", f32(kBase, {2, 3})}, {"in.x", f32({1, 2}, {2})}};
  auto r = judge_determinism(a, a, true, kTol);
  EXPECT_EQ(r.verdict, DeterminismVerdict::kBitwiseEqual);
  EXPECT_FALSE(r.rejects());
  EXPECT_TRUE(r.outputs.contains("y"));
  EXPECT_FALSE(r.outputs.contains("x"));  // inputs are not outputs
}

TEST(Determinism, ATinyDifferenceIsAcceptedButNotInStrictNumerics) {
  auto b = kBase;
  b[3] = std::nextafter(b[3], 100.0f);  // one ulp: an atomic order, say
  contract::TensorMap ra = {{"out.y", f32(kBase, {2, 3})}}, rb = {{"out.y", f32(b, {2, 3})}};
  auto loose = judge_determinism(ra, rb, false, kTol);
  EXPECT_EQ(loose.verdict, DeterminismVerdict::kWithinTolerance);
  EXPECT_FALSE(loose.rejects());
  EXPECT_NE(loose.reason.find("y: 1 of 6 elements differ bitwise (first at 3), 0 beyond"), std::string::npos) << loose.reason;
  auto strict = judge_determinism(ra, rb, true, kTol);
  EXPECT_EQ(strict.verdict, DeterminismVerdict::kNondeterministic);
  EXPECT_TRUE(strict.rejects());
  EXPECT_NE(strict.reason.find("strict numerics"), std::string::npos);
  EXPECT_EQ(to_json(strict)["outputs"]["y"]["bitwise_differing"], 1);
}

TEST(Determinism, ADifferenceBeyondTheToleranceIsNondeterministic) {
  auto b = kBase;
  b[1] = 9.0f;  // stale memory read on the second run
  b[5] = std::nanf("");
  auto r = judge_determinism({{"out.y", f32(kBase, {6})}}, {{"out.y", f32(b, {6})}}, false, kTol);
  EXPECT_EQ(r.verdict, DeterminismVerdict::kNondeterministic);
  EXPECT_NE(r.reason.find("2 of 6 elements differ bitwise (first at 1), 2 beyond the tolerance"), std::string::npos) << r.reason;
  EXPECT_EQ(to_json(r)["verdict"], "nondeterministic");
}

TEST(Determinism, MismatchedOutputsAreIncomparable) {
  contract::TensorMap a = {{"out.y", f32(kBase, {6})}};
  EXPECT_EQ(judge_determinism(a, {{"out.z", f32(kBase, {6})}}, false, kTol).verdict, DeterminismVerdict::kIncomparable);
  EXPECT_EQ(judge_determinism(a, {{"out.y", f32(kBase, {2, 3})}}, false, kTol).verdict, DeterminismVerdict::kIncomparable);
  EXPECT_EQ(judge_determinism({}, {}, false, kTol).verdict, DeterminismVerdict::kIncomparable);
}

TEST(Determinism, OverSafetensorsBytes) {
  auto b = kBase;
  b[0] = -b[0];
  auto bytes_a = contract::serialize_safetensors({{"out.y", f32(kBase, {6})}});
  auto bytes_b = contract::serialize_safetensors({{"out.y", f32(b, {6})}});
  auto same = judge_determinism_bytes(bytes_a, bytes_a, true, kTol);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(same->verdict, DeterminismVerdict::kBitwiseEqual);
  auto diff = judge_determinism_bytes(bytes_a, bytes_b, false, kTol);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->verdict, DeterminismVerdict::kNondeterministic);
  EXPECT_FALSE(judge_determinism_bytes("garbage", bytes_b, false, kTol));
}

}  // namespace kopt::loop
