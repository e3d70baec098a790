#include "search/derive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "search/expr.h"
#include "util/strings.h"

namespace kopt::search {

namespace {

constexpr size_t npos = std::string::npos;

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string upper(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// A decimal number of at most 12 digits (never throws); -1 otherwise.
int64_t small_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 12) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoll(digits);
}

// A plain decimal literal, optionally with an integer suffix (returned in `suffix`).
std::optional<int64_t> int_literal(std::string_view s, std::string* suffix = nullptr) {
  std::string t = util::trim(s);
  while (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = util::trim(t.substr(1, t.size() - 2));
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0 || i > 12) return std::nullopt;
  std::string suf = t.substr(i);
  for (char c : suf)
    if (c != 'u' && c != 'U' && c != 'l' && c != 'L') return std::nullopt;
  if (suffix) *suffix = suf;
  return std::stoll(t.substr(0, i));
}

// Positions of `word` as a whole word in `s`.
std::vector<size_t> word_positions(std::string_view s, std::string_view word) {
  std::vector<size_t> out;
  size_t p = 0;
  while ((p = s.find(word, p)) != npos) {
    size_t e = p + word.size();
    if ((p == 0 || !word_char(s[p - 1])) && (e >= s.size() || !word_char(s[e]))) out.push_back(p);
    p = e;
  }
  return out;
}

// Index of the bracket closing the one at `open`, npos when unbalanced.
size_t match_close(std::string_view s, size_t open) {
  char o = s[open];
  char c = o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : '>';
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    else if (s[i] == c && --depth == 0) return i;
  }
  return npos;
}

struct Range {
  size_t begin = 0, end = 0;  // [begin, end), trimmed
};

// Top-level comma-separated pieces of s[begin, end), trimmed.
std::vector<Range> split_args(std::string_view s, size_t begin, size_t end) {
  std::vector<Range> out;
  int depth = 0;
  size_t start = begin;
  auto push = [&](size_t b, size_t e) {
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    out.push_back({b, e});
  };
  for (size_t i = begin; i < end; ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) {
      push(start, i);
      start = i + 1;
    }
  }
  if (end > begin) push(start, end);
  return out;
}

std::string sv(std::string_view s, Range r) { return std::string(s.substr(r.begin, r.end - r.begin)); }

struct Edit {
  size_t pos = 0, len = 0;
  std::string text;
};

std::string apply_edits(std::string text, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
  size_t limit = npos;
  for (const auto& e : edits) {
    if (e.pos + e.len > limit) continue;  // overlapping: the later edit wins (never expected)
    text.replace(e.pos, e.len, e.text);
    limit = e.pos;
  }
  return text;
}

std::vector<int64_t> sorted_unique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<int64_t> values_for(ValueRole role, int64_t d) {
  std::vector<int64_t> v{d};
  switch (role) {
    case ValueRole::kBlockThreads:
      for (int64_t p = 32; p <= kMaxThreadsPerBlock; p *= 2)
        if (p * 4 >= d && p <= d * 4) v.push_back(p);
      break;
    case ValueRole::kTile:
      if (d % 2 == 0) v.push_back(d / 2);
      v.push_back(2 * d);
      break;
    case ValueRole::kUnroll: v.insert(v.end(), {1, 2, 4, 8}); break;
    case ValueRole::kMinBlocks: v.insert(v.end(), {1, 2, 4}); break;
    case ValueRole::kMaxThreads:
      for (int64_t p = 2 * d; p <= kMaxThreadsPerBlock && p <= 4 * d; p *= 2) v.push_back(p);
      break;
    case ValueRole::kNumWarps: v.insert(v.end(), {2, 4, 8, 16}); break;
    case ValueRole::kNumStages: v.insert(v.end(), {1, 2, 3, 4}); break;
    case ValueRole::kListed: break;
  }
  return sorted_unique(v);
}

// Common ground of the CUDA and Triton derivations: the text, its masked copy, lines, names.
struct Source {
  std::string_view text;
  std::string masked;
  std::vector<size_t> line_starts;
  std::set<std::string> identifiers;  // every identifier of the (masked) source
  std::set<std::string> taken;        // names generated so far

  Source(std::string_view t, SourceLanguage lang) : text(t), masked(mask_code(t, lang)) {
    line_starts.push_back(0);
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == '\n') line_starts.push_back(i + 1);
    for (size_t i = 0; i < masked.size();) {
      if (word_char(masked[i]) && !std::isdigit(static_cast<unsigned char>(masked[i]))) {
        size_t e = i;
        while (e < masked.size() && word_char(masked[e])) ++e;
        identifiers.insert(masked.substr(i, e - i));
        i = e;
      } else if (word_char(masked[i])) {
        while (i < masked.size() && word_char(masked[i])) ++i;
      } else {
        ++i;
      }
    }
  }
  int line_of(size_t pos) const {
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), pos) - line_starts.begin());
  }
  size_t line_start(size_t pos) const { return line_starts[static_cast<size_t>(line_of(pos) - 1)]; }
  size_t line_end(size_t pos) const {
    size_t e = masked.find('\n', pos);
    return e == npos ? masked.size() : e;
  }
  // A name free in the source and not generated yet; never KOPT_* (reserved for method guards).
  std::string unique_name(std::string base) {
    if (util::starts_with(base, "KOPT_")) base = "P_" + base;
    std::string n = base;
    for (int k = 2; identifiers.count(n) || taken.count(n); ++k) n = fmt::format("{}_{}", base, k);
    taken.insert(n);
    return n;
  }
};

std::string format_values(const std::vector<int64_t>& v) {
  std::vector<std::string> s;
  for (auto x : v) s.push_back(std::to_string(x));
  return util::join(s, ",");
}

// ---------------------------------------------------------------------------------------------------------
// CUDA

struct Launch {
  std::string kernel;
  size_t pos = 0;                  // the identifier of the kernel
  std::optional<Range> targs;      // the template argument list's inside
  std::vector<Range> targ_list;
  std::vector<Range> cfg;          // <<< args >>>
  std::vector<Range> grid_defs, block_defs;  // statements of the function defining variables the grid / block use
  int line = 0;
};

struct Constant {
  std::string name;
  bool is_const = false, is_static = false, member = false;
  int64_t value = 0;
  Range init;
  size_t name_pos = 0;
  int line = 0;
};

struct Use {
  std::string what;  // "block size of the launch of k at line 9"
  bool block = false;
  bool unroll_only = false;
  std::string kernel;  // the kernel launched, for a block use
};

class CudaDeriver {
 public:
  CudaDeriver(std::string_view text, std::string file) : s_(text, SourceLanguage::kCuda), file_(std::move(file)) {}

  Derivation run() {
    d_.file = file_;
    d_.language = SourceLanguage::kCuda;
    scan_preprocessor();
    scan_launches();
    scan_templates();
    scan_constants();
    derive_defines();
    derive_constants();
    derive_launch_literals();
    derive_launch_bounds();
    derive_pragma_unroll();
    derive_static_asserts();
    derive_thread_limits();
    derive_shared_memory();
    derive_launch_bounds_method();
    return std::move(d_);
  }

  const std::vector<Edit>& edits() const { return edits_; }
  const std::vector<std::string>& prelude() const { return prelude_; }
  const std::vector<std::string>& postlude() const { return postlude_; }

 private:
  std::string at(size_t pos) const { return fmt::format("line {}", s_.line_of(pos)); }

  void scan_preprocessor() {
    static const std::regex def(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\(?)[ \t]*(.*)$)");
    static const std::regex undef(R"(^[ \t]*#[ \t]*undef[ \t]+([A-Za-z_]\w*))");
    static const std::regex ifndef(R"(^[ \t]*#[ \t]*ifndef[ \t]+([A-Za-z_]\w*)[ \t]*$)");
    std::string prev_ifndef;
    for (size_t ls : s_.line_starts) {
      size_t le = s_.line_end(ls);
      std::string line = s_.masked.substr(ls, le - ls);
      std::smatch m;
      if (std::regex_search(line, m, def)) {
        std::string name = m[1];
        defines_[name].push_back(ls);
        if (m[2].length() == 0) {
          if (auto v = int_literal(m[3].str())) define_value_[name] = *v;
        }
        if (prev_ifndef == name) guarded_.insert(name);
      } else if (std::regex_search(line, m, undef)) {
        undefs_[m[1]].push_back(ls);
      }
      if (std::regex_search(line, m, ifndef)) prev_ifndef = m[1];
      else if (!util::trim(line).empty()) prev_ifndef.clear();
    }
  }

