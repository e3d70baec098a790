// The examples (examples/<name>/kernel.cu + ref.py), checked without a GPU:
//  * every solve() signature parses; every kernel's @kopt annotations build a search space, every KOPT_* macro
//    in its source is a declared method guard, and the space's size agrees with scripts/perf/kopt_space.py;
//  * every example compiles with nvcc for sm_90, sgemm_tunable at four points of its space, and the SASS of the
//    method variants shows the methods (skipped without nvcc/cuobjdump; compiles go to a build cache kept
//    between runs, so a second run takes seconds);
//  * every example computes the right answer: its CUDA source runs on the CPU under tests/cuda_emu (each thread
//    a fiber, cp.async emulated late) at several points of its space, against golden data the real Python
//    harness makes from its ref.py (skipped without g++ or python3). KOPT_EMU_ALL=1 runs every point.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>

#include "compile/pool.h"
#include "contract/golden_maker.h"
#include "contract/signature.h"
#include "runner/compare.h"
#include "runner/golden.h"
#include "sass/analysis.h"
#include "search/annotations.h"
#include "search/candidate.h"
#include "search/derive.h"
#include "search/registry.h"
#include "search/space.h"
#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::pipeline {
namespace {

namespace fs = std::filesystem;
using search::Config;
using search::SearchSpace;

fs::path repo_root() { return fs::path(testing_support::test_data_dir()).parent_path().parent_path(); }
fs::path example_file(const std::string& name, const std::string& file) { return repo_root() / "examples" / name / file; }

std::string read(const fs::path& p) {
  auto text = util::read_file(p);
  EXPECT_TRUE(text.ok()) << p;
  return text ? *text : std::string();
}

struct Example {
  std::string name;
  std::string signature;             // solve() as kopt normalises it
  std::vector<std::string> params;   // declared @kopt params
  std::vector<std::string> methods;  // declared @kopt methods
};

const std::vector<Example>& examples() {
  static const std::vector<Example> all = {
      {"vector_add", "void solve(const float* a, const float* b, float* c, int n)", {"BLOCK", "ITEMS"},
       {"vectorized_access"}},
      // No @kopt lines: its dim3 block(16, 16) is derived (docs/ANNOTATIONS.md, "Kernels without annotations").
      {"sgemm_naive", "void solve(const float* A, const float* B, float* C, int M, int N, int K)",
       {"SGEMM_NAIVE_BLOCK_X", "SGEMM_NAIVE_BLOCK_Y"}, {}},
      {"sgemm_tunable",
       "void solve(const float* A, const float* B, float* C, int M, int N, int K)",
       {"BM", "BN", "BK", "TM", "TN", "STAGES"},
       {"vectorized_access", "cp_async_pipeline", "smem_padding"}},
      {"softmax", "void solve(const float* x, float* y, int rows, int cols)", {"THREADS"},
       {"online_softmax", "vectorized_access"}},
      {"reduction", "void solve(const float* x, float* out, int n)", {"THREADS", "BLOCKS_PER_SM", "UNROLL"},
       {"vectorized_access", "atomic_reduction"}},
      {"transpose", "void solve(const float* x, float* y, int rows, int cols)", {"TILE", "BLOCK_ROWS"},
       {"smem_padding", "vectorized_access", "vectorized_stores", "grouped_launch_ordering"}},
  };
  return all;
}

const search::Registry& registry() {
  auto reg = search::registry();
  if (!reg) {
    ADD_FAILURE() << reg.error().message;
    std::abort();
  }
  return reg->get();
}

// The example's source; for a kernel without annotations (examples/plain), the annotated copy kopt derives.
std::string source_of(const std::string& name) {
  fs::path kernel = example_file(name, "kernel.cu");
  std::string text = read(kernel);
  auto ann = search::parse_annotations(text, kernel.string());
  if (!ann || !ann->empty()) return text;
  auto d = search::derive(text, kernel.string());
  EXPECT_TRUE(d.ok()) << (d ? "" : d.error().message);
  return d && !d->empty() ? d->instrumented : text;
}

SearchSpace space_of(const std::string& name) {
  fs::path kernel = example_file(name, "kernel.cu");
  auto ann = search::parse_annotations(source_of(name), kernel.string());
  EXPECT_TRUE(ann.ok()) << (ann ? "" : ann.error().message);
  if (!ann) return {};
  search::SpaceOptions opts;  // CUDA, sm_90, reference numerics, flag methods offered
  auto space = search::build_space(*ann, registry(), opts);
  EXPECT_TRUE(space.ok()) << (space ? "" : space.error().message);
  return space ? *space : SearchSpace{};
}

bool declared(const search::Dim& d) { return d.kind != search::DimKind::kFlag; }

// Every valid point over the declared dimensions (params and guards); compiler-flag dimensions stay at their
// default (off), as the emulator and the perf scripts cannot apply nvcc flags.
std::vector<Config> declared_configs(const SearchSpace& s) {
  std::vector<Config> out;
  Config c = s.default_config();
  std::function<void(size_t)> walk = [&](size_t d) {
    if (d == s.dims.size()) {
      if (s.valid(c)) out.push_back(c);
      return;
    }
    if (!declared(s.dims[d])) return walk(d + 1);
    for (size_t i = 0; i < s.dims[d].values.size(); ++i) {
      c[d] = static_cast<int>(i);
      walk(d + 1);
    }
    c[d] = s.dims[d].default_index;
  };
  walk(0);
  return out;
}

// The default configuration with some declared dimensions changed by name.
Config config_with(const SearchSpace& s, const std::map<std::string, int64_t>& values) {
  Config c = s.default_config();
  for (const auto& [name, v] : values) {
    int d = s.dim_index(name);
    EXPECT_GE(d, 0) << name;
    if (d < 0) continue;
    const auto& vals = s.dims[d].values;
    auto it = std::find(vals.begin(), vals.end(), v);
    EXPECT_NE(it, vals.end()) << name << "=" << v;
    c[d] = static_cast<int>(it - vals.begin());
  }
  return c;
}

std::map<std::string, int64_t> declared_values(const SearchSpace& s, const Config& c) {
  std::map<std::string, int64_t> out;
  for (size_t d = 0; d < s.dims.size(); ++d)
    if (declared(s.dims[d])) out[s.dims[d].name] = s.dims[d].values[c[d]];
  return out;
}

using testing_support::executable;

// ---------------------------------------------------------------------------------------------------------
// Contract and annotations

TEST(Examples, SignaturesParse) {
  for (const auto& ex : examples()) {
    fs::path kernel = example_file(ex.name, "kernel.cu");
    auto sig = contract::parse_solve_signature(read(kernel), kernel.string());
    ASSERT_TRUE(sig.ok()) << ex.name << ": " << sig.error().message;
    EXPECT_EQ(sig->normalised, ex.signature) << ex.name;
    EXPECT_TRUE(fs::is_regular_file(example_file(ex.name, "ref.py"))) << ex.name;
  }
}

TEST(Examples, AnnotationsBuildTheirSearchSpaces) {
  std::regex guard_re("KOPT_[A-Z0-9_]+");
  for (const auto& ex : examples()) {
    SCOPED_TRACE(ex.name);
    SearchSpace s = space_of(ex.name);
    ASSERT_FALSE(s.dims.empty());  // at least the compiler-flag methods
    EXPECT_TRUE(s.valid(s.default_config()));
    std::set<std::string> params, methods, guards;
    for (const auto& d : s.dims) {
      if (d.kind == search::DimKind::kParam) params.insert(d.name);
      if (d.kind == search::DimKind::kGuard) methods.insert(d.method), guards.insert(d.name);
      if (declared(d)) {
        EXPECT_GT(d.values.size(), 1u) << d.name << " is pinned: " << util::join(s.notes, "; ");
      }
    }
    EXPECT_EQ(params, std::set<std::string>(ex.params.begin(), ex.params.end()));
    EXPECT_EQ(methods, std::set<std::string>(ex.methods.begin(), ex.methods.end()));
    // Every KOPT_* macro the source uses is a declared guard (an undeclared one would never be switched on).
    std::string text = read(example_file(ex.name, "kernel.cu"));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), guard_re); it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(guards.count(it->str())) << it->str() << " is used but not declared by a @kopt method";
    if (!ex.params.empty()) {
      EXPECT_GT(declared_configs(s).size(), 8u);
    }
  }
}

