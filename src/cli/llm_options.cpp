#include "cli/llm_options.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli/fail.h"

namespace kopt::cli {

void add_llm_options(CLI::App& app, search::LlmOptions& o, bool loop) {
  const search::LlmOptions d;  // the defaults, written once (search/llm_generator.h)
  app.add_option("--llm-url", o.url, "--generator llm: the endpoint's base URL (OpenAI-compatible), e.g. http://127.0.0.1:8000/v1");
  app.add_option("--llm-model", o.model, "--generator llm: the model's name as the endpoint serves it");
  app.add_option("--llm-key-env", o.key_env,
                 "--generator llm: the environment variable holding the key (default: KOPT_LLM_API_KEY, else "
                 "OPENAI_API_KEY, else no key); the key itself is never written anywhere");
  app.add_option("--llm-temperature", o.temperature,
                 fmt::format("--generator llm: sampling temperature (default {})", d.temperature));
  app.add_option("--llm-timeout-s", o.timeout_s,
                 fmt::format("--generator llm: time limit of one request in seconds (default {})", d.timeout_s));
  app.add_option("--llm-max-tokens", o.max_tokens,
                 fmt::format("--generator llm: token limit of one reply (default {})", d.max_tokens));
  if (!loop) return;
  app.add_option("--llm-concurrency", o.concurrency,
                 fmt::format("--generator llm: conversations in flight at once (default {})", d.concurrency));
  app.add_option("--llm-repairs", o.repairs,
                 fmt::format("--generator llm: times a failing candidate is sent back with its errors (default {})", d.repairs));
}

std::optional<int> check_llm_endpoint(const std::string& command, const search::LlmOptions& o) {
  std::vector<std::string> warnings;
  auto gen = search::make_llm_generator(o, true, &warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), w.c_str());
  if (!gen) {
    std::string name = command.rfind("kopt ", 0) == 0 ? command.substr(5) : command;
    return report_failure(name, gen.error());
  }
  return std::nullopt;
}

}  // namespace kopt::cli