  void scan_launches() {
    const std::string& m = s_.masked;
    size_t p = 0;
    while ((p = m.find("<<<", p)) != npos) {
      size_t close = m.find(">>>", p + 3);
      if (close == npos) break;
      Launch l;
      l.cfg = split_args(m, p + 3, close);
      l.line = s_.line_of(p);
      size_t q = p;
      while (q > 0 && std::isspace(static_cast<unsigned char>(m[q - 1]))) --q;
      if (q > 0 && m[q - 1] == '>') {  // template arguments: find the matching '<' backwards
        int depth = 0;
        size_t k = q - 1;
        for (;; --k) {
          if (m[k] == '>') ++depth;
          else if (m[k] == '<' && --depth == 0) break;
          if (k == 0) break;
        }
        if (m[k] == '<') {
          l.targs = Range{k + 1, q - 1};
          l.targ_list = split_args(m, k + 1, q - 1);
          q = k;
          while (q > 0 && std::isspace(static_cast<unsigned char>(m[q - 1]))) --q;
        }
      }
      size_t e = q;
      while (q > 0 && word_char(m[q - 1])) --q;
      l.kernel = m.substr(q, e - q);
      l.pos = q;
      if (!l.kernel.empty() && l.cfg.size() >= 2) {
        l.grid_defs = defining_statements(l.cfg[0], l.pos);
        l.block_defs = defining_statements(l.cfg[1], l.pos);
        launches_.push_back(l);
      }
      p = close + 3;
    }
  }

  // The outermost brace enclosing `pos` (the function's body), 0 at namespace scope.
  size_t function_start(size_t pos) const {
    const std::string& m = s_.masked;
    int depth = 0, lowest = 0;
    size_t at = 0;
    for (size_t k = pos; k-- > 0;) {
      if (m[k] == '}') ++depth;
      else if (m[k] == '{' && --depth < lowest) lowest = depth, at = k;
    }
    return at;
  }

  // Every statement between the start of the function and `before` that assigns or declares a variable named
  // in `arg` (`int blocks = ...;`, `dim3 grid(...);`, `if (blocks > 8) blocks = 8;`): the text after the name.
  std::vector<Range> defining_statements(Range arg, size_t before) const {
    const std::string& m = s_.masked;
    std::vector<Range> out;
    size_t from = function_start(before);
    std::string a = sv(m, arg);
    static const std::regex ident(R"([A-Za-z_]\w*)");
    std::set<std::string> vars;
    for (auto it = std::sregex_iterator(a.begin(), a.end(), ident); it != std::sregex_iterator(); ++it) vars.insert(it->str());
    for (const auto& v : vars) {
      std::regex def("\\b" + v + R"(\s*(=(?!=)|\(|\{)([^;]*);)");
      std::string region = m.substr(from, before - from);
      for (auto it = std::sregex_iterator(region.begin(), region.end(), def); it != std::sregex_iterator(); ++it) {
        size_t b = from + static_cast<size_t>(it->position(0));
        if (b > 0 && (m[b - 1] == '.' || (b > 1 && m[b - 1] == '>' && m[b - 2] == '-'))) continue;  // a member
        out.push_back({from + static_cast<size_t>(it->position(2)), from + static_cast<size_t>(it->position(2) + it->length(2))});
      }
    }
    return out;
  }

  // template <int BLOCK, int ITEMS> __global__ void name(  ->  tparams_["name"] = {BLOCK, ITEMS}
  void scan_templates() {
    const std::string& m = s_.masked;
    for (size_t p : word_positions(m, "template")) {
      size_t open = m.find_first_not_of(" \t\n", p + 8);
      if (open == npos || m[open] != '<') continue;
      size_t close = match_close(m, open);
      if (close == npos) continue;
      size_t paren = m.find('(', close);
      size_t brace = m.find_first_of(";{", close);
      if (paren == npos || (brace != npos && brace < paren)) continue;
      std::string head = m.substr(close + 1, paren - close - 1);
      if (head.find("__global__") == npos) continue;
      size_t e = paren;
      while (e > 0 && std::isspace(static_cast<unsigned char>(m[e - 1]))) --e;
      size_t b = e;
      while (b > 0 && word_char(m[b - 1])) --b;
      std::vector<std::string> names;
      for (auto r : split_args(m, open + 1, close)) {
        std::string a = sv(m, r);
        a = a.substr(0, a.find('='));
        a = util::trim(a);
        size_t k = a.size();
        while (k > 0 && word_char(a[k - 1])) --k;
        names.push_back(a.substr(k));
      }
      tparams_[m.substr(b, e - b)] = names;
      size_t pclose = match_close(m, paren);
      size_t body = pclose == npos ? npos : m.find_first_of(";{", pclose);
      if (body != npos && m[body] == '{') {
        size_t bend = match_close(m, body);
        if (bend != npos) template_bodies_.push_back({{body, bend}, std::set<std::string>(names.begin(), names.end())});
      }
    }
  }

  void scan_constants() {
    static const std::regex decl(
        R"(((?:\b(?:static|inline|constexpr|const)\s+)*)(unsigned\s+long\s+long|unsigned\s+long|unsigned\s+int|long\s+long|unsigned|int|long|short|uint|uint32_t|int32_t|int64_t|uint64_t|size_t)\s+([A-Za-z_]\w*)\s*=\s*([^;{}=]+);)");
    const std::string& m = s_.masked;
    for (auto it = std::sregex_iterator(m.begin(), m.end(), decl); it != std::sregex_iterator(); ++it) {
      const auto& mt = *it;
      size_t p = static_cast<size_t>(mt.position(0));
      if (p > 0 && (word_char(m[p - 1]))) continue;
      std::string quals = mt[1];
      Constant c;
      c.name = mt[3];
      c.is_const = quals.find("const") != npos;
      c.is_static = quals.find("static") != npos;
      c.name_pos = static_cast<size_t>(mt.position(3));
      c.init = {static_cast<size_t>(mt.position(4)), static_cast<size_t>(mt.position(4) + mt.length(4))};
      while (c.init.end > c.init.begin && std::isspace(static_cast<unsigned char>(m[c.init.end - 1]))) --c.init.end;
      c.line = s_.line_of(p);
      std::string init = sv(m, c.init);
      if (auto v = int_literal(init)) {
        c.value = *v;
        c.member = c.is_static && inside_class(p);
        constants_.push_back(c);
      } else if (c.is_const) {
        aliases_[c.name].push_back(init);
      }
    }
  }

  // The innermost open brace before `pos` belongs to a struct or class.
  bool inside_class(size_t pos) const {
    const std::string& m = s_.masked;
    int depth = 0;
    for (size_t k = pos; k-- > 0;) {
      if (m[k] == '}') ++depth;
      else if (m[k] == '{' && depth-- == 0) {
        size_t b = m.rfind(';', k);
        b = b == npos ? 0 : b;
        std::string head = m.substr(b, k - b);
        return std::regex_search(head, std::regex(R"(\b(struct|class)\s+\w+)"));
      }
    }
    return false;
  }

  // How `name` is used (every occurrence but `skip`): launch, template argument, shared memory, loop bound...
  std::vector<Use> uses_of(const std::string& name, size_t skip) const {
    std::vector<Use> out;
    const std::string& m = s_.masked;
    for (size_t p : word_positions(m, name)) {
      if (p == skip) continue;
      bool shadowed = false;  // the kernel's own template parameter of the same name
      for (const auto& [r, names] : template_bodies_)
        if (p > r.begin && p < r.end && names.count(name)) shadowed = true;
      if (shadowed) continue;
      int line = s_.line_of(p);
      bool found = false;
      auto within = [&](const std::vector<Range>& rs) {
        for (const auto& r : rs)
          if (p >= r.begin && p < r.end) return true;
        return false;
      };
      for (const auto& l : launches_) {
        if (found) break;
        found = true;
        if (l.targs && p >= l.targs->begin && p < l.targs->end)
          out.push_back({fmt::format("template argument of {}<...> at line {}", l.kernel, line)});
        else if ((p >= l.cfg[1].begin && p < l.cfg[1].end) || within(l.block_defs))
          out.push_back({fmt::format("block size of the launch of {} at line {}", l.kernel, l.line), true, false, l.kernel});
        else if ((p >= l.cfg[0].begin && p < l.cfg.back().end) || within(l.grid_defs))
          out.push_back({fmt::format("launch configuration of {} at line {}", l.kernel, l.line)});
        else
          found = false;
      }
      if (found) continue;
      std::string ln = m.substr(s_.line_start(p), s_.line_end(p) - s_.line_start(p));
      if (ln.find("__shared__") != npos) {
        out.push_back({fmt::format("shared-memory size at line {}", line)});
        continue;
      }
      if (std::regex_search(ln, std::regex(R"(#\s*pragma\s+unroll)"))) {
        out.push_back({fmt::format("#pragma unroll at line {}", line), false, true});
        continue;
      }
      if (in_span_of(p, "__launch_bounds__")) {
        out.push_back({fmt::format("__launch_bounds__ at line {}", line)});
        continue;
      }
      if (in_span_of(p, "for")) {
        out.push_back({fmt::format("loop bound at line {}", line)});
        continue;
      }
      if (in_span_of(p, "static_assert")) continue;  // a relation, not a use
      out.push_back({""});                             // another use (arithmetic, an array size, ...)
    }
    return out;
  }

