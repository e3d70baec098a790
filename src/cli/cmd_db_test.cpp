// `kopt db` through the binary: list, query, export and prune on a database the test fills, and every wrong input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "db/store.h"
#include "db/testing.h"
#include "testing/test_support.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/json_io.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

util::ProcessResult kopt_db(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv{testing_support::kopt_binary(), "db"};
  argv.insert(argv.end(), args.begin(), args.end());
  return util::run_process({argv, "", env, 60});
}

// A database with two kernels: the first at two shapes (one of them twice), ten days ago; the second once, now.
void fill_db(const fs::path& p) {
  auto s = db::Store::open(p);
  EXPECT_TRUE(s.ok());
  db::Record a = db::testing::sample_record(), b = db::testing::sample_record({{"M", 1024}, {"N", 1024}, {"K", 1024}});
  db::Record other = db::testing::sample_record();
  other.key.kernel_hash = "fedcba9876543210fedcba9876543210";
  other.kernel_path = "other.cu";
  const int64_t ten_days_ago = ::time(nullptr) - 10 * 86400;
  a.recorded_unix_s = b.recorded_unix_s = ten_days_ago;
  for (const auto* r : {&a, &a, &b, &other}) EXPECT_TRUE(s->insert(*r).ok());
}

TEST(DbCommand, ListQueryExportAndPruneADatabase) {
  db::testing::ScratchDb scratch("cli");
  const fs::path& p = scratch.path;
  fill_db(p);
  const std::string hash = db::testing::sample_record().key.kernel_hash;
  auto list = kopt_db({"list", "--db", p.string(), "--json", "-"});
  ASSERT_EQ(list.exit_code, 0) << list.stderr_text;
  auto lj = util::Json::parse(list.stdout_text, nullptr, false);
  ASSERT_FALSE(lj.is_discarded()) << list.stdout_text;
  ASSERT_EQ(lj["kernels"].size(), 2u);
  EXPECT_NE(list.stderr_text.find("2 kernel(s)"), std::string::npos) << list.stderr_text;  // the report moved to stderr

  auto query = kopt_db({"query", "--db", p.string(), "--kernel-hash", hash, "--dims", "M=4096,N=4096,K=4096", "--json", "-"});
  ASSERT_EQ(query.exit_code, 0) << query.stderr_text;
  auto qj = util::Json::parse(query.stdout_text, nullptr, false);
  ASSERT_EQ(qj["records"].size(), 2u);
  EXPECT_EQ(qj["records"][0]["verdict"], "correct");
  EXPECT_EQ(qj["records"][0]["samples_ms"].size(), 3u);
  // --dims with spaces, and --kernel: the file's content hash.
  auto spaced = kopt_db({"query", "--db", p.string(), "--dims", "M=1024 N=1024 K=1024"});
  ASSERT_EQ(spaced.exit_code, 0) << spaced.stderr_text;
  EXPECT_NE(spaced.stdout_text.find("1 record(s)"), std::string::npos) << spaced.stdout_text;
  fs::path kernel = p.parent_path() / "k.cu";
  ASSERT_TRUE(util::write_file_atomic(kernel, "__global__ void k() {}\n").ok());
  auto by_file = kopt_db({"query", "--db", p.string(), "--kernel", kernel.string()});
  ASSERT_EQ(by_file.exit_code, 0) << by_file.stderr_text;
  EXPECT_NE(by_file.stdout_text.find("0 record(s)"), std::string::npos) << by_file.stdout_text;

  fs::path csv = p.parent_path() / "all.csv";
  auto exp = kopt_db({"export", "--db", p.string(), "--format", "csv", "--out", csv.string()});
  ASSERT_EQ(exp.exit_code, 0) << exp.stderr_text;
  auto text = util::read_file(csv);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(util::split_lines(*text).size(), 5u);  // a header and four records
  EXPECT_EQ(text->rfind("id,key_hash,kernel_hash,kernel_path,config,dims", 0), 0u) << *text;
  auto ejson = kopt_db({"export", "--db", p.string(), "--format", "json"});
  ASSERT_EQ(ejson.exit_code, 0) << ejson.stderr_text;
  auto ej = util::Json::parse(ejson.stdout_text, nullptr, false);
  EXPECT_TRUE(ej.contains("meta"));
  EXPECT_EQ(ej["records"].size(), 4u);

  auto prune = kopt_db({"prune", "--db", p.string(), "--kernel-hash", "fedcba9876543210fedcba9876543210", "--json", "-"});
  ASSERT_EQ(prune.exit_code, 0) << prune.stderr_text;
  EXPECT_EQ(util::Json::parse(prune.stdout_text)["deleted"], 1);
  auto old = kopt_db({"prune", "--db", p.string(), "--older-than-days", "5"});
  ASSERT_EQ(old.exit_code, 0) << old.stderr_text;
  EXPECT_NE(old.stdout_text.find("deleted 3 record(s)"), std::string::npos) << old.stdout_text;
}