// An example whose space its own @kopt lines declare (the others' is derived: sgemm_naive's dim3 block).
bool annotated(const std::string& name) { return read(example_file(name, "kernel.cu")).find("@kopt") != std::string::npos; }

// scripts/perf/kopt_space.py (used by the perf scripts to enumerate a space) agrees with kopt's own space. It reads
// @kopt lines: a derived space reaches it through `kopt annotate --write` (DeriveCompile, plain_check.sh).
TEST(Examples, KoptSpaceScriptAgreesWithTheSearchSpace) {
  std::string python = toolchain::find_python();
  if (python.empty()) GTEST_SKIP() << "python3 not found";
  util::SystemRunner runner;
  for (const auto& ex : examples()) {
    if (ex.params.empty() || !annotated(ex.name)) continue;
    SCOPED_TRACE(ex.name);
    SearchSpace s = space_of(ex.name);
    auto configs = declared_configs(s);
    util::ProcessSpec spec{{python, (repo_root() / "scripts/perf/kopt_space.py").string(),
                            example_file(ex.name, "kernel.cu").string(), "--format", "count"}};
    spec.timeout_s = 60;
    auto r = runner.run(spec);
    ASSERT_TRUE(r.success()) << r.describe() << r.stderr_text;
    EXPECT_EQ(util::trim(r.stdout_text), std::to_string(configs.size()));
    // And with a parameter fixed, the same subset.
    const auto& first = s.dims[0];
    spec.argv.insert(spec.argv.end(), {"--fix", first.name + "=" + std::to_string(first.values.back())});
    r = runner.run(spec);
    ASSERT_TRUE(r.success()) << r.stderr_text;
    size_t fixed = std::count_if(configs.begin(), configs.end(),
                                 [&](const Config& c) { return c[0] == static_cast<int>(first.values.size()) - 1; });
    EXPECT_EQ(util::trim(r.stdout_text), std::to_string(fixed));
  }
}