  // `p` lies inside the parentheses of a `word (...)`.
  bool in_span_of(size_t p, std::string_view word) const {
    const std::string& m = s_.masked;
    for (size_t w : word_positions(m, word)) {
      if (w > p) break;
      size_t open = m.find_first_not_of(" \t\n", w + word.size());
      if (open == npos || m[open] != '(') continue;
      size_t close = match_close(m, open);
      if (close != npos && p > open && p < close) return true;
    }
    return false;
  }

  // The reason and role of a constant from its uses; nullopt when no use makes it a tunable.
  std::optional<std::pair<std::string, ValueRole>> classify(const std::vector<Use>& uses, std::vector<std::string>* block_kernels) {
    std::vector<std::string> whats;
    bool block = false, unroll_only = true, any = false;
    for (const auto& u : uses) {
      if (u.what.empty()) continue;
      any = true;
      if (u.block) {
        block = true;
        block_kernels->push_back(u.kernel);
      }
      if (!u.unroll_only) unroll_only = false;
      if (std::find(whats.begin(), whats.end(), u.what) == whats.end()) whats.push_back(u.what);
    }
    if (!any) return std::nullopt;
    auto rank = [](const std::string& w) {
      return w.rfind("block size", 0) == 0 ? 0 : w.rfind("template argument", 0) == 0 ? 1 : w.rfind("launch", 0) == 0 ? 2 : 3;
    };
    std::stable_sort(whats.begin(), whats.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    std::string r = whats[0];
    if (whats.size() > 1) r += "; also " + whats[1];
    if (whats.size() > 2) r += fmt::format(" and {} more", whats.size() - 2);
    ValueRole role = block ? ValueRole::kBlockThreads : unroll_only ? ValueRole::kUnroll : ValueRole::kTile;
    return std::make_pair(r, role);
  }

  DerivedParam& add_param(std::string name, std::string origin, DeriveSite site, ValueRole role, int64_t def, int line,
                          std::string reason) {
    DerivedParam p;
    p.name = std::move(name);
    p.origin = std::move(origin);
    p.site = site;
    p.role = role;
    p.default_value = def;
    p.values = values_for(role, def);
    p.line = line;
    p.reason = std::move(reason);
    d_.params.push_back(std::move(p));
    return d_.params.back();
  }

  void define_macro(const std::string& name, int64_t def) {
    prelude_.push_back(fmt::format("#ifndef {0}\n#define {0} {1}\n#endif", name, def));
  }

  void derive_defines() {
    for (const auto& [name, lines] : defines_) {
      int line = s_.line_of(lines[0]);
      bool redefined = lines.size() > 1 || undefs_.count(name);
      if (!define_value_.count(name)) continue;
      if (util::starts_with(name, "KOPT_")) {
        d_.notes.push_back(fmt::format("line {}: #define {}: the KOPT_ prefix is reserved for method guards: not derived", line, name));
        continue;
      }
      if (redefined) {
        std::vector<std::string> where;
        for (size_t l : lines) where.push_back(std::to_string(s_.line_of(l)));
        for (size_t l : undefs_[name]) where.push_back(std::to_string(s_.line_of(l)) + " (#undef)");
        d_.notes.push_back(fmt::format("line {}: {} is defined more than once or #undef'd (lines {}): its value is not one "
                                       "constant, so it is not derived",
                                       line, name, util::join(where, ", ")));
        continue;
      }
      size_t def_name_pos = s_.masked.find(name, lines[0]);
      std::vector<std::string> kernels;
      auto c = classify(uses_of(name, def_name_pos), &kernels);
      if (!c) {
        d_.notes.push_back(fmt::format("line {}: #define {} {} is not used in a launch, template argument, shared-memory size "
                                       "or loop bound: left alone",
                                       line, name, define_value_[name]));
        continue;
      }
      s_.taken.insert(name);
      auto& p = add_param(name, name, DeriveSite::kDefine, c->second, define_value_[name], line,
                          fmt::format("#define {} {} at line {}: {}", name, define_value_[name], line, c->first));
      for (auto& k : kernels) block_of_[k].push_back(d_.params.size() - 1);
      (void)p;
      if (!guarded_.count(name)) {
        size_t ls = lines[0], le = s_.line_end(ls);
        edits_.push_back({ls, le - ls, fmt::format("#ifndef {}\n{}\n#endif", name, std::string(s_.text.substr(ls, le - ls)))});
      }
    }
  }

  // A non-const local is a tunable only as a block size that nothing assigns again.
  bool reassigned(const std::string& name, size_t decl_pos) const {
    const std::string& m = s_.masked;
    for (size_t p : word_positions(m, name)) {
      if (p == decl_pos) continue;
      size_t e = p + name.size();
      std::string after = m.substr(e, 3), before = p >= 2 ? m.substr(p - 2, 2) : "";
      size_t a = m.find_first_not_of(" \t", e);
      if (a != npos && (m.compare(a, 2, "++") == 0 || m.compare(a, 2, "--") == 0 ||
                        (a + 1 < m.size() && std::string("+-*/%|&^<>").find(m[a]) != npos && m[a + 1] == '=' && m[a] != '<' && m[a] != '>') ||
                        (m[a] == '=' && a + 1 < m.size() && m[a + 1] != '=')))
        return true;
      if (before == "++" || before == "--" || m[p - 1] == '&') return true;
    }
    return false;
  }

  void derive_constants() {
    std::map<std::string, int> seen;
    for (const auto& c : constants_) ++seen[c.name];
    for (const auto& c : constants_) {
      if (seen[c.name] > 1) {
        if (!c.is_const) continue;  // a local variable declared again (a loop index): nothing to say
        std::vector<std::string> lines;
        for (const auto& o : constants_)
          if (o.name == c.name) lines.push_back(std::to_string(o.line));
        if (c.line == std::stoi(lines[0]))
          d_.notes.push_back(fmt::format("line {}: {} is declared {} times (lines {}): not one constant, so it is not derived",
                                         c.line, c.name, lines.size(), util::join(lines, ", ")));
        continue;
      }
      std::vector<std::string> kernels;
      auto uses = uses_of(c.name, c.name_pos);
      auto cl = classify(uses, &kernels);
      std::string decl = fmt::format("{}{} {} = {}", c.member ? "static constexpr member " : "", c.is_const ? "constant" : "variable",
                                     c.name, c.value);
      if (!c.is_const) {
        bool direct_block = false;
        for (const auto& l : launches_)
          if (sv(s_.masked, l.cfg[1]) == c.name) direct_block = true;
        if (!direct_block || !cl || reassigned(c.name, c.name_pos)) continue;
      }
      if (!cl) {
        d_.notes.push_back(fmt::format("line {}: {} is not used in a launch, template argument, shared-memory size or loop "
                                       "bound: left alone",
                                       c.line, decl));
        continue;
      }
      if (util::starts_with(c.name, "KOPT_")) {
        d_.notes.push_back(fmt::format("line {}: {}: the KOPT_ prefix is reserved for method guards: not derived", c.line, c.name));
        continue;
      }
      std::string name = s_.unique_name(c.name + "_VALUE");
      const_param_[c.name] = name;
      add_param(name, c.name, c.member ? DeriveSite::kStaticMember : DeriveSite::kNamedConstant, cl->second, c.value, c.line,
                fmt::format("{} at line {}: {}", decl, c.line, cl->first));
      for (auto& k : kernels) block_of_[k].push_back(d_.params.size() - 1);
      define_macro(name, c.value);
      edits_.push_back({c.init.begin, c.init.end - c.init.begin, name});
    }
  }

  void derive_launch_literals() {
    const std::string& m = s_.masked;
    std::map<std::pair<std::string, int64_t>, std::string> block_params;  // (kernel, value) -> param
    std::map<std::pair<std::string, size_t>, std::string> targ_params;    // (kernel, position) of one site
    for (const auto& l : launches_) {
      std::vector<std::pair<int64_t, std::string>> site_targs;  // this site's literal template args -> params
      for (size_t i = 0; i < l.targ_list.size(); ++i) {
        std::string suffix;
        auto v = int_literal(sv(m, l.targ_list[i]), &suffix);
        if (!v) continue;
        if (!suffix.empty()) {
          d_.notes.push_back(fmt::format("line {}: template argument {} of {}<...> has a suffix: left alone", l.line,
                                         sv(m, l.targ_list[i]), l.kernel));
          continue;
        }
        const auto& tp = tparams_[l.kernel];
        std::string tname = i < tp.size() && !tp[i].empty() ? tp[i] : fmt::format("T{}", i);
        std::string name = s_.unique_name(upper(l.kernel) + "_" + upper(tname));
        add_param(name, tname, DeriveSite::kTemplateLiteral, ValueRole::kTile, *v, l.line,
                  fmt::format("template argument {} = {} of {}<...> at line {}", tname, *v, l.kernel, l.line));
        define_macro(name, *v);
        edits_.push_back({l.targ_list[i].begin, l.targ_list[i].end - l.targ_list[i].begin, name});
        site_targs.push_back({*v, name});
        targ_params[{l.kernel, i}] = name;
        targ_site_[l.kernel].push_back({i, name});
      }
      std::string suffix;
      auto b = int_literal(sv(m, l.cfg[1]), &suffix);
      if (!b || !suffix.empty()) continue;
      std::string name;
      for (const auto& [v, n] : site_targs)
        if (v == *b && name.empty()) name = n;  // the kernel's template block size: one parameter
      if (!name.empty()) {
        for (auto& p : d_.params)
          if (p.name == name) {
            p.role = ValueRole::kBlockThreads;
            p.values = values_for(p.role, p.default_value);
            p.reason += fmt::format("; also the block size of that launch");
          }
      } else if (block_params.count({l.kernel, *b})) {
        name = block_params[{l.kernel, *b}];
        for (auto& p : d_.params)
          if (p.name == name) p.reason += fmt::format("; also the launch at line {}", l.line);
      } else {
        name = s_.unique_name(upper(l.kernel) + "_BLOCK");
        add_param(name, sv(m, l.cfg[1]), DeriveSite::kLaunchLiteral, ValueRole::kBlockThreads, *b, l.line,
                  fmt::format("literal block size {} of the launch of {} at line {}", *b, l.kernel, l.line));
        define_macro(name, *b);
      }
      block_params[{l.kernel, *b}] = name;
      literal_block_[l.pos] = name;
      for (size_t i = 0; i < d_.params.size(); ++i)
        if (d_.params[i].name == name) block_of_[l.kernel].push_back(i);
      edits_.push_back({l.cfg[1].begin, l.cfg[1].end - l.cfg[1].begin, name});
      // The grid: literals B and B - 1 in its expression (and in the statements defining its variables) follow
      // the block; so does a literal equal to exactly one of the site's literal template arguments (ITEMS).
      std::vector<Range> ranges{l.cfg[0]};
      ranges.insert(ranges.end(), l.grid_defs.begin(), l.grid_defs.end());
      bool divides = false;
      std::vector<Edit> grid_edits;
      static const std::regex num(R"(\b\d+\b)");
      for (const auto& g : ranges) {
        std::string gs = m.substr(g.begin, g.end - g.begin);
        for (auto it = std::sregex_iterator(gs.begin(), gs.end(), num); it != std::sregex_iterator(); ++it) {
          int64_t v = small_number(it->str());
          if (v < 0) continue;
          size_t pos = g.begin + static_cast<size_t>(it->position(0));
          size_t after = pos + static_cast<size_t>(it->length(0));
          if (after < m.size() && (m[after] == '.' || word_char(m[after]))) continue;
          if (v == *b) {
            divides = true;
            grid_edits.push_back({pos, static_cast<size_t>(it->length(0)), name});
          } else if (v == *b - 1) {
            grid_edits.push_back({pos, static_cast<size_t>(it->length(0)), "(" + name + " - 1)"});
          } else if (v > 1) {
            std::vector<std::string> same;
            for (const auto& [tv, tn] : site_targs)
              if (tv == v && tn != name) same.push_back(tn);
            if (same.size() == 1) grid_edits.push_back({pos, static_cast<size_t>(it->length(0)), same[0]});
          }
        }
      }
      if (divides) {
        edits_.insert(edits_.end(), grid_edits.begin(), grid_edits.end());
      } else if (!int_literal(sv(m, l.cfg[0]))) {
        d_.notes.push_back(fmt::format("line {}: the grid of {} does not divide by its literal block size {}: other block "
                                       "sizes may cover the data differently (a wrong result prunes them)",
                                       l.line, l.kernel, *b));
      }
    }
  }

  void derive_launch_bounds() {
    const std::string& m = s_.masked;
    for (size_t w : word_positions(m, "__launch_bounds__")) {
      size_t open = m.find_first_not_of(" \t\n", w + 17);
      if (open == npos || m[open] != '(') continue;
      size_t close = match_close(m, open);
      if (close == npos) continue;
      auto args = split_args(m, open + 1, close);
      size_t paren = m.find('(', close + 1);
      if (paren == npos) continue;
      size_t e = paren;
      while (e > 0 && std::isspace(static_cast<unsigned char>(m[e - 1]))) --e;
      size_t b = e;
      while (b > 0 && word_char(m[b - 1])) --b;
      std::string kernel = m.substr(b, e - b);
      int line = s_.line_of(w);
      std::string suffix;
      if (auto n = args.empty() ? std::nullopt : int_literal(sv(m, args[0]), &suffix); n && suffix.empty()) {
        std::string name;
        for (size_t i : block_of_[kernel])
          if (d_.params[i].default_value == *n && name.empty()) name = d_.params[i].name;
        if (!name.empty()) {
          for (auto& p : d_.params)
            if (p.name == name) p.reason += fmt::format("; also __launch_bounds__ of {} at line {}", kernel, line);
        } else {
          name = s_.unique_name(upper(kernel) + "_MAX_THREADS");
          add_param(name, "__launch_bounds__", DeriveSite::kLaunchBounds, ValueRole::kMaxThreads, *n, line,
                    fmt::format("__launch_bounds__({}) of {} at line {} (a larger bound is always safe)", *n, kernel, line));
          define_macro(name, *n);
        }
        edits_.push_back({args[0].begin, args[0].end - args[0].begin, name});
      }
      if (args.size() >= 2) {
        if (auto mb = int_literal(sv(m, args[1]), &suffix); mb && suffix.empty()) {
          std::string name = s_.unique_name(upper(kernel) + "_MIN_BLOCKS");
          add_param(name, "__launch_bounds__", DeriveSite::kLaunchBounds, ValueRole::kMinBlocks, *mb, line,
                    fmt::format("minimum blocks per SM {} in __launch_bounds__ of {} at line {}", *mb, kernel, line));
          define_macro(name, *mb);
          edits_.push_back({args[1].begin, args[1].end - args[1].begin, name});
        }
      }
    }
  }

  // nvcc does not expand macros in `#pragma unroll N`; an integral constant expression works, so the pragma
  // names a constexpr int that the macro initialises.
  void derive_pragma_unroll() {
    static const std::regex pr(R"(^([ \t]*#[ \t]*pragma[ \t]+unroll[ \t]*)(\(?[ \t]*\d+[ \t]*\)?)[ \t]*$)");
    for (size_t ls : s_.line_starts) {
      size_t le = s_.line_end(ls);
      std::string line = s_.masked.substr(ls, le - ls);
      std::smatch m;
      if (!std::regex_search(line, m, pr)) continue;
      auto v = int_literal(m[2].str());
      if (!v) continue;
      int ln = s_.line_of(ls);
      std::string name = s_.unique_name(fmt::format("UNROLL_L{}", ln));
      std::string var = s_.unique_name(fmt::format("derived_unroll_l{}", ln));
      add_param(name, "#pragma unroll", DeriveSite::kPragmaUnroll, ValueRole::kUnroll, *v, ln,
                fmt::format("#pragma unroll {} at line {}", *v, ln));
      define_macro(name, *v);
      postlude_.push_back(fmt::format("constexpr int {} = {};", var, name));
      edits_.push_back({ls + static_cast<size_t>(m.position(2)), static_cast<size_t>(m.length(2)), var});
    }
  }

  // An expression of the source in parameter names; nullopt when any name is not derived.
  std::optional<std::string> translate(const std::string& expr, int depth = 0) const {
    if (depth > 4) return std::nullopt;
    std::string out;
    bool any_param = false;
    for (size_t i = 0; i < expr.size();) {
      char c = expr[i];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t e = i;
        while (e < expr.size() && std::isdigit(static_cast<unsigned char>(expr[e]))) ++e;
        out += expr.substr(i, e - i);
        while (e < expr.size() && std::string("uUlL").find(expr[e]) != npos) ++e;
        if (e < expr.size() && word_char(expr[e])) return std::nullopt;
        i = e;
      } else if (word_char(c)) {
        size_t e = i;
        while (e < expr.size() && word_char(expr[e])) ++e;
        std::string w = expr.substr(i, e - i);
        i = e;
        if (auto r = resolve(w, depth)) {
          out += *r;
          any_param = true;
        } else {
          return std::nullopt;
        }
      } else if (std::string("+-*/%()<>=!&| \t\n").find(c) != npos) {
        if ((c == '<' || c == '>') && i + 1 < expr.size() && expr[i + 1] == c) return std::nullopt;  // shifts
        out += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
        ++i;
      } else {
        return std::nullopt;
      }
    }
    if (!any_param) return std::nullopt;
    if (!Expr::parse(out)) return std::nullopt;
    return util::trim(out);
  }

