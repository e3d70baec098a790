#include "search/chat_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "util/process.h"

namespace kopt::search {

using util::Json;

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A body quoted in a message: the key redacted, one line, at most 400 characters.
std::string quote_body(const std::string& body, const ApiKey& key) {
  std::string s = redact(body, key.value);
  for (auto& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  if (s.size() > 400) s = s.substr(0, 400) + "...";
  return s.empty() ? "(empty body)" : s;
}

bool mentions(const std::string& body, const std::string& word) {
  return !word.empty() && body.find(word) != std::string::npos;
}

std::string base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  const std::string suffix = "/chat/completions";
  if (url.size() >= suffix.size() && url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0)
    url.resize(url.size() - suffix.size());
  return url;
}

void sleep_interruptibly(double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until && !util::interrupted())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

Result<ApiKey> api_key_from_env(const std::string& key_env) {
  if (!key_env.empty()) {
    std::string v = env_or_empty(key_env.c_str());
    if (v.empty())
      return input_error(fmt::format("--llm-key-env {}: the environment variable {} is not set (or empty); export it "
                                     "with the endpoint's key, or leave --llm-key-env out for an endpoint without a key",
                                     key_env, key_env));
    return ApiKey{key_env, v};
  }
  for (const char* name : {"KOPT_LLM_API_KEY", "OPENAI_API_KEY"})
    if (std::string v = env_or_empty(name); !v.empty()) return ApiKey{name, v};
  return ApiKey{};
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.size() < 4) return text;
  const std::string mark = "[redacted]";
  for (size_t p = text.find(secret); p != std::string::npos; p = text.find(secret, p + mark.size()))
    text.replace(p, secret.size(), mark);
  return text;
}

util::Json to_json(const ChatCall& c) {
  Json attempts = Json::array();
  for (const auto& a : c.attempts) {
    Json j = {{"status", a.status}, {"wall_ms", a.wall_ms}, {"wait_before_s", a.wait_before_s}};
    if (!a.failure.empty()) j["failure"] = a.failure;
    attempts.push_back(std::move(j));
  }
  Json j = {{"attempts", attempts}, {"wall_ms", c.wall_ms}};
  if (c.usage.reported) j["usage"] = {{"prompt_tokens", c.usage.prompt_tokens}, {"completion_tokens", c.usage.completion_tokens}};
  if (!c.error.empty()) j["error"] = c.error;
  return j;
}

util::Json chat_request_body(const ChatEndpoint& ep, const std::vector<ChatMessage>& messages) {
  Json msgs = Json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  return {{"model", ep.model}, {"messages", msgs}, {"temperature", ep.temperature}, {"max_tokens", ep.max_tokens},
          {"stream", false}};
}

Result<ChatReply> parse_chat_response(std::string_view body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) return input_error("the answer is not JSON");
  if (!j.is_object()) return input_error("the answer is not a JSON object");
  if (j.contains("error")) return input_error("the answer is an error: " + j["error"].dump());
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty())
    return input_error("the answer has no `choices`");
  const Json& c = j["choices"][0];
  if (!c.is_object() || !c.contains("message") || !c["message"].is_object())
    return input_error("the answer's first choice has no `message`");
  ChatReply r;
  const Json& content = c["message"].value("content", Json());
  if (content.is_string()) {
    r.content = content.get<std::string>();
  } else if (content.is_array()) {  // content parts: [{"type": "text", "text": ...}]
    for (const auto& part : content)
      if (part.is_object() && part.value("text", Json()).is_string()) r.content += part["text"].get<std::string>();
  } else if (!content.is_null()) {
    return input_error("the answer's message content is neither text nor a list of parts");
  }
  if (c.contains("finish_reason") && c["finish_reason"].is_string()) r.finish_reason = c["finish_reason"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) r.model = j["model"].get<std::string>();
  if (j.contains("usage") && j["usage"].is_object()) {
    const Json& u = j["usage"];
    if (u.value("prompt_tokens", Json()).is_number_integer() && u.value("completion_tokens", Json()).is_number_integer()) {
      r.usage.prompt_tokens = u["prompt_tokens"].get<int64_t>();
      r.usage.completion_tokens = u["completion_tokens"].get<int64_t>();
      r.usage.reported = true;
    }
  }
  return r;
}

