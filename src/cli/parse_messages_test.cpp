#include "cli/parse_messages.h"

#include <gtest/gtest.h>

namespace kopt::cli {
namespace {

// Parses `args` (in order) and returns the reworded error, or "" when parsing succeeded.
std::string error_of(std::vector<std::string> args) {
  CLI::App app{"test", "kopt test"};
  int seeds = 3;
  double atol = 0;
  std::string l2 = "cold", json, ref;
  app.add_option("--seeds", seeds, "number of seeds");
  app.add_option("--atol", atol, "absolute tolerance");
  app.add_option("--l2", l2, "cold or warm")->check(CLI::IsMember({"cold", "warm"}));
  app.add_option("--near-peak", atol, "efficiency")->check(CLI::Range(0.01, 1.0));
  app.add_option("--json", json, "where the JSON goes")->type_name("FILE|-");
  app.add_option("--ref", ref, "ref.py: reference(**kwargs)")->required();
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return reword_parse_error(app, e);
  }
  return "";
}

TEST(ParseMessages, ConversionErrorsNameTheOptionTheValueAndWhatItTakes) {
  EXPECT_EQ(error_of({"--ref", "r.py", "--seeds", "abc"}), "--seeds 'abc' is not a whole number (e.g. --seeds 3)");
  EXPECT_EQ(error_of({"--ref", "r.py", "--atol", "tiny"}), "--atol 'tiny' is not a number (e.g. --atol 0.5)");
}

TEST(ParseMessages, ValidatorsRequiredOptionsMissingValuesAndExtras) {
  EXPECT_EQ(error_of({"--ref", "r.py", "--l2", "hot"}), "--l2 'hot' is not one of cold, warm");
  EXPECT_EQ(error_of({"--ref", "r.py", "--near-peak", "3"}), "--near-peak 3 is out of range: give a value between 0.010000 and 1.000000");
  EXPECT_EQ(error_of({}), "--ref is missing: ref.py: reference(**kwargs)");
  EXPECT_EQ(error_of({"--ref", "r.py", "--json"}), "--json needs a value: a file, or - for stdout");
  EXPECT_EQ(error_of({"--ref", "r.py", "stray"}), "unexpected argument(s): stray");
  EXPECT_EQ(error_of({"--ref", "r.py"}), "");
}

}  // namespace
}  // namespace kopt::cli