TEST(Examples, ReadmesGiveTheCommands) {
  for (const auto& ex : examples()) {
    if (ex.params.empty() || !annotated(ex.name)) continue;  // sgemm_naive is the generators' starting point
    std::string readme = read(example_file(ex.name, "README.md"));
    EXPECT_NE(readme.find("kopt bench examples/" + ex.name + "/kernel.cu --ref examples/" + ex.name + "/ref.py"),
              std::string::npos)
        << ex.name;
    EXPECT_NE(readme.find("kopt optimize examples/" + ex.name + "/kernel.cu"), std::string::npos) << ex.name;
  }
}

// ---------------------------------------------------------------------------------------------------------
// nvcc and SASS

// Kept between runs (content-addressed, so never stale): the second run of these tests hits it.
fs::path nvcc_cache() { return fs::temp_directory_path() / ("kopt-examples-cache-" + std::to_string(::getuid())); }

struct Build {
  std::string example;
  std::map<std::string, int64_t> values;  // declared dims changed from the default
};

compile::CompileRequest request_for(const std::string& id, const Build& b) {
  SearchSpace s = space_of(b.example);
  Config c = config_with(s, b.values);
  EXPECT_TRUE(s.valid(c)) << id << ": " << s.key(c);
  fs::path source = example_file(b.example, "kernel.cu");
  auto cand = search::candidate_from_config(s, registry(), c, source, read(source), "test");
  compile::CompileRequest r;
  r.name = id;
  r.source = source;
  r.defines = cand.defines;
  r.extra_flags = cand.flags;
  r.cache_dir = nvcc_cache();
  return r;
}

const std::map<std::string, Build>& builds() {
  static const std::map<std::string, Build> all = {
      {"vector_add", {"vector_add", {}}},
      {"sgemm_naive", {"sgemm_naive", {}}},
      {"softmax", {"softmax", {}}},
      {"reduction", {"reduction", {}}},
      {"transpose", {"transpose", {}}},
      {"sgemm_default", {"sgemm_tunable", {}}},
      {"sgemm_vec", {"sgemm_tunable", {{"KOPT_VECTORIZED_ACCESS", 1}}}},
      {"sgemm_cp_async", {"sgemm_tunable", {{"KOPT_CP_ASYNC_PIPELINE", 1}, {"STAGES", 3}}}},
      {"sgemm_big",
       {"sgemm_tunable",
        {{"BM", 128}, {"BN", 128}, {"BK", 16}, {"TM", 8}, {"TN", 8}, {"STAGES", 2},
         {"KOPT_VECTORIZED_ACCESS", 1}, {"KOPT_CP_ASYNC_PIPELINE", 1}, {"KOPT_SMEM_PADDING", 1}}}},
      {"reduction_atomic", {"reduction", {{"KOPT_ATOMIC_REDUCTION", 1}}}},
      {"vector_add_vec", {"vector_add", {{"KOPT_VECTORIZED_ACCESS", 1}, {"ITEMS", 4}}}},
  };
  return all;
}

class ExamplesNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing_support::sass_tools_present())
      GTEST_SKIP() << "nvcc or cuobjdump not found";
  }
  static std::map<std::string, compile::CompileResult> compile_all(const std::vector<std::string>& ids) {
    std::vector<compile::CompileRequest> reqs;
    for (const auto& id : ids) reqs.push_back(request_for(id, builds().at(id)));
    util::SystemRunner runner;
    std::map<std::string, compile::CompileResult> out;
    for (auto& r : compile::compile_batch(reqs, {0, ""}, runner)) out[r.name] = std::move(r);
    return out;
  }
  static sass::Verification verdict(const compile::CompileResult& r, const std::string& example, const std::string& method) {
    util::SystemRunner runner;
    auto a = sass::analyze(r.library, sass::kernel_names_from_source(example_file(example, "kernel.cu")), "", runner);
    EXPECT_TRUE(a.tool_error.empty()) << a.tool_error;
    const search::Method* m = search::find_method(method);
    EXPECT_NE(m, nullptr) << method;
    if (!m) return {};
    auto v = sass::verify_method(a, m->sass);
    EXPECT_TRUE(v.ok());
    return v ? *v : sass::Verification{};
  }
};

TEST_F(ExamplesNvcc, EveryExampleAndFourSgemmPointsCompileForSm90) {
  std::vector<std::string> ids;
  for (const auto& [id, b] : builds()) ids.push_back(id);
  auto built = compile_all(ids);
  for (const auto& id : ids) {
    const auto& r = built.at(id);
    ASSERT_TRUE(r.ok()) << id << ":\n" << r.log_text;
    ASSERT_FALSE(r.resources.empty()) << id;
    for (const auto& res : r.resources) {
      EXPECT_FALSE(res.spills()) << id << " spills registers";
      EXPECT_LE(res.registers.value_or(0), 255) << id;
    }
  }
  // The four sgemm points are four different builds.
  std::set<std::string> keys;
  for (const auto& id : {"sgemm_default", "sgemm_vec", "sgemm_cp_async", "sgemm_big"}) keys.insert(built.at(id).cache_key);
  EXPECT_EQ(keys.size(), 4u);
}

TEST_F(ExamplesNvcc, SgemmMethodVariantsShowTheirMethodsInSass) {
  auto built = compile_all({"sgemm_default", "sgemm_vec", "sgemm_cp_async", "reduction", "reduction_atomic"});
  for (const auto& [id, r] : built) ASSERT_TRUE(r.ok()) << id << ":\n" << r.log_text;
  auto vec = verdict(built.at("sgemm_vec"), "sgemm_tunable", "vectorized_access");
  EXPECT_EQ(vec.status, sass::VerifyStatus::kPass) << vec.message;
  auto scalar = verdict(built.at("sgemm_default"), "sgemm_tunable", "vectorized_access");
  EXPECT_EQ(scalar.status, sass::VerifyStatus::kFail) << scalar.message;
  auto cp = verdict(built.at("sgemm_cp_async"), "sgemm_tunable", "cp_async_pipeline");
  EXPECT_EQ(cp.status, sass::VerifyStatus::kPass) << cp.message;
  ASSERT_FALSE(cp.checks.empty());
  ASSERT_FALSE(cp.checks[0].examples.empty());
  EXPECT_NE(cp.checks[0].examples[0].instruction.find("LDGSTS"), std::string::npos);
  auto no_cp = verdict(built.at("sgemm_default"), "sgemm_tunable", "cp_async_pipeline");
  EXPECT_EQ(no_cp.status, sass::VerifyStatus::kFail) << no_cp.message;
  auto atomic = verdict(built.at("reduction_atomic"), "reduction", "atomic_reduction");
  EXPECT_EQ(atomic.status, sass::VerifyStatus::kPass) << atomic.message;
  auto two_pass = verdict(built.at("reduction"), "reduction", "atomic_reduction");
  EXPECT_EQ(two_pass.status, sass::VerifyStatus::kFail) << two_pass.message;
}

