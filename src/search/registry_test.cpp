#include "search/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "util/strings.h"
#include "testing/test_support.h"

namespace kopt::search {
namespace {

const std::string kSource = testing_support::source_dir();
const std::string kData = testing_support::test_data_dir();

// Metric names Nsight Compute 2025.3.1 knows on the H200: the captured list plus the documented extras.
// "base X" lines accept X with any of the usual rollup suffixes.
std::set<std::string> known_metrics() {
  std::set<std::string> names;
  static const char* kRollups[] = {".sum", ".avg", ".max", ".min", ".ratio", ".pct", ".sum.per_second",
                                   ".avg.pct_of_peak_sustained_elapsed", ".sum.pct_of_peak_sustained_elapsed",
                                   ".avg.pct_of_peak_sustained_active", ".avg.per_cycle_active"};
  for (const char* f : {"/search/ncu-2025.3.1/metric_names_h200.txt", "/search/ncu-2025.3.1/metric_names_documented.txt"}) {
    std::ifstream in(kData + f);
    EXPECT_TRUE(in.good()) << f;
    std::string line;
    while (std::getline(in, line)) {
      line = util::trim(line);
      if (line.empty() || line[0] == '#') continue;
      if (util::starts_with(line, "base ")) {
        std::string base = line.substr(5);
        names.insert(base);
        for (const char* r : kRollups) names.insert(base + r);
      } else {
        names.insert(line);
      }
    }
  }
  return names;
}

Registry load_shipped() {
  auto r = load_registry(kSource + "/data/methods.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : Registry{};
}

TEST(RegistryLint, ShippedRegistryIsClean) {
  Registry reg = load_shipped();
  auto metrics = known_metrics();
  ASSERT_GT(metrics.size(), 400u);
  LintOptions opts;
  opts.known_metrics = &metrics;
  auto problems = lint(reg, opts);
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_GE(reg.methods().size(), 60u);
  std::printf("registry: %zu methods\n", reg.methods().size());
}

TEST(RegistryLint, ShippedRegistryCoversTheAxesBackendsAndTopics) {
  Registry reg = load_shipped();
  std::map<Axis, int> per_axis;
  std::map<Backend, int> per_backend;
  int flag_methods = 0, with_sass = 0;
  for (const auto& m : reg.methods()) {
    per_axis[m.axis]++;
    for (Backend b : m.backends) per_backend[b]++;
    flag_methods += m.is_flag_method();
    with_sass += !m.sass.empty();
  }
  for (Axis a : kAllAxes) EXPECT_GE(per_axis[a], 10) << axis_name(a);
  EXPECT_GE(per_backend[Backend::kCuda], 40);
  EXPECT_GE(per_backend[Backend::kTriton], 10);
  EXPECT_GE(per_backend[Backend::kCutlass], 10);
  EXPECT_GE(flag_methods, 5);
  EXPECT_GE(with_sass, 25);
  for (const char* id : {"coalesced_access", "vectorized_access", "shared_memory_tiling", "smem_padding", "smem_swizzle",
                         "cp_async_pipeline", "tma_loads", "ldmatrix_fragments", "tensor_cores_mma_sync", "wgmma_tensor_cores",
                         "split_k", "stream_k", "persistent_kernel", "register_cap", "fast_math", "warp_specialization",
                         "setmaxnreg", "thread_block_clusters", "online_softmax", "welford_statistics", "triton_num_warps",
                         "triton_num_stages", "grouped_launch_ordering", "cutlass_kernel_schedule", "sm90a_target",
                         "l1_cache_loads", "l1_bypass_loads"})
    EXPECT_NE(reg.find(id), nullptr) << id;
  // The compiler-flag methods carry the exact flags nvcc understands.
  EXPECT_EQ(reg.find("fast_math")->flags, std::vector<std::string>{"--use_fast_math"});
  EXPECT_EQ(reg.find("l1_bypass_loads")->flags, (std::vector<std::string>{"-Xptxas", "-dlcm=cg"}));
  EXPECT_EQ(reg.find("register_cap")->flags_for(64), std::vector<std::string>{"-maxrregcount=64"});
  EXPECT_TRUE(reg.conflicts("l1_cache_loads", "l1_bypass_loads"));
  EXPECT_TRUE(reg.conflicts("l1_bypass_loads", "l1_cache_loads"));  // symmetric
  auto reqs = reg.requirements("setmaxnreg");
  EXPECT_EQ(reqs, (std::vector<std::string>{"sm90a_target", "warp_specialization"}));
}

util::Json minimal_method(const std::string& id) {
  return {{"id", id},
          {"name", "A method"},
          {"axis", "memory"},
          {"description", "A description that is long enough to say what the method does to the kernel."},
          {"evidence", util::Json::array({util::Json{{"metric", "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
                                                   {"op", ">"}, {"value", 60}, {"why", "DRAM is the limiter here"}}})},
          {"numerics", "bitwise_preserving"},
          {"min_arch", "sm_80"},
          {"backends", {"cuda"}},
          {"sass", util::Json::object()},
          {"relations", {{"conflicts", util::Json::array()}, {"requires", util::Json::array()}, {"subsumes", util::Json::array()}}}};
}

std::string first_problem(const util::Json& methods) {
  auto r = Registry::from_json({{"methods", methods}}, "test.json");
  if (!r) return "parse: " + r.error().message;
  LintOptions opts;
  opts.min_methods = 1;
  auto problems = lint(r.value(), opts);
  return problems.empty() ? "" : problems.front();
}

TEST(RegistryLint, DetectsEachKindOfProblem) {
  util::Json a = minimal_method("alpha"), b = minimal_method("beta");
  EXPECT_EQ(first_problem(util::Json::array({a, b})), "");

  EXPECT_NE(first_problem(util::Json::array({a, a})).find("id used 2 times"), std::string::npos);

  auto bad = a;
  bad["id"] = "Alpha-1";
  EXPECT_NE(first_problem(util::Json::array({bad})).find("snake_case"), std::string::npos);

  bad = a;
  bad["relations"]["requires"] = {"gamma"};
  EXPECT_NE(first_problem(util::Json::array({bad, b})).find("unknown method 'gamma'"), std::string::npos);

  bad = a;
  bad["relations"]["requires"] = {"beta"};
  bad["relations"]["conflicts"] = {"beta"};
  EXPECT_NE(first_problem(util::Json::array({bad, b})).find("requires 'beta' and conflicts with it"), std::string::npos);

  auto b_requires_a = b;
  b_requires_a["relations"]["requires"] = {"alpha"};
  bad = a;
  bad["relations"]["requires"] = {"beta"};
  EXPECT_NE(first_problem(util::Json::array({bad, b_requires_a})).find("cycle"), std::string::npos);

  bad = a;
  bad["description"] = "Too short.";
  EXPECT_NE(first_problem(util::Json::array({bad})).find("description"), std::string::npos);

  bad = a;
  bad["evidence"] = util::Json::array();
  EXPECT_NE(first_problem(util::Json::array({bad})).find("no evidence"), std::string::npos);

  bad = a;
  bad["evidence"][0]["metric"] = "DRAM Throughput";
  EXPECT_NE(first_problem(util::Json::array({bad})).find("not a Nsight Compute metric name"), std::string::npos);

  bad = a;
  bad["flags"] = {"-maxrregcount=64"};
  bad["flag_param"] = {{"name", "N"}, {"values", {32, 64}}};
  EXPECT_NE(first_problem(util::Json::array({bad})).find("{value}"), std::string::npos);
}

TEST(RegistryParse, RejectsInvalidFieldsNamingTheMethod) {
  util::Json a = minimal_method("alpha");
  auto with = [&](const char* key, util::Json v) {
    auto m = a;
    m[key] = std::move(v);
    return first_problem(util::Json::array({m}));
  };
  EXPECT_NE(with("axis", "bandwidth").find("method 'alpha': axis 'bandwidth'"), std::string::npos);
  EXPECT_NE(with("numerics", "exact").find("numerics 'exact'"), std::string::npos);
  EXPECT_NE(with("min_arch", "hopper").find("min_arch 'hopper'"), std::string::npos);
  EXPECT_NE(with("backends", {"cuda", "opencl"}).find("backend 'opencl'"), std::string::npos);
  EXPECT_NE(with("sass", {{"require_some", {"HMMA"}}}).find("unknown signature key"), std::string::npos);
  EXPECT_NE(with("evidence", util::Json::array({util::Json{{"metric", "x__y"}, {"op", "=="}, {"value", 1}, {"why", "because of reasons"}}})).find("op '=='"),
            std::string::npos);
  EXPECT_NE(with("colour", "red").find("unknown field 'colour'"), std::string::npos);
  auto m = a;
  m.erase("description");
  EXPECT_NE(first_problem(util::Json::array({m})).find("missing 'description'"), std::string::npos);
}

TEST(Registry, RoundTripsThroughJson) {
  Registry reg = load_shipped();
  util::Json all = util::Json::array();
  for (const auto& m : reg.methods()) {
    auto j = to_json(m);
    j.erase("guard");  // derived, not stored
    all.push_back(j);
  }
  auto again = Registry::from_json({{"methods", all}}, "round-trip");
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(again->methods().size(), reg.methods().size());
  for (size_t i = 0; i < reg.methods().size(); ++i) EXPECT_EQ(to_json(again->methods()[i]), to_json(reg.methods()[i]));
}

TEST(Registry, ProcessRegistryIsFoundAndLookupsWork) {
  auto r = registry();
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Registry& reg = r.value();
  EXPECT_GE(reg.methods().size(), 60u);
  ASSERT_NE(find_method("vectorized_access"), nullptr);
  EXPECT_EQ(find_method("vectorized_access")->axis, Axis::kMemory);
  EXPECT_EQ(find_method("no_such_method"), nullptr);
  EXPECT_FALSE(methods_json_path().empty());
}

TEST(Numerics, ModesAdmitTheDocumentedKinds) {
  EXPECT_TRUE(numerics_allows(NumericsMode::kStrict, Numerics::kBitwisePreserving));
  EXPECT_FALSE(numerics_allows(NumericsMode::kStrict, Numerics::kReorderedEquivalent));
  EXPECT_TRUE(numerics_allows(NumericsMode::kReference, Numerics::kReorderedEquivalent));
  EXPECT_FALSE(numerics_allows(NumericsMode::kReference, Numerics::kToleranceChanging));
  EXPECT_TRUE(numerics_allows(NumericsMode::kApproximate, Numerics::kToleranceChanging));
  EXPECT_EQ(guard_macro("vectorized_access"), "KOPT_VECTORIZED_ACCESS");
  EXPECT_EQ(guard_method(guard_macro("vectorized_access")), "vectorized_access");
  EXPECT_EQ(guard_method("BLOCK"), std::nullopt);
  EXPECT_EQ(guard_method("KOPT_"), std::nullopt);
}

}  // namespace
}  // namespace kopt::search
