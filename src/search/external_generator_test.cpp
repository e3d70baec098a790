#include "search/external_generator.h"

#include <gtest/gtest.h>

#include "search/testing.h"

#include <filesystem>

#include "compile/pool.h"
#include "sass/analysis.h"
#include "search/brief.h"
#include "toolchain/tools.h"
#include "search/builtin_generator.h"
#include "util/fs.h"
#include "util/strings.h"
#include "testing/test_support.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

const Registry& reg() { return testing::test_registry(); }

const std::string kVariants = testing_support::test_data_dir() + "/search/variants/saxpy";
const std::string kScript = testing_support::source_dir() + "/examples/generators/prepared_variants.py";

std::string prepared(const std::string& list) {
  return "python3 " + util::shell_quote(kScript) + " --variants " + util::shell_quote(kVariants + "/" + list);
}

class ExternalGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("kopt_external_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    dir_ = root_ / "iteration_1";
    fs::create_directories(dir_);
    baseline_ = kVariants + "/saxpy.cu";
    auto text = util::read_file(baseline_);
    ASSERT_TRUE(text.ok());
    auto a = parse_annotations(text.value(), baseline_.string());
    ASSERT_TRUE(a.ok()) << a.error().message;
    auto s = build_space(a.value(), reg(), {});
    ASSERT_TRUE(s.ok());
    space_ = std::move(s).value();
    Candidate base = baseline_candidate(space_, reg(), baseline_, text.value());
    Measurement m{base, CandidateStatus::kOk, 0.231, 0};
    in_.registry = &reg();
    in_.space = &space_;
    in_.baseline_source = baseline_;
    in_.iteration_dir = dir_;
    in_.k = 4;
    in_.plan.slots = {{Axis::kMemory, 2}, {Axis::kLatency, 1}};
    in_.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 70.81},
                   {"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", 2.0},
                   {"launch__waves_per_multiprocessor", 248.24}};
    in_.champion = m;
    in_.history = {m};
    in_.context.dims = {{"n", 67108864}};
    in_.context.roofline = {{"bound", "memory"}, {"efficiency_pct", 70.8}};
  }

  Result<GeneratorOutput> run(const std::string& command, ExternalOptions opts = {}) {
    opts.timeout_s = 60;
    ExternalGenerator gen(command, runner_, opts);
    return gen.generate(in_);
  }

  fs::path root_, dir_, baseline_;
  SearchSpace space_;
  GeneratorInput in_;
  util::SystemRunner runner_;
};

