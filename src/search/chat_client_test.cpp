#include "search/chat_client.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kopt::search {
namespace {

using util::HttpFailure;
using util::HttpResponse;

ChatEndpoint endpoint() {
  ChatEndpoint ep;
  ep.url = "http://127.0.0.1:8000/v1/";
  ep.model = "qwen2.5-coder-32b";
  ep.timeout_s = 30;
  return ep;
}

HttpResponse status(long s, std::string body = "") {
  HttpResponse r;
  r.status = s;
  r.body = std::move(body);
  return r;
}

HttpResponse failure(HttpFailure f, std::string error) {
  HttpResponse r;
  r.failure = f;
  r.error = std::move(error);
  return r;
}

TEST(ChatClient, RequestBodyIsAnOpenAIChatCompletion) {
  auto j = chat_request_body(endpoint(), {{"system", "s"}, {"user", "u"}});
  EXPECT_EQ(j["model"], "qwen2.5-coder-32b");
  EXPECT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][1]["role"], "user");
  EXPECT_EQ(j["messages"][1]["content"], "u");
  EXPECT_EQ(j["max_tokens"], 8192);
  EXPECT_EQ(j["stream"], false);
  EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), 0.2);
}

TEST(ChatClient, ParsesRepliesFromTheServersItTalksTo) {
  // vLLM / OpenAI shape.
  auto r = parse_chat_response(R"({"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},
      "finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->content, "hi");
  EXPECT_EQ(r->finish_reason, "length");
  EXPECT_EQ(r->model, "m");
  EXPECT_TRUE(r->usage.reported);
  EXPECT_EQ(r->usage.prompt_tokens, 12);
  EXPECT_EQ(r->usage.completion_tokens, 3);
  // Content as a list of parts; no usage block.
  r = parse_chat_response(R"({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->content, "ab");
  EXPECT_FALSE(r->usage.reported);
  // Not a chat completion.
  EXPECT_NE(parse_chat_response("<html>502</html>").error().message.find("not JSON"), std::string::npos);
  EXPECT_NE(parse_chat_response(R"({"choices":[]})").error().message.find("no `choices`"), std::string::npos);
  EXPECT_NE(parse_chat_response(R"({"error":{"message":"overloaded"}})").error().message.find("overloaded"), std::string::npos);
}

TEST(ChatClient, ClassifiesAnswersIntoAcceptRetryOrAClearError) {
  const ApiKey key{"KOPT_LLM_API_KEY", "sk-abcdefgh12345"};
  auto c = [&](const HttpResponse& r) { return classify_response(r, endpoint(), "/chat/completions", key); };
  EXPECT_EQ(c(status(200)).action, ResponseAction::kAccept);
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L}) EXPECT_EQ(c(status(s)).action, ResponseAction::kRetry) << s;
  EXPECT_EQ(c(failure(HttpFailure::kConnect, "Connection refused")).action, ResponseAction::kRetry);
  EXPECT_EQ(c(failure(HttpFailure::kTimeout, "Operation timed out")).action, ResponseAction::kRetry);

  auto v = c(status(401, R"({"error":{"message":"Incorrect API key provided: sk-abcdefgh12345"}})"));
  EXPECT_EQ(v.action, ResponseAction::kFail);
  EXPECT_EQ(v.error.code, ExitCode::kInput);
  EXPECT_EQ(v.error.message, "http://127.0.0.1:8000/v1/chat/completions refused the key from $KOPT_LLM_API_KEY (HTTP 401): "
                             "set KOPT_LLM_API_KEY to a valid key for this endpoint");
  v = classify_response(status(403), endpoint(), "/chat/completions", ApiKey{});
  EXPECT_NE(v.error.message.find("requires a key (HTTP 403) and none was sent"), std::string::npos);

  v = c(status(404, R"({"error":{"message":"The model `qwen2.5-coder-32b` does not exist. Key sk-abcdefgh12345"}})"));
  EXPECT_EQ(v.error.code, ExitCode::kInput);
  EXPECT_NE(v.error.message.find("does not serve the model 'qwen2.5-coder-32b' (HTTP 404"), std::string::npos) << v.error.message;
  EXPECT_EQ(v.error.message.find("sk-abcdefgh12345"), std::string::npos) << v.error.message;  // redacted
  EXPECT_NE(v.error.message.find("[redacted]"), std::string::npos);
  v = c(status(404, "Not Found"));
  EXPECT_NE(v.error.message.find("does not exist (HTTP 404): check --llm-url"), std::string::npos) << v.error.message;
  v = c(status(400, R"({"error":"max_tokens is too large: 100000"})"));
  EXPECT_EQ(v.action, ResponseAction::kFail);
  EXPECT_NE(v.error.message.find("refused the request (HTTP 400: {\"error\":\"max_tokens is too large: 100000\"})"), std::string::npos);
  EXPECT_EQ(c(failure(HttpFailure::kResolve, "Could not resolve host")).action, ResponseAction::kFail);
  EXPECT_EQ(c(failure(HttpFailure::kInterrupted, "aborted")).error.code, ExitCode::kInterrupted);
}