  std::optional<std::string> resolve(const std::string& w, int depth) const {
    if (auto it = const_param_.find(w); it != const_param_.end()) return it->second;
    for (const auto& p : d_.params)
      if (p.site == DeriveSite::kDefine && p.name == w) return w;
    if (auto it = aliases_.find(w); it != aliases_.end() && it->second.size() == 1) {
      if (auto t = translate(it->second[0], depth + 1)) return "(" + *t + ")";
      return std::nullopt;
    }
    // A kernel's template parameter bound at its only launch site to a literal or a derived name.
    std::optional<std::string> found;
    for (const auto& [kernel, names] : tparams_) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != w) continue;
        int sites = 0;
        const Launch* only = nullptr;
        for (const auto& l : launches_)
          if (l.kernel == kernel) ++sites, only = &l;
        if (sites != 1 || i >= only->targ_list.size()) return std::nullopt;
        std::string arg = sv(s_.masked, only->targ_list[i]);
        std::optional<std::string> t;
        for (const auto& [pos, pname] : targ_site_.count(kernel) ? targ_site_.at(kernel) : std::vector<std::pair<size_t, std::string>>{})
          if (pos == i) t = pname;
        if (!t && arg != w) t = translate(arg, depth + 1);
        if (!t && arg == w) {
          if (auto it = const_param_.find(w); it != const_param_.end()) t = it->second;
        }
        if (!t || (found && *found != *t)) return std::nullopt;
        found = t;
      }
    }
    return found;
  }

  void add_constraint(std::string expr, std::string reason) {
    for (const auto& c : d_.constraints)
      if (c.expr == expr) return;
    d_.constraints.push_back({std::move(expr), std::move(reason)});
  }

  void derive_static_asserts() {
    const std::string& m = s_.masked;
    for (size_t w : word_positions(m, "static_assert")) {
      size_t open = m.find_first_not_of(" \t\n", w + 13);
      if (open == npos || m[open] != '(') continue;
      size_t close = match_close(m, open);
      if (close == npos) continue;
      auto args = split_args(m, open + 1, close);
      if (args.empty()) continue;
      int line = s_.line_of(w);
      std::string text = sv(m, args[0]);
      if (auto t = translate(text)) add_constraint(*t, fmt::format("static_assert({}) at line {}", util::trim(text), line));
      else d_.notes.push_back(fmt::format("line {}: static_assert({}) is not over derived names: left to the compiler "
                                          "(a point that fails it is pruned at compile time)",
                                          line, util::trim(text)));
    }
  }

  void derive_thread_limits() {
    const std::string& m = s_.masked;
    for (const auto& l : launches_) {
      std::string b = sv(m, l.cfg[1]);
      if (int_literal(b)) continue;
      std::vector<std::string> dims;
      if (util::is_identifier(b) && !const_param_.count(b)) {
        std::regex dd("\\bdim3\\s+" + b + R"(\s*[\(\{]([^;]*)[\)\}]\s*;)");
        std::smatch dm;
        std::string before = m.substr(0, l.pos);
        std::optional<std::string> last;
        for (auto it = std::sregex_iterator(before.begin(), before.end(), dd); it != std::sregex_iterator(); ++it) last = (*it)[1];
        if (last) {
          for (auto r : split_args(*last, 0, last->size())) dims.push_back(sv(*last, r));
        } else {
          dims.push_back(b);
        }
      } else {
        if (b.rfind("dim3", 0) == 0) continue;
        dims.push_back(b);
      }
      std::vector<std::string> parts;
      bool ok = !dims.empty();
      for (const auto& d : dims) {
        if (int_literal(d)) {
          parts.push_back(std::to_string(*int_literal(d)));
          continue;
        }
        auto t = translate(d);
        if (!t) {
          ok = false;
          break;
        }
        parts.push_back("(" + *t + ")");
      }
      bool any_param = std::any_of(parts.begin(), parts.end(), [](const std::string& x) { return x[0] == '('; });
      if (!ok || !any_param) continue;
      bool only_block_param = false;
      for (const auto& p : d_.params)
        if (parts.size() == 1 && parts[0] == "(" + p.name + ")" && p.role == ValueRole::kBlockThreads) only_block_param = true;
      if (only_block_param) continue;  // a block-size parameter's values already respect the limit
      add_constraint(fmt::format("{} <= {}", util::join(parts, " * "), kMaxThreadsPerBlock),
                     fmt::format("threads per block of the launch of {} at line {} (at most {})", l.kernel, l.line, kMaxThreadsPerBlock));
    }
  }

  void derive_shared_memory() {
    static const std::map<std::string, int> sizes{{"float", 4},  {"int", 4},     {"unsigned", 4}, {"uint", 4},   {"double", 8},
                                                 {"half", 2},   {"__half", 2},  {"char", 1},     {"float2", 8}, {"float4", 16},
                                                 {"int2", 8},   {"int4", 16},   {"__nv_bfloat16", 2}, {"uint32_t", 4}, {"int32_t", 4}};
    static const std::regex decl(R"(__shared__\s+(?:__align__\(\d+\)\s+|alignas\(\d+\)\s+)?([A-Za-z_]\w*)\s+[A-Za-z_]\w*((?:\s*\[[^\]]+\])+))");
    const std::string& m = s_.masked;
    std::vector<std::string> terms;
    bool any_param = false, complete = true;
    int first_line = 0;
    for (auto it = std::sregex_iterator(m.begin(), m.end(), decl); it != std::sregex_iterator(); ++it) {
      int line = s_.line_of(static_cast<size_t>(it->position(0)));
      if (!first_line) first_line = line;
      auto sz = sizes.find((*it)[1]);
      if (sz == sizes.end()) {
        complete = false;
        continue;
      }
      std::string dims = (*it)[2];
      std::string term = std::to_string(sz->second);
      static const std::regex dim(R"(\[([^\]]+)\])");
      for (auto jt = std::sregex_iterator(dims.begin(), dims.end(), dim); jt != std::sregex_iterator(); ++jt) {
        std::string e = (*jt)[1];
        if (auto v = int_literal(e)) {
          term += " * " + std::to_string(*v);
        } else if (auto t = translate(e)) {
          term += " * (" + *t + ")";
          any_param = true;
        } else {
          complete = false;
        }
      }
      terms.push_back(term);
    }
    if (any_param && complete)
      add_constraint(fmt::format("{} <= {}", util::join(terms, " + "), kMaxStaticSmemBytes),
                     fmt::format("static shared memory of the file's __shared__ arrays (from line {}) within {} KiB per block",
                                 first_line, kMaxStaticSmemBytes / 1024));
    else if (any_param)
      d_.notes.push_back("some __shared__ arrays have sizes or types kopt cannot read: the shared-memory limit is left to "
                         "ptxas (a point over it is pruned at compile time)");
  }

  // The derived parameter that is, alone, the block size of a launch; "" when it is anything else.
  std::string block_param(const Launch& l) const {
    if (auto it = literal_block_.find(l.pos); it != literal_block_.end()) return it->second;
    std::string b = sv(s_.masked, l.cfg[1]);
    if (auto it = const_param_.find(b); it != const_param_.end()) return it->second;
    for (const auto& p : d_.params)
      if (p.site == DeriveSite::kDefine && p.name == b) return b;
    return "";
  }

  // __launch_bounds__ from a compile-time block size: a kernel without one, whose every launch uses the same
  // derived block-size parameter P, gets `__launch_bounds__(P)` under `#if KOPT_LAUNCH_BOUNDS` (the registry's
  // launch_bounds method: off in the baseline, claimed, guarded and ablated like any method).
  void derive_launch_bounds_method() {
    const std::string guard = "KOPT_LAUNCH_BOUNDS";
    if (s_.identifiers.count(guard)) return;
    const std::string& m = s_.masked;
    std::vector<std::string> done;
    for (const auto& l : launches_) {
      if (std::find(done.begin(), done.end(), l.kernel) != done.end()) continue;
      done.push_back(l.kernel);
      std::string p;
      bool same = true;
      for (const auto& o : launches_)
        if (o.kernel == l.kernel) {
          std::string q = block_param(o);
          if (q.empty() || (!p.empty() && q != p)) same = false;
          p = q;
        }
      if (!same || p.empty()) continue;
      // The kernel's definition: `__global__ ... NAME(` with a body.
      std::optional<size_t> at;
      bool bounded = false;
      for (size_t g : word_positions(m, "__global__")) {
        size_t paren = m.find('(', g);
        size_t stop = m.find_first_of(";{", g);
        if (paren == npos || (stop != npos && stop < paren)) continue;
        std::string head = m.substr(g, paren - g);
        size_t e = head.find_last_not_of(" \t\n");
        if (e == npos) continue;
        size_t b = e + 1;
        while (b > 0 && word_char(head[b - 1])) --b;
        if (head.substr(b, e + 1 - b) != l.kernel) {
          // __launch_bounds__(...) before the name: the name is the word before the paren after it.
          if (head.find("__launch_bounds__") == npos) continue;
          size_t lb_close = match_close(m, m.find('(', g + head.find("__launch_bounds__")));
          size_t np = lb_close == npos ? npos : m.find('(', lb_close + 1);
          if (np == npos) continue;
          std::string h2 = m.substr(lb_close + 1, np - lb_close - 1);
          if (util::trim(h2) != l.kernel) continue;
          bounded = true;
          break;
        }
        size_t close = match_close(m, paren);
        size_t body = close == npos ? npos : m.find_first_not_of(" \t\n", close + 1);
        if (body == npos || m[body] != '{') continue;
        if (head.find("__launch_bounds__") != npos) bounded = true;
        at = g + b;
        break;
      }
      if (bounded || !at) continue;
      edits_.push_back({*at, 0, fmt::format("\n#if {}\n__launch_bounds__({})\n#endif\n", guard, p)});
      // One method id: its guard covers every such kernel.
      if (d_.methods.empty()) {
        prelude_.push_back(fmt::format("#ifndef {0}\n#define {0} 0\n#endif", guard));
        d_.methods.push_back({"launch_bounds", fmt::format("__launch_bounds__({}) on {} (line {}), whose launches all use that "
                                                           "block size (a method: off in the baseline)",
                                                           p, l.kernel, s_.line_of(*at))});
      } else {
        d_.methods[0].reason += fmt::format("; __launch_bounds__({}) on {} (line {})", p, l.kernel, s_.line_of(*at));
      }
    }
  }

  Source s_;
  std::string file_;
  Derivation d_;
  std::vector<Edit> edits_;
  std::vector<std::string> prelude_, postlude_;
  std::map<size_t, std::string> literal_block_;  // a launch (its kernel's position) -> its literal block's param
  std::map<std::string, std::vector<size_t>> defines_, undefs_;
  std::map<std::string, int64_t> define_value_;
  std::set<std::string> guarded_;
  std::vector<Launch> launches_;
  std::map<std::string, std::vector<std::string>> tparams_;
  std::vector<std::pair<Range, std::set<std::string>>> template_bodies_;  // a kernel template's body, its parameters
  std::vector<Constant> constants_;
  std::map<std::string, std::vector<std::string>> aliases_;
  std::map<std::string, std::string> const_param_;                 // C++ constant name -> its param (unique names only)
  std::map<std::string, std::vector<size_t>> block_of_;            // kernel -> indices of its block-size params
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> targ_site_;  // kernel -> (position, param)
};

