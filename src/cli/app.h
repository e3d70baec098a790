#pragma once
// The command line: one table of subcommands drives --help and the "did you mean" suggestion.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::cli {

using Handler = std::function<int(const std::vector<std::string>& args)>;

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  Handler handler;
};

const std::vector<Subcommand>& subcommands();
std::string help_text();
// The closest subcommand name within a small edit distance; empty if none.
std::string suggest_subcommand(std::string_view typed);

// Entry point used by main(): returns the process exit code.
int run(int argc, char** argv);

}  // namespace kopt::cli
