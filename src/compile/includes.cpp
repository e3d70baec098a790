#include "compile/includes.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::compile {

namespace fs = std::filesystem;

namespace {

// Removes /* */ and // comments (keeps line structure); string literals are left alone, which is enough
// for directive lines.
std::string strip_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t j = s.find("*/", i + 2);
      j = j == std::string_view::npos ? s.size() : j + 2;
      for (size_t k = i; k < j; ++k)
        if (s[k] == '\n') out += '\n';
      out += ' ';
      i = j;
    } else if (s[i] == '"') {  // copy a string literal whole so "//" inside it survives
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, s.size());
      out.append(s.substr(i, j - i));
      i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}

fs::path normal(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a).lexically_normal();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> out;
  for (const auto& raw : util::split_lines(strip_comments(text))) {
    std::string line = util::trim(raw);
    if (line.empty() || line[0] != '#') continue;
    std::string_view rest = std::string_view(line).substr(1);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    if (!util::starts_with(rest, "include")) continue;
    rest.remove_prefix(7);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    if (rest.empty()) continue;
    char open = rest.front(), close = open == '"' ? '"' : open == '<' ? '>' : 0;
    if (!close) continue;  // #include MACRO
    auto end = rest.find(close, 1);
    if (end == std::string_view::npos || end == 1) continue;
    out.push_back({std::string(rest.substr(1, end - 1)), open == '<'});
  }
  return out;
}

Result<std::vector<LocalHeader>> collect_local_headers(const fs::path& source,
                                                       const std::vector<std::string>& include_dirs,
                                                       size_t max_headers) {
  const fs::path src = normal(source);
  const fs::path src_dir = src.parent_path();
  std::vector<fs::path> dirs;
  for (const auto& d : include_dirs) dirs.push_back(normal(d));

  std::map<fs::path, std::string> found;
  std::set<fs::path> visited = {src};
  std::vector<std::pair<fs::path, std::string>> todo;
  KOPT_TRY_ASSIGN(std::string src_text, util::read_file(src));
  todo.emplace_back(src, std::move(src_text));
  while (!todo.empty()) {
    auto [file, text] = std::move(todo.back());
    todo.pop_back();
    for (const auto& inc : include_directives(text)) {
      std::vector<fs::path> cands;
      if (inc.angle) {
        cands.push_back(src_dir / inc.name);
      } else {
        cands.push_back(file.parent_path() / inc.name);
        cands.push_back(src_dir / inc.name);
        for (const auto& d : dirs) cands.push_back(d / inc.name);
      }
      for (const auto& c : cands) {
        fs::path p = c.lexically_normal();
        if (!is_file(p)) continue;
        if (visited.insert(p).second) {
          if (found.size() >= max_headers)
            return input_error("more than " + std::to_string(max_headers) + " local headers under " +
                               source.string() + "; is an include directory too broad?");
          KOPT_TRY_ASSIGN(std::string h, util::read_file(p));
          found[p] = h;
          todo.emplace_back(p, std::move(h));
        }
        break;  // the first candidate that exists is the one the preprocessor takes
      }
    }
  }
  std::vector<LocalHeader> out;
  for (auto& [p, t] : found) out.push_back({p, std::move(t)});
  return out;
}

}  // namespace kopt::compile
