#include "contract/signature.h"

#include <gtest/gtest.h>

#include "contract/safetensors.h"

namespace kopt::contract {

namespace {
KernelSignature parse_ok(const std::string& src) {
  auto r = parse_solve_signature(src, "k.cu");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : KernelSignature{};
}
}  // namespace

TEST(Signature, PlainSgemm) {
  auto sig = parse_ok("extern \"C\" void solve(const float* A, const float* B, float* C, int M, int N, int K) {}");
  ASSERT_EQ(sig.params.size(), 6u);
  EXPECT_TRUE(sig.params[0].is_input());
  EXPECT_TRUE(sig.params[2].is_output());
  EXPECT_EQ(sig.params[3].kind, ParamKind::kScalar);
  EXPECT_EQ(sig.params[3].dtype, DType::kI32);
  EXPECT_EQ(sig.normalised, "void solve(const float* A, const float* B, float* C, int M, int N, int K)");
}

TEST(Signature, EastConstRestrictCommentsAndLineBreaks) {
  auto sig = parse_ok(R"(
// extern "C" void solve(int decoy);   <- a comment must not be parsed
/* void solve(double nope) */
extern "C"
void solve(float const* __restrict__ x,   // input
           const float *__restrict__ const y, /* another input */
           float* __restrict__ out,
           size_t n)
{ })");
  ASSERT_EQ(sig.params.size(), 4u);
  EXPECT_EQ(sig.params[0].name, "x");
  EXPECT_TRUE(sig.params[0].is_input());
  EXPECT_TRUE(sig.params[1].is_input());
  EXPECT_TRUE(sig.params[2].is_output());
  EXPECT_EQ(sig.params[3].dtype, DType::kU64);
  EXPECT_EQ(sig.line, 5);  // the line of `void solve(`
}

TEST(Signature, AllPointerTypes) {
  auto sig = parse_ok(
      "extern \"C\" void solve(const double* a, const __half* b, half* c, const __nv_bfloat16* d, nv_bfloat16* e,"
      " const int8_t* f, uint8_t* g, int16_t* h, uint16_t* i, const int32_t* j, uint32_t* k, int64_t* l,"
      " uint64_t* m, char* n, short* o, int* p, long* q, bool* r, unsigned char* s, long long* t)");
  std::vector<DType> want = {DType::kF64, DType::kF16, DType::kF16, DType::kBF16, DType::kBF16, DType::kI8, DType::kU8,
                             DType::kI16, DType::kU16, DType::kI32, DType::kU32, DType::kI64, DType::kU64, DType::kI8,
                             DType::kI16, DType::kI32, DType::kI64, DType::kBool, DType::kU8, DType::kI64};
  ASSERT_EQ(sig.params.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(sig.params[i].dtype, want[i]) << sig.params[i].name;
}

TEST(Signature, ScalarTypes) {
  auto sig = parse_ok("extern \"C\" void solve(float* y, int a, long b, size_t c, unsigned d, float e, double f, "
                      "unsigned int g, long long h, std::size_t i, const int j)");
  std::vector<DType> want = {DType::kF32, DType::kI32, DType::kI64, DType::kU64, DType::kU32, DType::kF32,
                             DType::kF64, DType::kU32, DType::kI64, DType::kU64, DType::kI32};
  ASSERT_EQ(sig.params.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(sig.params[i].dtype, want[i]) << sig.params[i].name;
  EXPECT_EQ(sig.params[10].kind, ParamKind::kScalar);
}

TEST(Signature, ExternCBlockAndHostQualifier) {
  auto a = parse_ok("extern \"C\" {\n#include <x.h>\n__global__ void k(){}\nvoid solve(float* x, int n) { k<<<1,1>>>(); }\n}");
  EXPECT_EQ(a.params.size(), 2u);
  auto b = parse_ok("extern \"C\" __host__ void solve(float* x, int n);");
  EXPECT_EQ(b.params.size(), 2u);
}

TEST(Signature, ClearErrorsNamingTheProblem) {
  auto missing = parse_solve_signature("__global__ void k(float* x) {}", "k.cu");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kInput);
  EXPECT_NE(missing.error().message.find("no `extern \"C\" void solve"), std::string::npos);

  auto not_c = parse_solve_signature("void solve(float* x, int n) {}", "k.cu");
  ASSERT_FALSE(not_c.ok());
  EXPECT_NE(not_c.error().message.find("extern \"C\""), std::string::npos);

  auto unknown = parse_solve_signature("extern \"C\" void solve(float4* x, int n) {}", "k.cu");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'x' has type 'float4'"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("k.cu:1"), std::string::npos);

  auto ptrptr = parse_solve_signature("extern \"C\" void solve(float** x) {}", "k.cu");
  ASSERT_FALSE(ptrptr.ok());
  EXPECT_NE(ptrptr.error().message.find("pointer to a pointer"), std::string::npos);

  auto noname = parse_solve_signature("extern \"C\" void solve(float*, int) {}", "k.cu");
  ASSERT_FALSE(noname.ok());
  EXPECT_NE(noname.error().message.find("has no name"), std::string::npos);

  auto scalar_half = parse_solve_signature("extern \"C\" void solve(float* x, half h) {}", "k.cu");
  ASSERT_FALSE(scalar_half.ok());

  auto ref = parse_solve_signature("extern \"C\" void solve(float& x) {}", "k.cu");
  ASSERT_FALSE(ref.ok());
}

TEST(Signature, JsonRoundTrip) {
  auto sig = parse_ok("extern \"C\" void solve(const float* a, float* b, int n)");
  auto back = signature_from_json(to_json(sig));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->normalised, sig.normalised);
  ASSERT_EQ(back->params.size(), 3u);
  EXPECT_TRUE(back->params[0].is_input());
  EXPECT_EQ(back->params[2].dtype, DType::kI32);
}

TEST(Safetensors, RoundTripAndValidation) {
  TensorMap m;
  Tensor t;
  t.dtype = DType::kF32;
  t.shape = {2, 3};
  t.data.resize(24);
  for (size_t i = 0; i < 24; ++i) t.data[i] = static_cast<unsigned char>(i);
  m["in.A"] = t;
  Tensor u;
  u.dtype = DType::kBF16;
  u.shape = {4};
  u.data.assign(8, 7);
  m["out.C"] = u;
  std::string bytes = serialize_safetensors(m);
  auto back = parse_safetensors(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->at("in.A").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back->at("in.A").data, t.data);
  EXPECT_EQ(back->at("out.C").dtype, DType::kBF16);
  EXPECT_FALSE(parse_safetensors("abc").ok());
  std::string truncated = bytes.substr(0, bytes.size() - 4);
  EXPECT_FALSE(parse_safetensors(truncated).ok());
}

}  // namespace kopt::contract
