#pragma once
// Golden data for tests, made without Python.
#include <filesystem>

namespace kopt::testing_support {

// Golden data for solve(const float* a, const float* b, float* c, int n): `seeds` seeds of random a, b and
// c = a + b (tensors in.a, in.b, out.c), in DIR. Returns DIR.
std::filesystem::path make_vadd_golden(const std::filesystem::path& dir, int n, int seeds = 2);

}  // namespace kopt::testing_support