// ---------------------------------------------------------------------------------------------------------
// Triton

class TritonDeriver {
 public:
  TritonDeriver(std::string_view text, std::string file) : s_(text, SourceLanguage::kPython), file_(std::move(file)) {}

  Derivation run() {
    d_.file = file_;
    d_.language = SourceLanguage::kPython;
    const std::string& m = s_.masked;
    scan_jit();
    static const std::regex rk(R"((^|\n)[ \t]*def[ \t]+run_kernel[ \t]*\()");
    std::smatch mt;
    if (!std::regex_search(m, mt, rk)) {
      d_.notes.push_back("no def run_kernel(...): nothing to derive");
      return std::move(d_);
    }
    sig_open_ = static_cast<size_t>(mt.position(0) + mt.length(0) - 1);
    sig_close_ = match_close(m, sig_open_);
    if (sig_close_ == npos) return std::move(d_);
    for (auto r : split_args(m, sig_open_ + 1, sig_close_)) {
      std::string a = sv(m, r);
      a = util::trim(a.substr(0, a.find_first_of("=:")));
      while (!a.empty() && a[0] == '*') a.erase(0, 1);
      if (!a.empty()) sig_names_.insert(a);
    }
    body_begin_ = sig_close_;
    body_end_ = m.size();
    for (size_t p = m.find('\n', sig_close_); p != npos && p + 1 < m.size(); p = m.find('\n', p + 1)) {
      char c = m[p + 1];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        body_end_ = p + 1;
        break;
      }
    }
    scan_calls();
    return std::move(d_);
  }

  const std::vector<Edit>& edits() const { return edits_; }

 private:
  struct Jit {
    std::set<std::string> constexprs;
    std::optional<Range> autotune;  // the decorator, from '@' through its ')'
  };

  void scan_jit() {
    const std::string& m = s_.masked;
    static const std::regex def(R"((^|\n)([ \t]*)def[ \t]+([A-Za-z_]\w*)[ \t]*\()");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), def); it != std::sregex_iterator(); ++it) {
      size_t dpos = static_cast<size_t>(it->position(0) + it->length(1));
      // The decorators: the lines above starting with '@'.
      size_t ls = dpos;
      std::string name = (*it)[3];
      bool jit = false;
      std::optional<Range> autotune;
      size_t scan = dpos;
      while (scan > 0) {
        size_t prev_end = scan - 1;  // the '\n' ending the previous line
        size_t prev_start = m.rfind('\n', prev_end == 0 ? 0 : prev_end - 1);
        prev_start = prev_start == npos ? 0 : prev_start + 1;
        std::string line = util::trim(m.substr(prev_start, prev_end - prev_start));
        if (line.empty()) break;
        if (line[0] == '@') {
          if (line.find("triton.jit") != npos || line.rfind("@jit", 0) == 0) jit = true;
          if (line.find("triton.autotune") != npos) {
            size_t at = m.find('@', prev_start);
            size_t open = m.find('(', at);
            size_t close = open == npos ? npos : match_close(m, open);
            if (close != npos) autotune = Range{at, close + 1};
          }
          scan = prev_start;
          continue;
        }
        // A multi-line decorator: keep walking up while inside one (a line of an autotune's configs).
        if (line.back() == ',' || line.back() == '[' || line.back() == ']' || line.back() == ')' || line.back() == '(') {
          scan = prev_start;
          continue;
        }
        break;
      }
      (void)ls;
      if (!jit) continue;
      Jit j;
      size_t open = static_cast<size_t>(it->position(0) + it->length(0) - 1);
      size_t close = match_close(m, open);
      if (close == npos) continue;
      for (auto r : split_args(m, open + 1, close)) {
        std::string a = sv(m, r);
        size_t colon = a.find(':');
        if (colon != npos && a.find("constexpr", colon) != npos) j.constexprs.insert(util::trim(a.substr(0, colon)));
      }
      j.autotune = autotune;
      jits_[name] = j;
    }
  }

  std::string param_name(const std::string& key) {
    if (key == "num_warps" || key == "num_stages") {
      s_.taken.insert(key);
      return key;
    }
    // The keyword itself, unless run_kernel already uses that name for something else.
    bool used = false;
    for (size_t p : word_positions(s_.masked, key))
      if (p > sig_open_ && p < body_end_ && !kw_positions_.count(p)) used = true;
    if (!used && !s_.taken.count(key) && !util::starts_with(key, "KOPT_")) {
      s_.taken.insert(key);
      return key;
    }
    return s_.unique_name("P_" + key);
  }

  void add_signature(const std::string& name, int64_t def) { sig_add_.push_back(fmt::format("{}={}", name, def)); }

  void scan_calls() {
    const std::string& m = s_.masked;
    static const std::regex call(R"(\b([A-Za-z_]\w*)[ \t]*\[)");
    std::string body = m.substr(body_begin_, body_end_ - body_begin_);
    struct Site {
      std::string kernel;
      Range grid;
      size_t open, close;
      std::vector<Range> args;
    };
    std::vector<Site> sites;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), call); it != std::sregex_iterator(); ++it) {
      std::string k = (*it)[1];
      if (!jits_.count(k)) continue;
      size_t lb = body_begin_ + static_cast<size_t>(it->position(0) + it->length(0) - 1);
      size_t rb = match_close(m, lb);
      if (rb == npos) continue;
      size_t open = m.find_first_not_of(" \t", rb + 1);
      if (open == npos || m[open] != '(') continue;
      size_t close = match_close(m, open);
      if (close == npos) continue;
      sites.push_back({k, {lb + 1, rb}, open, close, split_args(m, open + 1, close)});
    }
    bool warps_done = false;
    for (const auto& st : sites) {
      const Jit& j = jits_[st.kernel];
      int line = s_.line_of(st.open);
      std::set<std::string> given;
      for (auto r : st.args) {
        std::string a = sv(m, r);
        size_t eq = a.find('=');
        if (eq == npos || (eq + 1 < a.size() && a[eq + 1] == '=')) continue;
        std::string key = util::trim(a.substr(0, eq));
        if (!util::is_identifier(key)) continue;
        given.insert(key);
        kw_positions_.insert(r.begin);
      }
      for (auto r : st.args) {
        std::string a = sv(m, r);
        size_t eq = a.find('=');
        if (eq == npos) continue;
        std::string key = util::trim(a.substr(0, eq));
        auto v = int_literal(a.substr(eq + 1));
        if (!v || a.substr(eq + 1).find_first_of("uUlL") != npos) continue;
        bool launch = key == "num_warps" || key == "num_stages";
        if (!launch && !j.constexprs.count(key)) continue;
        if (sig_names_.count(key)) continue;
        if (launch && s_.taken.count(key)) continue;  // one num_warps / num_stages parameter for all launches
        std::string name = param_name(key);
        DerivedParam p;
        p.name = name;
        p.origin = key;
        p.kind = key == "num_warps" ? ParamKind::kNumWarps : key == "num_stages" ? ParamKind::kNumStages : ParamKind::kConstexpr;
        p.site = launch ? DeriveSite::kTritonLaunch : DeriveSite::kTritonConstexpr;
        p.role = key == "num_warps" ? ValueRole::kNumWarps : key == "num_stages" ? ValueRole::kNumStages : ValueRole::kTile;
        p.default_value = *v;
        if (p.role == ValueRole::kTile && !pow2(*v)) {
          d_.notes.push_back(fmt::format("line {}: {}={} of {}[...] is not a power of two: left alone", line, key, *v, st.kernel));
          continue;
        }
        p.values = values_for(p.role, *v);
        p.line = line;
        p.reason = fmt::format("literal {}={} in the launch of {}[...] in run_kernel at line {}", key, *v, st.kernel, line);
        if (key == "num_warps") warps_done = true;
        // The literal becomes the parameter; the grid's literal of the same block size follows it.
        size_t vb = r.begin + eq + 1;
        while (std::isspace(static_cast<unsigned char>(m[vb]))) ++vb;
        edits_.push_back({vb, r.end - vb, name});
        add_signature(name, *v);
        if (p.kind == ParamKind::kConstexpr) constexpr_by_value_[*v].push_back(name);
        d_.params.push_back(std::move(p));
      }
      if (j.autotune) derive_autotune(st.kernel, *j.autotune, st.close, given);
      else if (!given.count("num_warps") && !warps_done && !sig_names_.count("num_warps") && !s_.taken.count("num_warps")) {
        // Triton's default is 4: passing it explicitly changes nothing.
        DerivedParam p;
        p.name = param_name("num_warps");
        p.origin = "num_warps";
        p.kind = ParamKind::kNumWarps;
        p.site = DeriveSite::kTritonLaunch;
        p.role = ValueRole::kNumWarps;
        p.default_value = 4;
        p.values = values_for(p.role, 4);
        p.line = line;
        p.reason = fmt::format("num_warps of the launch of {}[...] at line {} (not given: Triton's default, 4)", st.kernel, line);
        edits_.push_back({st.close, 0, std::string(call_separator(st.open, st.close)) + "num_warps=num_warps"});
        add_signature("num_warps", 4);
        warps_done = true;
        d_.params.push_back(std::move(p));
      }
    }
    tie_grid();
    if (!sig_add_.empty()) {
      // Before **kwargs if there is one, else at the end.
      size_t ins = sig_close_;
      size_t star = m.find("**", sig_open_);
      std::string sep = ", ";
      std::string text;
      if (star != npos && star < sig_close_) {
        ins = star;
        text = util::join(sig_add_, ", ") + ", ";
      } else {
        size_t k = sig_close_;
        while (k > sig_open_ + 1 && std::isspace(static_cast<unsigned char>(m[k - 1]))) --k;
        bool bare = m[k - 1] == '(' || m[k - 1] == ',';
        ins = k;
        text = (bare ? (m[k - 1] == ',' ? " " : "") : ", ") + util::join(sig_add_, ", ");
      }
      edits_.push_back({ins, 0, text});
    }
  }

  std::string_view call_separator(size_t open, size_t close) const {
    size_t k = close;
    while (k > open + 1 && std::isspace(static_cast<unsigned char>(s_.masked[k - 1]))) --k;
    return s_.masked[k - 1] == '(' ? "" : s_.masked[k - 1] == ',' ? " " : ", ";
  }

  // Literals in run_kernel's grid expressions (cdiv(n, 1024), (n + 1023) // 1024) equal to exactly one derived
  // block size follow that parameter.
  void tie_grid() {
    const std::string& m = s_.masked;
    static const std::regex num(R"(\b\d+\b)");
    for (size_t ls = s_.line_start(body_begin_); ls < body_end_;) {
      size_t le = s_.line_end(ls);
      std::string line = m.substr(ls, le - ls);
      bool grid_line = line.find("cdiv") != npos || line.find("//") != npos;
      if (grid_line) {
        for (auto it = std::sregex_iterator(line.begin(), line.end(), num); it != std::sregex_iterator(); ++it) {
          size_t pos = ls + static_cast<size_t>(it->position(0));
          bool edited = false;
          for (const auto& e : edits_)
            if (pos >= e.pos && pos < e.pos + std::max<size_t>(e.len, 1)) edited = true;
          if (edited) continue;
          int64_t v = small_number(it->str());
          if (v < 0) continue;
          auto follow = [&](int64_t key, const std::string& text_for) {
            auto f = constexpr_by_value_.find(key);
            if (f == constexpr_by_value_.end()) return false;
            if (f->second.size() != 1) {
              d_.notes.push_back(fmt::format("line {}: grid literal {} matches several block sizes ({}): left alone (a wrong "
                                             "result prunes mismatched points)",
                                             s_.line_of(pos), v, util::join(f->second, ", ")));
              return true;
            }
            edits_.push_back({pos, static_cast<size_t>(it->length(0)), fmt::vformat(text_for, fmt::make_format_args(f->second[0]))});
            std::string also = fmt::format("; also the grid at line {}", s_.line_of(pos));
            for (auto& p : d_.params)
              if (p.name == f->second[0] && p.reason.find(also) == npos) p.reason += also;
            return true;
          };
          if (!follow(v, "{}")) follow(v + 1, "({} - 1)");
        }
      }
      ls = le + 1;
    }
  }

  void derive_autotune(const std::string& kernel, Range deco, size_t call_close, const std::set<std::string>& given) {
    std::string text(s_.text.substr(deco.begin, deco.end - deco.begin));
    int line = s_.line_of(deco.begin);
    static const std::regex cfg(R"(Config\s*\(\s*\{([^}]*)\}([^)]*)\))");
    static const std::regex kv(R"(['"]([A-Za-z_]\w*)['"]\s*:\s*(\d+))");
    static const std::regex launch_kv(R"(\b(num_warps|num_stages)\s*=\s*(\d+))");
    std::vector<std::string> order;
    std::map<std::string, std::vector<int64_t>> values;
    std::map<std::string, int64_t> first;
    int configs = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), cfg); it != std::sregex_iterator(); ++it, ++configs) {
      std::string dict = (*it)[1], rest = (*it)[2];
      auto add = [&](const std::string& k, int64_t v) {
        if (!values.count(k)) order.push_back(k);
        values[k].push_back(v);
        if (configs == 0) first[k] = v;
      };
      for (auto jt = std::sregex_iterator(dict.begin(), dict.end(), kv); jt != std::sregex_iterator(); ++jt)
        if (int64_t v = small_number((*jt)[2]); v >= 0) add((*jt)[1], v);
      for (auto jt = std::sregex_iterator(rest.begin(), rest.end(), launch_kv); jt != std::sregex_iterator(); ++jt)
        if (int64_t v = small_number((*jt)[2]); v >= 0) add((*jt)[1], v);
    }
    if (configs == 0) {
      d_.notes.push_back(fmt::format("line {}: @triton.autotune of {} has no configs kopt can read: left alone", line, kernel));
      return;
    }
    std::vector<std::string> call_kws;
    for (const auto& k : order) {
      if (!first.count(k) || values[k].size() != static_cast<size_t>(configs)) {
        d_.notes.push_back(fmt::format("line {}: autotune key {} is not in every config of {}: left alone", line, k, kernel));
        return;
      }
      if (given.count(k) || sig_names_.count(k)) return;
    }
    for (const auto& k : order) {
      DerivedParam p;
      p.name = param_name(k);
      p.origin = k;
      p.kind = k == "num_warps" ? ParamKind::kNumWarps : k == "num_stages" ? ParamKind::kNumStages : ParamKind::kConstexpr;
      p.site = DeriveSite::kTritonAutotune;
      p.role = ValueRole::kListed;
      p.default_value = first[k];
      p.values = sorted_unique(values[k]);
      p.line = line;
      p.reason = fmt::format("{} in the {} configs of @triton.autotune of {} at line {} (default: the first config's)", k, configs,
                             kernel, line);
      call_kws.push_back(fmt::format("{}={}", k, p.name));
      add_signature(p.name, p.default_value);
      d_.params.push_back(std::move(p));
    }
    // The copy launches one configuration: the decorator is commented out, line by line.
    for (size_t ls = s_.line_start(deco.begin); ls < deco.end; ls = s_.line_end(ls) + 1) edits_.push_back({ls, 0, "# "});
    edits_.push_back({call_close, 0, std::string(call_separator(call_close, call_close)) + util::join(call_kws, ", ")});
    d_.notes.push_back(fmt::format("line {}: the copy comments out @triton.autotune of {} and runs the configuration kopt "
                                   "chooses (the baseline: the first config); kopt searches every combination of the "
                                   "configs' values",
                                   line, kernel));
  }

  Source s_;
  std::string file_;
  Derivation d_;
  std::vector<Edit> edits_;
  std::map<std::string, Jit> jits_;
  size_t sig_open_ = 0, sig_close_ = 0, body_begin_ = 0, body_end_ = 0;
  std::set<std::string> sig_names_;
  std::set<size_t> kw_positions_;
  std::vector<std::string> sig_add_;
  std::map<int64_t, std::vector<std::string>> constexpr_by_value_;
};