TEST_F(ExamplesNvcc, VectorAddFloat4ExistsOnlyWithItsMethodOn) {
  auto built = compile_all({"vector_add", "vector_add_vec"});
  for (const auto& [id, r] : built) ASSERT_TRUE(r.ok()) << id << ":\n" << r.log_text;
  auto on = verdict(built.at("vector_add_vec"), "vector_add", "vectorized_access");
  EXPECT_EQ(on.status, sass::VerifyStatus::kPass) << on.message;
  auto off = verdict(built.at("vector_add"), "vector_add", "vectorized_access");
  EXPECT_EQ(off.status, sass::VerifyStatus::kFail) << off.message;  // the scalar baseline has no 16-byte access
}

// ---------------------------------------------------------------------------------------------------------
// Results on the CPU (tests/cuda_emu)

fs::path emu_dir() { return repo_root() / "tests" / "cuda_emu"; }

// Rewrites `kernel<<<grid, block[, smem[, stream]]>>>(args)` into `::kemu::launch([&] { kernel(args); }, grid,
// block...)`. The callee may carry template arguments.
Result<std::string> rewrite_launches(const std::string& src) {
  std::string out;
  size_t i = 0;
  for (;;) {
    size_t p = src.find("<<<", i);
    if (p == std::string::npos) break;
    size_t j = p;
    while (j > i && std::isspace(static_cast<unsigned char>(src[j - 1]))) --j;
    if (j > i && src[j - 1] == '>') {  // template arguments
      int depth = 0;
      do {
        --j;
        if (src[j] == '>') ++depth;
        if (src[j] == '<') --depth;
      } while (j > i && depth > 0);
    }
    while (j > i && (std::isalnum(static_cast<unsigned char>(src[j - 1])) || src[j - 1] == '_' || src[j - 1] == ':')) --j;
    size_t q = src.find(">>>", p);
    if (q == std::string::npos) return input_error("<<< without >>>");
    size_t open = q + 3;
    while (open < src.size() && std::isspace(static_cast<unsigned char>(src[open]))) ++open;
    if (open >= src.size() || src[open] != '(') return input_error("no argument list after >>>");
    size_t close = open;
    for (int depth = 0; close < src.size(); ++close) {
      if (src[close] == '(') ++depth;
      if (src[close] == ')' && --depth == 0) break;
    }
    if (close >= src.size()) return input_error("unbalanced launch arguments");
    out += src.substr(i, j - i);
    out += "::kemu::launch([&] { " + src.substr(j, p - j) + src.substr(open, close - open + 1) + "; }, " +
           src.substr(p + 3, q - p - 3) + ")";
    i = close + 1;
  }
  return out + src.substr(i);
}

