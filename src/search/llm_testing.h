#pragma once
// Shared by the language-model tests: a real HTTP server on 127.0.0.1 (tests/data/llm/mock_endpoint.py, Python
// standard library) replaying a scripted conversation, started per test on a free port and stopped after it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "testing/test_support.h"
#include "util/fs.h"
#include "util/http.h"
#include "util/json_io.h"
#include "util/process.h"

namespace kopt::search::testing {

class MockEndpoint {
 public:
  // `script`: a file name under tests/data/llm. Check ok() (an ASSERT in the test) before use.
  MockEndpoint(const std::string& script, const std::filesystem::path& work_dir) {
    namespace fs = std::filesystem;
    fs::create_directories(work_dir);
    port_file_ = work_dir / "mock_port.txt";
    log_ = work_dir / "mock_requests.jsonl";
    fs::remove(port_file_);
    fs::remove(log_);
    const std::string data = testing_support::test_data_dir() + "/llm/";
    util::ProcessSpec spec;
    spec.argv = {"python3", data + "mock_endpoint.py", "--script", data + script, "--port-file", port_file_.string(),
                 "--log", log_.string(), "--max-seconds", "60", "--max-requests", "200"};
    spec.timeout_s = 90;
    server_ = std::thread([this, spec] { result_ = util::run_process(spec); });
    for (int i = 0; i < 200 && !fs::exists(port_file_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto port = util::read_file(port_file_);
    if (port.ok()) url_ = "http://127.0.0.1:" + port.value() + "/v1";
  }
  ~MockEndpoint() { stop(); }
  void stop() {
    if (!server_.joinable()) return;
    if (!url_.empty()) {
      if (auto http = util::curl_client(); http.ok()) {
        util::HttpRequest req;
        req.url = url_.substr(0, url_.size() - 3) + "/shutdown";
        req.timeout_s = 5;
        (*http)->send(req);
      }
    }
    server_.join();
  }
  bool ok() const { return !url_.empty(); }
  const std::string& url() const { return url_; }
  std::string server_output() const { return result_.stdout_text + result_.stderr_text; }
  // The requests the server answered, one JSON object each (see mock_endpoint.py).
  std::vector<util::Json> requests() const {
    std::vector<util::Json> out;
    auto text = util::read_file(log_);
    if (!text.ok()) return out;
    size_t start = 0;
    while (start < text->size()) {
      size_t end = text->find('\n', start);
      if (end == std::string::npos) end = text->size();
      if (end > start) out.push_back(util::Json::parse(text->substr(start, end - start)));
      start = end + 1;
    }
    return out;
  }

 private:
  std::filesystem::path port_file_, log_;
  std::string url_;
  std::thread server_;
  util::ProcessResult result_;
};

// Every file under `dir` whose bytes contain `needle` (to prove a key was never written).
inline std::vector<std::string> files_containing(const std::filesystem::path& dir, const std::string& needle) {
  std::vector<std::string> hits;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    auto text = util::read_file(it->path());
    if (text.ok() && text->find(needle) != std::string::npos) hits.push_back(it->path().string());
  }
  return hits;
}

}  // namespace kopt::search::testing
