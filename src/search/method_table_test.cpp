#include "search/method_table.h"

#include <gtest/gtest.h>

#include "search/testing.h"

#include <filesystem>

#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"
#include "testing/test_support.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

const Registry& reg() { return testing::test_registry(); }

TEST(MethodTable, FiltersByAxisBackendAndNumerics) {
  auto memory_triton = filter_methods(reg(), {Axis::kMemory, Backend::kTriton, std::nullopt});
  ASSERT_FALSE(memory_triton.empty());
  for (const Method* m : memory_triton) {
    EXPECT_EQ(m->axis, Axis::kMemory);
    EXPECT_TRUE(m->supports(Backend::kTriton));
  }
  auto strict = filter_methods(reg(), {std::nullopt, std::nullopt, NumericsMode::kStrict});
  for (const Method* m : strict) EXPECT_EQ(m->numerics, Numerics::kBitwisePreserving);
  EXPECT_LT(strict.size(), reg().methods().size());
  EXPECT_EQ(filter_methods(reg(), {}).size(), reg().methods().size());
}

TEST(MethodTable, TableAndCard) {
  std::string table = format_method_table({reg().find("register_cap"), reg().find("tma_loads")});
  EXPECT_NE(table.find("register_cap  latency  bitwise_preserving    sm_80  cuda,cutlass"), std::string::npos) << table;
  EXPECT_NE(table.find("[flag]"), std::string::npos);
  EXPECT_NE(table.find("2 method(s)"), std::string::npos);
  std::string card = format_method_card(*reg().find("register_cap"));
  EXPECT_NE(card.find("compiler flags: -maxrregcount={value} ({value} in 32, 40, 48, 64, 80, 96, 128, 168)"), std::string::npos)
      << card;
  EXPECT_NE(card.find("launch__registers_per_thread > 64"), std::string::npos);
  EXPECT_NE(card.find("conflicts with: launch_bounds"), std::string::npos);
  EXPECT_NE(format_method_card(*reg().find("tma_loads")).find("SASS signature: {\"require_any\":[\"UTMALDG\"]}"), std::string::npos);
}

util::ProcessResult kopt(std::vector<std::string> args, std::map<std::string, std::string> env = {},
                         const std::string& binary = testing_support::kopt_binary()) {
  util::ProcessSpec spec;
  spec.argv = {binary};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = std::move(env);
  spec.timeout_s = 30;
  return util::run_process(spec);
}

TEST(MethodsCommand, ListsFiltersAndShowsOne) {
  auto all = kopt({"methods"});
  ASSERT_EQ(all.exit_code, 0) << all.stderr_text;
  EXPECT_NE(all.stdout_text.find("coalesced_access"), std::string::npos);
  EXPECT_NE(all.stdout_text.find(std::to_string(reg().methods().size()) + " method(s)"), std::string::npos);

  auto memory = kopt({"methods", "--axis", "memory", "--backend", "cuda", "--json", "-"});
  ASSERT_EQ(memory.exit_code, 0) << memory.stderr_text;
  auto j = util::Json::parse(memory.stdout_text);
  EXPECT_EQ(j["meta"]["kind"], "methods");
  ASSERT_FALSE(j["methods"].empty());
  for (const auto& m : j["methods"]) {
    EXPECT_EQ(m["axis"], "memory");
    EXPECT_NE(std::find(m["backends"].begin(), m["backends"].end(), "cuda"), m["backends"].end());
  }

  auto one = kopt({"methods", "cp_async_pipeline"});
  ASSERT_EQ(one.exit_code, 0);
  EXPECT_NE(one.stdout_text.find("Multi-stage cp.async pipeline (cp_async_pipeline)"), std::string::npos);

  auto typo = kopt({"methods", "cp_async_pipline"});
  EXPECT_EQ(typo.exit_code, 4);
  EXPECT_NE(typo.stderr_text.find("did you mean 'cp_async_pipeline'?"), std::string::npos) << typo.stderr_text;
  auto bad_axis = kopt({"methods", "--axis", "bandwidth"});
  EXPECT_EQ(bad_axis.exit_code, 4);
  EXPECT_NE(bad_axis.stderr_text.find("--axis must be compute, memory or latency"), std::string::npos);
}

TEST(MethodsCommand, FindsTheRegistryNextToTheExecutable) {
  // An installed layout: <prefix>/bin/kopt and <prefix>/data/methods.json (a one-method registry here).
  fs::path prefix = fs::path(::testing::TempDir()) / "kopt_install_layout";
  fs::remove_all(prefix);
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "data");
  fs::copy_file(testing_support::kopt_binary(), prefix / "bin" / "kopt");
  util::Json one = {{"methods", util::Json::array({to_json(*reg().find("split_k"))})}};
  one["methods"][0].erase("guard");
  ASSERT_TRUE(util::write_file_atomic(prefix / "data" / "methods.json", one.dump(2)).ok());
  auto r = kopt({"methods"}, {}, (prefix / "bin" / "kopt").string());
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("split_k"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("1 method(s)"), std::string::npos);
  // $KOPT_DATA_DIR wins over both.
  auto src = kopt({"methods"}, {{"KOPT_DATA_DIR", testing_support::source_dir() + "/data"}}, (prefix / "bin" / "kopt").string());
  EXPECT_NE(src.stdout_text.find(std::to_string(reg().methods().size()) + " method(s)"), std::string::npos);
}

TEST(MethodsCommand, RunsFromACmakeInstallPrefix) {
  // The real `cmake --install`: PREFIX/bin/kopt finds its registry and Python harness in PREFIX/share/kopt, not in
  // the source tree it was built from, and writes a report page with nothing but itself.
  std::string build = testing_support::build_dir();
  if (build.empty()) GTEST_SKIP() << "no configured build directory here (a copied tree)";
  fs::path prefix = fs::path(::testing::TempDir()) / "kopt_cmake_install";
  fs::remove_all(prefix);
  util::ProcessSpec install;
  install.argv = {testing_support::cmake_command(), "--install", build, "--prefix", prefix.string()};
  install.timeout_s = 120;
  auto done = util::run_process(install);
  ASSERT_EQ(done.exit_code, 0) << done.stdout_text << done.stderr_text;
  fs::path kopt_bin = prefix / "bin" / "kopt";
  ASSERT_TRUE(fs::exists(kopt_bin));

  auto listed = kopt({"methods", "--json", "-"}, {}, kopt_bin.string());
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_text;
  auto j = util::Json::parse(listed.stdout_text);
  EXPECT_EQ(fs::path(j["source"].get<std::string>()), fs::weakly_canonical(prefix / "share" / "kopt" / "data" / "methods.json"));
  EXPECT_EQ(j["methods"].size(), reg().methods().size());

  EXPECT_EQ(toolchain::python_harness_dir_near(prefix / "bin"), fs::weakly_canonical(prefix / "share" / "kopt" / "python").string());
  EXPECT_TRUE(fs::exists(prefix / "share" / "kopt" / "python" / "kopt_harness" / "golden.py"));
  EXPECT_FALSE(fs::exists(prefix / "share" / "kopt" / "python" / "kopt_harness" / "__pycache__"));

  fs::path run = prefix / "run";
  fs::copy(fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200", run, fs::copy_options::recursive);
  auto page = kopt({"report", "--html", "--quiet", run.string()}, {}, kopt_bin.string());
  ASSERT_EQ(page.exit_code, 0) << page.stderr_text;
  EXPECT_GT(fs::file_size(run / "summary.html"), 200000u);
}

}  // namespace
}  // namespace kopt::search
