#include "util/http.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <array>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "util/process.h"

namespace kopt::util {

namespace {

struct FailureRow {
  HttpFailure failure;
  std::string_view name, description;
};
constexpr std::array<FailureRow, 8> kFailures = {{
    {HttpFailure::kNone, "none", "an HTTP status came back"},
    {HttpFailure::kBadUrl, "bad_url", "the URL is malformed or its scheme unsupported"},
    {HttpFailure::kResolve, "resolve", "the host name could not be resolved"},
    {HttpFailure::kConnect, "connect", "the connection was refused or could not be made"},
    {HttpFailure::kTimeout, "timeout", "no complete answer within the time limit"},
    {HttpFailure::kTls, "tls", "the TLS handshake or certificate check failed"},
    {HttpFailure::kInterrupted, "interrupted", "interrupted (Ctrl-C)"},
    {HttpFailure::kOther, "other", "the transfer failed"},
}};

// The few libcurl entry points kopt uses, resolved from the shared library at run time.
struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

template <typename F>
void resolve(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    size_t b = colon + 1, e = line.size();
    while (b < e && std::isspace(static_cast<unsigned char>(line[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(line[e - 1]))) --e;
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = line.substr(b, e - b);
  } else if (line.rfind("HTTP/", 0) == 0) {
    static_cast<std::map<std::string, std::string>*>(user)->clear();  // a new response (after 100 Continue, a redirect)
  }
  return size * n;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) { return interrupted() ? 1 : 0; }

HttpFailure failure_of(CURLcode c) {
  switch (c) {
    case CURLE_OK: return HttpFailure::kNone;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT: return HttpFailure::kBadUrl;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return HttpFailure::kResolve;
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING: return HttpFailure::kConnect;
    case CURLE_OPERATION_TIMEDOUT: return HttpFailure::kTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE: return HttpFailure::kTls;
    case CURLE_ABORTED_BY_CALLBACK: return HttpFailure::kInterrupted;
    default: return HttpFailure::kOther;
  }
}

class CurlClient : public HttpClient {
 public:
  explicit CurlClient(const CurlApi& api) : api_(api) {}
  HttpResponse send(const HttpRequest& req) override;

 private:
  const CurlApi& api_;
};

HttpResponse CurlClient::send(const HttpRequest& req) {
  HttpResponse r;
  if (auto st = check_http_url(req.url); !st) {
    r.failure = HttpFailure::kBadUrl;
    r.error = st.error().message;
    return r;
  }
  CURL* h = api_.easy_init();
  if (!h) {
    r.failure = HttpFailure::kOther;
    r.error = "curl_easy_init failed";
    return r;
  }
  curl_slist* headers = nullptr;
  for (const auto& line : req.headers) headers = api_.slist_append(headers, line.c_str());
  api_.easy_setopt(h, CURLOPT_URL, req.url.c_str());
  api_.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  api_.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api_.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout_s * 1000));
  api_.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout_s * 1000));
  api_.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (req.method == "POST") {
    api_.easy_setopt(h, CURLOPT_POST, 1L);
    api_.easy_setopt(h, CURLOPT_POSTFIELDS, req.body.c_str());
    api_.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else {
    api_.easy_setopt(h, CURLOPT_HTTPGET, 1L);
  }
  api_.easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  api_.easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  api_.easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  api_.easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
  api_.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  api_.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_progress);
  auto t0 = std::chrono::steady_clock::now();
  CURLcode c = api_.easy_perform(h);
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.failure = failure_of(c);
  if (c == CURLE_OK) {
    long status = 0;
    api_.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    r.status = status;
  } else {
    r.error = api_.easy_strerror(c);
  }
  api_.slist_free_all(headers);
  api_.easy_cleanup(h);
  return r;
}

}  // namespace

std::string_view http_failure_name(HttpFailure f) {
  for (const auto& r : kFailures)
    if (r.failure == f) return r.name;
  return "?";
}
std::string_view describe(HttpFailure f) {
  for (const auto& r : kFailures)
    if (r.failure == f) return r.description;
  return "?";
}

Status check_http_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return input_error("URL '" + std::string(url) + "': " + why + " (expected http://HOST[:PORT]/PATH or https://...)");
  };
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad("no scheme");
  std::string scheme(url.substr(0, sep));
  for (auto& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (scheme != "http" && scheme != "https") return bad("scheme '" + scheme + "' is not http or https");
  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return bad("credentials in the URL are not accepted; use the key's environment variable");
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8000
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("unexpected text after the host");
      port = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host == "[]") return bad("no host");
  for (char ch : host)
    if (std::isspace(static_cast<unsigned char>(ch))) return bad("spaces in the host");
  if (authority.find(':') != std::string_view::npos && host.front() != '[' && port.empty()) return bad("empty port");
  for (char ch : port)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return bad("port '" + std::string(port) + "' is not a number");
  if (!port.empty() && (port.size() > 5 || std::stol(std::string(port)) > 65535 || std::stol(std::string(port)) == 0))
    return bad("port " + std::string(port) + " is out of range");
  for (char ch : url)
    if (std::isspace(static_cast<unsigned char>(ch))) return bad("spaces in the URL");
  return ok_status();
}

Result<HttpClient*> curl_client() {
  static CurlApi api{};
  static std::string load_error;
  static std::once_flag once;
  static std::unique_ptr<CurlClient> client;
  std::call_once(once, [] {
    void* lib = nullptr;
    std::string tried;
    // The OpenSSL build first (Debian, Ubuntu: libcurl4 / libcurl4t64), then the GnuTLS one (git's).
    for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      const char* e = ::dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    if (!lib) {
      load_error = "--generator llm needs libcurl, loaded at run time, and none was found (" + tried +
                   "). Install it (Debian/Ubuntu: apt install libcurl4, or libcurl4t64 on Ubuntu 24.04), or use "
                   "--generator manual or --generator CMD";
      return;
    }
    std::string missing;
    resolve(lib, "curl_global_init", api.global_init, missing);
    resolve(lib, "curl_easy_init", api.easy_init, missing);
    resolve(lib, "curl_easy_setopt", api.easy_setopt, missing);
    resolve(lib, "curl_easy_perform", api.easy_perform, missing);
    resolve(lib, "curl_easy_getinfo", api.easy_getinfo, missing);
    resolve(lib, "curl_easy_cleanup", api.easy_cleanup, missing);
    resolve(lib, "curl_easy_strerror", api.easy_strerror, missing);
    resolve(lib, "curl_slist_append", api.slist_append, missing);
    resolve(lib, "curl_slist_free_all", api.slist_free_all, missing);
    if (!missing.empty()) {
      load_error = "libcurl lacks: " + missing + " (too old?)";
      return;
    }
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      load_error = "curl_global_init failed";
      return;
    }
    client = std::make_unique<CurlClient>(api);
  });
  if (!load_error.empty()) return gate_error(load_error);
  return static_cast<HttpClient*>(client.get());
}

}  // namespace kopt::util
