#pragma once
// A client for OpenAI-compatible chat-completion endpoints (POST {url}/chat/completions, as vLLM, llama.cpp's
// server, Ollama and hosted providers serve): retries with bounded, jittered exponential backoff on 429, 5xx,
// connection errors and timeouts (Retry-After honoured), and a clear input error (exit 4) naming what to fix
// for a bad URL, model or key. The key is sent in the Authorization header only: it is never written to a
// file or a message, and any echo of it in an endpoint's answer is redacted.
#include <cstdint>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "util/http.h"
#include "util/json_io.h"

namespace kopt::search {

struct ChatEndpoint {
  std::string url;      // the base URL, e.g. http://127.0.0.1:8000/v1 (requests go to {url}/chat/completions)
  std::string model;
  std::string key_env;  // the environment variable the key came from, for messages ("" when no key)
  double temperature = 0.2;
  double timeout_s = 600;  // one HTTP request
  int max_tokens = 8192;   // per reply
};

struct RetryPolicy {
  int max_attempts = 5;            // HTTP attempts per request, the first included
  double base_delay_s = 1;         // doubled per retry...
  double max_delay_s = 30;         // ...up to this
  double max_retry_after_s = 120;  // a server's Retry-After is honoured up to this
};

// The key: from `key_env` when named (an error, exit 4, when that variable is unset or empty), else from
// KOPT_LLM_API_KEY, else OPENAI_API_KEY; none is fine (local servers need no key).
struct ApiKey {
  std::string env_name;  // where it came from; "" when none was found
  std::string value;
};
Result<ApiKey> api_key_from_env(const std::string& key_env);

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

struct ChatUsage {
  int64_t prompt_tokens = 0, completion_tokens = 0;
  bool reported = false;  // the reply carried a `usage` block
};

struct ChatReply {
  std::string content;
  std::string finish_reason;  // "stop", "length" (cut at max_tokens), ...
  std::string model;          // as the endpoint names it
  ChatUsage usage;
};

// One request as it went: every HTTP attempt, the waits between them, and the total wall time.
struct ChatAttempt {
  long status = 0;          // HTTP status, 0 when none came back
  std::string failure;      // http_failure_name, or "" when a status came back
  double wall_ms = 0;
  double wait_before_s = 0; // the backoff slept before this attempt
};
struct ChatCall {
  std::vector<ChatAttempt> attempts;
  double wall_ms = 0;  // all attempts and waits
  ChatUsage usage;
  std::string error;   // set when the request failed for good
};
util::Json to_json(const ChatCall& c);

// ---- Pure pieces ----
util::Json chat_request_body(const ChatEndpoint& ep, const std::vector<ChatMessage>& messages);
// The reply's first choice and its usage; an error naming what is missing when the body is not a chat completion.
Result<ChatReply> parse_chat_response(std::string_view body);

enum class ResponseAction { kAccept, kRetry, kFail };
struct ResponseVerdict {
  ResponseAction action = ResponseAction::kAccept;
  Error error;  // for kFail: the final error; for kRetry: what went wrong, should no attempt be left
};
// What to do with one HTTP answer to POST {url}/chat/completions (or GET {url}/models: `path` says which).
// `key` is only used to redact it from quoted bodies.
ResponseVerdict classify_response(const util::HttpResponse& r, const ChatEndpoint& ep, const std::string& path,
                                  const ApiKey& key);

// Seconds from a Retry-After value: delta-seconds or an HTTP date (relative to `now`); nullopt when unreadable.
std::optional<double> parse_retry_after(std::string_view value, std::time_t now);
// The wait before retry number `retry` (1-based): Retry-After when given (capped), else an exponential
// backoff capped at max_delay_s with "equal jitter" (half fixed, half scaled by jitter01 in [0, 1)).
double retry_delay_s(int retry, std::optional<double> retry_after_s, const RetryPolicy& p, double jitter01);

// `text` with every occurrence of `secret` replaced (secrets shorter than 4 characters are left alone).
std::string redact(std::string text, const std::string& secret);

class ChatClient {
 public:
  ChatClient(ChatEndpoint ep, ApiKey key, util::HttpClient& http, RetryPolicy retry = {});
  // Sends the conversation; retries what is worth retrying. Error codes: kInput (exit 4) for what the user
  // must fix (URL, model, key, a request the endpoint refuses), kGate (exit 3) when the endpoint keeps failing,
  // kInterrupted on Ctrl-C. `call` (optional) receives the record of every attempt. Thread-safe.
  Result<ChatReply> complete(const std::vector<ChatMessage>& messages, ChatCall* call = nullptr) const;
  // GET {url}/models: checks the URL and the key before a run. A 404 (an endpoint without the listing) is
  // fine; a model missing from a non-empty list adds a warning (some servers accept any name).
  Status preflight(std::vector<std::string>* warnings) const;
  const ChatEndpoint& endpoint() const { return ep_; }
  std::string redact(std::string text) const { return search::redact(std::move(text), key_.value); }
  // Replaces the wait between attempts (tests); the default sleeps in short steps, stopping on Ctrl-C.
  std::function<void(double)> sleep;

 private:
  Result<util::HttpResponse> send(const std::string& method, const std::string& path, const std::string& body,
                                  ChatCall* call) const;
  ChatEndpoint ep_;
  ApiKey key_;
  util::HttpClient& http_;
  RetryPolicy retry_;
};

}  // namespace kopt::search
