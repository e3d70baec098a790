#include "sass/listing.h"

#include <cctype>

#include "sass/demangle.h"
#include "util/strings.h"

namespace kopt::sass {

namespace {

// Splits "R4, desc[UR4][R2.64], c[0x0][0x28]" at commas outside brackets/braces.
std::vector<std::string> split_operands(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    char c = i < s.size() ? s[i] : ',';
    if (c == '[' || c == '{' || c == '(') ++depth;
    if ((c == ']' || c == '}' || c == ')') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      std::string op = util::trim(s.substr(start, i - start));
      if (!op.empty()) out.push_back(op);
      start = i + 1;
    }
  }
  return out;
}

std::string_view after_prefix(std::string_view line, std::string_view key) {
  auto pos = line.find(key);
  if (pos == std::string_view::npos) return {};
  return line.substr(pos + key.size());
}

}  // namespace

std::optional<Instruction> parse_instruction_line(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  if (line.substr(i, 2) != "/*") return std::nullopt;
  i += 2;
  size_t hex_begin = i;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == hex_begin || line.substr(i, 2) != "*/") return std::nullopt;  // "/* 0x000f... */" lines stop here
  Instruction ins;
  ins.address = std::stoull(std::string(line.substr(hex_begin, i - hex_begin)), nullptr, 16);
  std::string_view rest = line.substr(i + 2);
  // The encoding comment follows the instruction; the instruction ends at ';'.
  if (auto enc = rest.find("/*"); enc != std::string_view::npos) rest = rest.substr(0, enc);
  if (auto semi = rest.find(';'); semi != std::string_view::npos) rest = rest.substr(0, semi);
  std::string body = util::trim(rest);
  // Older archs print dual-issue pairs in braces: "{ IADD ... ;" / "  FMUL ... }".
  if (!body.empty() && body.front() == '{') body = util::trim(std::string_view(body).substr(1));
  if (!body.empty() && body.back() == '}') body = util::trim(std::string_view(body).substr(0, body.size() - 1));
  if (body.empty()) return std::nullopt;
  ins.text = body;
  std::string_view b = body;
  if (b.front() == '@') {
    size_t sp = b.find_first_of(" \t");
    if (sp == std::string_view::npos) return std::nullopt;
    ins.predicate = std::string(b.substr(0, sp));
    b = b.substr(sp);
    while (!b.empty() && std::isspace(static_cast<unsigned char>(b.front()))) b.remove_prefix(1);
  }
  size_t sp = b.find_first_of(" \t");
  ins.opcode = std::string(b.substr(0, sp));
  if (ins.opcode.empty()) return std::nullopt;
  if (sp != std::string_view::npos) ins.operands = split_operands(b.substr(sp));
  return ins;
}

std::vector<SassFunction> parse_sass_listing(std::string_view text) {
  std::vector<SassFunction> out;
  std::string arch;
  SassFunction* current = nullptr;
  for (const auto& raw : util::split_lines(text)) {
    std::string_view line = raw;
    std::string t = util::trim(line);
    if (util::starts_with(t, "arch = ")) {
      arch = util::trim(after_prefix(t, "arch = "));
      current = nullptr;
    } else if (util::starts_with(t, "code for ")) {
      arch = util::trim(after_prefix(t, "code for "));
      current = nullptr;
    } else if (util::starts_with(t, "Function :")) {
      SassFunction f;
      f.arch = arch;
      f.mangled = util::trim(after_prefix(t, "Function :"));
      f.demangled = demangle(f.mangled);
      out.push_back(std::move(f));
      current = &out.back();
    } else if (util::starts_with(t, "Fatbin ")) {
      current = nullptr;
    } else if (current) {
      if (auto ins = parse_instruction_line(line)) current->instructions.push_back(std::move(*ins));
    }
  }
  return out;
}

}  // namespace kopt::sass
