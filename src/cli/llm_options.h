#pragma once
// The options of `--generator llm` and `--generator manual`, shared by `kopt optimize` and `kopt llm-check`.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "search/llm_generator.h"

namespace kopt::cli {

// --llm-url, --llm-model, --llm-key-env, --llm-temperature, --llm-timeout-s, --llm-max-tokens; with `loop`,
// also --llm-concurrency and --llm-repairs (what only the optimize loop uses).
void add_llm_options(CLI::App& app, search::LlmOptions& o, bool loop);

// Before any GPU work: the options' syntax, the key's variable, libcurl, and GET {url}/models (URL and key).
// Warnings go to stderr; returns the exit code on failure, with the message (which never holds the key) printed.
std::optional<int> check_llm_endpoint(const std::string& command, const search::LlmOptions& o);

}  // namespace kopt::cli
