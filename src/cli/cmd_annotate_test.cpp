// `kopt annotate` through the binary: what it prints, --write, --json, and the errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "testing/test_support.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::cli {
namespace {

namespace fs = std::filesystem;

util::ProcessResult annotate(const std::vector<std::string>& args) {
  std::vector<std::string> argv{testing_support::kopt_binary(), "annotate"};
  argv.insert(argv.end(), args.begin(), args.end());
  return util::run_process({argv, "", {}, 60});
}

std::string data(const std::string& name) { return testing_support::test_data_dir() + "/derive/" + name; }

TEST(AnnotateCommand, PrintsTheDerivedSpaceWithReasonsAndWritesTheCopy) {
  fs::path dir = fs::temp_directory_path() / ("kopt_annotate_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = annotate({data("launch_literals.cu"), "--write", (dir / "out.cu").string(), "--json", (dir / "d.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("// derived: literal block size 256 of the launch of add_one at line 30"), std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("// @kopt param ADD_ONE_BLOCK values=32,64,128,256,512,1024 default=256\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("// note: line 29: the grid of fill"), std::string::npos);
  EXPECT_NE(r.stderr_text.find("wrote the annotated copy"), std::string::npos);
  auto copy = util::read_file(dir / "out.cu");
  ASSERT_TRUE(copy.ok());
  EXPECT_NE(copy->find("#define ADD_ONE_BLOCK 256"), std::string::npos);
  auto j = util::read_json(dir / "d.json");
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(j->contains("meta"));
  EXPECT_EQ((*j)["params"].size(), 5u);
  EXPECT_EQ((*j)["params"][0]["site"], "template_literal");
  fs::remove_all(dir);
}

TEST(AnnotateCommand, JsonToStdoutNothingToDeriveAndErrors) {
  auto j = annotate({data("literal.py"), "--json", "-"});
  ASSERT_EQ(j.exit_code, 0) << j.stderr_text;
  auto parsed = util::Json::parse(j.stdout_text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << j.stdout_text;
  EXPECT_EQ(parsed["language"], "python");
  EXPECT_NE(j.stderr_text.find("# @kopt param BLOCK values=256,512,1024,2048,4096 default=1024 kind=constexpr"), std::string::npos);

  auto none = annotate({data("nothing.cu")});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.stdout_text.find("nothing to derive"), std::string::npos) << none.stdout_text;

  auto self = annotate({data("nothing.cu"), "--write", data("nothing.cu")});
  EXPECT_EQ(self.exit_code, 4);
  EXPECT_NE(self.stderr_text.find("never rewrites your file"), std::string::npos) << self.stderr_text;

  auto missing = annotate({data("no_such_kernel.cu")});
  EXPECT_EQ(missing.exit_code, 4);

  auto annotated = annotate({testing_support::source_dir() + "/examples/vector_add/kernel.cu"});
  EXPECT_EQ(annotated.exit_code, 0);
  EXPECT_NE(annotated.stdout_text.find("already declares its space with @kopt lines"), std::string::npos) << annotated.stdout_text;
}

}  // namespace
}  // namespace kopt::cli
