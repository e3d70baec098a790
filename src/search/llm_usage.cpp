#include "search/llm_usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace kopt::search {

namespace fs = std::filesystem;
using util::Json;

namespace {

const char* const kCounts[] = {"requests", "http_attempts", "retries", "repair_requests", "reused_requests",
                               "prompt_tokens", "completion_tokens", "requests_without_usage", "accepted",
                               "failed", "no_candidate", "repaired"};

}  // namespace

util::Json llm_usage_totals(const util::Json& usage) {
  Json t = Json::object();
  for (const char* k : kCounts) t[k] = int64_t{0};
  double wall_ms = 0;
  for (const auto& r : usage.value("requests", Json::array())) {
    // A reused request was made by an earlier, stopped run of the iteration, whose record this one replaced:
    // it was spent once and is counted once.
    if (r.value("reused", false)) t["reused_requests"] = t["reused_requests"].get<int64_t>() + 1;
    t["requests"] = t["requests"].get<int64_t>() + 1;
    t["http_attempts"] = t["http_attempts"].get<int64_t>() + r.value("http_attempts", int64_t{0});
    t["retries"] = t["retries"].get<int64_t>() + r.value("retries", int64_t{0});
    if (r.value("kind", std::string()) == "repair") t["repair_requests"] = t["repair_requests"].get<int64_t>() + 1;
    if (r.value("usage_reported", false)) {
      t["prompt_tokens"] = t["prompt_tokens"].get<int64_t>() + r.value("prompt_tokens", int64_t{0});
      t["completion_tokens"] = t["completion_tokens"].get<int64_t>() + r.value("completion_tokens", int64_t{0});
    } else {
      t["requests_without_usage"] = t["requests_without_usage"].get<int64_t>() + 1;
    }
    wall_ms += r.value("wall_ms", 0.0);
  }
  for (const auto& c : usage.value("conversations", Json::array())) {
    std::string st = c.value("status", std::string());
    if (st == "accepted" || st == "failed" || st == "no_candidate") t[st] = t[st].get<int64_t>() + 1;
    if (st == "accepted" && c.value("repairs", 0) > 0) t["repaired"] = t["repaired"].get<int64_t>() + 1;
  }
  t["request_wall_s"] = wall_ms / 1000;
  return t;
}

util::Json llm_usage_summary(const fs::path& run_dir) {
  static const std::regex kIter(R"(iter_(\d+))");
  std::vector<std::pair<int, fs::path>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    std::smatch m;
    std::string name = e.path().filename().string();
    if (std::regex_match(name, m, kIter) && fs::exists(e.path() / "llm_usage.json"))
      files.push_back({std::stoi(m[1].str()), e.path() / "llm_usage.json"});
  }
  if (files.empty()) return nullptr;
  std::sort(files.begin(), files.end());
  Json total = Json::object(), iterations = Json::array(), endpoint;
  for (const char* k : kCounts) total[k] = int64_t{0};
  total["request_wall_s"] = 0.0;
  total["generate_wall_s"] = 0.0;
  for (const auto& [it, path] : files) {
    auto j = util::read_json(path);
    if (!j) continue;
    Json t = llm_usage_totals(*j);
    t["generate_wall_s"] = (*j).value("totals", Json::object()).value("generate_wall_s", 0.0);
    for (const char* k : kCounts) total[k] = total[k].get<int64_t>() + t[k].get<int64_t>();
    total["request_wall_s"] = total["request_wall_s"].get<double>() + t["request_wall_s"].get<double>();
    total["generate_wall_s"] = total["generate_wall_s"].get<double>() + t["generate_wall_s"].get<double>();
    t["iteration"] = it;
    iterations.push_back(t);
    if (j->contains("endpoint")) endpoint = (*j)["endpoint"];
  }
  return {{"endpoint", endpoint}, {"totals", total}, {"iterations", iterations}};
}

std::string render_llm_usage_markdown(const util::Json& s) {
  if (s.is_null() || !s.contains("totals")) return "";
  const Json& t = s["totals"];
  auto n = [&](const char* k) { return t.value(k, int64_t{0}); };
  std::string md = "\n## Language model\n\n";
  if (s.contains("endpoint") && s["endpoint"].is_object())
    md += fmt::format("`{}` at {}\n\n", s["endpoint"].value("model", std::string()), s["endpoint"].value("url", std::string()));
  md += fmt::format("- requests: {} ({} HTTP attempts, {} retried), of which {} repair requests\n", n("requests"),
                    n("http_attempts"), n("retries"), n("repair_requests"));
  md += fmt::format("- candidates: {} accepted ({} after a repair), {} still failing after their repairs, {} without a "
                    "usable candidate\n",
                    n("accepted"), n("repaired"), n("failed"), n("no_candidate"));
  md += fmt::format("- tokens: {} in, {} out{}\n", n("prompt_tokens"), n("completion_tokens"),
                    n("requests_without_usage") ? fmt::format(" ({} replies reported none)", n("requests_without_usage")) : "");
  md += fmt::format("- wall time: {:.1f} s in requests, {:.1f} s generating in all\n", t.value("request_wall_s", 0.0),
                    t.value("generate_wall_s", 0.0));
  if (n("reused_requests"))
    md += fmt::format("- {} of the requests were made before a resume (their answers were reused)\n", n("reused_requests"));
  return md;
}

}  // namespace kopt::search