ResponseVerdict classify_response(const util::HttpResponse& r, const ChatEndpoint& ep, const std::string& path,
                                  const ApiKey& key) {
  const std::string where = base_url(ep.url) + path;
  using util::HttpFailure;
  auto retry = [](Error e) { return ResponseVerdict{ResponseAction::kRetry, std::move(e)}; };
  auto fail = [](Error e) { return ResponseVerdict{ResponseAction::kFail, std::move(e)}; };
  switch (r.failure) {
    case HttpFailure::kNone: break;
    case HttpFailure::kBadUrl:
      return fail(input_error(fmt::format("--llm-url {}: {}", ep.url, r.error)));
    case HttpFailure::kResolve:
      return fail(input_error(fmt::format("cannot resolve the host of --llm-url {} ({}): check the URL", ep.url, r.error)));
    case HttpFailure::kTls:
      return fail(input_error(fmt::format("TLS with {} failed ({}): check the URL's scheme (http or https) and the "
                                          "server's certificate", where, r.error)));
    case HttpFailure::kInterrupted: return fail(Error{ExitCode::kInterrupted, "interrupted"});
    case HttpFailure::kConnect:
      return retry(input_error(fmt::format("cannot connect to {} ({}): is the server running? check --llm-url", where, r.error)));
    case HttpFailure::kTimeout:
      return retry(gate_error(fmt::format("{} did not answer within --llm-timeout-s {:g} s ({})", where, ep.timeout_s, r.error)));
    case HttpFailure::kOther:
      return retry(gate_error(fmt::format("the request to {} failed: {}", where, r.error)));
  }
  const long s = r.status;
  if (s >= 200 && s < 300) return {ResponseAction::kAccept, {}};
  if (s == 401 || s == 403) {
    if (key.value.empty())
      return fail(input_error(fmt::format("{} requires a key (HTTP {}) and none was sent: export it in KOPT_LLM_API_KEY, "
                                          "or name its variable with --llm-key-env", where, s)));
    return fail(input_error(fmt::format("{} refused the key from ${} (HTTP {}): set {} to a valid key for this endpoint",
                                        where, key.env_name, s, key.env_name)));
  }
  if (s == 408 || s == 409 || s == 425 || s == 429 || s >= 500)
    return retry(gate_error(fmt::format("{} keeps failing: HTTP {}: {}", where, s, quote_body(r.body, key))));
  if ((s == 404 || s == 400 || s == 422) && mentions(r.body, ep.model))
    return fail(input_error(fmt::format("{} does not serve the model '{}' (HTTP {}: {}): check --llm-model; "
                                        "GET {}/models lists the models it serves",
                                        where, ep.model, s, quote_body(r.body, key), base_url(ep.url))));
  if (s == 404 || s == 405)
    return fail(input_error(fmt::format("{} does not exist (HTTP {}): check --llm-url, the base URL of an OpenAI-compatible "
                                        "API (usually ending in /v1, e.g. http://127.0.0.1:8000/v1)", where, s)));
  return fail(input_error(fmt::format("{} refused the request (HTTP {}: {}): check --llm-max-tokens, --llm-temperature "
                                      "and --llm-model", where, s, quote_body(r.body, key))));
}

std::optional<double> parse_retry_after(std::string_view value, std::time_t now) {
  std::string v(value);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  double secs = std::strtod(v.c_str(), &end);
  if (end && *end == '\0') return secs >= 0 && std::isfinite(secs) ? std::optional<double>(secs) : std::nullopt;
  std::tm tm{};
  const char* rest = ::strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  if (!rest) return std::nullopt;
  std::time_t when = ::timegm(&tm);
  return std::max(0.0, static_cast<double>(when - now));
}

double retry_delay_s(int retry, std::optional<double> retry_after_s, const RetryPolicy& p, double jitter01) {
  if (retry_after_s) return std::min(*retry_after_s, p.max_retry_after_s);
  double d = std::min(p.max_delay_s, p.base_delay_s * std::pow(2.0, std::max(0, retry - 1)));
  return d / 2 + d / 2 * std::clamp(jitter01, 0.0, 1.0);
}

ChatClient::ChatClient(ChatEndpoint ep, ApiKey key, util::HttpClient& http, RetryPolicy retry)
    : sleep(sleep_interruptibly), ep_(std::move(ep)), key_(std::move(key)), http_(http), retry_(retry) {
  ep_.url = base_url(ep_.url);
}