std::string header_lines(const Derivation& d, const std::string& c) {
  std::string out;
  for (const auto& p : d.params) {
    out += fmt::format("{} derived: {}\n", c, p.reason);
    out += fmt::format("{} @kopt param {} values={} default={}", c, p.name, format_values(p.values), p.default_value);
    if (d.language == SourceLanguage::kPython) out += fmt::format(" kind={}", param_kind_name(p.kind));
    out += "\n";
  }
  for (const auto& m : d.methods) {
    out += fmt::format("{} derived: {}\n", c, m.reason);
    out += fmt::format("{} @kopt method {}\n", c, m.id);
  }
  for (const auto& k : d.constraints) {
    out += fmt::format("{} derived: {}\n", c, k.reason);
    out += fmt::format("{} @kopt constraint {}\n", c, k.expr);
  }
  return out;
}

// Drops constraints the defaults do not satisfy (they would contradict the kernel itself).
void check_constraints(Derivation& d) {
  Bindings b;
  for (const auto& p : d.params) b[p.name] = p.default_value;
  std::vector<DerivedConstraint> kept;
  for (auto& c : d.constraints) {
    auto e = Expr::parse(c.expr);
    if (!e) continue;
    auto v = e->eval(b);
    if (v && *v != 0) kept.push_back(c);
    else d.notes.push_back(fmt::format("constraint '{}' ({}) does not hold for the original values: dropped", c.expr, c.reason));
  }
  d.constraints = std::move(kept);
}

}  // namespace

