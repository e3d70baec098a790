#pragma once
// CLI11's parse errors in kopt's voice: what is wrong with which option, and what to give instead.
#include <CLI/CLI.hpp>
#include <string>

namespace kopt::cli {

// The message for a parse error of `app` (without the "kopt CMD: " prefix). Pure.
std::string reword_parse_error(const CLI::App& app, const CLI::ParseError& e);

}  // namespace kopt::cli
