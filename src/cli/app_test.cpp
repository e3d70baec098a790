#include "cli/app.h"

#include <gtest/gtest.h>

#include "testing/test_support.h"

#include "util/process.h"

namespace kopt::cli {

TEST(App, HelpListsEverySubcommandFromTheTable) {
  std::string help = help_text();
  for (const char* name : {"optimize", "bench", "profile", "sass", "roofline", "doctor", "report", "methods", "export",
                           "compare", "llm-check", "check", "annotate"})
    EXPECT_NE(help.find(std::string("  ") + name), std::string::npos) << name;
  for (const auto& c : subcommands()) EXPECT_NE(help.find(std::string("  ") + std::string(c.name) + " "), std::string::npos) << c.name;
}

TEST(App, SuggestsTheClosestSubcommand) {
  EXPECT_EQ(suggest_subcommand("optmize"), "optimize");
  EXPECT_EQ(suggest_subcommand("bnech"), "bench");
  EXPECT_EQ(suggest_subcommand("docter"), "doctor");
  EXPECT_EQ(suggest_subcommand("opt"), "optimize");
  EXPECT_EQ(suggest_subcommand("zzzzzzzz"), "");
}

TEST(App, BinaryHelpVersionAndDidYouMean) {
  auto help = util::run_process({{testing_support::kopt_binary(), "--help"}, "", {}, 30});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.stdout_text.find("optimize"), std::string::npos);
  auto version = util::run_process({{testing_support::kopt_binary(), "--version"}, "", {}, 30});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.stdout_text, std::string("kopt ") + KOPT_VERSION + "\n");
  auto typo = util::run_process({{testing_support::kopt_binary(), "optmize"}, "", {}, 30});
  EXPECT_EQ(typo.exit_code, 4);
  EXPECT_NE(typo.stderr_text.find("Did you mean 'optimize'?"), std::string::npos) << typo.stderr_text;
}

}  // namespace kopt::cli