std::string literal(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A program running solve() of every configuration on the buffers in DIR/<param index>.bin, writing every
// buffer afterwards to DIR/cfg<c>_<param index>.bin. Each configuration is the kernel source compiled inside its
// own namespace with its macros defined.
std::string emulation_program(const contract::KernelSignature& sig, const std::vector<std::map<std::string, int64_t>>& configs,
                              const std::map<std::string, double>& scalars) {
  std::string p = "// Generated by src/pipeline/examples_test.cpp.\n#include <cstdio>\n#include <fstream>\n#include <iterator>\n"
                  "#include <string>\n";
  for (size_t c = 0; c < configs.size(); ++c) {
    p += "namespace cfg" + std::to_string(c) + " {\n";
    for (const auto& [k, v] : configs[c]) p += "#define " + k + " " + std::to_string(v) + "\n";
    p += "#include \"kernel.inc\"\n";
    for (const auto& [k, v] : configs[c]) p += "#undef " + k + "\n";
    p += "}\n";
  }
  p += R"(
namespace {
struct Buffer { void* p = nullptr; size_t n = 0; };
Buffer load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Buffer b;
  b.n = bytes.size();
  b.p = std::aligned_alloc(256, (b.n + 255) / 256 * 256 + 256);  // aligned like cudaMalloc
  std::memcpy(b.p, bytes.data(), b.n);
  return b;
}
void save(const std::string& path, const Buffer& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(b.p), static_cast<std::streamsize>(b.n));
}
}  // namespace
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
)";
  p += "  for (int c = 0; c < " + std::to_string(configs.size()) + "; ++c) {\n";
  std::vector<std::string> args;
  std::vector<size_t> pointers;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const auto& prm = sig.params[i];
    if (prm.kind == contract::ParamKind::kPointer) {
      pointers.push_back(i);
      args.push_back("static_cast<" + prm.type_text + ">(b" + std::to_string(i) + ".p)");
    } else {
      args.push_back("static_cast<" + prm.type_text + ">(" + literal(scalars.at(prm.name)) + ")");
    }
  }
  for (size_t i : pointers) p += "    Buffer b" + std::to_string(i) + " = load(dir + \"/" + std::to_string(i) + ".bin\");\n";
  p += "    switch (c) {\n";
  for (size_t c = 0; c < configs.size(); ++c)
    p += "      case " + std::to_string(c) + ": cfg" + std::to_string(c) + "::solve(" + util::join(args, ", ") + "); break;\n";
  p += "    }\n";
  for (size_t i : pointers)
    p += "    save(dir + \"/cfg\" + std::to_string(c) + \"_" + std::to_string(i) + ".bin\", b" + std::to_string(i) +
         ");\n    std::free(b" + std::to_string(i) + ".p);\n";
  p += "  }\n  return 0;\n}\n";
  return p;
}

struct EmuCase {
  std::string example;
  Dims dims;
  size_t max_configs;  // a deterministic sample of the declared space (all with KOPT_EMU_ALL=1)
  std::string mutate_from, mutate_to;  // a deliberate bug (tests of the emulator itself: never KOPT_EMU_ALL)
};

// Up to `n` valid configurations, spread evenly over the enumeration, the default first.
std::vector<Config> sample(const SearchSpace& s, size_t n, bool allow_all) {
  auto all = declared_configs(s);
  const char* every = std::getenv("KOPT_EMU_ALL");
  if ((allow_all && every && std::string(every) == "1") || all.size() <= n) return all;
  std::vector<Config> out = {s.default_config()};
  for (size_t i = 0; out.size() < n && i < n; ++i) {
    const Config& c = all[(i * all.size()) / n + (all.size() / n) / 2];
    if (c != out.front()) out.push_back(c);
  }
  return out;
}

struct EmuFailures {
  size_t checked = 0;              // (configuration, seed) pairs compared
  std::vector<std::string> wrong;  // "BM=64,...: seed 0: C: ... mismatches"
};

