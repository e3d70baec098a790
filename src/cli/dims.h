#pragma once
// Problem dimensions given on the command line: `--dim NAME=VALUE` (the unambiguous form, repeatable) or the short
// `--NAME=VALUE` (any identifier NAME, positive integer VALUE). A short-form name that is also a kopt option of a
// kernel command is ambiguous when the kernel takes it as a dimension: an input error naming both meanings.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dims.h"
#include "core/result.h"

namespace kopt::cli {

using kopt::Dims;
using kopt::format_dims;

// Parses the arguments an option parser did not recognise. Each must be --NAME=VALUE. `known_options`
// (without dashes) lets a near-miss such as --iteration=3 be reported as a mistyped option.
Result<Dims> parse_dims(const std::vector<std::string>& args, const std::vector<std::string>& known_options = {});

// What a command line knows when it tells dimensions from its own options.
struct DimContext {
  std::string command;                                  // "kopt optimize"
  std::vector<std::string> dim_args;                    // the values of --dim, each NAME=VALUE
  std::vector<std::string> short_args;                  // the arguments no option took, each --NAME=VALUE
  std::vector<std::string> own_options;                 // this command's long option names, without dashes
  // This command's options given on the command line: name -> {its help text, the value as given}.
  std::map<std::string, std::pair<std::string, std::string>> given_options;
  // The names the kernel takes as dimensions -> what they are there ("solve()'s scalar parameter");
  // empty when the kernel could not be read (its contract check says why later).
  std::map<std::string, std::string> kernel_names;
};

// The dimensions of a command line, or an input error: a malformed --dim, a mistyped option, a name given twice,
// or a name that is both a dimension of the kernel and a kernel command's option given in the short form.
Result<Dims> resolve_dims(const DimContext& c);

// The one-word long options of the kernel commands (check, bench, profile, roofline, optimize), which a dimension
// name can spell: name -> the commands that have it. cli/first_minutes_test.cpp checks it against their --help.
const std::map<std::string, std::string>& kernel_command_words();

// The names a kernel takes as dimensions, from its source text: solve()'s scalar parameters, or a Triton
// kernel's setup() arguments (seed excluded). Empty when the text has no readable entry point. Pure.
std::map<std::string, std::string> kernel_dim_names(const std::string& source_text, bool triton);

}  // namespace kopt::cli
