#include "search/source_scan.h"

#include <cctype>
#include <regex>
#include <vector>

#include "util/strings.h"

namespace kopt::search {

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool contains_word(std::string_view line, std::string_view word) {
  size_t pos = 0;
  while ((pos = line.find(word, pos)) != std::string_view::npos) {
    bool left = pos == 0 || !is_word_char(line[pos - 1]);
    size_t end = pos + word.size();
    bool right = end >= line.size() || !is_word_char(line[end]);
    if (left && right) return true;
    pos = end;
  }
  return false;
}

// Collapses whitespace and drops it around punctuation, so formatting differences do not matter.
std::string normalise(std::string_view s) {
  std::string collapsed;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !collapsed.empty()) collapsed += ' ';
    space = false;
    collapsed += c;
  }
  static const std::string kPunct = "(),*&[]=:";
  std::string out;
  for (size_t i = 0; i < collapsed.size(); ++i) {
    char c = collapsed[i];
    if (c == ' ') {
      char prev = out.empty() ? ' ' : out.back();
      char next = i + 1 < collapsed.size() ? collapsed[i + 1] : ' ';
      if (kPunct.find(prev) != std::string::npos || kPunct.find(next) != std::string::npos) continue;
    }
    out += c;
  }
  return out;
}

// From `open` (the index of a '('), the text through the matching ')'; empty when unbalanced.
std::string balanced_parens(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return std::string(s.substr(open, i - open + 1));
  }
  return "";
}

std::optional<std::string> python_def(const std::string& code, const std::string& name) {
  std::regex re("(^|\\n)[ \\t]*def[ \\t]+" + name + "[ \\t]*\\(");
  std::smatch m;
  if (!std::regex_search(code, m, re)) return std::nullopt;
  size_t open = static_cast<size_t>(m.position(0) + m.length(0) - 1);
  std::string params = balanced_parens(code, open);
  if (params.empty()) return std::nullopt;
  return normalise(name + params);
}

}  // namespace

SourceLanguage language_of(std::string_view file_name) {
  return file_name.size() >= 3 && file_name.substr(file_name.size() - 3) == ".py" ? SourceLanguage::kPython
                                                                                   : SourceLanguage::kCuda;
}

std::string strip_comments(std::string_view t, SourceLanguage lang) {
  std::string out;
  out.reserve(t.size());
  size_t i = 0;
  auto copy_string = [&](std::string_view quote) {
    out.append(quote);
    i += quote.size();
    while (i < t.size()) {
      if (t.compare(i, quote.size(), quote) == 0) {
        out.append(quote);
        i += quote.size();
        return;
      }
      if (t[i] == '\\' && i + 1 < t.size()) {
        out += t[i];
        out += t[i + 1];
        i += 2;
        continue;
      }
      if (t[i] == '\n' && quote.size() == 1) return;  // unterminated single-line literal
      out += t[i++];
    }
  };
  while (i < t.size()) {
    char c = t[i];
    if (lang == SourceLanguage::kCuda) {
      if (t.compare(i, 2, "//") == 0) {
        while (i < t.size() && t[i] != '\n') ++i;
        continue;
      }
      if (t.compare(i, 2, "/*") == 0) {
        size_t end = t.find("*/", i + 2);
        size_t stop = end == std::string_view::npos ? t.size() : end + 2;
        for (size_t k = i; k < stop; ++k)
          if (t[k] == '\n') out += '\n';
        out += ' ';
        i = stop;
        continue;
      }
      if (c == '"' || c == '\'') {
        copy_string(std::string_view(&t[i], 1));
        continue;
      }
    } else {
      if (c == '#') {
        while (i < t.size() && t[i] != '\n') ++i;
        continue;
      }
      if (t.compare(i, 3, "\"\"\"") == 0 || t.compare(i, 3, "'''") == 0) {
        copy_string(t.substr(i, 3));
        continue;
      }
      if (c == '"' || c == '\'') {
        copy_string(std::string_view(&t[i], 1));
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

std::optional<std::string> extract_entry_signature(std::string_view text, SourceLanguage lang) {
  std::string code = strip_comments(text, lang);
  if (lang == SourceLanguage::kPython) {
    auto setup = python_def(code, "setup");
    auto run = python_def(code, "run_kernel");
    if (!run) return std::nullopt;
    return setup ? *setup + "; " + *run : *run;
  }
  // extern "C" [{] <return type and qualifiers> solve (
  static const std::regex re("extern\\s*\"C\"\\s*(\\{\\s*)?([A-Za-z_][A-Za-z0-9_\\s\\*]*?)\\bsolve\\s*\\(");
  std::smatch m;
  if (!std::regex_search(code, m, re)) return std::nullopt;
  size_t open = static_cast<size_t>(m.position(0) + m.length(0) - 1);
  std::string params = balanced_parens(code, open);
  if (params.empty()) return std::nullopt;
  return normalise(m[2].str() + " solve" + params);
}

bool guard_in_conditional(std::string_view text, std::string_view guard, SourceLanguage lang) {
  std::string code = strip_comments(text, lang);
  for (const auto& raw : util::split_lines(code)) {
    std::string line = util::trim(raw);
    if (!contains_word(line, guard)) continue;
    if (lang == SourceLanguage::kCuda) {
      if (line.empty() || line[0] != '#') continue;
      std::string directive = util::trim(std::string_view(line).substr(1));
      for (const char* d : {"if", "ifdef", "ifndef", "elif"}) {
        std::string_view dv(d);
        if (util::starts_with(directive, dv) &&
            (directive.size() == dv.size() || !is_word_char(directive[dv.size()])))
          return true;
      }
    } else {
      if (contains_word(line, "if") || contains_word(line, "elif")) return true;
    }
  }
  return false;
}

}  // namespace kopt::search
