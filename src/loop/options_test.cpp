#include "loop/options.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "record/options_record.h"
#include "record/run_record.h"

namespace kopt::loop {
namespace {

namespace fs = std::filesystem;
using util::Json;

// options.json is written here and read by the report through record::OptionsRecord: every field the record has
// reads back what the writer wrote, from the file as the run directory holds it (meta block included).
TEST(OptionsJson, EveryFieldTheReportReadsRoundTripsThroughTheRecord) {
  OptimizeOptions o;
  o.job.kernel = "/x/k.cu";
  o.job.ref = "/x/ref.py";
  o.job.dims = {{"M", 64}, {"N", 32}};
  o.job.seeds = 5;
  o.job.numerics = search::NumericsMode::kStrict;
  o.job.atol = 1e-3;
  o.job.rtol = 2e-4;
  o.job.arch = "sm_90a";
  o.job.nvcc_flags = {"-lineinfo", "-Xptxas=-O3"};
  o.job.include_dirs = {"/opt/cutlass/include"};
  o.job.defines = {{"USE_X", "1"}, {"FLAG", ""}};
  o.generator = {GeneratorKind::kCommand, "python3 agent.py"};
  o.max_time_s = 3.5;
  const fs::path file = fs::path(::testing::TempDir()) / ("kopt_options_" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(util::write_json_atomic(file, "options", options_to_json(o)).ok());
  auto j = util::read_json(file);
  ASSERT_TRUE(j.ok()) << j.error().message;
  fs::remove(file);

  auto r = record::parse_file<record::OptionsRecord>(*j, "options.json", record::options_record_from_json);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kernel, "/x/k.cu");
  EXPECT_EQ(r->ref, "/x/ref.py");
  EXPECT_EQ(r->dims, o.job.dims);
  EXPECT_EQ(r->seeds, 5);
  EXPECT_EQ(r->numerics, "strict");
  EXPECT_EQ(r->atol, 1e-3);
  EXPECT_EQ(r->rtol, 2e-4);
  EXPECT_EQ(r->arch, "sm_90a");
  EXPECT_EQ(r->nvcc_flags, o.job.nvcc_flags);
  EXPECT_EQ(r->include_dirs, o.job.include_dirs);
  EXPECT_EQ(r->defines, o.job.defines);
  EXPECT_EQ(r->generator, "python3 agent.py");
  EXPECT_EQ(r->max_time_s, 3.5);
  EXPECT_TRUE(r->meta_time && !r->meta_time->empty()) << "the writer's meta block has the time";
  EXPECT_EQ(r->as_written, options_to_json(o));

  // Unset tolerances are written null: absent in the record, unset again on --resume.
  o.job.atol.reset(), o.job.rtol.reset();
  auto none = record::options_record_from_json(options_to_json(o));
  EXPECT_FALSE(none.atol);
  EXPECT_FALSE(none.rtol);
  auto back = options_from_json(options_to_json(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->job.atol);
  EXPECT_EQ(back->job.defines, o.job.defines);
  EXPECT_EQ(back->job.include_dirs, o.job.include_dirs);
  EXPECT_EQ(back->job.seeds, 5);
  EXPECT_EQ(back->job.arch, "sm_90a");
  EXPECT_DOUBLE_EQ(back->max_time_s, 3.5);
}

// --resume of a run directory older than most keys: what it lacks takes the default; a wrong type names the field.
TEST(OptionsJson, AnOldFileResumesWithTheDefaultsAndAWrongTypeNamesTheField) {
  const OptimizeOptions d;
  auto old = options_from_json({{"kernel", "/k.cu"}, {"ref", "/ref.py"}, {"dims", {{"n", 1024}}}});
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->job.dims, (Dims{{"n", 1024}}));
  EXPECT_EQ(old->job.seeds, d.job.seeds);
  EXPECT_EQ(old->job.arch, d.job.arch);
  EXPECT_EQ(old->job.numerics, d.job.numerics);
  EXPECT_EQ(old->generator, d.generator);
  EXPECT_DOUBLE_EQ(old->max_time_s, d.max_time_s);
  EXPECT_FALSE(old->job.atol);

  auto no_dims = options_from_json({{"kernel", "/k.cu"}, {"ref", "/ref.py"}});
  ASSERT_FALSE(no_dims.ok());
  EXPECT_NE(no_dims.error().message.find("needs kernel, ref and dims"), std::string::npos) << no_dims.error().message;
  auto wrong = options_from_json({{"kernel", "/k.cu"}, {"ref", "/ref.py"}, {"dims", {{"n", "big"}}}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "options.json: dims.n: expected an integer, found a string");
}

}  // namespace
}  // namespace kopt::loop
