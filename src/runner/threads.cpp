#include "runner/threads.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace kopt::runner {

std::set<long> live_threads() {
  std::set<long> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    char* stop = nullptr;
    long tid = std::strtol(name.c_str(), &stop, 10);
    if (stop && *stop == '\0' && tid > 0) out.insert(tid);
  }
  return out;
}

std::vector<long> started_since(const std::set<long>& before, const std::set<long>& now) {
  std::vector<long> out;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(), std::back_inserter(out));
  return out;
}

std::vector<long> still_running(const std::vector<long>& tids, double settle_ms) {
  if (tids.empty()) return {};
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(settle_ms);
  std::vector<long> alive;
  while (true) {
    const auto now = live_threads();
    alive.clear();
    for (long t : tids)
      if (now.count(t)) alive.push_back(t);
    if (alive.empty() || std::chrono::steady_clock::now() >= until) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string describe_threads(const std::vector<long>& tids) {
  std::string out = std::to_string(tids.size()) + " thread(s): ";
  for (size_t i = 0; i < tids.size(); ++i) {
    std::ifstream f("/proc/self/task/" + std::to_string(tids[i]) + "/comm");
    std::string name;
    std::getline(f, name);
    if (i) out += ", ";
    out += std::to_string(tids[i]) + (name.empty() ? "" : " (" + name + ")");
  }
  return out;
}

}  // namespace kopt::runner