// Makes golden data from ref.py, builds the emulation program for the sampled configurations, runs it on every
// seed and compares each output (with the manifest's tolerance) and each input (bitwise: unchanged).
EmuFailures run_emulated(const EmuCase& ec) {
  EmuFailures out;
  util::SystemRunner runner;
  // Named as testing_support::made_by_process recognises: the test process removes it when it ends.
  const fs::path work = fs::path(::testing::TempDir()) / ("kopt_examples_emu_" + std::to_string(::getpid())) / ec.example;
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path kernel = example_file(ec.example, "kernel.cu");
  std::string source = source_of(ec.example);
  if (!ec.mutate_from.empty()) {
    auto at = source.find(ec.mutate_from);
    EXPECT_NE(at, std::string::npos) << ec.mutate_from;
    if (at != std::string::npos) source.replace(at, ec.mutate_from.size(), ec.mutate_to);
  }
  auto sig = contract::parse_solve_signature(source, kernel.string());
  EXPECT_TRUE(sig.ok());
  if (!sig) return out;
  SearchSpace space = space_of(ec.example);
  auto configs = sample(space, ec.max_configs, ec.mutate_from.empty());
  std::vector<std::map<std::string, int64_t>> values;
  for (const auto& c : configs) values.push_back(declared_values(space, c));

  contract::GoldenRequest g;
  g.ref_py = example_file(ec.example, "ref.py");
  g.signature = *sig;
  g.dims = ec.dims;
  g.seeds = 2;
  g.out_dir = work / "golden";
  g.time_reference = false;
  g.timeout_s = 300;
  auto manifest = contract::make_golden(g, runner);
  EXPECT_TRUE(manifest.ok()) << (manifest ? "" : manifest.error().message);
  if (!manifest) return out;
  auto golden = runner::load_golden(g.out_dir);
  EXPECT_TRUE(golden.ok()) << (golden ? "" : golden.error().message);
  if (!golden) return out;

  auto body = rewrite_launches(source);
  EXPECT_TRUE(body.ok());
  if (!body) return out;
  std::string inc = *body;
  for (size_t at; (at = inc.find("extern \"C\" ")) != std::string::npos;) inc.erase(at, 11);  // solve per namespace
  EXPECT_TRUE(util::write_file_atomic(work / "kernel.inc", inc).ok());
  EXPECT_TRUE(util::write_file_atomic(work / "emu.cpp", emulation_program(*sig, values, golden->scalars)).ok());
  util::ProcessSpec cc{{util::find_in_path("g++"), "-std=c++20", "-O1", "-fno-strict-aliasing", "-w", "-include",
                        (emu_dir() / "cuda_emu.h").string(), "-I", (emu_dir() / "include").string(),
                        (work / "emu.cpp").string(), "-o", (work / "emu").string()}};
  cc.timeout_s = 600;
  auto built = runner.run(cc);
  EXPECT_TRUE(built.success()) << built.describe() << "\n" << built.stderr_text.substr(0, 4000);
  if (!built.success()) return out;

  for (int seed : golden->seeds) {
    auto tensors = runner::load_seed(*golden, seed);
    EXPECT_TRUE(tensors.ok()) << (tensors ? "" : tensors.error().message);
    if (!tensors) return out;
    fs::path dir = work / ("seed" + std::to_string(seed));
    fs::create_directories(dir);
    std::map<size_t, std::string> before;  // what each pointer held before the calls
    for (size_t i = 0; i < sig->params.size(); ++i) {
      const auto& prm = sig->params[i];
      if (prm.kind != contract::ParamKind::kPointer) continue;
      const auto& spec = golden->buffers.at(prm.name);
      std::string bytes;
      if (spec.role == runner::BufferRole::kOutput)
        bytes.assign(static_cast<size_t>(spec.nbytes), static_cast<char>(runner::poison_byte(spec.dtype)));
      else
        bytes.assign(tensors->at("in." + prm.name).data.begin(), tensors->at("in." + prm.name).data.end());
      before[i] = bytes;
      EXPECT_TRUE(util::write_file_atomic(dir / (std::to_string(i) + ".bin"), bytes).ok());
    }
    util::ProcessSpec run{{(work / "emu").string(), dir.string()}};
    run.timeout_s = 600;
    auto ran = runner.run(run);
    EXPECT_TRUE(ran.success()) << ran.describe() << "\n" << ran.stderr_text.substr(0, 4000);
    for (size_t c = 0; c < configs.size(); ++c) {
      ++out.checked;
      for (const auto& [i, was] : before) {
        const auto& prm = sig->params[i];
        const auto& spec = golden->buffers.at(prm.name);
        auto got = util::read_file(dir / ("cfg" + std::to_string(c) + "_" + std::to_string(i) + ".bin"));
        std::string where = space.key(configs[c]) + ": seed " + std::to_string(seed) + ": " + prm.name + ": ";
        if (!got || got->size() != was.size()) {
          out.wrong.push_back(where + "no output (the emulation stopped)");
          continue;
        }
        if (prm.is_input()) {
          if (*got != was) out.wrong.push_back(where + "an input was modified");
          continue;
        }
        const auto& want = tensors->at("out." + prm.name);
        auto cmp = runner::compare(spec.dtype, spec.shape, want.data.data(),
                                   reinterpret_cast<const unsigned char*>(got->data()), want.numel(), golden->tol);
        if (!cmp.ok) out.wrong.push_back(where + cmp.summary());
      }
    }
  }
  fs::remove_all(work.parent_path());
  return out;
}

