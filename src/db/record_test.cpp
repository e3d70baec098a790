#include "db/record.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "db/testing.h"

namespace kopt::db {
namespace {

TEST(DbRecord, EveryKeyFieldChangesTheKeyHash) {
  const RecordKey base = testing::sample_record().key;
  const std::vector<std::pair<const char*, std::function<void(RecordKey&)>>> changes = {
      {"kernel_hash", [](RecordKey& k) { k.kernel_hash = "ffffffffffffffffffffffffffffffff"; }},
      {"a param", [](RecordKey& k) { k.config["params"]["TILE"] = 128; }},
      {"a guard", [](RecordKey& k) { k.config["guards"]["vec4"] = false; }},
      {"a dim", [](RecordKey& k) { k.dims["K"] = 2048; }},
      {"another dim name", [](RecordKey& k) { k.dims["B"] = 1; }},
      {"a dtype", [](RecordKey& k) { k.dtypes[2] = "float16"; }},
      {"gpu_model", [](RecordKey& k) { k.gpu_model = "NVIDIA H100 80GB HBM3"; }},
      {"driver_version", [](RecordKey& k) { k.driver_version = "575.51.03"; }},
      {"nvcc_version", [](RecordKey& k) { k.nvcc_version = "12.9.86"; }},
      {"a compile flag", [](RecordKey& k) { k.compile_flags.push_back("-use_fast_math"); }},
      {"flag order", [](RecordKey& k) { std::swap(k.compile_flags[0], k.compile_flags[1]); }},
      {"timing_method", [](RecordKey& k) { k.timing_method = "events"; }},
      {"l2_mode", [](RecordKey& k) { k.l2_mode = "warm"; }},
      {"measure_mode", [](RecordKey& k) { k.measure_mode = "time"; }},
      {"kopt_version", [](RecordKey& k) { k.kopt_version = "0.2.0"; }},
  };
  std::set<std::string> hashes = {key_hash(base)};
  for (const auto& [what, change] : changes) {
    RecordKey k = base;
    change(k);
    EXPECT_NE(key_hash(k), key_hash(base)) << what;
    hashes.insert(key_hash(k));
  }
  EXPECT_EQ(hashes.size(), changes.size() + 1) << "two different changes gave the same key_hash";
  EXPECT_EQ(key_hash(base).size(), 32u);
}

TEST(DbRecord, TheKeyIsCanonicalWhateverOrderItsObjectsWereBuiltIn) {
  RecordKey a = testing::sample_record().key, b = a;
  a.config = util::Json::object();
  a.config["params"]["UNROLL"] = 2;
  a.config["params"]["TILE"] = 64;
  a.config["guards"]["vec4"] = true;
  b.config = util::Json::object();
  b.config["guards"]["vec4"] = true;
  b.config["params"]["TILE"] = 64;
  b.config["params"]["UNROLL"] = 2;
  EXPECT_EQ(canonical_key(a), canonical_key(b));
  EXPECT_EQ(key_hash(a), key_hash(b));
  // Compact: no formatting in the hashed text.
  EXPECT_EQ(canonical_key(a).find("\": "), std::string::npos);
  EXPECT_EQ(canonical_key(a).find(", \""), std::string::npos);
}

TEST(DbRecord, VerdictAndSourceNamesRoundTrip) {
  for (Verdict v : {Verdict::kCorrect, Verdict::kIncorrect, Verdict::kCrashed, Verdict::kTimedOut}) {
    EXPECT_EQ(parse_verdict(verdict_name(v)), v);
    EXPECT_FALSE(describe(v).empty());
  }
  for (Source s : {Source::kOptimize, Source::kBench}) EXPECT_EQ(parse_source(source_name(s)), s);
  EXPECT_FALSE(parse_verdict("ok"));
  EXPECT_FALSE(parse_source("profile"));
}

}  // namespace
}  // namespace kopt::db