TEST_F(ExternalGeneratorTest, ExampleGeneratorEndToEnd) {
  auto out = run(prepared("variants.json"));
  ASSERT_TRUE(out.ok()) << out.error().message;

  // The brief: JSON with a meta block, and Markdown.
  auto brief = util::read_json(dir_ / "brief.json");
  ASSERT_TRUE(brief.ok());
  const auto& b = brief.value();
  EXPECT_EQ(b["meta"]["kind"], "generator_brief");
  EXPECT_EQ(b["k"], 4);
  EXPECT_EQ(b["contract"]["signature"], "void solve(int n,float a,const float*x,float*y)");
  EXPECT_EQ(b["dims"]["n"], 67108864);
  EXPECT_EQ(b["roofline"]["bound"], "memory");
  EXPECT_NE(b["champion"]["source"].get<std::string>().find("saxpy_kernel"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "champion.cu"));
  ASSERT_FALSE(b["methods"].empty());
  for (const auto& m : b["methods"]) {
    EXPECT_FALSE(m["description"].get<std::string>().empty());
    EXPECT_EQ(m["guard"], guard_macro(m["id"].get<std::string>()));
    EXPECT_FALSE(m["evidence"].empty());
  }
  EXPECT_EQ(b["methods"][0]["id"], "vectorized_access");  // DRAM at 71% and LG throttling: strongest evidence
  EXPECT_FALSE(b["metrics"]["memory"].empty());
  EXPECT_GE(b["rules"].size(), 6u);
  auto md = util::read_file(dir_ / "brief.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("# kopt brief: iteration 1"), std::string::npos);
  EXPECT_NE(md->find("#if KOPT_<ID>"), std::string::npos);
  EXPECT_NE(md->find("### Vectorized global loads (`vectorized_access`"), std::string::npos);
  auto log = util::read_file(dir_ / "generator.log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("saxpy_vec4.cu implements vectorized_access"), std::string::npos);

  // The candidates, validated.
  ASSERT_EQ(out->candidates.size(), 2u);
  const Candidate& vec = out->candidates[0];
  EXPECT_EQ(vec.id, "i1x1");
  EXPECT_EQ(vec.source, fs::canonical(dir_ / "saxpy_vec4.cu"));
  EXPECT_EQ(vec.origin, "external");
  EXPECT_EQ(vec.methods, std::vector<std::string>{"vectorized_access"});
  EXPECT_TRUE(vec.not_ablatable.empty());
  EXPECT_EQ(vec.defines.at("KOPT_VECTORIZED_ACCESS"), "1");
  EXPECT_EQ(vec.defines.at("THREADS"), "256");
  EXPECT_EQ(vec.content_hash.size(), 32u);
  const Candidate& ldg = out->candidates[1];
  EXPECT_EQ(ldg.methods, std::vector<std::string>{"readonly_cache_ldg"});
  EXPECT_EQ(ldg.not_ablatable, std::vector<std::string>{"readonly_cache_ldg"});  // claimed without a guard
  EXPECT_EQ(ldg.flags, (std::vector<std::string>{"-Xptxas", "-dlcm=cg"}));
  bool noted = false;
  for (const auto& n : out->notes) noted |= n.find("'readonly_cache_ldg' has no KOPT_READONLY_CACHE_LDG conditional") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_FALSE(out->selection.picks.empty());

  // Measured once, never again: the same variants a second time are all skipped.
  for (const auto& c : out->candidates) in_.history.push_back({c, CandidateStatus::kOk, 0.2, 1});
  auto again = run(prepared("variants.json"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->candidates.empty());
}

// The external protocol up to compiled, SASS-checked candidates (what kopt optimize does next, without a GPU).
TEST_F(ExternalGeneratorTest, ExampleCandidatesCompileAndTheirClaimsAreCheckedInTheSass) {
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "nvcc not found";
  if (toolchain::find_cuobjdump().empty()) GTEST_SKIP() << "cuobjdump not found";
  auto out = run(prepared("variants.json"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 2u);
  std::vector<compile::CompileRequest> reqs;
  for (const auto& c : out->candidates) {
    compile::CompileRequest r;
    r.name = c.id;
    r.source = c.source;
    r.defines = c.defines;
    r.extra_flags = c.flags;
    r.out_dir = root_ / "build" / c.id;
    reqs.push_back(r);
  }
  auto builds = compile::compile_batch(reqs, {2, ""}, runner_);
  std::map<std::string, sass::VerifyStatus> verdicts;
  for (size_t i = 0; i < builds.size(); ++i) {
    ASSERT_TRUE(builds[i].ok()) << builds[i].log_text;
    auto analysis = sass::analyze(builds[i].library, sass::kernel_names_from_source(out->candidates[i].source), "", runner_);
    ASSERT_TRUE(analysis.tool_error.empty()) << analysis.tool_error;
    for (const auto& m : out->candidates[i].methods) {
      const Method* meth = find_method(m);
      ASSERT_NE(meth, nullptr) << m;
      auto v = sass::verify_method(analysis, meth->sass);
      ASSERT_TRUE(v.ok()) << v.error().message;
      verdicts[m] = v->status;
    }
  }
  // The float4 variant really issues 16-byte loads; the __ldg variant really uses the read-only path.
  EXPECT_EQ(verdicts.at("vectorized_access"), sass::VerifyStatus::kPass);
  EXPECT_EQ(verdicts.at("readonly_cache_ldg"), sass::VerifyStatus::kPass);
}

TEST_F(ExternalGeneratorTest, StrictGuardsRejectAnUnguardedMethod) {
  ExternalOptions opts;
  opts.require_guards = true;
  auto out = run(prepared("variants.json"), opts);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("manifest candidate 2: method 'readonly_cache_ldg' is claimed but "
                                     "KOPT_READONLY_CACHE_LDG never appears in an #if/#ifdef/#elif of 'saxpy_unguarded.cu'"),
            std::string::npos)
      << out.error().message;
}

TEST_F(ExternalGeneratorTest, RejectsAChangedSignature) {
  auto out = run(prepared("variants_signature_changed.json"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("manifest candidate 1: file 'saxpy_signature_changed.cu' changed the entry point's signature"),
            std::string::npos)
      << out.error().message;
  EXPECT_NE(out.error().message.find("found:    void solve(size_t n,float a,const float*x,float*y)"), std::string::npos);
}

TEST_F(ExternalGeneratorTest, RejectsAnUnknownMethod) {
  auto out = run(prepared("variants_unknown_method.json"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("manifest candidate 1: unknown method 'vectorised_everything'"), std::string::npos)
      << out.error().message;
}

TEST_F(ExternalGeneratorTest, RejectsFilesOutsideTheIterationDirectory) {
  ASSERT_TRUE(util::write_file_atomic(root_ / "outside.cu", util::read_file(baseline_).value()).ok());
  auto out = run(R"(printf '{"candidates": [{"file": "../outside.cu", "methods": []}]}' > manifest.json)");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kInput);
  EXPECT_NE(out.error().message.find("file '../outside.cu' resolves to"), std::string::npos) << out.error().message;
  EXPECT_NE(out.error().message.find("outside the iteration directory"), std::string::npos);

  // A symbolic link inside the directory that points outside is outside too.
  out = run("ln -sf " + util::shell_quote(baseline_.string()) +
            R"( link.cu && printf '{"candidates": [{"file": "link.cu"}]}' > manifest.json)");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("outside the iteration directory"), std::string::npos) << out.error().message;

  // An absolute path is fine when it is inside.
  out = run("cp " + util::shell_quote(baseline_.string()) + " inside.cu && printf '{\"candidates\": [{\"file\": \"'\"$PWD\"'/inside.cu\"}]}' > manifest.json");
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 1u);
}

TEST_F(ExternalGeneratorTest, MalformedManifestsAndFailingCommands) {
  auto expect_error = [&](const std::string& cmd, const std::string& needle) {
    auto out = run(cmd);
    ASSERT_FALSE(out.ok()) << cmd;
    EXPECT_EQ(out.error().code, ExitCode::kInput) << cmd;
    EXPECT_NE(out.error().message.find(needle), std::string::npos) << cmd << "\n" << out.error().message;
  };
  expect_error("echo broken >&2; exit 3", "generator command 'echo broken >&2; exit 3' exit 3");
  expect_error("true", "finished without writing");
  expect_error("echo '{not json' > manifest.json", "is not valid JSON");
  expect_error(R"(echo '{"candidates": []}' > manifest.json)", "the candidate list is empty");
  expect_error(R"(echo '{"candidates": [{"file": "missing.cu"}]}' > manifest.json)", "file 'missing.cu' does not exist");
  expect_error("cp " + util::shell_quote(baseline_.string()) +
                   R"( a.cu && echo '{"candidates": [{"file": "a.cu", "flag": ["-O3"]}]}' > manifest.json)",
               "unknown key 'flag'");
  expect_error("cp " + util::shell_quote(baseline_.string()) +
                   R"( a.cu && echo '{"candidates": [{"file": "a.cu", "flags": ["-o", "/tmp/x"]}]}' > manifest.json)",
               "flag '-o' would take over kopt's own compile step");
  expect_error("cp " + util::shell_quote(baseline_.string()) +
                   R"( a.cu && echo '{"candidates": [{"file": "a.cu", "params": {"BM": "big"}}]}' > manifest.json)",
               "param 'BM' must be an integer");
  expect_error("cp " + util::shell_quote(baseline_.string()) +
                   R"( a.py && echo '{"candidates": [{"file": "a.py"}]}' > manifest.json)",
               "is not a CUDA source like the champion");
  // The environment: KOPT_BRIEF points at the brief, the command runs in the iteration directory.
  auto out = run(R"(test -f "$KOPT_BRIEF" && test "$KOPT_ITERATION_DIR" = "$PWD" && test "$KOPT_K" = 4 && cp ")" +
                 baseline_.string() + R"(" b.cu && echo '{"candidates": [{"file": "b.cu"}]}' > manifest.json)");
  ASSERT_TRUE(out.ok()) << out.error().message;
}

TEST_F(ExternalGeneratorTest, TimeoutIsReported) {
  ExternalGenerator gen("sleep 5", runner_, {0.3, false, "manifest.json"});
  auto out = gen.generate(in_);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("timed out"), std::string::npos) << out.error().message;
}

