#include "util/http.h"

#include <gtest/gtest.h>

namespace kopt::util {
namespace {

TEST(Http, UrlSyntaxIsCheckedBeforeAnyRequest) {
  for (const char* ok : {"http://127.0.0.1:8000/v1", "https://api.example.com/v1", "http://localhost/v1/", "HTTP://[::1]:8080/v1",
                         "http://gpu-box:11434/v1"})
    EXPECT_TRUE(check_http_url(ok).ok()) << ok;
  auto why = [](const char* url) { auto st = check_http_url(url); return st.ok() ? std::string() : st.error().message; };
  EXPECT_NE(why("127.0.0.1:8000/v1").find("no scheme"), std::string::npos);
  EXPECT_NE(why("ftp://host/v1").find("scheme 'ftp' is not http or https"), std::string::npos);
  EXPECT_NE(why("http:///v1").find("no host"), std::string::npos);
  EXPECT_NE(why("http://host:80a/v1").find("port '80a' is not a number"), std::string::npos);
  EXPECT_NE(why("http://host:99999/v1").find("out of range"), std::string::npos);
  EXPECT_NE(why("http://user:pw@host/v1").find("credentials in the URL are not accepted"), std::string::npos);
  EXPECT_NE(why("http://host/v 1").find("spaces"), std::string::npos);
  EXPECT_EQ(check_http_url("x").error().code, ExitCode::kInput);
}

TEST(Http, FailuresHaveNamesAndDescriptions) {
  for (auto f : {HttpFailure::kNone, HttpFailure::kBadUrl, HttpFailure::kResolve, HttpFailure::kConnect, HttpFailure::kTimeout,
                 HttpFailure::kTls, HttpFailure::kInterrupted, HttpFailure::kOther}) {
    EXPECT_NE(http_failure_name(f), "?");
    EXPECT_NE(describe(f), "?");
  }
}

TEST(Http, ConnectionRefusedIsAFailureNotAStatus) {
  auto http = curl_client();
  if (!http.ok()) GTEST_SKIP() << http.error().message;
  HttpRequest req;
  req.method = "GET";
  req.url = "http://127.0.0.1:9/v1/models";  // the discard port: nothing listens there
  req.timeout_s = 5;
  auto r = (*http)->send(req);
  EXPECT_EQ(r.failure, HttpFailure::kConnect) << r.error;
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.ok());
  req.url = "gopher://127.0.0.1/";
  EXPECT_EQ((*http)->send(req).failure, HttpFailure::kBadUrl);
}

}  // namespace
}  // namespace kopt::util
