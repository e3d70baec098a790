#include "contract/signature.h"

#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <algorithm>

#include "util/strings.h"

namespace kopt::contract {

std::string strip_comments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '"' || c == '\'') {  // string or char literal: copy verbatim
      char q = c;
      out += c;
      ++i;
      while (i < s.size() && s[i] != q) {
        if (s[i] == '\\' && i + 1 < s.size()) out += s[i++];
        out += s[i++];
      }
      if (i < s.size()) out += s[i++];
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      out += ' ';
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') out += '\n';
        ++i;
      }
      i += 2;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

namespace {

// Type words (with qualifiers removed) -> dtype.
const std::map<std::string, DType>& type_table() {
  static const std::map<std::string, DType> t = {
      {"float", DType::kF32},         {"double", DType::kF64},
      {"__half", DType::kF16},        {"half", DType::kF16},
      {"__nv_bfloat16", DType::kBF16}, {"nv_bfloat16", DType::kBF16},
      {"__bfloat16", DType::kBF16},   {"int8_t", DType::kI8},
      {"signed char", DType::kI8},    {"char", DType::kI8},
      {"uint8_t", DType::kU8},        {"unsigned char", DType::kU8},
      {"int16_t", DType::kI16},       {"short", DType::kI16},
      {"short int", DType::kI16},     {"signed short", DType::kI16},
      {"uint16_t", DType::kU16},      {"unsigned short", DType::kU16},
      {"unsigned short int", DType::kU16},
      {"int32_t", DType::kI32},       {"int", DType::kI32},
      {"signed", DType::kI32},        {"signed int", DType::kI32},
      {"uint32_t", DType::kU32},      {"unsigned", DType::kU32},
      {"unsigned int", DType::kU32},  {"int64_t", DType::kI64},
      {"long", DType::kI64},          {"long int", DType::kI64},
      {"long long", DType::kI64},     {"long long int", DType::kI64},
      {"signed long", DType::kI64},   {"ptrdiff_t", DType::kI64},
      {"uint64_t", DType::kU64},      {"unsigned long", DType::kU64},
      {"unsigned long int", DType::kU64}, {"unsigned long long", DType::kU64},
      {"unsigned long long int", DType::kU64}, {"size_t", DType::kU64},
      {"bool", DType::kBool},
  };
  return t;
}

bool is_scalar_type_allowed(DType t) {
  return t == DType::kI32 || t == DType::kI64 || t == DType::kU32 || t == DType::kU64 || t == DType::kF32 ||
         t == DType::kF64;
}

std::vector<std::string> tokenize(const std::string& s) {
  std::vector<std::string> toks;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == ':')) ++j;
      toks.push_back(s.substr(i, j - i));
      i = j;
    } else {
      toks.push_back(std::string(1, c));
      ++i;
    }
  }
  return toks;
}

Result<Param> parse_param(const std::string& text, const std::string& where) {
  auto toks = tokenize(text);
  Param p;
  int stars = 0;
  bool const_before_star = false;
  std::vector<std::string> type_words;
  std::string name;
  for (size_t i = 0; i < toks.size(); ++i) {
    const std::string& t = toks[i];
    if (t == "__restrict__" || t == "__restrict" || t == "restrict" || t == "volatile") continue;
    if (t == "const") {
      if (stars == 0) const_before_star = true;  // const T* / T const* ; T* const is a const pointer
      continue;
    }
    if (t == "*") {
      ++stars;
      continue;
    }
    if (t == "&") return input_error(where + ": parameter '" + util::trim(text) + "' is a reference; solve takes pointers and scalars");
    if (t == "[" || t == "]") return input_error(where + ": parameter '" + util::trim(text) + "': write arrays as pointers (T* name)");
    if (t == "=") return input_error(where + ": parameter '" + util::trim(text) + "' has a default value; remove it");
    bool last = (i + 1 == toks.size()) ||
                std::all_of(toks.begin() + static_cast<long>(i) + 1, toks.end(), [](const std::string& x) {
                  return x == "__restrict__" || x == "__restrict" || x == "restrict" || x == "const";
                });
    if (last && !type_words.empty()) {
      name = t;
    } else {
      std::string w = t;
      if (util::starts_with(w, "std::")) w = w.substr(5);
      if (w == "struct") continue;
      type_words.push_back(w);
    }
  }
  static const std::set<std::string> keywords = {"int", "float", "double", "char", "long", "short", "unsigned",
                                                 "signed", "bool", "void", "const", "half", "size_t"};
  if (name.empty() || !util::is_identifier(name) || keywords.count(name))
    return input_error(where + ": parameter '" + util::trim(text) + "' has no name; every solve parameter needs one");
  std::string type = util::join(type_words, " ");
  auto it = type_table().find(type);
  if (it == type_table().end())
    return input_error(where + ": parameter '" + name + "' has type '" + type +
                       "', which kopt does not understand (see docs/CONTRACT.md for the supported types)");
  p.name = name;
  p.dtype = it->second;
  if (stars > 1) return input_error(where + ": parameter '" + name + "' is a pointer to a pointer; pass device buffers as T*");
  if (stars == 1) {
    p.kind = ParamKind::kPointer;
    p.is_const = const_before_star;
    p.type_text = std::string(p.is_const ? "const " : "") + type + "*";
  } else {
    if (!is_scalar_type_allowed(p.dtype))
      return input_error(where + ": scalar parameter '" + name + "' has type '" + type +
                         "'; scalars may be int, long, size_t, unsigned, float or double");
    p.kind = ParamKind::kScalar;
    p.type_text = type;
  }
  return p;
}