std::string_view derive_site_name(DeriveSite s) {
  switch (s) {
    case DeriveSite::kNamedConstant: return "named_constant";
    case DeriveSite::kStaticMember: return "static_member";
    case DeriveSite::kDefine: return "define";
    case DeriveSite::kTemplateLiteral: return "template_literal";
    case DeriveSite::kLaunchLiteral: return "launch_literal";
    case DeriveSite::kPragmaUnroll: return "pragma_unroll";
    case DeriveSite::kLaunchBounds: return "launch_bounds";
    case DeriveSite::kTritonConstexpr: return "triton_constexpr";
    case DeriveSite::kTritonLaunch: return "triton_launch";
    case DeriveSite::kTritonAutotune: return "triton_autotune";
  }
  return "?";
}

std::string_view value_role_name(ValueRole r) {
  switch (r) {
    case ValueRole::kBlockThreads: return "block_threads";
    case ValueRole::kTile: return "tile";
    case ValueRole::kUnroll: return "unroll";
    case ValueRole::kMinBlocks: return "min_blocks";
    case ValueRole::kMaxThreads: return "max_threads";
    case ValueRole::kNumWarps: return "num_warps";
    case ValueRole::kNumStages: return "num_stages";
    case ValueRole::kListed: return "listed";
  }
  return "?";
}

