#pragma once
// Golden data for tests, made without Python.
#include <filesystem>
#include <string>

namespace kopt::testing_support {

// Golden data for solve(const float* a, const float* b, float* c, int n): `seeds` seeds of random a, b and
// c = a + b (tensors in.a, in.b, out.c), in DIR. With a sealed token, also the sealed seed (contract/sealed_seed.h)
// beneath sealed_root() (set KOPT_CACHE_DIR in tests), named in the manifest. Returns DIR.
std::filesystem::path make_vadd_golden(const std::filesystem::path& dir, int n, int seeds = 2,
                                       const std::string& sealed_token = "");

// Golden data for solve(const float* a, float* x, float* c, int n) with x in-out (x += a) and c = 2a: one public seed
// and the sealed seed of `sealed_token` (in.a, in.x, out.x, out.c). Returns DIR.
std::filesystem::path make_inout_golden(const std::filesystem::path& dir, int n, const std::string& sealed_token);

}  // namespace kopt::testing_support