int line_of(const std::string& s, size_t pos) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(pos), '\n'));
}

// Is position `pos` inside an `extern "C" { ... }` block?
bool inside_extern_c_block(const std::string& s, size_t pos) {
  static const std::regex block(R"(extern\s+"C"\s*\{)");
  for (auto it = std::sregex_iterator(s.begin(), s.begin() + static_cast<long>(pos), block); it != std::sregex_iterator(); ++it) {
    size_t start = static_cast<size_t>(it->position() + it->length());
    int depth = 1;
    size_t i = start;
    for (; i < pos && depth > 0; ++i) {
      if (s[i] == '{') ++depth;
      if (s[i] == '}') --depth;
    }
    if (depth > 0) return true;
  }
  return false;
}

}  // namespace

Result<KernelSignature> parse_solve_signature(const std::string& source, const std::string& filename) {
  std::string s = strip_comments(source);
  static const std::regex solve_re(R"(\bvoid\s+solve\s*\()");
  std::smatch m;
  if (!std::regex_search(s, m, solve_re))
    return input_error(filename + ": no `extern \"C\" void solve(...)` found; kopt calls the kernel through it");
  size_t pos = static_cast<size_t>(m.position());
  int line = line_of(s, pos);
  std::string where = filename + ":" + std::to_string(line);
  // extern "C" right before (possibly with __host__ / attributes), or an enclosing extern "C" block.
  std::string before = s.substr(pos > 200 ? pos - 200 : 0, pos > 200 ? 200 : pos);
  static const std::regex extern_re(R"(extern\s+"C"\s*(__host__\s+|__attribute__\s*\(\([^)]*\)\)\s*|inline\s+)*$)");
  if (!std::regex_search(before, extern_re) && !inside_extern_c_block(s, pos))
    return input_error(where + ": solve must be declared extern \"C\" (write: extern \"C\" void solve(...))");
  size_t open = static_cast<size_t>(m.position() + m.length());
  int depth = 1;
  size_t i = open;
  for (; i < s.size() && depth > 0; ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
  }
  if (depth != 0) return input_error(where + ": unbalanced parentheses in solve's parameter list");
  std::string params_text = s.substr(open, i - 1 - open);
  KernelSignature sig;
  sig.line = line;
  std::vector<std::string> parts;
  {
    int d = 0;
    std::string cur;
    for (char c : params_text) {
      if (c == '(' || c == '<') ++d;
      if (c == ')' || c == '>') --d;
      if (c == ',' && d == 0) {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!util::trim(cur).empty() || !parts.empty()) parts.push_back(cur);
  }
  if (parts.size() == 1 && (util::trim(parts[0]) == "void" || util::trim(parts[0]).empty())) parts.clear();
  std::vector<std::string> rendered;
  for (const auto& part : parts) {
    KOPT_TRY_ASSIGN(Param p, parse_param(part, where));
    for (const auto& q : sig.params)
      if (q.name == p.name) return input_error(where + ": parameter name '" + p.name + "' appears twice");
    rendered.push_back(p.type_text + " " + p.name);
    sig.params.push_back(std::move(p));
  }
  if (sig.params.empty()) return input_error(where + ": solve has no parameters; it must take its buffers");
  sig.normalised = "void solve(" + util::join(rendered, ", ") + ")";
  return sig;
}

util::Json to_json(const KernelSignature& sig) {
  util::Json params = util::Json::array();
  for (const auto& p : sig.params)
    params.push_back({{"name", p.name},
                      {"kind", p.kind == ParamKind::kPointer ? "pointer" : "scalar"},
                      {"dtype", dtype_name(p.dtype)},
                      {"const", p.is_const},
                      {"type", p.type_text}});
  return {{"params", params}, {"normalised", sig.normalised}, {"line", sig.line}};
}

Result<KernelSignature> signature_from_json(const util::Json& j) {
  KernelSignature sig;
  try {
    for (const auto& pj : j.at("params")) {
      Param p;
      p.name = pj.at("name").get<std::string>();
      p.kind = pj.at("kind").get<std::string>() == "pointer" ? ParamKind::kPointer : ParamKind::kScalar;
      auto dt = parse_dtype(pj.at("dtype").get<std::string>());
      if (!dt) return input_error("signature: unknown dtype for " + p.name);
      p.dtype = *dt;
      p.is_const = pj.value("const", false);
      p.type_text = pj.value("type", std::string());
      sig.params.push_back(p);
    }
    sig.normalised = j.value("normalised", std::string());
    sig.line = j.value("line", 0);
  } catch (const std::exception& e) {
    return input_error(std::string("bad signature JSON: ") + e.what());
  }
  return sig;
}

}  // namespace kopt::contract
