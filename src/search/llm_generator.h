#pragma once
// `--generator llm`: a language model behind an OpenAI-compatible chat-completion endpoint writes the
// candidates (docs/GENERATORS.md, "Language models"). Per iteration: the brief the external command gets
// (brief.json, brief.md) becomes the prompt; K conversations, one candidate each, run concurrently within
// `concurrency`; each reply's code blocks and manifest block go through the external protocol's manifest
// validation; a candidate that is rejected, fails to compile, or gives a wrong answer (GeneratorInput::checker)
// is sent back up to `repairs` times with the errors. Every request, reply, attempt and check is recorded under
// the iteration directory (llm/c<n>/a<attempt>/, llm_usage.json); the key never is.
#include <memory>
#include <string>

#include "search/chat_client.h"
#include "search/generator.h"
#include "util/http.h"

namespace kopt::search {

struct LlmOptions {
  std::string url;      // --llm-url: the base URL, e.g. http://127.0.0.1:8000/v1
  std::string model;    // --llm-model
  std::string key_env;  // --llm-key-env: "" takes KOPT_LLM_API_KEY, else OPENAI_API_KEY, else no key
  double temperature = 0.2;
  double timeout_s = 600;  // one request
  int max_tokens = 8192;
  int concurrency = 4;     // conversations in flight at once
  int repairs = 2;         // repair requests per candidate
  bool require_guards = false;
};

// Syntax and ranges, before any request: an input error (exit 4) naming the option to fix.
Status validate(const LlmOptions& o);
// For options.json (the key is never part of it: only the name of its variable).
util::Json to_json(const LlmOptions& o);
Result<LlmOptions> llm_options_from_json(const util::Json& j);

// ---- The prompts (pure) ----
std::string llm_system_prompt(SourceLanguage lang);
// Conversation n of k: the brief, then what to write and how to answer. `focus`: a method id to start from, or "".
std::string llm_task_prompt(const std::string& brief_markdown, int n, int k, const std::string& file,
                            const std::string& focus, SourceLanguage lang);
// After a rejection (status empty) or a failed check: what went wrong and how to answer.
std::string llm_repair_prompt(const std::string& file, const std::string& what_failed, const std::string& details,
                              SourceLanguage lang);

class LlmGenerator : public Generator {
 public:
  LlmGenerator(LlmOptions o, ApiKey key, util::HttpClient& http, RetryPolicy retry = {});
  std::string name() const override;
  Result<GeneratorOutput> generate(const GeneratorInput& in) override;
  ChatClient& client() { return client_; }  // tests replace client().sleep

 private:
  LlmOptions o_;
  ChatClient client_;
};

// The generator for `--generator llm`: validates the options, reads the key from the environment and loads
// libcurl (exit 4 or 3 with a message naming what to fix). With `preflight`, also checks the URL and the key
// against GET {url}/models (warnings, such as a model the list does not name, go to `warnings`).
Result<std::unique_ptr<LlmGenerator>> make_llm_generator(const LlmOptions& o, bool preflight,
                                                         std::vector<std::string>* warnings);

}  // namespace kopt::search