Result<util::HttpResponse> ChatClient::send(const std::string& method, const std::string& path, const std::string& body,
                                            ChatCall* call) const {
  util::HttpRequest req;
  req.method = method;
  req.url = ep_.url + path;
  req.body = body;
  req.timeout_s = ep_.timeout_s;
  req.headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!key_.value.empty()) req.headers.push_back("Authorization: Bearer " + key_.value);
  thread_local std::mt19937 rng(std::random_device{}());
  auto t0 = std::chrono::steady_clock::now();
  double wait = 0;
  Error last;
  for (int attempt = 1; attempt <= std::max(1, retry_.max_attempts); ++attempt) {
    if (attempt > 1) {
      sleep(wait);
      if (util::interrupted()) return Error{ExitCode::kInterrupted, "interrupted"};
    }
    util::HttpResponse r = http_.send(req);
    if (call) call->attempts.push_back({r.failure == util::HttpFailure::kNone ? r.status : 0,
                                        r.failure == util::HttpFailure::kNone ? "" : std::string(util::http_failure_name(r.failure)),
                                        r.wall_ms, attempt > 1 ? wait : 0});
    ResponseVerdict v = classify_response(r, ep_, path, key_);
    if (v.action == ResponseAction::kAccept) {
      if (call) call->wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return r;
    }
    last = v.error;
    if (v.action == ResponseAction::kFail) break;
    std::optional<double> after;
    if (auto it = r.headers.find("retry-after"); it != r.headers.end()) after = parse_retry_after(it->second, std::time(nullptr));
    wait = retry_delay_s(attempt, after, retry_, std::uniform_real_distribution<double>(0, 1)(rng));
    if (attempt == retry_.max_attempts)
      last.message += fmt::format(" (gave up after {} attempts; the run is resumable with kopt optimize --resume RUN_DIR)", attempt);
  }
  last.message = redact(last.message);
  if (call) {
    call->wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    call->error = last.message;
  }
  return last;
}

Result<ChatReply> ChatClient::complete(const std::vector<ChatMessage>& messages, ChatCall* call) const {
  const std::string body = chat_request_body(ep_, messages).dump();
  // A 2xx answer that is not a chat completion (a proxy's page, a half answer) is retried like a 5xx.
  for (int attempt = 1;; ++attempt) {
    KOPT_TRY_ASSIGN(util::HttpResponse r, send("POST", "/chat/completions", body, call));
    auto reply = parse_chat_response(r.body);
    if (reply) {
      if (call) call->usage = reply->usage;
      return reply;
    }
    std::string what = fmt::format("{}/chat/completions answered HTTP {} but not with a chat completion: {}: {}", ep_.url,
                                   r.status, reply.error().message, quote_body(r.body, key_));
    if (attempt >= std::max(1, retry_.max_attempts)) {
      if (call) call->error = what;
      return gate_error(what);
    }
    if (call) call->attempts.back().failure = "not_a_chat_completion";
    sleep(retry_delay_s(attempt, std::nullopt, retry_, 0.5));
    if (util::interrupted()) return Error{ExitCode::kInterrupted, "interrupted"};
  }
}

Status ChatClient::preflight(std::vector<std::string>* warnings) const {
  KOPT_TRY(util::check_http_url(ep_.url));
  util::HttpRequest req;
  req.method = "GET";
  req.url = ep_.url + "/models";
  req.timeout_s = std::min(ep_.timeout_s, 60.0);
  req.headers = {"Accept: application/json"};
  if (!key_.value.empty()) req.headers.push_back("Authorization: Bearer " + key_.value);
  util::HttpResponse r;
  for (int attempt = 1;; ++attempt) {
    r = http_.send(req);
    ResponseVerdict v = classify_response(r, ep_, "/models", key_);
    if (v.action == ResponseAction::kAccept) break;
    if (r.failure == util::HttpFailure::kNone && (r.status == 404 || r.status == 405)) {
      if (warnings) warnings->push_back(fmt::format("{}/models is not served (HTTP {}): the URL and the model are checked by the first request", ep_.url, r.status));
      return ok_status();
    }
    if (v.action == ResponseAction::kFail || attempt >= std::max(1, retry_.max_attempts)) {
      v.error.message = redact(v.error.message);
      return v.error;
    }
    std::optional<double> after;
    if (auto it = r.headers.find("retry-after"); it != r.headers.end()) after = parse_retry_after(it->second, std::time(nullptr));
    sleep(retry_delay_s(attempt, after, retry_, 0.5));
    if (util::interrupted()) return Error{ExitCode::kInterrupted, "interrupted"};
  }
  Json j = Json::parse(r.body, nullptr, false);
  std::vector<std::string> ids;
  if (j.is_object() && j.contains("data") && j["data"].is_array())
    for (const auto& m : j["data"])
      if (m.is_object() && m.value("id", Json()).is_string()) ids.push_back(m["id"].get<std::string>());
  if (!ids.empty() && std::find(ids.begin(), ids.end(), ep_.model) == ids.end() && warnings) {
    std::string list;
    for (size_t i = 0; i < ids.size() && i < 10; ++i) list += (i ? ", " : "") + ids[i];
    warnings->push_back(fmt::format("{}/models does not list '{}' (it lists {}{}); some servers accept any name, so kopt "
                                    "goes on", ep_.url, ep_.model, list, ids.size() > 10 ? ", ..." : ""));
  }
  return ok_status();
}

}  // namespace kopt::search
