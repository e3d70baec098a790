#pragma once
// The one HTTP client: libcurl, loaded at run time (dlopen) like the CUDA driver, so the kopt binary gains no
// shared-library dependency and runs where libcurl is missing (only `--generator llm` then says it needs it).
// HTTPS goes through libcurl's own TLS and the system's CA certificates; proxies follow the usual
// environment variables (https_proxy, no_proxy). docs/DEPENDENCIES.md says why libcurl.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kopt::util {

struct HttpRequest {
  std::string method = "POST";       // "GET" or "POST"
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; may hold a secret: never logged or echoed
  std::string body;                  // POST body
  double timeout_s = 300;            // the whole exchange
  double connect_timeout_s = 10;
};

// Why no HTTP status came back.
enum class HttpFailure { kNone, kBadUrl, kResolve, kConnect, kTimeout, kTls, kInterrupted, kOther };
std::string_view http_failure_name(HttpFailure f);
std::string_view describe(HttpFailure f);

struct HttpResponse {
  HttpFailure failure = HttpFailure::kNone;
  std::string error;                           // libcurl's message when failure != kNone
  long status = 0;                             // the HTTP status when failure == kNone
  std::map<std::string, std::string> headers;  // lower-case names, the last value of each
  std::string body;
  double wall_ms = 0;
  bool ok() const { return failure == HttpFailure::kNone && status >= 200 && status < 300; }
};

// Narrow interface so the logic above it can be tested against a fake or a local server.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Blocking; safe to call from several threads at once. Aborts (kInterrupted) on Ctrl-C.
  virtual HttpResponse send(const HttpRequest& req) = 0;
};

// The libcurl client (one process-wide instance). A gate error (exit 3) naming the packages to install when
// neither libcurl.so.4 nor libcurl-gnutls.so.4 can be loaded.
Result<HttpClient*> curl_client();

// The URL's syntax: scheme http or https and a host. The error says what is wrong.
Status check_http_url(std::string_view url);

}  // namespace kopt::util
