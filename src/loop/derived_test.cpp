// The optimize loop on a kernel without annotations, without a GPU (a ModelLab): the derived space is searched
// through a copy in the run directory, the user's file stays as it was, pruned points are recorded with why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "loop/optimize.h"
#include "roofline/testing.h"
#include "testing/model_lab.h"
#include "testing/run_optimize.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/json_io.h"

namespace kopt::loop {
namespace {

using testing_support::run_optimize;

namespace fs = std::filesystem;

int64_t threads_of(const Defines& d) {
  auto it = d.find("THREADS");
  return it == d.end() ? 64 : std::stoll(it->second);
}

TEST(DeriveLoop, OptimizeSearchesTheDerivedSpaceThroughACopyAndRecordsPrunedPoints) {
  fs::path out = fs::path(::testing::TempDir()) / ("kopt_derive_loop_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const fs::path data = testing_support::test_data_dir();
  const fs::path kernel = data / "derive" / "loop_plain.cu";
  auto before = util::read_file(kernel);
  ASSERT_TRUE(before.ok());
  OptimizeOptions o;
  o.iterations = 4;
  o.patience = 4;
  o.job.kernel = kernel;
  o.job.ref = data / "loop" / "ref.py";
  o.job.dims = {{"n", 1 << 20}};
  o.out = out;
  o.quiet = true;
  ModelLabOptions mo;
  // THREADS 256 is best; 32 does not build (a ptxas-like failure); 128 computes a wrong answer.
  mo.time_ms = [](const Defines& d) -> std::optional<double> {
    int64_t t = threads_of(d);
    if (t == 128) return std::nullopt;
    return t == 256 ? 0.5 : 1.0;
  };
  mo.compiles = [](const Defines& d) { return threads_of(d) != 32; };
  // 1024 compiles past the candidate compile limit; 512 spills (ptxas): both are pruned without a measurement.
  mo.compile_times_out = [](const Defines& d) { return threads_of(d) == 1024; };
  mo.spills = [](const Defines& d) { return threads_of(d) == 512; };
  mo.ceilings = roofline::testing::round_ceilings();
  mo.metrics = {{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 85},
                {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 82}};
  ModelLab lab(mo);
  lab.kernel = kernel;
  ASSERT_EQ(run_optimize(o, lab), 0);
  ASSERT_TRUE(fs::exists(out / "kopt_runs"));
  fs::path run = fs::directory_iterator(out / "kopt_runs")->path();

  // The copy is the kernel of every candidate; the user's file is untouched.
  EXPECT_EQ(lab.kernel, run / "derived" / "loop_plain.cu");
  auto copy = util::read_file(run / "derived" / "loop_plain.cu");
  ASSERT_TRUE(copy.ok());
  EXPECT_NE(copy->find("// @kopt param THREADS values=32,64,128,256,512,1024 default=64"), std::string::npos) << *copy;
  EXPECT_EQ(*util::read_file(kernel), *before);
  EXPECT_TRUE(fs::exists(run / "derived" / "derivation.json"));

  auto state = util::read_json(run / "state.json");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ((*state)["champion"]["candidate"]["params"].value("THREADS", 0), 256);
  EXPECT_EQ((*state)["champion"]["candidate"]["source"].get<std::string>(), (run / "derived" / "loop_plain.cu").string());

  auto summary = util::read_json(run / "summary.json");
  ASSERT_TRUE(summary.ok());
  const auto& d = (*summary)["derived"];
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ((*summary)["kernel"].get<std::string>(), kernel.string());  // the user's kernel, not the copy
  ASSERT_EQ(d["params"].size(), 1u);
  EXPECT_EQ(d["params"][0]["name"], "THREADS");
  EXPECT_NE(d["params"][0]["reason"].get<std::string>().find("block size of the launch of scale"), std::string::npos);
  bool compile_pruned = false, wrong_pruned = false, time_pruned = false, spill_pruned = false;
  for (const auto& p : d["pruned"]) {
    std::string point = p["point"];
    std::string why = p["why"];
    if (point.rfind("THREADS=32,", 0) == 0) compile_pruned = p["status"] == "compile_failed";
    if (point.rfind("THREADS=128,", 0) == 0) wrong_pruned = p["status"] == "incorrect";
    if (point.rfind("THREADS=1024,", 0) == 0) time_pruned = why.rfind("compile time limit: nvcc ran past 60 s", 0) == 0;
    if (point.rfind("THREADS=512,", 0) == 0) spill_pruned = why.rfind("spills registers (ptxas), pruned before measuring", 0) == 0;
  }
  EXPECT_TRUE(compile_pruned) << d["pruned"].dump();
  EXPECT_TRUE(wrong_pruned) << d["pruned"].dump();
  EXPECT_TRUE(time_pruned) << d["pruned"].dump();
  EXPECT_TRUE(spill_pruned) << d["pruned"].dump();
  // Every candidate compile carried the limit (the model lab's baseline compile takes no time: the 60 s floor).
  ASSERT_FALSE(lab.compile_timeouts_s.empty());
  for (double t : lab.compile_timeouts_s) EXPECT_DOUBLE_EQ(t, 60);
  // A pruned point leaves the space: each (THREADS, launch_bounds) point fails at most once, whatever the flags.
  std::set<std::string> seen;
  for (const auto& p : d["pruned"]) {
    ASSERT_TRUE(p.contains("constraint")) << p.dump();
    EXPECT_TRUE(seen.insert(p["constraint"].get<std::string>()).second) << "pruned twice: " << p.dump();
  }
  auto md = util::read_file(run / "summary.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("## Derived search space"), std::string::npos);
  EXPECT_NE(md->find("### Pruned points"), std::string::npos);
  EXPECT_NE(md->find("| `THREADS` | 32, 64, 128, 256, 512, 1024 | 64 | #define THREADS 64 at line 4: block size of the launch of scale"),
            std::string::npos) << *md;
  EXPECT_NE(md->find("| method `launch_bounds` | 0, 1 | 0 |"), std::string::npos);
  if (std::getenv("KOPT_SHOW_SUMMARY")) std::fprintf(stderr, "%s\n", md->c_str());
  fs::remove_all(out);
}

int64_t define_of(const Defines& d, const char* name, int64_t fallback) {
  auto it = d.find(name);
  return it == d.end() ? fallback : std::stoll(it->second);
}

// A short optimize of `kernel` at `dims` (the loop's ref.py: y = 2x), its runs under `runs`.
OptimizeOptions four_iterations(const fs::path& kernel, Dims dims, const fs::path& runs) {
  OptimizeOptions o;
  o.iterations = 4;
  o.patience = 4;
  o.job.kernel = kernel;
  o.job.ref = testing_support::test_data_dir() + "/loop/ref.py";
  o.job.dims = std::move(dims);
  o.out = runs;
  o.quiet = true;
  return o;
}

// A param one block of which covers a dim (`covers=`, as kopt derives for a Triton row kernel): its values below the
// dim at the run's case leave the space before anything is compiled; the others are searched as before.
TEST(DeriveLoop, ValuesOfACoveringTileBelowItsDimAreNeverCompiled) {
  fs::path out = fs::path(::testing::TempDir()) / ("kopt_derive_covers_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path kernel = out / "row.cu";
  ASSERT_TRUE(util::write_file_atomic(kernel, R"CU(// One block a row: BLOCK threads cover n, no loop over blocks.
// @kopt param BLOCK values=64,128,256,512,1024 default=512 covers=n
#ifndef BLOCK
#define BLOCK 512
#endif
__global__ void row(const float* x, float* y, int n) {
  if (threadIdx.x < n) y[threadIdx.x] = 2.0f * x[threadIdx.x];
}
extern "C" void solve(const float* x, float* y, int n) { row<<<1, BLOCK>>>(x, y, n); }
)CU")
                  .ok());
  OptimizeOptions o = four_iterations(kernel, {{"n", 300}}, out / "runs");
  std::set<int64_t> built;
  std::mutex mu;
  ModelLabOptions mo;
  mo.compiles = [&](const Defines& d) {
    std::lock_guard<std::mutex> lock(mu);
    built.insert(define_of(d, "BLOCK", 512));
    return true;
  };
  mo.time_ms = [](const Defines& d) -> std::optional<double> {
    int64_t b = define_of(d, "BLOCK", 512);
    if (b < 300) return std::nullopt;  // rows cut short: a wrong answer
    return b == 1024 ? 0.5 : 1.0;
  };
  mo.ceilings = roofline::testing::round_ceilings();
  ModelLab lab(mo);
  lab.kernel = kernel;
  ASSERT_EQ(run_optimize(o, lab), 0);
  EXPECT_FALSE(built.empty());
  for (int64_t b : built) EXPECT_GE(b, 512) << "a value below n = 300 was compiled";
  EXPECT_TRUE(built.count(1024));
  fs::path run = fs::directory_iterator(out / "runs" / "kopt_runs")->path();
  auto state = util::read_json(run / "state.json");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ((*state)["champion"]["candidate"]["params"].value("BLOCK", 0), 1024);
  fs::remove_all(out);
}

// A param of a branch the run never takes (`when=`, as kopt derives for a constant of one branch of an if/else): it
// stays at its default, known before anything is compiled; the taken branch's param is searched as before.
TEST(DeriveLoop, AParamOfABranchTheRunNeverTakesStaysAtItsDefault) {
  fs::path out = fs::path(::testing::TempDir()) / ("kopt_derive_when_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path kernel = out / "branch.cu";
  ASSERT_TRUE(util::write_file_atomic(kernel, R"CU(// A block size for large n, another for small n.
// @kopt param BIG values=128,256,512,1024 default=256 when=n >= 1024
// @kopt param SMALL values=32,64,128 default=64 when=!(n >= 1024)
#ifndef BIG
#define BIG 256
#endif
#ifndef SMALL
#define SMALL 64
#endif
__global__ void twice(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" void solve(const float* x, float* y, int n) {
  if (n >= 1024) twice<<<(n + BIG - 1) / BIG, BIG>>>(x, y, n);
  else twice<<<(n + SMALL - 1) / SMALL, SMALL>>>(x, y, n);
}
)CU")
                  .ok());
  OptimizeOptions o = four_iterations(kernel, {{"n", 1 << 20}}, out / "runs");
  std::set<int64_t> small, big;
  std::mutex mu;
  ModelLabOptions mo;
  mo.compiles = [&](const Defines& d) {
    std::lock_guard<std::mutex> lock(mu);
    small.insert(define_of(d, "SMALL", 64));
    big.insert(define_of(d, "BIG", 256));
    return true;
  };
  mo.time_ms = [](const Defines& d) -> std::optional<double> { return define_of(d, "BIG", 256) == 512 ? 0.5 : 1.0; };
  mo.ceilings = roofline::testing::round_ceilings();
  ModelLab lab(mo);
  lab.kernel = kernel;
  ASSERT_EQ(run_optimize(o, lab), 0);
  EXPECT_EQ(small, (std::set<int64_t>{64})) << "SMALL runs only where n < 1024: never here";
  EXPECT_GT(big.size(), 1u);
  fs::path run = fs::directory_iterator(out / "runs" / "kopt_runs")->path();
  auto state = util::read_json(run / "state.json");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ((*state)["champion"]["candidate"]["params"].value("BIG", 0), 512);
  fs::remove_all(out);
}

// Two coupled derived parameters (tests/data/derive/loop_coupled.cu: ITEMS * THREADS >= 1024, or part of each
// segment is never written): the failures' unwritten shares teach the feasibility model (search/feasibility.h)
// which points cannot be correct. A point it predicts infeasible is built and not measured, or not proposed at all,
// each with its reason in the record; no correct point is ever left out, and the best is found.
TEST(DeriveLoop, UnderCoverageFailuresTeachTheSearchWhichPointsCannotBeCorrect) {
  fs::path out = fs::path(::testing::TempDir()) / ("kopt_derive_coupled_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const fs::path data = testing_support::test_data_dir();
  OptimizeOptions o;
  o.iterations = 3;
  o.patience = 3;
  o.job.kernel = data / "derive" / "loop_coupled.cu";
  o.job.ref = data / "loop" / "ref.py";
  o.job.dims = {{"n", 1 << 20}};
  o.out = out;
  o.quiet = true;
  auto product = [](const Defines& d) { return define_of(d, "ITEMS", 1) * define_of(d, "THREADS", 1024); };
  ModelLabOptions mo;
  // ITEMS=4 THREADS=256 is the best; a product under 1024 leaves part of each segment unwritten.
  mo.time_ms = [&](const Defines& d) -> std::optional<double> {
    if (product(d) < 1024) return std::nullopt;
    return define_of(d, "ITEMS", 1) == 4 && define_of(d, "THREADS", 1024) == 256
               ? 0.5
               : 1.0 + 0.01 * static_cast<double>(product(d) / 1024);
  };
  mo.unwritten = [&](const Defines& d) -> std::optional<double> {
    return product(d) < 1024 ? std::optional<double>(1 - static_cast<double>(product(d)) / 1024) : std::nullopt;
  };
  mo.ceilings = roofline::testing::round_ceilings();
  mo.metrics = {{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 85},
                {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 82}};
  ModelLab lab(mo);
  lab.kernel = o.job.kernel;
  ASSERT_EQ(run_optimize(o, lab), 0);
  fs::path run = fs::directory_iterator(out / "kopt_runs")->path();
  auto state = util::read_json(run / "state.json");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ((*state)["champion"]["candidate"]["params"].value("ITEMS", 0), 4);
  EXPECT_EQ((*state)["champion"]["candidate"]["params"].value("THREADS", 0), 256);
  auto product_of = [](const util::Json& c) { return c["params"].value("ITEMS", 1) * c["params"].value("THREADS", 1024); };
  int signal = 0, skipped = 0;
  for (const auto& h : (*state)["history"]) {
    SCOPED_TRACE(h.dump());
    if (h.contains("unwritten_fraction")) {
      ++signal;
      EXPECT_DOUBLE_EQ(h["unwritten_fraction"].get<double>(), 1 - static_cast<double>(product_of(h["candidate"])) / 1024);
    }
    if (h.contains("predicted_infeasible")) {
      ++skipped;
      EXPECT_LT(product_of(h["candidate"]), 1024) << "a correct point left out";
      EXPECT_EQ(h["status"], "incorrect");
      EXPECT_EQ(h["predicted_infeasible"].get<std::string>().rfind("predicted infeasible (under-coverage)", 0), 0u);
    }
  }
  EXPECT_GT(signal, 0);
  // Every point the generator left out is infeasible, and the record says why (plan.json; the derived space's pruned).
  int predicted = 0;
  for (int it = 1; it <= 3; ++it) {
    auto plan = util::read_json(run / fmt::format("iter_{:02d}", it) / "plan.json");
    if (!plan.ok()) continue;
    for (const auto& p : (*plan)["predicted_infeasible"]) {
      ++predicted;
      const std::string point = p["point"];
      int64_t items = 0, threads = 0;
      ASSERT_EQ(std::sscanf(point.c_str(), "ITEMS=%ld,THREADS=%ld", &items, &threads), 2) << point;
      EXPECT_LT(items * threads, 1024) << point;
    }
  }
  EXPECT_GT(predicted + skipped, 0);
  std::printf(
      "[coupled] %d under-coverage failure(s) measured, %d candidate(s) built and not measured, %d point(s) left out by the "
      "generator over %d iteration(s)\n",
      signal, skipped, predicted, (*state)["iterations_done"].get<int>());
  auto summary = util::read_json(run / "summary.json");
  ASSERT_TRUE(summary.ok());
  int recorded = 0;
  for (const auto& p : (*summary)["derived"]["pruned"]) recorded += p["status"] == "predicted_infeasible";
  EXPECT_EQ(recorded > 0, predicted + skipped > 0) << (*summary)["derived"]["pruned"].dump();
  fs::remove_all(out);
}

}  // namespace
}  // namespace kopt::loop