std::string mask_code(std::string_view t, SourceLanguage lang) {
  std::string out(t);
  auto blank = [&](size_t b, size_t e) {
    for (size_t k = b; k < e && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  size_t i = 0;
  auto skip_string = [&](std::string_view quote) {
    size_t b = i;
    i += quote.size();
    while (i < t.size()) {
      if (t.compare(i, quote.size(), quote) == 0) {
        i += quote.size();
        break;
      }
      if (t[i] == '\\' && i + 1 < t.size()) {
        i += 2;
        continue;
      }
      if (t[i] == '\n' && quote.size() == 1) break;
      ++i;
    }
    blank(b, i);
  };
  while (i < t.size()) {
    char c = t[i];
    if (lang == SourceLanguage::kCuda) {
      if (t.compare(i, 2, "//") == 0) {
        size_t e = t.find('\n', i);
        e = e == std::string_view::npos ? t.size() : e;
        blank(i, e);
        i = e;
        continue;
      }
      if (t.compare(i, 2, "/*") == 0) {
        size_t e = t.find("*/", i + 2);
        e = e == std::string_view::npos ? t.size() : e + 2;
        blank(i, e);
        i = e;
        continue;
      }
      if (c == '"' || c == '\'') {
        skip_string(t.substr(i, 1));
        continue;
      }
    } else {
      if (c == '#') {
        size_t e = t.find('\n', i);
        e = e == std::string_view::npos ? t.size() : e;
        blank(i, e);
        i = e;
        continue;
      }
      if (t.compare(i, 3, "\"\"\"") == 0 || t.compare(i, 3, "'''") == 0) {
        skip_string(t.substr(i, 3));
        continue;
      }
      if (c == '"' || c == '\'') {
        skip_string(t.substr(i, 1));
        continue;
      }
    }
    ++i;
  }
  return out;
}

Result<Derivation> derive(std::string_view text, const std::string& file_name) {
  KOPT_TRY_ASSIGN(Annotations ann, parse_annotations(text, file_name));
  SourceLanguage lang = language_of(file_name);
  Derivation d;
  std::vector<Edit> edits;
  std::vector<std::string> prelude, postlude;
  if (lang == SourceLanguage::kCuda) {
    CudaDeriver c(text, file_name);
    d = c.run();
    edits = c.edits();
    prelude = c.prelude();
    postlude = c.postlude();
  } else {
    TritonDeriver t(text, file_name);
    d = t.run();
    edits = t.edits();
  }
  check_constraints(d);
  if (d.params.empty()) d.constraints.clear(), d.methods.clear();
  if (!ann.empty()) {
    // The declared space is the authority: keep only what it does not cover, as suggestions.
    d.annotated = true;
    std::set<std::string> declared;
    for (const auto& p : ann.params) declared.insert(p.name);
    std::vector<DerivedParam> extra;
    for (auto& p : d.params) {
      if (declared.count(p.name) || declared.count(p.origin)) continue;
      extra.push_back(p);
    }
    size_t dropped = d.params.size() - extra.size();
    std::erase_if(d.notes, [](const std::string& n) { return n.find("the KOPT_ prefix is reserved") != npos; });  // guards
    d.params = std::move(extra);
    d.constraints.clear();
    std::erase_if(d.methods, [&](const DerivedMethod& m) {
      return std::any_of(ann.methods.begin(), ann.methods.end(), [&](const MethodDecl& x) { return x.id == m.id; });
    });
    d.notes.insert(d.notes.begin(),
                   fmt::format("{} already declares its space with @kopt lines: those are the authority; {} derived value(s) they "
                               "cover were dropped{}",
                               file_name, dropped,
                               d.params.empty() ? "" : "; the ones below could be added (paste them, with the macros, by hand)"));
    return d;
  }
  if (d.params.empty()) return d;
  std::string c = lang == SourceLanguage::kCuda ? "//" : "#";
  std::string head = fmt::format("{} kopt: the search space kopt derived from {} (kopt annotate); every default is the "
                                 "original's value.\n",
                                 c, file_name);
  head += header_lines(d, c);
  for (const auto& p : prelude) head += p + "\n";
  for (const auto& p : postlude) head += p + "\n";
  std::string body = apply_edits(std::string(text), edits);
  if (lang == SourceLanguage::kPython) {
    // After a shebang or coding line, which must stay first.
    size_t at = 0;
    while (util::starts_with(std::string_view(body).substr(at), "#!") ||
           std::regex_search(body.substr(at, body.find('\n', at) - at), std::regex(R"(^#.*coding[:=])"))) {
      size_t e = body.find('\n', at);
      if (e == npos) break;
      at = e + 1;
    }
    d.instrumented = body.substr(0, at) + head + body.substr(at);
  } else {
    d.instrumented = head + body;
  }
  // The copy must read back as the space it declares.
  auto back = parse_annotations(d.instrumented, file_name);
  if (!back) return internal_error("the derived annotations do not parse (a kopt bug): " + back.error().message);
  return d;
}

util::Json to_json(const Derivation& d) {
  util::Json j = {{"file", d.file}, {"language", d.language == SourceLanguage::kCuda ? "cuda" : "python"},
                  {"annotated", d.annotated}};
  j["params"] = util::Json::array();
  for (const auto& p : d.params)
    j["params"].push_back({{"name", p.name}, {"origin", p.origin}, {"kind", param_kind_name(p.kind)},
                           {"site", derive_site_name(p.site)}, {"role", value_role_name(p.role)}, {"default", p.default_value},
                           {"values", p.values}, {"line", p.line}, {"reason", p.reason}});
  j["constraints"] = util::Json::array();
  for (const auto& c : d.constraints) j["constraints"].push_back({{"expr", c.expr}, {"reason", c.reason}});
  j["methods"] = util::Json::array();
  for (const auto& m : d.methods) j["methods"].push_back({{"id", m.id}, {"reason", m.reason}});
  j["notes"] = d.notes;
  return j;
}

std::string annotation_text(const Derivation& d) {
  std::string c = d.language == SourceLanguage::kCuda ? "//" : "#";
  std::string out = header_lines(d, c);
  for (const auto& n : d.notes) out += fmt::format("{} note: {}\n", c, n);
  return out;
}

}  // namespace kopt::search
