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
  bool takes_json = false;  // has --json FILE|-: a failure with --json - prints an error object on stdout
};

const std::vector<Subcommand>& subcommands();
std::string help_text();
// The closest subcommand name within a small edit distance; empty if none.
std::string suggest_subcommand(std::string_view typed);

// Whether `args` ask for the JSON document on stdout (--json - or --json=-).
bool json_to_stdout(const std::vector<std::string>& args);
// Runs a subcommand's handler; with --json - on a failure where the command wrote no document, prints
// util::failure_json on stdout (one place for every command).
int run_subcommand(const Subcommand& c, const std::vector<std::string>& args);

// Entry point used by main(): returns the process exit code.
int run(int argc, char** argv);

}  // namespace kopt::cli
