#include "testing/golden_fixture.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "contract/safetensors.h"
#include "contract/sealed_seed.h"
#include "contract/signature.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/memfd.h"

namespace kopt::testing_support {

// Golden data for solve(const float* a, const float* b, float* c, int n), made without Python.
namespace {
contract::Tensor float_tensor(const std::vector<float>& v) {  // a 1-D float32 tensor of v
  contract::Tensor t;
  t.shape = {static_cast<int64_t>(v.size())};
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}
}  // namespace

std::filesystem::path make_vadd_golden(const std::filesystem::path& dir, int n, int seeds, const std::string& sealed_token) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  auto sig = contract::parse_solve_signature(
      "extern \"C\" void solve(const float* a, const float* b, float* c, int n);");
  EXPECT_TRUE(util::write_json_atomic(dir / "signature.json", "signature", {{"signature", contract::to_json(*sig)}}).ok());
  util::Json buffers = util::Json::array();
  for (const char* name : {"a", "b", "c"})
    buffers.push_back({{"name", name}, {"role", std::string(name) == "c" ? "output" : "input"}, {"dtype", "float32"},
                       {"shape", {n}}, {"nbytes", 4 * n}});
  util::Json seed_list = util::Json::array();
  for (int s = 0; s < seeds; ++s) seed_list.push_back(s);
  util::Json manifest = {{"seeds", seed_list}, {"buffers", buffers}, {"scalars", {{"n", n}}},
                         {"tolerances", {{"atol", 1e-5}, {"rtol", 1e-5}}}, {"sizes_guessed", false}};
  if (!sealed_token.empty()) manifest["sealed"] = {{"token", sealed_token}};
  EXPECT_TRUE(util::write_json_atomic(dir / "manifest.json", "golden_manifest", manifest).ok());
  // The harness draws it from a secret random number; so does the fixture, for each golden folder: a fixed number gave
  // every fixture the same sealed data, and a hostile kernel found another test's sealed file (beneath that test's own
  // cache folder, which this test's seal does not cover) with the same inputs (H200 runs, 2026-12-04).
  const int sealed_seed = (1 << 20) + static_cast<int>(std::random_device{}() % (1u << 20));
  std::vector<int> all;
  for (int s = 0; s < seeds; ++s) all.push_back(s);
  if (!sealed_token.empty()) all.push_back(sealed_seed);
  for (int s : all) {
    std::mt19937 rng(static_cast<unsigned>(s + 1));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(static_cast<size_t>(n)), b(a.size()), c(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = u(rng);
      b[i] = u(rng);
      c[i] = a[i] + b[i];
    }
    contract::TensorMap m = {{"in.a", float_tensor(a)}, {"in.b", float_tensor(b)}, {"out.c", float_tensor(c)}};
    const fs::path file = s == sealed_seed ? contract::sealed_seed_file(sealed_token)
                                           : dir / ("seed_" + std::to_string(s) + ".safetensors");
    fs::create_directories(file.parent_path());
    EXPECT_TRUE(util::write_file_atomic(file, contract::serialize_safetensors(m)).ok());
  }
  return dir;
}

std::filesystem::path make_inout_golden(const std::filesystem::path& dir, int n, const std::string& sealed_token) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  auto sig = contract::parse_solve_signature("extern \"C\" void solve(const float* a, float* x, float* c, int n);");
  EXPECT_TRUE(util::write_json_atomic(dir / "signature.json", "signature", {{"signature", contract::to_json(*sig)}}).ok());
  util::Json buffers = util::Json::array();
  for (const auto& [name, role] : {std::pair{"a", "input"}, {"x", "inout"}, {"c", "output"}})
    buffers.push_back({{"name", name}, {"role", role}, {"dtype", "float32"}, {"shape", {n}}, {"nbytes", 4 * n}});
  util::Json manifest = {{"seeds", {0}},           {"buffers", buffers},
                         {"scalars", {{"n", n}}},  {"tolerances", {{"atol", 1e-5}, {"rtol", 1e-5}}},
                         {"sizes_guessed", false}, {"sealed", {{"token", sealed_token}}}};
  EXPECT_TRUE(util::write_json_atomic(dir / "manifest.json", "golden_manifest", manifest).ok());
  for (int s : {0, 1 << 20}) {
    std::mt19937 rng(static_cast<unsigned>(s + 7));
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> a(static_cast<size_t>(n)), x(a.size()), x_out(a.size()), c(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = u(rng);
      x[i] = u(rng);
      x_out[i] = x[i] + a[i];
      c[i] = 2 * a[i];
    }
    contract::TensorMap m = {{"in.a", float_tensor(a)}, {"in.x", float_tensor(x)}, {"out.x", float_tensor(x_out)}, {"out.c", float_tensor(c)}};
    const fs::path file = s != 0 ? contract::sealed_seed_file(sealed_token) : dir / "seed_0.safetensors";
    fs::create_directories(file.parent_path());
    EXPECT_TRUE(util::write_file_atomic(file, contract::serialize_safetensors(m)).ok());
  }
  return dir;
}

contract::GoldenRequest vadd_example_request(const std::filesystem::path& root, int64_t n, const std::string& run,
                                             bool time_reference) {
  const std::filesystem::path ex = std::filesystem::path(source_dir()) / "examples/vector_add";
  contract::GoldenRequest g;
  g.ref_py = ex / "ref.py";
  auto text = util::read_file(ex / "kernel.cu");
  EXPECT_TRUE(text.ok());
  if (text) {
    auto sig = contract::parse_solve_signature(*text, "kernel.cu");
    EXPECT_TRUE(sig.ok());
    if (sig) g.signature = *sig;
  }
  g.dims = {{"n", n}};
  g.seeds = 2;
  g.time_reference = time_reference;
  g.timeout_s = 300;
  g.cache = contract::GoldenCache{root / "cache"};
  g.out_dir = root / run / std::to_string(n);
  return g;
}

namespace {
util::Fd vadd_ephemeral_memfd(int n, bool wrong) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(n)), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = u(rng);
    b[i] = u(rng);
    c[i] = a[i] + b[i] + (wrong ? 1.0f : 0.0f);
  }
  const std::string bytes =
      contract::serialize_safetensors({{"in.a", float_tensor(a)}, {"in.b", float_tensor(b)}, {"out.c", float_tensor(c)}});
  auto fd = util::make_memfd("kopt-test-ephemeral");
  EXPECT_TRUE(fd.ok());
  if (!fd) return {};
  EXPECT_EQ(::write(fd->get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  return std::move(fd).value();
}
}  // namespace

contract::EphemeralSeedPtr make_vadd_ephemeral(int n, bool wrong) {
  util::Fd fd = vadd_ephemeral_memfd(n, wrong);
  EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS, util::kFrozenSeals), 0);
  auto seed = contract::EphemeralSeed::adopt(std::move(fd), {{"status", "ok"}, {"backend", "fixture"}});
  EXPECT_TRUE(seed.ok()) << (seed.ok() ? "" : seed.error().message);
  return seed.ok() ? *seed : nullptr;
}

int unsealed_vadd_ephemeral_fd(int n) { return vadd_ephemeral_memfd(n, false).release(); }

}  // namespace kopt::testing_support
