#pragma once
// Golden data for tests, made without Python.
#include <filesystem>
#include <string>

#include "contract/ephemeral_seed.h"
#include "contract/golden_maker.h"

namespace kopt::testing_support {

// Golden data for solve(const float* a, const float* b, float* c, int n): `seeds` seeds of random a, b and
// c = a + b (tensors in.a, in.b, out.c), in DIR. With a sealed token, also the sealed seed (contract/sealed_seed.h)
// beneath sealed_root() (set KOPT_CACHE_DIR in tests), named in the manifest. Returns DIR.
std::filesystem::path make_vadd_golden(const std::filesystem::path& dir, int n, int seeds = 2,
                                       const std::string& sealed_token = "");

// An ephemeral seed for make_vadd_golden's data at n, as the harness sends it (a memfd sealed for good, adopted: this
// process is not dumpable while it is held): random a, b (a secret draw) and c = a + b, or (`wrong`) c = a + b + 1.
contract::EphemeralSeedPtr make_vadd_ephemeral(int n, bool wrong = false);
// The same bytes in a memfd left unsealed (the judge refuses it). The descriptor, close-on-exec.
int unsealed_vadd_ephemeral_fd(int n);

// Golden data for solve(const float* a, float* x, float* c, int n) with x in-out (x += a) and c = 2a: one public seed
// and the sealed seed of `sealed_token` (in.a, in.x, out.x, out.c). Returns DIR.
std::filesystem::path make_inout_golden(const std::filesystem::path& dir, int n, const std::string& sealed_token);

// A request for examples/vector_add's ref.py at n (2 seeds, no reference timing unless asked, a 300 s limit), its
// golden cache under root/cache and its folder root/run/n: what the harness tests make through prefetch_golden and
// the golden stream. Its signature is parsed from examples/vector_add/kernel.cu.
contract::GoldenRequest vadd_example_request(const std::filesystem::path& root, int64_t n, const std::string& run,
                                             bool time_reference = false);

}  // namespace kopt::testing_support
