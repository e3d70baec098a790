#include "sass/pattern.h"

#include <cctype>

#include "util/strings.h"

namespace kopt::sass {

namespace {
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

Result<Pattern> parse_pattern(std::string_view text) {
  Pattern p;
  p.text = std::string(text);
  auto parts = util::split(text, '.', /*skip_empty=*/false);
  if (text.empty() || parts.empty()) return input_error("empty SASS pattern");
  for (const auto& part : parts) {
    if (part.empty()) return input_error("SASS pattern '" + p.text + "' has an empty part (two dots, or a dot at an end)");
    for (char c : part)
      if (!word_char(c))
        return input_error("SASS pattern '" + p.text + "' may hold only letters, digits, '_' and '.'; found '" +
                           std::string(1, c) + "'");
  }
  for (char c : parts[0])
    if (std::islower(static_cast<unsigned char>(c)))
      return input_error("SASS pattern '" + p.text + "': opcodes are upper case (e.g. LDG.E.128)");
  p.opcode = parts[0];
  p.modifiers.assign(parts.begin() + 1, parts.end());
  return p;
}

bool matches(const Pattern& pattern, std::string_view token) {
  auto dot = token.find('.');
  if (token.substr(0, dot) != pattern.opcode) return false;
  size_t want = 0;
  while (dot != std::string_view::npos && want < pattern.modifiers.size()) {
    auto next = token.find('.', dot + 1);
    auto mod = token.substr(dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1);
    if (mod == pattern.modifiers[want]) ++want;
    dot = next;
  }
  return want == pattern.modifiers.size();
}

}  // namespace kopt::sass