TEST(DbCommand, EveryWrongInputIsExit4NamingWhatToFix) {
  db::testing::ScratchDb scratch("cli_errors");
  const fs::path& p = scratch.path;
  fill_db(p);
  const std::string db = p.string();
  const std::string missing = (p.parent_path() / "none.sqlite3").string();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{}, "say what to do"},
      {{"lst"}, "unknown action 'lst'"},
      {{"list", "--db", missing}, "no results database there"},
      {{"list", "--db", db, "--bogus"}, "--bogus"},
      {{"query", "--db", db, "--kernel-hash", "XYZ"}, "32 lower-case hex"},
      {{"query", "--db", db, "--kernel", "a.cu", "--kernel-hash", "0123456789abcdef0123456789abcdef"}, "not both"},
      {{"query", "--db", db, "--kernel", (p.parent_path() / "absent.cu").string()}, "cannot read the kernel file"},
      {{"query", "--db", db, "--dims", "M=4096,N"}, "'N' is not NAME=VALUE"},
      {{"query", "--db", db, "--dims", "M=0"}, "positive integer"},
      {{"query", "--db", db, "--dims", "M=1,M=2"}, "M is given twice"},
      {{"export", "--db", db}, "--format"},
      {{"export", "--db", db, "--format", "xml"}, "csv or json, not 'xml'"},
      {{"prune", "--db", db}, "--older-than-days N or --kernel-hash H"},
      {{"prune", "--db", db, "--older-than-days", "3", "--kernel-hash", "0123456789abcdef0123456789abcdef"}, "(one of them)"},
      {{"prune", "--db", db, "--older-than-days", "-2"}, "0 or more"},
      {{"prune", "--db", db, "--kernel-hash", "abc"}, "32 lower-case hex"},
  };
  for (const auto& c : cases) {
    auto r = kopt_db(c.args);
    EXPECT_EQ(r.exit_code, 4) << util::join(c.args, " ") << "\n" << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(c.says), std::string::npos) << util::join(c.args, " ") << "\n" << r.stderr_text;
  }
  auto off = kopt_db({"list"}, {{"KOPT_DB", "off"}});
  EXPECT_EQ(off.exit_code, 4);
  EXPECT_NE(off.stderr_text.find("KOPT_DB is off"), std::string::npos) << off.stderr_text;
  // A database from a newer kopt is refused, not changed.
  {
    auto s = db::Store::open(p);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->connection().exec("UPDATE schema_version SET version = 7").ok());
  }
  auto newer = kopt_db({"list", "--db", db, "--json", "-"});
  EXPECT_EQ(newer.exit_code, 4);
  EXPECT_NE(newer.stderr_text.find("schema version 7, newer than this kopt knows"), std::string::npos) << newer.stderr_text;
  auto nj = util::Json::parse(newer.stdout_text, nullptr, false);
  EXPECT_EQ(nj["exit_code"], 4) << newer.stdout_text;  // --json - still gets one document
}

// bench and optimize record into --db PATH unless --no-db: both at once is a contradiction, said before any GPU work.
TEST(DbCommand, TheMeasuringCommandsRefuseDbWithNoDb) {
  const std::string data = testing_support::test_data_dir() + "/loop/";
  for (const char* cmd : {"bench", "optimize"}) {
    auto r = util::run_process({{testing_support::kopt_binary(), cmd, data + "tile_kernel.cu", "--ref", data + "ref.py",
                                 "--n=16", "--db", "/tmp/x.sqlite3", "--no-db"},
                                "",
                                {},
                                60});
    EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("--db /tmp/x.sqlite3 and --no-db contradict each other"), std::string::npos)
        << cmd << ": " << r.stderr_text;
  }
}

}  // namespace
}  // namespace kopt::cli