class ExamplesEmu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!executable(util::find_in_path("g++"))) GTEST_SKIP() << "g++ not found";
    if (toolchain::find_python().empty()) GTEST_SKIP() << "python3 not found";
  }
  static void expect_correct(const EmuCase& ec, size_t min_checked) {
    auto r = run_emulated(ec);
    EXPECT_GE(r.checked, min_checked) << ec.example;
    for (const auto& w : r.wrong) ADD_FAILURE() << ec.example << ": " << w;
  }
};

TEST_F(ExamplesEmu, SgemmTunableIsRightAcrossItsSpace) {
  // Multiples of 128, as the README requires; N != M catches swapped indices.
  expect_correct({"sgemm_tunable", {{"M", 128}, {"N", 256}, {"K", 128}}, 12, "", ""}, 2 * 12);
}

TEST_F(ExamplesEmu, SoftmaxIsRightAcrossItsSpace) {
  expect_correct({"softmax", {{"rows", 3}, {"cols", 1000}}, 16, "", ""}, 2 * 16);
  expect_correct({"softmax", {{"rows", 2}, {"cols", 37}}, 16, "", ""}, 2 * 16);  // vectorized falls back
}

TEST_F(ExamplesEmu, ReductionIsRightAcrossItsSpace) {
  expect_correct({"reduction", {{"n", 100003}}, 16, "", ""}, 2 * 16);
}

TEST_F(ExamplesEmu, TransposeIsRightAcrossItsSpace) {
  // The 16-byte paths need cols (loads) or rows (stores) a multiple of 4; each shape takes another mix of the
  // vector and scalar paths, and none is a multiple of a tile.
  expect_correct({"transpose", {{"rows", 70}, {"cols", 100}}, 16, "", ""}, 2 * 14);
  expect_correct({"transpose", {{"rows", 100}, {"cols", 70}}, 16, "", ""}, 2 * 14);
  expect_correct({"transpose", {{"rows", 132}, {"cols", 68}}, 16, "", ""}, 2 * 14);
}

TEST_F(ExamplesEmu, VectorAddAndNaiveSgemmAreRight) {
  // n = 4099: not a multiple of 4 (the float4 path's scalar tail) nor of any block's span.
  expect_correct({"vector_add", {{"n", 4099}}, 29, "", ""}, 2 * 29);
  expect_correct({"sgemm_naive", {{"M", 40}, {"N", 24}, {"K", 64}}, 1, "", ""}, 2);
}

// The plain examples (no annotations): every sampled point of the space kopt derives is right, at sizes that are
// not multiples of any tile.
TEST_F(ExamplesEmu, PlainExamplesAreRightAcrossTheirDerivedSpaces) {
  expect_correct({"plain/elementwise_templated", {{"n", 5003}}, 15, "", ""}, 2 * 15);
  expect_correct({"plain/reduction_define", {{"n", 100003}}, 12, "", ""}, 2 * 12);
  expect_correct({"plain/sgemm_tiled", {{"M", 70}, {"N", 200}, {"K", 37}}, 12, "", ""}, 2 * 12);
}

// The emulator has teeth: reading a cp.async stage one group too early, or a tile before the barrier that
// completes it, gives wrong results that the comparison catches.
TEST_F(ExamplesEmu, EmulatorCatchesAnEarlyReadOfACpAsyncStage) {
  auto r = run_emulated({"sgemm_tunable", {{"M", 128}, {"N", 128}, {"K", 128}}, 24,
                         "__pipeline_wait_prior(STAGES - 2)", "__pipeline_wait_prior(STAGES - 1)"});
  ASSERT_GT(r.checked, 0u);
  size_t cp_async_wrong = 0;
  for (const auto& w : r.wrong) {
    EXPECT_NE(w.find("KOPT_CP_ASYNC_PIPELINE=1"), std::string::npos) << w;  // only the cp.async path is broken
    cp_async_wrong += w.find("KOPT_CP_ASYNC_PIPELINE=1") != std::string::npos;
  }
  EXPECT_GT(cp_async_wrong, 0u);
}

TEST_F(ExamplesEmu, EmulatorCatchesAMissingBarrier) {
  auto r = run_emulated({"transpose", {{"rows", 64}, {"cols", 64}}, 1, "__syncthreads();", ""});
  EXPECT_EQ(r.checked, 2u);
  EXPECT_EQ(r.wrong.size(), 2u);
}

}  // namespace
}  // namespace kopt::pipeline
