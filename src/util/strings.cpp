#include "util/strings.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kopt::util {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    std::string part(s.substr(start, end - start));
    if (!skip_empty || !part.empty()) out.push_back(std::move(part));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> lines = split(s, '\n', false);
  for (auto& l : lines)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''"; else out += c;
  }
  return out + "'";
}

bool is_off_word(std::string_view s) {
  std::string w = trim(s);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return w == "off" || w == "0" || w == "no" || w == "false";
}

std::vector<std::string> kopt_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e)
    if (std::string_view(*e).starts_with("KOPT_")) out.emplace_back(*e);
  std::sort(out.begin(), out.end());
  return out;
}

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && is_off_word(v);
}

}  // namespace kopt::util
