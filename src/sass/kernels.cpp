#include "sass/kernels.h"

#include <algorithm>
#include <cctype>

#include "sass/demangle.h"

namespace kopt::sass {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces comments, string/char literals and preprocessor lines with spaces (newlines kept).
std::string code_only(std::string_view s) {
  std::string out(s);
  size_t i = 0;
  bool line_start = true;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < s.size()) {
    char c = s[i];
    if (line_start && c == '#') {  // a directive, with backslash continuations
      size_t j = i;
      while (j < s.size() && !(s[j] == '\n' && (j == 0 || s[j - 1] != '\\'))) ++j;
      blank(i, j);
      i = j;
      continue;
    }
    if (c == '\n') line_start = true;
    else if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      size_t j = s.find('\n', i);
      if (j == std::string_view::npos) j = s.size();
      blank(i, j);
      i = j;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t j = s.find("*/", i + 2);
      j = j == std::string_view::npos ? s.size() : j + 2;
      blank(i, j);
      i = j;
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(s[i - 1]))))) {
      // (a quote after a digit or letter is a digit separator, 1'000, not a character literal)
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      blank(i, j + 1);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool is_attribute_keyword(std::string_view w) {
  return w == "__launch_bounds__" || w == "__cluster_dims__" || w == "__maxnreg__" || w == "__attribute__" ||
         w == "alignas" || w == "__declspec";
}

}  // namespace

std::vector<std::string> global_function_names(std::string_view source_text) {
  std::string code = code_only(source_text);
  std::vector<std::string> names;
  constexpr std::string_view kGlobal = "__global__";
  size_t pos = 0;
  while ((pos = code.find(kGlobal, pos)) != std::string::npos) {
    bool word = (pos == 0 || !ident_char(code[pos - 1])) &&
                (pos + kGlobal.size() >= code.size() || !ident_char(code[pos + kGlobal.size()]));
    size_t i = pos + kGlobal.size();
    pos = i;
    if (!word) continue;
    std::string last;
    while (i < code.size()) {
      char c = code[i];
      if (ident_start(c)) {
        size_t j = i;
        while (j < code.size() && ident_char(code[j])) ++j;
        last = code.substr(i, j - i);
        i = j;
      } else if (c == '(') {
        if (is_attribute_keyword(last)) {  // skip the balanced argument list
          int depth = 0;
          do {
            if (code[i] == '(') ++depth;
            else if (code[i] == ')') --depth;
            ++i;
          } while (i < code.size() && depth > 0);
          last.clear();
          continue;
        }
        if (!last.empty() && std::find(names.begin(), names.end(), last) == names.end()) names.push_back(last);
        break;
      } else if (c == ';' || c == '{' || c == '}') {
        break;
      } else {
        ++i;
      }
    }
  }
  return names;
}

Selection select_functions(const std::vector<SassFunction>& all, const std::vector<std::string>& wanted,
                           const std::string& arch) {
  Selection sel;
  std::vector<bool> used(wanted.size(), false);
  for (const auto& f : all) {
    if (!arch.empty() && f.arch != arch) continue;
    std::string q = qualified_name(f.demangled), b = base_name(f.demangled);
    bool take = false;
    for (size_t k = 0; k < wanted.size(); ++k) {
      const std::string& w = wanted[k];
      bool prefix = w.size() > 1 && w.back() == '*' && q.compare(0, w.size() - 1, w, 0, w.size() - 1) == 0;
      if (w == f.mangled || w == q || w == b || prefix) {
        used[k] = true;
        take = true;
      }
    }
    if (take) sel.functions.push_back(&f);
  }
  for (size_t k = 0; k < wanted.size(); ++k)
    if (!used[k]) sel.unmatched.push_back(wanted[k]);
  return sel;
}

}  // namespace kopt::sass
