#include "record/options_record.h"

#include <gtest/gtest.h>

#include "record/run_record.h"
#include "testing/test_support.h"

namespace kopt::record {
namespace {

namespace fs = std::filesystem;
using util::Json;

TEST(OptionsRecord, ReadsTheRecordedRunsOptions) {
  auto j = util::read_json(fs::path(testing_support::test_data_dir()) / "report" / "run_sgemm_h200" / "options.json");
  ASSERT_TRUE(j.ok()) << j.error().message;
  const OptionsRecord r = options_record_from_json(*j);
  EXPECT_EQ(r.kernel, "/work/kopt/examples/sgemm_tunable/kernel.cu");
  EXPECT_EQ(r.dims, (Dims{{"M", 4096}, {"N", 4096}, {"K", 4096}}));
  EXPECT_EQ(r.seeds, 3);
  EXPECT_EQ(r.numerics, "reference");
  EXPECT_FALSE(r.atol) << "written null: none";
  EXPECT_FALSE(r.rtol);
  EXPECT_EQ(r.arch, "sm_90");
  EXPECT_EQ(r.nvcc_flags, std::vector<std::string>{});
  EXPECT_EQ(r.defines, (std::map<std::string, std::string>{}));
  EXPECT_EQ(r.generator, "builtin");
  EXPECT_EQ(r.max_time_s, 2.0);
  EXPECT_EQ(r.meta_time, "2026-11-30T07:12:04Z");
  Json written = *j;
  written.erase("meta");
  EXPECT_EQ(r.as_written, written) << "the file but its meta block, unchanged";
}

// A run directory older than most keys (or a hand-made file) loads: what it lacks is absent, nothing throws.
TEST(OptionsRecord, AnOldFileLackingKeysLoadsWithThoseFieldsAbsent) {
  const Json old = {{"kernel", "/k.cu"}, {"ref", "/ref.py"}, {"dims", {{"n", 1024}}}};
  OptionsRecord r;
  ASSERT_NO_THROW(r = options_record_from_json(old));
  EXPECT_EQ(r.kernel, "/k.cu");
  EXPECT_EQ(r.dims, (Dims{{"n", 1024}}));
  for (bool absent : {!r.seeds, !r.numerics, !r.atol, !r.rtol, !r.arch, !r.nvcc_flags, !r.include_dirs, !r.defines, !r.generator,
                      !r.max_time_s, !r.meta_time})
    EXPECT_TRUE(absent);
  EXPECT_EQ(r.as_written, old);
  ASSERT_NO_THROW(r = options_record_from_json(Json::object()));
  EXPECT_EQ(r, OptionsRecord{});
  ASSERT_NO_THROW(r = options_record_from_json({{"meta", {{"kind", "options"}}}}));
  EXPECT_FALSE(r.meta_time);
}

TEST(OptionsRecord, AWrongTypeNamesTheField) {
  auto message = [](const Json& j) {
    auto r = parse_file<OptionsRecord>(j, "RUN/options.json", options_record_from_json);
    return r ? std::string("read") : r.error().message;
  };
  EXPECT_EQ(message({{"dims", {{"M", "4096"}}}}), "RUN/options.json: dims.M: expected an integer, found a string");
  EXPECT_EQ(message({{"nvcc_flags", "-O3"}}), "RUN/options.json: nvcc_flags: expected an array, found a string");
  EXPECT_EQ(message({{"meta", {{"time", 3}}}}), "RUN/options.json: meta.time: expected a string, found a number");
  EXPECT_EQ(message(Json::array()), "RUN/options.json: the file: expected an object, found a array");
}

}  // namespace
}  // namespace kopt::record
