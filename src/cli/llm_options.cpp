#include "cli/llm_options.h"

#include <cstdio>

#include "cli/fail.h"

namespace kopt::cli {

void add_llm_options(CLI::App& app, search::LlmOptions& o, bool loop) {
  app.add_option("--llm-url", o.url, "--generator llm: the endpoint's base URL (OpenAI-compatible), e.g. http://127.0.0.1:8000/v1");
  app.add_option("--llm-model", o.model, "--generator llm: the model's name as the endpoint serves it");
  app.add_option("--llm-key-env", o.key_env,
                 "--generator llm: the environment variable holding the key (default: KOPT_LLM_API_KEY, else "
                 "OPENAI_API_KEY, else no key); the key itself is never written anywhere");
  app.add_option("--llm-temperature", o.temperature, "--generator llm: sampling temperature (default 0.2)");
  app.add_option("--llm-timeout-s", o.timeout_s, "--generator llm: time limit of one request in seconds (default 600)");
  app.add_option("--llm-max-tokens", o.max_tokens, "--generator llm: token limit of one reply (default 8192)");
  if (!loop) return;
  app.add_option("--llm-concurrency", o.concurrency, "--generator llm: conversations in flight at once (default 4)");
  app.add_option("--llm-repairs", o.repairs,
                 "--generator llm: times a failing candidate is sent back with its errors (default 2)");
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