TEST(ManifestRead, KeepsTheFirstKAndInheritsChampionGuards) {
  fs::path dir = fs::path(::testing::TempDir()) / "kopt_manifest_read";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string src = "#if KOPT_SMEM_PADDING\n#endif\n#if KOPT_LOOP_UNROLLING\n#endif\n#if KOPT_SPLIT_K\n#endif\n"
                          "extern \"C\" void solve(float* y, int n) {}\n";
  for (const char* f : {"a.cu", "b.cu", "c.cu"}) ASSERT_TRUE(util::write_file_atomic(dir / f, src + "// " + f + "\n").ok());
  util::Json manifest = {{"candidates", util::Json::array({util::Json{{"file", "a.cu"}, {"methods", {"loop_unrolling"}}},
                                                           util::Json{{"file", "b.cu"}}, util::Json{{"file", "c.cu"}}})}};
  ManifestContext ctx;
  ctx.iteration_dir = dir;
  ctx.registry = &reg();
  ctx.signature = "void solve(float*y,int n)";
  ctx.k = 2;
  ctx.champion_guards = {{"smem_padding", true}, {"split_k", false}};
  auto out = read_manifest(manifest, ctx);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->candidates.size(), 2u);
  EXPECT_EQ(out->notes.back(), "manifest lists 3 candidates; kept the first 2");
  // smem_padding is not claimed but was on in the champion: it stays on and is claimed. split_k was off: 0.
  const Candidate& a = out->candidates[0];
  EXPECT_EQ(a.methods, (std::vector<std::string>{"loop_unrolling", "smem_padding"}));
  EXPECT_EQ(a.defines.at("KOPT_SMEM_PADDING"), "1");
  EXPECT_EQ(a.defines.at("KOPT_LOOP_UNROLLING"), "1");
  EXPECT_EQ(a.defines.at("KOPT_SPLIT_K"), "0");
  EXPECT_FALSE(a.guards.at("split_k"));
  const Candidate& b = out->candidates[1];
  EXPECT_EQ(b.methods, std::vector<std::string>{"smem_padding"});
  EXPECT_EQ(b.defines.at("KOPT_LOOP_UNROLLING"), "0");  // unknown to the champion and unclaimed: off
  EXPECT_NE(a.content_hash, b.content_hash);
}

TEST(Brief, TopMetricsPerAxisComeFromTheRegistry) {
  auto top = top_metrics(reg(), {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 90.0},
                                 {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", 10.0},
                                 {"not_a_metric_any_method_reads", 1.0}});
  ASSERT_EQ(top["memory"].size(), 1u);
  EXPECT_EQ(top["memory"][0]["metric"], "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_GT(top["memory"][0]["evidence_fired"].get<int>(), 5);
  EXPECT_TRUE(top["memory"][0].contains("reading"));
  ASSERT_EQ(top["compute"].size(), 1u);
  EXPECT_EQ(top["compute"][0]["metric"], "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(top["compute"][0]["evidence_fired"], 1);  // register tiling's "FMA pipe under 50%"
  EXPECT_TRUE(top["latency"].empty());
}

}  // namespace
}  // namespace kopt::search