TEST(ChatClient, BackoffIsExponentialJitteredBoundedAndHonoursRetryAfter) {
  RetryPolicy p;  // 1 s doubling up to 30 s
  EXPECT_DOUBLE_EQ(retry_delay_s(1, std::nullopt, p, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(retry_delay_s(1, std::nullopt, p, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(retry_delay_s(3, std::nullopt, p, 0.0), 2.0);
  EXPECT_DOUBLE_EQ(retry_delay_s(3, std::nullopt, p, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(retry_delay_s(20, std::nullopt, p, 1.0), 30.0);
  EXPECT_DOUBLE_EQ(retry_delay_s(2, 7.0, p, 0.9), 7.0);
  EXPECT_DOUBLE_EQ(retry_delay_s(2, 3600.0, p, 0.9), 120.0);
  std::time_t now = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_retry_after("120", now), 120.0);
  EXPECT_EQ(parse_retry_after("1.5 ", now), 1.5);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), 10.0);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now), 0.0);  // already past
  EXPECT_FALSE(parse_retry_after("soon", now));
  EXPECT_FALSE(parse_retry_after("-3", now));
}

TEST(ChatClient, RedactionAndTheKeysVariable) {
  EXPECT_EQ(redact("key sk-1234567 twice sk-1234567.", "sk-1234567"), "key [redacted] twice [redacted].");
  EXPECT_EQ(redact("abc", ""), "abc");
  ::setenv("KOPT_TEST_LLM_KEY", "sk-from-test", 1);
  auto k = api_key_from_env("KOPT_TEST_LLM_KEY");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->env_name, "KOPT_TEST_LLM_KEY");
  EXPECT_EQ(k->value, "sk-from-test");
  ::unsetenv("KOPT_TEST_LLM_KEY");
  auto missing = api_key_from_env("KOPT_TEST_LLM_KEY");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kInput);
  EXPECT_NE(missing.error().message.find("the environment variable KOPT_TEST_LLM_KEY is not set"), std::string::npos);
  ::unsetenv("KOPT_LLM_API_KEY");
  ::setenv("OPENAI_API_KEY", "sk-openai-test", 1);
  k = api_key_from_env("");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->env_name, "OPENAI_API_KEY");
  ::setenv("KOPT_LLM_API_KEY", "sk-kopt-test", 1);
  EXPECT_EQ(api_key_from_env("")->env_name, "KOPT_LLM_API_KEY");
  ::unsetenv("KOPT_LLM_API_KEY");
  ::unsetenv("OPENAI_API_KEY");
  k = api_key_from_env("");
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->value.empty());
}

// A client against a scripted HTTP fake: retries stop at max_attempts and the record holds every attempt.
class ScriptedHttp : public util::HttpClient {
 public:
  std::vector<HttpResponse> answers;
  std::vector<util::HttpRequest> seen;
  HttpResponse send(const util::HttpRequest& req) override {
    seen.push_back(req);
    HttpResponse r = answers.at(std::min(seen.size(), answers.size()) - 1);
    r.wall_ms = 5;
    return r;
  }
};

TEST(ChatClient, RetriesAreBoundedAndRecorded) {
  ScriptedHttp http;
  http.answers = {status(503), status(503), status(503)};
  RetryPolicy p;
  p.max_attempts = 3;
  ChatClient client(endpoint(), ApiKey{"K", "sk-secret-value"}, http, p);
  std::vector<double> waits;
  client.sleep = [&](double s) { waits.push_back(s); };
  ChatCall call;
  auto r = client.complete({{"user", "hi"}}, &call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kGate);
  EXPECT_NE(r.error().message.find("keeps failing: HTTP 503"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("gave up after 3 attempts"), std::string::npos);
  EXPECT_EQ(http.seen.size(), 3u);
  EXPECT_EQ(waits.size(), 2u);
  EXPECT_EQ(call.attempts.size(), 3u);
  EXPECT_EQ(http.seen[0].url, "http://127.0.0.1:8000/v1/chat/completions");  // the trailing slash dropped
  bool auth = false;
  for (const auto& h : http.seen[0].headers) auth |= h == "Authorization: Bearer sk-secret-value";
  EXPECT_TRUE(auth);
  EXPECT_EQ(to_json(call).dump().find("sk-secret-value"), std::string::npos);
}

}  // namespace
}  // namespace kopt::search
