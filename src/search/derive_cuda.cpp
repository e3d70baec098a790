// The CUDA front end of the derivation (search/derive.h): named constants, #defines, literal launches (dim3 blocks
// too) and template arguments, __launch_bounds__, #pragma unroll, the relations the code states, and the launch_bounds method variant.
#include "search/derive_text.h"

namespace kopt::search::derive_detail {

namespace {

struct Launch {
  std::string kernel;
  size_t pos = 0;                  // the identifier of the kernel
  std::optional<Range> targs;      // the template argument list's inside
  std::vector<Range> targ_list;
  std::vector<Range> cfg;          // <<< args >>>
  std::vector<Range> grid_defs, block_defs;  // statements of the function defining variables the grid / block use
  std::vector<Range> block_deep_defs;        // and those defining the variables of those, and so on (4 levels)
  int line = 0;
};

struct Constant {
  std::string name;
  bool is_const = false, is_static = false, member = false;
  int64_t value = 0;
  Range init;
  size_t name_pos = 0;
  int line = 0;
  Range scope;  // the innermost braces around the declaration (the whole file at namespace scope)
};

// A const local whose initialiser is an expression (`const uint NUM_THREADS = BM * BN / (TM * TN)`), where it holds.
struct Alias {
  std::string init;
  size_t pos = 0;
  Range scope;
};

struct Use {
  std::string what;  // "block size of the launch of k at line 9"
  bool block = false;
  bool unroll_only = false;
  std::string kernel;  // the kernel launched, for a block use
  bool reaches_block = false;  // the block size follows it, directly or through other locals
  bool template_arg = false;   // a template argument (the value must be a compile-time constant)
  bool block_dim = false;      // one dimension of a dim3 block of several (`dim3 threads(TILE_DIM, BLOCK_ROWS)`)
};

// The name launched by the `<<<` at p of a masked source, back over its template arguments (`k<128><<<...>>>`).
struct LaunchedName {
  size_t begin = 0, end = 0;   // the name
  std::optional<Range> targs;  // inside its `<...>`, when it has them
};
LaunchedName launched_name(const std::string& m, size_t p) {
  LaunchedName n;
  size_t q = p;
  while (q > 0 && std::isspace(static_cast<unsigned char>(m[q - 1]))) --q;
  if (q > 0 && m[q - 1] == '>') {  // template arguments: find the matching '<' backwards
    int depth = 0;
    size_t k = q - 1;
    for (;; --k) {
      if (m[k] == '>')
        ++depth;
      else if (m[k] == '<' && --depth == 0)
        break;
      if (k == 0) break;
    }
    if (m[k] == '<') {
      n.targs = Range{k + 1, q - 1};
      q = k;
      while (q > 0 && std::isspace(static_cast<unsigned char>(m[q - 1]))) --q;
    }
  }
  n.end = q;
  while (q > 0 && word_char(m[q - 1])) --q;
  n.begin = q;
  return n;
}

class CudaDeriver {
 public:
  CudaDeriver(std::string_view text, std::string file, const std::vector<IncludedText>& included = {})
      : s_(text, SourceLanguage::kCuda), file_(std::move(file)), included_(included) {}

  Derivation run() {
    d_.file = file_;
    d_.language = SourceLanguage::kCuda;
    scan_preprocessor();
    scan_launches();
    scan_templates();
    scan_constants();
    derive_defines();
    derive_constants();
    derive_helper_arguments();
    derive_launch_literals();
    derive_launcher_blocks();
    derive_grid_stride_grids();
    derive_launch_bounds();
    derive_pragma_unroll();
    derive_static_asserts();
    derive_device_asserts();
    derive_thread_limits();
    derive_shared_memory();
    derive_dynamic_shared_memory();
    derive_per_thread_arrays();
    derive_launch_bounds_method();
    if (launches_.empty()) d_.notes.push_back(no_launch_note());
    return std::move(d_);
  }

  const std::vector<Edit>& edits() const { return edits_; }

  // Where the kernels of a file without a launch are launched: the launches of the local files it includes, by name
  // and line, else a library call or code kopt cannot see.
  std::string no_launch_note() const {
    std::vector<std::string> where;
    for (const auto& inc : included_) {
      Source src(inc.text, SourceLanguage::kCuda);
      std::vector<std::string> sites;
      for (size_t p = src.masked.find("<<<"); p != npos; p = src.masked.find("<<<", p + 3)) {
        const LaunchedName n = launched_name(src.masked, p);
        if (n.end > n.begin)
          sites.push_back(fmt::format("{} (line {})", src.masked.substr(n.begin, n.end - n.begin), src.line_of(p)));
      }
      if (!sites.empty()) where.push_back(fmt::format("{}: {}", inc.spelled, util::join(sites, ", ")));
    }
    if (where.empty())
      return "no kernel launch (<<<...>>>) in this file: its kernels are launched by code it includes (a project's "
             "host launcher, a library call), whose choices kopt does not read";
    return "no kernel launch (<<<...>>>) in this file; the local file(s) it includes launch " + util::join(where, "; ") +
           ". kopt derives from this file only and never rewrites another: to tune one of those launches, copy its "
           "launcher into this file or give its values as @kopt param lines (docs/ANNOTATIONS.md). Launches inside a "
           "library's headers (CUTLASS's device::Gemm, CUB) are not listed";
  }
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
          std::string suffix;
          if (auto v = int_literal(m[3].str(), &suffix)) {
            define_value_[name] = *v;
            if (!suffix.empty()) define_suffix_[name] = suffix;
          }
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
      const LaunchedName n = launched_name(m, p);
      if (n.targs) {
        l.targs = *n.targs;
        l.targ_list = split_args(m, n.targs->begin, n.targs->end);
      }
      l.kernel = m.substr(n.begin, n.end - n.begin);
      l.pos = n.begin;
      if (!l.kernel.empty() && l.cfg.size() >= 2) {
        l.grid_defs = defining_statements(l.cfg[0], l.pos);
        l.block_defs = defining_statements(l.cfg[1], l.pos);
        std::vector<Range> frontier = l.block_defs;
        for (int level = 0; level < 4 && !frontier.empty(); ++level) {
          std::vector<Range> next;
          for (const auto& r : frontier)
            for (const auto& d : defining_statements(r, l.pos))
              if (std::none_of(l.block_deep_defs.begin(), l.block_deep_defs.end(), [&](Range x) { return x.begin == d.begin; }) &&
                  std::none_of(l.block_defs.begin(), l.block_defs.end(), [&](Range x) { return x.begin == d.begin; })) {
                l.block_deep_defs.push_back(d);
                next.push_back(d);
              }
          frontier = std::move(next);
        }
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

  // The innermost braces enclosing `pos`: [the '{', the '}'] (the whole file at namespace scope).
  Range scope_of(size_t pos) const {
    const std::string& m = s_.masked;
    int depth = 0;
    for (size_t k = pos; k-- > 0;) {
      if (m[k] == '}') ++depth;
      else if (m[k] == '{' && depth-- == 0) {
        size_t e = match_close(m, k);
        return {k, e == npos ? m.size() : e};
      }
    }
    return {0, m.size()};
  }
  static bool inside(Range r, size_t p) { return p >= r.begin && p < r.end; }

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
      if (util::trim(head).size() >= 17 && util::trim(head).substr(util::trim(head).size() - 17) == "__launch_bounds__") {
        size_t lb = match_close(m, paren);  // __launch_bounds__(...) before the name
        paren = lb == npos ? npos : m.find('(', lb + 1);
        if (paren == npos) continue;
      }
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
        if (bend != npos) {
          template_bodies_.push_back({{body, bend}, std::set<std::string>(names.begin(), names.end())});
          template_body_of_[m.substr(b, e - b)] = {body, bend};
        }
      }
    }
  }

  void scan_constants() {
    static const std::string type =
        R"((unsigned\s+long\s+long|unsigned\s+long|unsigned\s+int|long\s+long|unsigned|int|long|short|uint|uint32_t|int32_t|int64_t|uint64_t|size_t))";
    static const std::regex decl(R"(((?:\b(?:static|inline|constexpr|const)\s+)*))" + type + R"(\s+([A-Za-z_]\w*)\s*=\s*([^;{}=]+);)");
    // A declaration list, `const uint BM = 64, BN = 64, BK = 8;`: each declarator a constant of its own (an initialiser
    // holding a comma, a call of several arguments, is not read here).
    static const std::regex list(R"(((?:\b(?:static|inline|constexpr|const)\s+)*))" + type +
                                 R"(\s+([A-Za-z_]\w*\s*=\s*[^;{}=,]+(?:,\s*[A-Za-z_]\w*\s*=\s*[^;{}=,]+)+);)");
    static const std::regex declarator(R"(([A-Za-z_]\w*)\s*=\s*([^,]+))");
    const std::string& m = s_.masked;
    for (auto it = std::sregex_iterator(m.begin(), m.end(), decl); it != std::sregex_iterator(); ++it) {
      const auto& mt = *it;
      size_t p = static_cast<size_t>(mt.position(0));
      if (p > 0 && (word_char(m[p - 1]))) continue;
      add_constant(mt[1], mt[3], static_cast<size_t>(mt.position(3)),
                   {static_cast<size_t>(mt.position(4)), static_cast<size_t>(mt.position(4) + mt.length(4))}, p);
    }
    for (auto it = std::sregex_iterator(m.begin(), m.end(), list); it != std::sregex_iterator(); ++it) {
      const auto& mt = *it;
      size_t p = static_cast<size_t>(mt.position(0));
      if (p > 0 && (word_char(m[p - 1]))) continue;
      const size_t from = static_cast<size_t>(mt.position(3));
      const std::string items = mt[3];
      for (auto d = std::sregex_iterator(items.begin(), items.end(), declarator); d != std::sregex_iterator(); ++d) {
        const size_t at = from + static_cast<size_t>(d->position(2));
        add_constant(mt[1], (*d)[1], from + static_cast<size_t>(d->position(1)), {at, at + static_cast<size_t>(d->length(2))}, p);
      }
    }
    auto by_position = [](const Constant& a, const Constant& b) { return a.name_pos < b.name_pos; };
    std::sort(constants_.begin(), constants_.end(), by_position);
    std::sort(computed_.begin(), computed_.end(), by_position);
  }

  // One declarator `name = init` of a declaration at p with qualifiers quals.
  void add_constant(const std::string& quals, const std::string& name, size_t name_pos, Range init_range, size_t p) {
    const std::string& m = s_.masked;
    Constant c;
    c.name = name;
    c.is_const = quals.find("const") != npos;
    c.is_static = quals.find("static") != npos;
    c.name_pos = name_pos;
    c.init = init_range;
    while (c.init.end > c.init.begin && std::isspace(static_cast<unsigned char>(m[c.init.end - 1]))) --c.init.end;
    c.line = s_.line_of(name_pos);
    c.scope = scope_of(p);
    std::string init = sv(m, c.init);
    if (auto v = int_literal(init)) {
      c.value = *v;
      c.member = c.is_static && inside_class(p);
      constants_.push_back(c);
    } else {
      if (c.is_const) aliases_[c.name].push_back({init, c.name_pos, c.scope});
      computed_.push_back(c);
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
  std::vector<Use> uses_of(const std::string& name, size_t skip, std::optional<Range> scope = std::nullopt) const {
    std::vector<Use> out;
    const std::string& m = s_.masked;
    for (size_t p : word_positions(m, name)) {
      if (p == skip) continue;
      if (scope && (!inside(*scope, p) || p < skip)) continue;  // another declaration's, or before this one
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
          out.push_back({fmt::format("template argument of {}<...> at line {}", l.kernel, line), false, false, "", false, true});
        else if (auto dim = block_dimension(l, p, name); dim && dim->block_dim) {
          out.push_back(*dim);
        } else if (dim) {
          out.push_back({fmt::format("launch configuration of {} at line {}", l.kernel, l.line)});
        } else if ((p >= l.cfg[1].begin && p < l.cfg[1].end) || within(l.block_defs)) {
          if (whole_argument(p, name))
            out.push_back({fmt::format("block size of the launch of {} at line {}", l.kernel, l.line), true, false, l.kernel, true});
          else
            out.push_back({fmt::format("block size (an expression of it) of the launch of {} at line {}", l.kernel, l.line), false,
                           false, "", true});
        }
        else if (within(l.block_deep_defs))
          out.push_back({fmt::format("block size (through other locals) of the launch of {} at line {}", l.kernel, l.line), false,
                         false, "", true});
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

  // `name` at `p` in the dim3 block of launch `l` that has several dimensions (`dim3 threads(TILE_DIM, BLOCK_ROWS)`):
  // the use as one dimension of it (`block_dim`), or, for `p` elsewhere in the statement declaring it (the grid of
  // `dim3 grid(w / TILE_DIM, ...), threads(...)`), a use with block_dim false; nullopt for any other `p`.
  std::optional<Use> block_dimension(const Launch& l, size_t p, const std::string& name) const {
    const std::string& m = s_.masked;
    std::string var;
    auto dims = dim3_args(l.cfg[1], l.pos, &var);
    if (!dims || dims->size() < 2) return std::nullopt;
    for (size_t i = 0; i < dims->size(); ++i)
      if (inside((*dims)[i], p)) {
        if (util::trim(sv(m, (*dims)[i])) != name) return std::nullopt;  // an expression of it: a block-size use
        Use u{fmt::format("block dimension {} of the launch of {} at line {}", static_cast<char>('x' + i), l.kernel, l.line)};
        u.reaches_block = true;
        u.block_dim = true;
        return u;
      }
    for (const auto& d : l.block_defs)
      if (inside(d, (*dims)[0].begin) && inside(d, p)) return Use{""};  // the same declaration, another declarator
    return std::nullopt;
  }

  // `name` at `p` is a whole argument: nothing but spaces between it and the nearest '(' '{' ',' '<<<' before it
  // and ')' '}' ',' ';' '>>>' after it (`<<<g, B>>>`, `dim3 block(B, 4)`, `int threads = B;`).
  bool whole_argument(size_t p, const std::string& name) const {
    const std::string& m = s_.masked;
    size_t a = p;
    while (a > 0 && std::isspace(static_cast<unsigned char>(m[a - 1]))) --a;
    size_t e = p + name.size();
    while (e < m.size() && std::isspace(static_cast<unsigned char>(m[e]))) ++e;
    bool left = a > 0 && (m[a - 1] == '(' || m[a - 1] == '{' || m[a - 1] == ',' || m[a - 1] == '<' || m[a - 1] == '=');
    bool right = e < m.size() && (m[e] == ')' || m[e] == '}' || m[e] == ',' || m[e] == ';' || m[e] == '>');
    return left && right;
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
    bool block = false, block_dim = false, unroll_only = true, any = false;
    for (const auto& u : uses) {
      if (u.what.empty()) continue;
      any = true;
      block_dim = block_dim || u.block_dim;
      if (u.block) {
        block = true;
        block_kernels->push_back(u.kernel);
      }
      if (!u.unroll_only) unroll_only = false;
      if (std::find(whats.begin(), whats.end(), u.what) == whats.end()) whats.push_back(u.what);
    }
    if (!any) return std::nullopt;
    auto rank = [](const std::string& w) {
      return w.rfind("block size", 0) == 0 || w.rfind("block dimension", 0) == 0 ? 0
             : w.rfind("template argument", 0) == 0                              ? 1
             : w.rfind("launch", 0) == 0                                         ? 2
                                                                                 : 3;
    };
    std::stable_sort(whats.begin(), whats.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    std::string r = whats[0];
    if (whats.size() > 1) r += "; also " + whats[1];
    if (whats.size() > 2) r += fmt::format(" and {} more", whats.size() - 2);
    ValueRole role = block       ? ValueRole::kBlockThreads
                     : block_dim   ? ValueRole::kBlockDim
                     : unroll_only ? ValueRole::kUnroll
                                   : ValueRole::kTile;
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

  static std::string warp_width_note(int line, const std::string& what) {
    return fmt::format("line {}: {} = 32 is the warp's width (32 threads on every NVIDIA GPU; lanes, shuffles and warp "
                       "counts assume it): left alone",
                       line, what);
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
      if (define_value_[name] == 32 && warp_width_name(name)) {
        warp_widths_.insert(name);
        d_.notes.push_back(warp_width_note(line, name));
        continue;
      }
      if (auto sf = define_suffix_.find(name); sf != define_suffix_.end()) {
        // A candidate's `-D NAME=v` is an int: the copy built at the default would not be the original.
        d_.notes.push_back(fmt::format("line {}: #define {} {}{} has a suffix (its type is not int): left alone", line, name,
                                       define_value_[name], sf->second));
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
      add_param(name, name, DeriveSite::kDefine, c->second, define_value_[name], line,
                          fmt::format("#define {} {} at line {}: {}", name, define_value_[name], line, c->first));
      for (auto& k : kernels) block_of_[k].push_back(d_.params.size() - 1);
      if (!guarded_.count(name)) {
        size_t ls = lines[0], le = s_.line_end(ls);
        edits_.push_back({ls, le - ls, fmt::format("#ifndef {}\n{}\n#endif", name, std::string(s_.text.substr(ls, le - ls)))});
      }
    }
  }

  // A non-const local is a tunable only as a block size that nothing assigns again (`x = ...`, `x *= 2`, `++x`, `&x`);
  // `within`: only there (a helper's body, for its formal argument).
  bool reassigned(const std::string& name, size_t decl_pos, std::optional<Range> within = std::nullopt) const {
    const std::string& m = s_.masked;
    for (size_t p : word_positions(m, name)) {
      if (p == decl_pos || (within && !inside(*within, p))) continue;
      size_t e = p + name.size();
      std::string before = p >= 2 ? m.substr(p - 2, 2) : "";
      size_t a = m.find_first_not_of(" \t", e);
      if (a != npos && (m.compare(a, 2, "++") == 0 || m.compare(a, 2, "--") == 0 ||
                        (a + 1 < m.size() && std::string("+-*/%|&^<>").find(m[a]) != npos && m[a + 1] == '=' && m[a] != '<' && m[a] != '>') ||
                        (m[a] == '=' && a + 1 < m.size() && m[a + 1] != '=')))
        return true;
      if (before == "++" || before == "--" || (p > 0 && m[p - 1] == '&')) return true;  // &x: it may be written
    }
    return false;
  }

  size_t back_over_space(size_t k) const {
    while (k > 0 && std::isspace(static_cast<unsigned char>(s_.masked[k - 1]))) --k;
    return k;
  }

  // The word `w` ends at k (a whole word).
  bool word_before(size_t k, std::string_view w) const {
    const std::string& m = s_.masked;
    return k >= w.size() && m.compare(k - w.size(), w.size(), w) == 0 && (k == w.size() || !word_char(m[k - w.size() - 1]));
  }

  // The `if (C)` whose braces open at `brace`: where the `if` and C's parentheses are, and whether `else` comes before
  // the `if`; nullopt where the braces follow no `if (...)`.
  struct IfHead {
    size_t if_pos = 0, open = 0, close = 0;
    bool after_else = false;
  };
  std::optional<IfHead> if_head(size_t brace) const {
    const std::string& m = s_.masked;
    const size_t k = back_over_space(brace);
    if (k == 0 || m[k - 1] != ')') return std::nullopt;
    const size_t open = match_open(m, k - 1);
    if (open == npos) return std::nullopt;
    const size_t w = back_over_space(open);
    if (!word_before(w, "if")) return std::nullopt;
    return IfHead{w - 2, open, k - 1, word_before(back_over_space(w - 2), "else")};
  }

  // The branch a scope is the body of: "if (M >= 128 && N >= 128) at line 12", "else at line 18"; "" for a plain block.
  std::string branch_of(Range scope) const {
    if (scope.begin == 0 && scope.end == s_.masked.size()) return "";
    const size_t k = back_over_space(scope.begin);
    if (word_before(k, "else")) return fmt::format("else at line {}", s_.line_of(k - 4));
    auto h = if_head(scope.begin);
    if (!h) return "";
    std::string cond = util::trim(std::string(s_.text.substr(h->open, h->close + 1 - h->open)));
    return fmt::format("{} {} at line {}", h->after_else ? "else if" : "if", cond, s_.line_of(h->if_pos));
  }

  // The condition under which the braces `scope` run, over solve's integer arguments (the run's dims): `C` for the block
  // of `if (C)`, `!(C)` for its `else`. "" for an else-if chain, a condition kopt's expressions cannot read (a call, a
  // cast), a name that is not an integer argument of solve, or braces outside solve's body.
  std::string branch_condition(Range scope) const {
    const std::string& m = s_.masked;
    auto condition = [&](size_t brace) -> std::optional<std::string> {  // `if (C) {` not after `else`: C
      auto h = if_head(brace);
      if (!h || h->after_else) return std::nullopt;
      return util::trim(m.substr(h->open + 1, h->close - h->open - 1));
    };
    std::optional<std::string> c;
    const size_t k = back_over_space(scope.begin);
    if (word_before(k, "else")) {
      const size_t e = back_over_space(k - 4);
      if (e == 0 || m[e - 1] != '}') return "";
      const size_t ob = match_open(m, e - 1);
      if (ob == npos || !(c = condition(ob))) return "";
      c = "!(" + *c + ")";
    } else if (!(c = condition(scope.begin))) {
      return "";
    }
    const std::string cond = std::regex_replace(*c, std::regex(R"(\s+)"), " ");
    auto e = Expr::parse(cond);
    if (!e) return "";
    const size_t body = function_start(scope.begin);
    const size_t head = m.find_last_of(";}", body);
    std::smatch sm;
    const std::string h = m.substr(head == npos ? 0 : head + 1, body - (head == npos ? 0 : head + 1));
    if (!std::regex_search(h, sm, std::regex(R"(\bsolve\s*\(([^)]*)\))"))) return "";
    const std::string params = sm[1];
    for (const auto& n : e->names())
      if (!std::regex_search(params, std::regex(R"(\b(int|long|unsigned|size_t|int64_t|int32_t|uint32_t|uint64_t|uint)\s+(const\s+)?)" + n +
                                                R"(\s*(,|$))")))
        return "";
    return cond;
  }

  // A constant declared once in each of several disjoint scopes (the branches of an `if (...) {...} else {...}`):
  // each declaration is its own parameter, its uses those of its scope.
  bool one_per_branch(const std::string& name) const {
    std::vector<const Constant*> decls;
    for (const auto& c : constants_)
      if (c.name == name) decls.push_back(&c);
    for (const auto& c : computed_)
      if (c.name == name) return false;
    for (const auto* a : decls) {
      if (!a->is_const || (a->scope.begin == 0 && a->scope.end == s_.masked.size())) return false;
      for (const auto* b : decls)
        if (a != b && (inside(a->scope, b->name_pos) || inside(b->scope, a->name_pos))) return false;
    }
    return decls.size() > 1;
  }

  // The role a constant's uses and name give it.
  ValueRole role_of(const std::string& name, ValueRole from_uses) const {
    if (per_thread_name(name) && (from_uses == ValueRole::kTile || from_uses == ValueRole::kBlockThreads)) return ValueRole::kPerThread;
    return from_uses;
  }

  void derive_constants() {
    std::map<std::string, int> seen;
    for (const auto& c : constants_) ++seen[c.name];
    for (const auto& c : constants_) {
      bool branch = false;
      if (seen[c.name] > 1) {
        if (!c.is_const) continue;  // a local variable declared again (a loop index): nothing to say
        branch = one_per_branch(c.name);
        if (!branch) {
          std::vector<std::string> lines;
          for (const auto& o : constants_)
            if (o.name == c.name) lines.push_back(std::to_string(o.line));
          if (c.line == std::stoi(lines[0]))
            d_.notes.push_back(fmt::format("line {}: {} is declared {} times (lines {}): not one constant, so it is not derived "
                                           "(one parameter per declaration needs each in its own braces, as in an if/else pair)",
                                           c.line, c.name, lines.size(), util::join(lines, ", ")));
          continue;
        }
      }
      if (c.value == 32 && warp_width_name(c.name)) {
        if (c.is_const) {
          warp_widths_.insert(c.name);
          d_.notes.push_back(warp_width_note(c.line, c.name));
        }
        continue;
      }
      std::vector<std::string> kernels;
      bool file_scope = c.scope.begin == 0 && c.scope.end == s_.masked.size();
      auto uses = uses_of(c.name, c.name_pos, file_scope || c.member ? std::nullopt : std::optional<Range>(c.scope));
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
      std::string where = branch ? branch_of(c.scope) : "";
      if (branch) scoped_param_.push_back({c.name, c.scope, c.name_pos, name});
      else const_param_[c.name] = name;
      DerivedParam& p =
          add_param(name, c.name, c.member ? DeriveSite::kStaticMember : DeriveSite::kNamedConstant, role_of(c.name, cl->second), c.value,
                c.line,
                fmt::format("{} at line {}{}: {}", decl, c.line,
                            branch ? fmt::format(" (one of {} declarations, in the branch {})", seen[c.name],
                                                 where.empty() ? "block" : where)
                                   : "",
                            cl->first));
      if (branch) p.when = branch_condition(c.scope);
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
        if (auto chooser = dispatched(l, i, *v)) {
          d_.notes.push_back(fmt::format("line {}: template argument {} = {} of {}<...> is chosen by {} (a dispatch over "
                                         "instantiations on a run-time value): left alone; what it switches on chooses it",
                                         l.line, tname, *v, l.kernel, *chooser));
          continue;
        }
        std::string name = s_.unique_name(upper(l.kernel) + "_" + upper(tname));
        add_param(name, tname, DeriveSite::kTemplateLiteral, role_of(tname, ValueRole::kTile), *v, l.line,
                  fmt::format("template argument {} = {} of {}<...> at line {}", tname, *v, l.kernel, l.line));
        define_macro(name, *v);
        edits_.push_back({l.targ_list[i].begin, l.targ_list[i].end - l.targ_list[i].begin, name});
        site_targs.push_back({*v, name});
        targ_params[{l.kernel, i}] = name;
        targ_site_[l.kernel].push_back({i, name});
        site_targ_param_[{l.pos, i}] = name;
      }
      std::string suffix;
      auto b = int_literal(sv(m, l.cfg[1]), &suffix);
      if (!b || !suffix.empty()) {
        derive_dim3_block(l, site_targs);
        continue;
      }
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
      } else if (grid_stride(l.kernel)) {
        d_.notes.push_back(fmt::format("line {}: {} strides over the grid (a grid-stride loop): any block size covers the data",
                                       l.line, l.kernel));
      } else if (!int_literal(sv(m, l.cfg[0]))) {
        d_.notes.push_back(fmt::format("line {}: the grid of {} does not divide by its literal block size {}: other block "
                                       "sizes may cover the data differently (a wrong result prunes them)",
                                       l.line, l.kernel, *b));
      }
    }
  }

  // A literal template argument `v` (position `i`) of launch `l` that the launching function picks among others by a
  // run-time value: another launch of the kernel there has another literal at `i`, and the function compares with `v`
  // (`case 256:`, `== 16`): cuda-samples' reduction `switch (threads) { case 512: reduce<512><<<...>>>; ... }`,
  // matrixMul's `if (block_size == 16) mm<16>...; else mm<32>...`. The code it returns (`case 256:`); nullopt if none.
  std::optional<std::string> dispatched(const Launch& l, size_t i, int64_t v) const {
    const std::string& m = s_.masked;
    const size_t fn = function_start(l.pos);
    std::set<int64_t> literals{v};
    bool other = false;
    for (const auto& o : launches_)
      if (o.pos != l.pos && o.kernel == l.kernel && function_start(o.pos) == fn && i < o.targ_list.size()) {
        auto w = int_literal(sv(m, o.targ_list[i]));
        other = other || !w || *w != v;
        if (w) literals.insert(*w);
      }
    if (!other) return std::nullopt;
    const size_t end = fn == 0 ? m.size() : match_close(m, fn);
    const std::string body = m.substr(fn, (end == npos ? m.size() : end) - fn);
    // The comparison with this launch's literal, else with another's (the `else` of `if (b == 16) k<16> else k<32>`).
    std::vector<int64_t> order{v};
    for (int64_t x : literals)
      if (x != v) order.push_back(x);
    for (int64_t x : order) {
      const std::string n = std::to_string(x);
      std::smatch hit;
      if (std::regex_search(body, hit, std::regex("\\bcase\\s+" + n + "[uUlL]*\\s*:")) ||
          std::regex_search(body, hit, std::regex("[=!]=\\s*" + n + "[uUlL]*\\b")) ||
          std::regex_search(body, hit, std::regex("\\b" + n + "[uUlL]*\\s*[=!]=")))
        return fmt::format("`{}` at line {}", util::trim(hit.str()), s_.line_of(fn + static_cast<size_t>(hit.position(0))));
    }
    return std::nullopt;
  }

  // The arguments of a launch's dim3 block or grid: inline (`dim3(32, 8)`), or those of the one `dim3 NAME(...)` /
  // `dim3 NAME{...}` statement of the launching function before it, NAME never assigned again (`var` gets NAME).
  std::optional<std::vector<Range>> dim3_args(Range arg, size_t before, std::string* var) const {
    const std::string& m = s_.masked;
    std::string a = sv(m, arg);
    if (util::starts_with(a, "dim3") && (a.size() == 4 || !word_char(a[4]))) {
      size_t open = m.find_first_not_of(" \t\n", arg.begin + 4);
      if (open >= arg.end || (m[open] != '(' && m[open] != '{')) return std::nullopt;
      size_t close = match_close(m, open);
      if (close == npos || close + 1 != arg.end) return std::nullopt;
      return split_args(m, open + 1, close);
    }
    if (!util::is_identifier(a)) return std::nullopt;
    size_t from = function_start(before);
    std::string region = m.substr(from, before - from);
    // `dim3 a(...)`, or `a(...)` later in a dim3 declaration list (`dim3 grid(w / T, h / T), threads(T, R);`).
    std::regex dd("\\b" + a + R"(\s*([\(\{]))");
    std::vector<size_t> opens;
    for (auto it = std::sregex_iterator(region.begin(), region.end(), dd); it != std::sregex_iterator(); ++it) {
      size_t k = from + static_cast<size_t>(it->position(0));
      while (k > from && std::isspace(static_cast<unsigned char>(m[k - 1]))) --k;
      bool decl = k >= from + 4 && m.compare(k - 4, 4, "dim3") == 0 && (k == 4 || !word_char(m[k - 5]));
      if (!decl && k > from && m[k - 1] == ',') {  // back over the list's earlier declarators to the statement's start
        int depth = 0;
        size_t j = k - 1;
        while (j > from) {
          char c = m[--j];
          if (c == ')' || c == '}') ++depth;
          else if ((c == '(' || c == '{') && depth > 0) --depth;
          else if (depth == 0 && (c == ';' || c == '{' || c == '}')) {
            ++j;
            break;
          }
        }
        const std::string st = util::trim(m.substr(j, k - j));
        decl = util::starts_with(st, "dim3") && st.size() > 4 && !word_char(st[4]);
      }
      // (A declaration in another branch, `if (...) { dim3 b(...); k<<<g, b>>>(); } else { dim3 b(...); ... }`, is not
      // this launch's.)
      size_t open = from + static_cast<size_t>(it->position(1));
      if (decl && inside(scope_of(open), before)) opens.push_back(open);
    }
    std::regex assign("\\b" + a + R"(\s*(\.\s*[xyz]\s*)?(=(?!=)|\+=|-=|\*=|/=))");
    if (opens.size() != 1 || std::regex_search(region, assign)) return std::nullopt;
    size_t close = match_close(m, opens[0]);
    if (close == npos || close > before) return std::nullopt;
    *var = a;
    return split_args(m, opens[0] + 1, close);
  }

  // The body of each function whose head has `kw` (`__global__`, `__device__`), by the function's name.
  std::vector<std::pair<std::string, Range>> function_bodies(std::string_view kw) const {
    const std::string& m = s_.masked;
    std::vector<std::pair<std::string, Range>> out;
    for (size_t g : word_positions(m, kw)) {
      size_t paren = m.find('(', g);
      size_t stop = m.find_first_of(";{}=", g);
      if (paren == npos || (stop != npos && stop < paren)) continue;
      std::string head = m.substr(g, paren - g);
      if (util::trim(head).size() >= 17 && util::trim(head).substr(util::trim(head).size() - 17) == "__launch_bounds__") {
        size_t c = match_close(m, paren);
        if (c == npos) continue;
        paren = m.find('(', c + 1);
        if (paren == npos) continue;
        head = m.substr(g, paren - g);
      }
      size_t e = head.find_last_not_of(" \t\n");
      if (e == npos) continue;
      size_t b = e + 1;
      while (b > 0 && word_char(head[b - 1])) --b;
      size_t close = match_close(m, paren);
      size_t body = close == npos ? npos : m.find_first_not_of(" \t\n", close + 1);
      if (body == npos || m[body] != '{') continue;
      size_t end = match_close(m, body);
      if (end == npos) continue;
      out.push_back({head.substr(b, e + 1 - b), {body, end}});
    }
    return out;
  }

  // Integer literals of s_.masked[r] by value, each with the line of its first appearance.
  void literals_in(Range r, std::map<int64_t, int>& out) const {
    const std::string& m = s_.masked;
    for (size_t i = r.begin; i < r.end;) {
      if (!std::isdigit(static_cast<unsigned char>(m[i])) || (i > 0 && (word_char(m[i - 1]) || m[i - 1] == '.'))) {
        ++i;
        continue;
      }
      size_t e = i;
      while (e < r.end && std::isdigit(static_cast<unsigned char>(m[e]))) ++e;
      size_t f = e;
      while (f < r.end && std::string("uUlL").find(m[f]) != npos) ++f;
      bool number = f >= r.end || (m[f] != '.' && !word_char(m[f]));
      if (number) {
        int64_t v = small_number(m.substr(i, e - i));
        if (v >= 0 && !out.count(v)) out[v] = s_.line_of(i);
      }
      i = f;
    }
  }

  // A launch whose block is a dim3 of integer literals (`dim3 block(16, 16)`, `dim3(32, 8)`): each dimension above 1
  // is a parameter, their product at most 1024; literals B and B - 1 in the grid follow the dimension B (per axis
  // where the grid is a dim3 too). The safe rule: when such a value (or, from 8 up, its neighbour: `tile[16][17]`)
  // appears in the kernel's body, a __device__ function, a file-scope __shared__ array or the site's template
  // arguments, the kernel may hard-code its block, and the launch is left alone with a note.
  void derive_dim3_block(const Launch& l, const std::vector<std::pair<int64_t, std::string>>& site_targs) {
    const std::string& m = s_.masked;
    std::string bvar, gvar;
    auto dims = dim3_args(l.cfg[1], l.pos, &bvar);
    if (!dims || dims->empty() || dims->size() > 3) return;
    std::vector<int64_t> vals;
    std::vector<std::string> shown;
    for (auto r : *dims) {
      std::string suffix;
      auto v = int_literal(sv(m, r), &suffix);
      if (!v || !suffix.empty() || *v < 1) return;  // a named or computed dimension: derive_thread_limits reads it
      vals.push_back(*v);
      shown.push_back(std::to_string(*v));
    }
    if (std::none_of(vals.begin(), vals.end(), [](int64_t v) { return v > 1; })) return;
    std::string block = fmt::format("dim3({})", util::join(shown, ", "));
    auto leave = [&](const std::string& why) {
      d_.notes.push_back(fmt::format("line {}: the {} block of the launch of {} is left alone: {}", l.line, block, l.kernel, why));
    };
    auto gdims = dim3_args(l.cfg[0], l.pos, &gvar);
    size_t fn = function_start(l.pos);
    for (const std::string& var : {bvar, gvar}) {
      int n = 0;
      for (const auto& o : launches_)
        if (!var.empty() && function_start(o.pos) == fn && (sv(m, o.cfg[0]) == var || sv(m, o.cfg[1]) == var)) ++n;
      if (n > 1) return leave(fmt::format("{} is used by more than one launch", var));
    }
    std::map<int64_t, int> inside;
    bool defined = false;
    std::vector<Range> globals;
    for (const auto& [name, body] : function_bodies("__global__")) {
      globals.push_back(body);
      if (name == l.kernel) defined = true, literals_in(body, inside);
    }
    for (const auto& [name, body] : function_bodies("__device__")) literals_in(body, inside);
    for (size_t sh : word_positions(m, "__shared__")) {
      bool in_kernel = std::any_of(globals.begin(), globals.end(), [&](Range g) { return sh > g.begin && sh < g.end; });
      size_t semi = m.find(';', sh);
      if (!in_kernel && semi != npos) literals_in({sh, semi}, inside);
    }
    if (!defined) return leave(fmt::format("{} is not defined in this file, so its code cannot be checked for the block's sizes", l.kernel));
    for (int64_t v : vals) {
      if (v <= 1) continue;
      for (int64_t w : {v, v - 1, v + 1}) {
        if (w != v && v < 8) continue;
        if (auto it = inside.find(w); it != inside.end())
          return leave(fmt::format("{} also appears in the kernel's code (line {}): it may hard-code its block", w, it->second));
      }
      for (const auto& [tv, tn] : site_targs)
        if (tv == v) return leave(fmt::format("{} is also the template argument {}", v, tn));
    }
    static const char* const kAxis[] = {"X", "Y", "Z"};
    std::vector<std::string> names(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) {
      if (vals[i] <= 1) continue;
      names[i] = s_.unique_name(upper(l.kernel) + "_BLOCK_" + kAxis[i]);
      add_param(names[i], sv(m, (*dims)[i]), DeriveSite::kLaunchLiteral, ValueRole::kBlockDim, vals[i], l.line,
                fmt::format("literal block {} = {} of {} at the launch of {} at line {}", static_cast<char>('x' + i), vals[i], block,
                            l.kernel, l.line));
      define_macro(names[i], vals[i]);
      edits_.push_back({(*dims)[i].begin, (*dims)[i].end - (*dims)[i].begin, names[i]});
    }
    std::vector<std::string> named;
    for (const auto& n : names)
      if (!n.empty()) named.push_back(n);
    if (named.size() > 1)
      add_constraint(fmt::format("{} <= {}", util::join(named, " * "), kMaxThreadsPerBlock),
                     fmt::format("threads per block of the launch of {} at line {} (at most {})", l.kernel, l.line, kMaxThreadsPerBlock));
    // The grid: per axis where it is a dim3 (an argument, or the statements defining the variable it is), else the
    // whole expression (and the statements defining its variable) against every dimension.
    std::vector<std::pair<std::vector<Range>, std::vector<size_t>>> parts;
    std::vector<size_t> all;
    for (size_t i = 0; i < names.size(); ++i)
      if (!names[i].empty()) all.push_back(i);
    if (gdims) {
      for (size_t i = 0; i < gdims->size(); ++i) {
        std::vector<Range> rs{(*gdims)[i]};
        if (util::is_identifier(sv(m, (*gdims)[i]))) {
          auto defs = defining_statements((*gdims)[i], l.pos);
          rs.insert(rs.end(), defs.begin(), defs.end());
        }
        if (i < names.size() && !names[i].empty()) parts.push_back({rs, {i}});
      }
    } else {
      std::vector<Range> rs{l.cfg[0]};
      if (util::is_identifier(sv(m, l.cfg[0]))) rs.insert(rs.end(), l.grid_defs.begin(), l.grid_defs.end());
      parts.push_back({rs, all});
    }
    bool follows = false;
    for (const auto& [ranges, axes] : parts) {
      for (const auto& g : ranges) {
        for (size_t i = g.begin; i < g.end;) {  // each integer literal (not part of a word or a float)
          size_t e = i;
          while (e < g.end && std::isdigit(static_cast<unsigned char>(m[e]))) ++e;
          bool literal = e > i && (i == 0 || (!word_char(m[i - 1]) && m[i - 1] != '.')) && (e >= m.size() || (m[e] != '.' && !word_char(m[e])));
          if (!literal) {
            i = std::max(e, i + 1);
            continue;
          }
          int64_t v = small_number(m.substr(i, e - i));
          std::vector<std::string> to;
          for (size_t a : axes) {
            if (v == vals[a]) to.push_back(names[a]);
            else if (v == vals[a] - 1 && v > 0) to.push_back("(" + names[a] + " - 1)");
          }
          if (to.size() == 1) {
            edits_.push_back({i, e - i, to[0]});
            follows = true;
          } else if (to.size() > 1) {
            d_.notes.push_back(fmt::format("line {}: the literal {} in the grid of {} could follow more than one block dimension: "
                                           "left alone (a block that covers the data differently computes a wrong result and is pruned)",
                                           s_.line_of(i), v, l.kernel));
          }
          i = e;
        }
      }
    }
    if (!follows && !int_literal(sv(m, l.cfg[0])))
      d_.notes.push_back(fmt::format("line {}: the grid of {} does not divide by its literal block {}: other block sizes may cover "
                                     "the data differently (a wrong result prunes them)",
                                     l.line, l.kernel, block));
  }

  // The kernel's body has a grid-stride loop (`i += blockDim.x * gridDim.x`, `i += gridDim.x * blockDim.x`, or a
  // stride variable computed so): it covers the data with any grid and any block.
  bool grid_stride(const std::string& kernel) const {
    static const std::regex stride(R"((blockDim\.x\s*\*\s*gridDim\.x|gridDim\.x\s*\*\s*blockDim\.x))");
    for (const auto& [name, body] : function_bodies("__global__"))
      if (name == kernel) {
        std::string b = s_.masked.substr(body.begin, body.end - body.begin);
        return std::regex_search(b, stride);
      }
    return false;
  }

  // A literal grid at the launch of a kernel with a grid-stride loop: the number of blocks is free.
  void derive_grid_stride_grids() {
    const std::string& m = s_.masked;
    for (const auto& l : launches_) {
      std::string suffix;
      auto g = int_literal(sv(m, l.cfg[0]), &suffix);
      if (!g || !suffix.empty() || *g < 2 || !grid_stride(l.kernel)) continue;
      std::string name = s_.unique_name(upper(l.kernel) + "_GRID");
      add_param(name, sv(m, l.cfg[0]), DeriveSite::kLaunchLiteral, ValueRole::kGridBlocks, *g, l.line,
                fmt::format("literal grid {} of the launch of {} at line {}: {} strides over the grid (a grid-stride loop), so "
                            "any number of blocks covers the data",
                            *g, l.kernel, l.line, l.kernel));
      define_macro(name, *g);
      edits_.push_back({l.cfg[0].begin, l.cfg[0].end - l.cfg[0].begin, name});
    }
  }

  struct HostFunction {
    std::string name;
    std::vector<std::string> tparams, params;  // template parameter names; function parameter names
    Range body;
    size_t def_pos = 0;
  };

  // Host functions defined in the file (not __global__ / __device__) whose body launches a kernel: the launcher
  // helpers of `launch_scale<256>(x, n)` and `launch(x, n, 256)`.
  std::vector<HostFunction> launching_helpers() const {
    const std::string& m = s_.masked;
    std::vector<HostFunction> out;
    static const std::regex head(R"((^|[;}\n])[ \t]*(template\s*<([^<>]*)>\s*)?((?:static|inline|__host__|extern\s+"C")\s+)*(?:void|int|cudaError_t|bool|auto)\s+([A-Za-z_]\w*)\s*\()");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), head); it != std::sregex_iterator(); ++it) {
      HostFunction f;
      f.name = (*it)[5];
      size_t paren = static_cast<size_t>(it->position(0) + it->length(0) - 1);
      size_t close = match_close(m, paren);
      if (close == npos) continue;
      size_t body = m.find_first_not_of(" \t\n", close + 1);
      if (body == npos || m[body] != '{') continue;
      size_t end = match_close(m, body);
      if (end == npos) continue;
      f.body = {body, end};
      f.def_pos = static_cast<size_t>(it->position(5));
      bool launches = std::any_of(launches_.begin(), launches_.end(), [&](const Launch& l) { return inside(f.body, l.pos); });
      if (!launches) continue;
      auto last_word = [](std::string a) {
        a = util::trim(a.substr(0, a.find('=')));
        size_t k = a.size();
        while (k > 0 && word_char(a[k - 1])) --k;
        return a.substr(k);
      };
      if ((*it)[2].matched) {
        std::string tl = (*it)[3];
        for (auto r : split_args(tl, 0, tl.size())) f.tparams.push_back(last_word(sv(tl, r)));
      }
      for (auto r : split_args(m, paren + 1, close)) f.params.push_back(last_word(sv(m, r)));
      out.push_back(f);
    }
    return out;
  }

  // Literal arguments at the call sites of launcher helpers: a template argument (`launch_scale<256>(...)`) or a
  // function argument (`launch(x, n, 256)`) that the helper passes to a launch. One parameter per literal; where
  // the helper has one call site, its parameter reads as the derived one inside its body (constraints follow).
  void derive_helper_arguments() {
    const std::string& m = s_.masked;
    for (const auto& f : launching_helpers()) {
      std::vector<size_t> calls;
      for (size_t p : word_positions(m, f.name))
        if (p != f.def_pos && !inside(f.body, p)) calls.push_back(p);
      for (size_t p : calls) {
        size_t q = m.find_first_not_of(" \t\n", p + f.name.size());
        if (q == npos) continue;
        std::vector<Range> targs;
        if (m[q] == '<') {
          size_t tc = match_close(m, q);
          if (tc == npos) continue;
          targs = split_args(m, q + 1, tc);
          q = m.find_first_not_of(" \t\n", tc + 1);
        }
        if (q == npos || m[q] != '(') continue;
        size_t ac = match_close(m, q);
        if (ac == npos) continue;
        auto args = split_args(m, q + 1, ac);
        int line = s_.line_of(p);
        auto derive_arg = [&](Range r, const std::string& formal, bool is_template) {
          std::string suffix;
          auto v = int_literal(sv(m, r), &suffix);
          if (!v || !suffix.empty() || formal.empty()) return;
          if (reassigned(formal, npos, f.body)) {
            d_.notes.push_back(fmt::format("line {}: argument {} = {} of {}(...) is assigned again in {} before its launch: "
                                           "the value passed is not the one launched, left alone",
                                           line, formal, *v, f.name, f.name));
            return;
          }
          std::vector<std::string> kernels;
          auto cl = classify(uses_of(formal, f.body.begin, f.body), &kernels);
          if (!cl) {
            d_.notes.push_back(fmt::format("line {}: argument {} = {} of {}(...) is not used in a launch, template argument, "
                                           "shared-memory size or loop bound of {}: left alone",
                                           line, formal, *v, f.name, f.name));
            return;
          }
          std::string name = s_.unique_name(upper(f.name) + "_" + upper(formal));
          add_param(name, formal, DeriveSite::kHelperArgument, role_of(formal, cl->second), *v, line,
                    fmt::format("{} argument {} = {} of the launcher helper {} at line {}: in {}, {}",
                                is_template ? "template" : "function", formal, *v, f.name, line, f.name, cl->first));
          define_macro(name, *v);
          edits_.push_back({r.begin, r.end - r.begin, name});
          for (auto& k : kernels) block_of_[k].push_back(d_.params.size() - 1);
          if (calls.size() == 1) scoped_param_.push_back({formal, f.body, f.body.begin, name});
        };
        for (size_t i = 0; i < targs.size() && i < f.tparams.size(); ++i) derive_arg(targs[i], f.tparams[i], true);
        for (size_t i = 0; i < args.size() && i < f.params.size(); ++i) derive_arg(args[i], f.params[i], false);
      }
    }
  }

  // Identifiers of an expression.
  static std::set<std::string> identifiers_of(const std::string& e) {
    static const std::regex ident(R"([A-Za-z_]\w*)");
    std::set<std::string> out;
    for (auto it = std::sregex_iterator(e.begin(), e.end(), ident); it != std::sregex_iterator(); ++it) out.insert(it->str());
    return out;
  }

  // The names an expression reads as values: its identifiers but for C++ words, types, and those called, templated or
  // qualified (`std::min<uint32_t>(1024, d / vec_size)` -> d, vec_size).
  static std::vector<std::string> operands_of(const std::string& e) {
    static const std::regex ident(R"(\b([A-Za-z_]\w*)\s*(::|<|\()?)");
    static const std::set<std::string> words = {"int",    "unsigned", "long",    "short",   "char",     "float",    "double",
                                                "const",  "size_t",   "int32_t", "int64_t", "uint32_t", "uint64_t", "static_cast",
                                                "sizeof", "auto",     "true",    "false",   "nullptr"};
    std::set<std::string> seen;
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(e.begin(), e.end(), ident); it != std::sregex_iterator(); ++it) {
      std::string w = (*it)[1];
      if ((*it)[2].matched || words.count(w) || std::isdigit(static_cast<unsigned char>(w[0])) || !seen.insert(w).second)
        continue;
      out.push_back(w);
    }
    return out;
  }

  bool inside_device_code(size_t pos) const {
    for (const char* kw : {"__global__", "__device__"})
      for (const auto& [name, body] : function_bodies(kw))
        if (inside(body, pos)) return true;
    return false;
  }

  // A block size the launcher computes at run time (`const int block_size = std::min(1024, (N / 8 + 31) / 32 * 32);`,
  // `dim3 block((N / 4 + 31) / 32 * 32)`, `<<<M, std::min(N, 1024)>>>`): one parameter whose value 0 keeps the
  // launcher's own expression (the default) and 32..1024 replace it; the locals computed from it (`num_warps`,
  // a dynamic shared-memory size, the grid) follow. The kernel already takes whatever block its launcher computes;
  // one that needs a minimum (a thread per element) computes a wrong result with a smaller block and is pruned.
  void derive_launcher_blocks() {
    const std::string& m = s_.masked;
    std::set<std::string> followed;  // locals derived here, or computed from one
    auto depends = [&](const std::string& e) {
      for (const auto& w : identifiers_of(e))
        if (followed.count(w)) return true;
      return false;
    };
    auto add = [&](std::string name, const std::string& origin, Range r, int line, std::string reason) {
      DerivedParam& p =
          add_param(name, origin, DeriveSite::kLauncherLocal, ValueRole::kLauncherThreads, 0, line, std::move(reason));
      p.follows = operands_of(sv(m, r));
      define_macro(name, 0);
      edits_.push_back({r.begin, r.end - r.begin, fmt::format("({0} == 0 ? ({1}) : {0})", name, sv(m, r))});
    };
    std::vector<Constant> locals = computed_;
    std::sort(locals.begin(), locals.end(), [](const Constant& a, const Constant& b) { return a.name_pos < b.name_pos; });
    for (const auto& c : locals) {
      bool file_scope = c.scope.begin == 0 && c.scope.end == m.size();
      if (file_scope || c.member || inside_device_code(c.name_pos)) continue;
      std::string init = sv(m, c.init);
      if (depends(init)) {
        followed.insert(c.name);
        continue;
      }
      auto uses = uses_of(c.name, c.name_pos, c.scope);
      bool reaches = false, targ = false, direct = false;
      std::string what;
      for (const auto& u : uses) {
        direct = direct || u.block;
        reaches = reaches || u.reaches_block;
        targ = targ || u.template_arg;
        if (u.reaches_block && what.empty()) what = u.what;
      }
      // The block itself, or a local named for it that the block follows (`num_warps = (block_size + 31) / 32`);
      // not a divisor of it (`d / vec_size`).
      static const std::regex block_name(R"(block|thread|warp|nthr|^bs$|^tpb$)", std::regex::icase);
      bool named = std::regex_search(c.name, block_name) && !per_thread_name(c.name);
      if (!reaches || (!direct && !named) || translate(init, c.name_pos)) continue;
      if (targ) {
        d_.notes.push_back(fmt::format("line {}: {} = {} sets a block size but is also a template argument (a compile-time "
                                       "constant): left alone",
                                       c.line, c.name, util::trim(init)));
        continue;
      }
      if (!c.is_const && reassigned(c.name, c.name_pos)) {
        d_.notes.push_back(fmt::format("line {}: {} sets a block size but is assigned again: left alone", c.line, c.name));
        continue;
      }
      if (util::starts_with(c.name, "KOPT_")) continue;
      add(s_.unique_name(c.name + "_VALUE"), c.name, c.init, c.line,
          fmt::format("{} = {} at line {}, computed by the launcher: {} (0: the launcher's own value; else that many threads)",
                      c.name, util::trim(init), c.line, what));
      followed.insert(c.name);
    }
    // A block written as an expression at the launch, or in the launch's one `dim3 NAME(...)`.
    static const char* const kAxis[] = {"X", "Y", "Z"};
    for (const auto& l : launches_) {
      std::string var;
      std::vector<Range> axes;
      if (auto dims = dim3_args(l.cfg[1], l.pos, &var)) axes = *dims;
      else if (!util::is_identifier(sv(m, l.cfg[1]))) axes = {l.cfg[1]};
      std::vector<size_t> computed;
      for (size_t i = 0; i < axes.size(); ++i) {
        std::string e = sv(m, axes[i]);
        if (int_literal(e) || util::is_identifier(e) || depends(e) || translate(e, l.pos)) continue;
        bool edited = false;
        for (const auto& ed : edits_)
          if (ed.pos < axes[i].end && axes[i].begin < ed.pos + std::max<size_t>(ed.len, 1)) edited = true;
        if (!edited) computed.push_back(i);
      }
      if (computed.empty()) continue;
      size_t runtime_axes = 0;
      for (const auto& a : axes) runtime_axes += int_literal(sv(m, a)) ? 0 : 1;
      if (runtime_axes > 1) {
        d_.notes.push_back(fmt::format("line {}: the block of {} has {} dimensions computed at run time: left alone (kopt varies "
                                       "one computed dimension beside literal ones)",
                                       l.line, l.kernel, runtime_axes));
        continue;
      }
      size_t i = computed[0];
      std::string name = s_.unique_name(upper(l.kernel) + "_BLOCK" + (axes.size() > 1 ? std::string("_") + kAxis[i] : ""));
      add(name, sv(m, axes[i]), axes[i], l.line,
          fmt::format("block {}{} = {} of the launch of {} at line {}, computed by the launcher (0: the launcher's own value; "
                      "else that many threads)",
                      var.empty() ? "" : var + ".", static_cast<char>('x' + i), sv(m, axes[i]), l.kernel, l.line));
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

  // An expression of the source at position `at` in parameter names; nullopt when any name is not derived. A
  // kernel's template parameter reads as the argument of site_ (a launch of that kernel), or of its only launch.
  std::optional<std::string> translate(const std::string& expr, size_t at, int depth = 0) const {
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
        if (w == "sizeof") {  // sizeof(float) and the like: a number
          size_t open = expr.find_first_not_of(" \t", i);
          size_t close = open == npos || expr[open] != '(' ? npos : expr.find(')', open);
          int bytes = close == npos ? 0 : elem_bytes_of(util::trim(expr.substr(open + 1, close - open - 1)));
          if (bytes == 0) return std::nullopt;
          out += std::to_string(bytes);
          i = close + 1;
          continue;
        }
        if (auto b = bound_.find(w); b != bound_.end()) {  // blockDim.x of derive_device_asserts' launch
          out += b->second.first;
          any_param = any_param || b->second.second;
        } else if (auto r = resolve(w, at, depth)) {
          out += *r;
          any_param = true;
        } else if (warp_widths_.count(w)) {  // the warp's width, left alone: 32 in any expression of derived names
          out += "32";
        } else if (auto v = fixed_value(w, at)) {  // a constant kopt leaves alone: its value
          out += std::to_string(*v);
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

  // A `const`/`constexpr` integer declared once with a literal and not derived (`const int PAD = 4;`), seen from `at`:
  // its value, so a relation over it and derived names is read (`static_assert(BM % PAD == 0)`).
  std::optional<int64_t> fixed_value(const std::string& w, size_t at) const {
    const Constant* only = nullptr;
    for (const auto& c : constants_)
      if (c.name == w) {
        if (only) return std::nullopt;
        only = &c;
      }
    for (const auto& c : computed_)
      if (c.name == w) return std::nullopt;
    if (!only || !only->is_const || !inside(only->scope, at) || only->name_pos > at) return std::nullopt;
    for (const auto& p : d_.params)
      if (p.origin == w) return std::nullopt;
    return only->value;
  }

  // The template kernel whose body holds `at` and has a template parameter `w`; "" when none.
  std::string template_kernel_at(const std::string& w, size_t at) const {
    for (const auto& [kernel, body] : template_body_of_)
      if (inside(body, at))
        if (auto it = tparams_.find(kernel); it != tparams_.end() && std::count(it->second.begin(), it->second.end(), w)) return kernel;
    return "";
  }

  // Kernel `kernel`'s template parameter `w` at launch `l`: the parameter of the literal there, or its argument translated.
  std::optional<std::string> bind_template(const std::string& kernel, const std::string& w, const Launch& l, int depth) const {
    const auto& names = tparams_.at(kernel);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != w || i >= l.targ_list.size()) continue;
      if (auto it = site_targ_param_.find({l.pos, i}); it != site_targ_param_.end()) return it->second;
      std::string arg = sv(s_.masked, l.targ_list[i]);
      const Launch* saved = site_;
      site_ = nullptr;  // the argument is read where the launch is
      auto t = translate(arg, l.pos, depth + 1);
      site_ = saved;
      return t;
    }
    return std::nullopt;
  }

  std::optional<std::string> resolve(const std::string& w, size_t at, int depth) const {
    // Inside a template kernel's body, its own template parameter: bound at the site, or at its only launch.
    if (std::string k = template_kernel_at(w, at); !k.empty()) {
      if (site_ && site_->kernel == k) return bind_template(k, w, *site_, depth);
      const Launch* only = nullptr;
      int sites = 0;
      for (const auto& l : launches_)
        if (l.kernel == k) ++sites, only = &l;
      if (sites != 1) return std::nullopt;
      return bind_template(k, w, *only, depth);
    }
    // A constant declared in each branch: the declaration whose scope holds `at`.
    const ScopedParam* best = nullptr;
    for (const auto& sp : scoped_param_)
      if (sp.name == w && inside(sp.scope, at) && sp.decl <= at && (!best || sp.scope.begin > best->scope.begin)) best = &sp;
    if (best) return best->param;
    if (auto it = const_param_.find(w); it != const_param_.end()) return it->second;
    for (const auto& p : d_.params)
      if (p.site == DeriveSite::kDefine && p.name == w) return w;
    if (auto it = aliases_.find(w); it != aliases_.end()) {
      const Alias* a = nullptr;
      for (const auto& x : it->second)
        if (inside(x.scope, at) && x.pos <= at && (!a || x.scope.begin > a->scope.begin)) a = &x;
      if (!a && it->second.size() == 1) a = &it->second[0];
      if (!a) return std::nullopt;
      if (auto t = translate(a->init, a->pos, depth + 1)) return "(" + *t + ")";
      return std::nullopt;
    }
    // A kernel's template parameter bound at its only launch site to a literal or a derived name (used outside
    // the kernel's body: a __device__ helper's array, a file-scope relation).
    std::optional<std::string> found;
    for (const auto& [kernel, names] : tparams_) {
      if (std::find(names.begin(), names.end(), w) == names.end()) continue;
      int sites = 0;
      const Launch* only = nullptr;
      for (const auto& l : launches_)
        if (l.kernel == kernel) ++sites, only = &l;
      if (sites != 1) return std::nullopt;
      auto t = bind_template(kernel, w, *only, depth);
      if (!t || (found && *found != *t)) return std::nullopt;
      found = t;
    }
    return found;
  }

  // The launches a constraint at `pos` is read at: each launch of the template kernel whose body holds it, else none.
  std::vector<const Launch*> sites_for(size_t pos) const {
    std::vector<const Launch*> out;
    for (const auto& [kernel, body] : template_body_of_)
      if (inside(body, pos))
        for (const auto& l : launches_)
          if (l.kernel == kernel) out.push_back(&l);
    if (out.empty()) out.push_back(nullptr);
    return out;
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
      bool any = false;
      for (const Launch* site : sites_for(w)) {
        site_ = site;
        if (auto t = translate(text, w)) {
          add_constraint(*t, fmt::format("static_assert({}) at line {}{}", util::trim(text), line,
                                         site ? fmt::format(" (the launch at line {})", site->line) : ""));
          any = true;
        }
        site_ = nullptr;
      }
      if (!any) d_.notes.push_back(fmt::format("line {}: static_assert({}) is not over derived names: left to the compiler "
                                          "(a point that fails it is pruned at compile time)",
                                          line, util::trim(text)));
    }
  }

  // Each dimension of launch l's block as an expression of derived names or a number ("1" where the launch gives
  // fewer than three), each with whether it holds a derived name; nullopt where a dimension is neither.
  std::optional<std::vector<std::pair<std::string, bool>>> block_dims(const Launch& l) const {
    const std::string& m = s_.masked;
    std::vector<std::string> dims;
    std::string var;
    if (auto args = dim3_args(l.cfg[1], l.pos, &var)) {
      for (auto r : *args) dims.push_back(util::trim(sv(m, r)));
    } else {
      dims.push_back(util::trim(sv(m, l.cfg[1])));
    }
    if (dims.empty() || dims.size() > 3) return std::nullopt;
    std::vector<std::pair<std::string, bool>> out;
    for (const auto& d : dims) {
      if (auto v = int_literal(d)) {
        out.push_back({std::to_string(*v), false});
      } else if (auto t = translate(d, l.pos)) {
        out.push_back({"(" + *t + ")", true});
      } else if (auto e = Expr::parse(d); e.ok() && e->names().empty() && e->eval({}).ok()) {
        out.push_back({std::to_string(*e->eval({})), false});  // a constant expression: `dim3 block(32 * 32)`
      } else {
        return std::nullopt;
      }
    }
    while (out.size() < 3) out.push_back({"1", false});
    return out;
  }

  // assert(...) in a kernel's body over derived names and the block's dimensions (`assert(BM * BK == blockDim.x)`):
  // a constraint at each launch of the kernel, blockDim.x/y/z read as that launch's block. A kernel compiled for one
  // block and launched with another breaks the assumption it states; a run-time value (M, a pointer) keeps it out.
  void derive_device_asserts() {
    const std::string& m = s_.masked;
    const auto kernels = function_bodies("__global__");
    static const std::regex block_dim(R"(\bblockDim\s*\.\s*([xyz])\b)");
    for (size_t w : word_positions(m, "assert")) {
      const std::string* kernel = nullptr;
      for (const auto& [name, body] : kernels)
        if (inside(body, w)) kernel = &name;
      if (!kernel) continue;
      size_t open = m.find_first_not_of(" \t\n", w + 6);
      if (open == npos || m[open] != '(') continue;
      size_t close = match_close(m, open);
      if (close == npos) continue;
      const std::string text = util::trim(m.substr(open + 1, close - open - 1));
      // blockDim.x -> a name no source holds, bound below to the launch's dimension
      std::string named;
      size_t last = 0;
      for (auto it = std::sregex_iterator(text.begin(), text.end(), block_dim); it != std::sregex_iterator(); ++it) {
        named += text.substr(last, static_cast<size_t>(it->position(0)) - last) + "kopt_block_dim_" + (*it)[1].str();
        last = static_cast<size_t>(it->position(0) + it->length(0));
      }
      named += text.substr(last);
      const int line = s_.line_of(w);
      for (const auto& l : launches_) {
        if (l.kernel != *kernel) continue;
        auto dims = block_dims(l);
        if (!dims && named != text) continue;
        bound_.clear();
        if (dims)
          for (size_t i = 0; i < 3; ++i) bound_[std::string("kopt_block_dim_") + "xyz"[i]] = (*dims)[i];
        site_ = &l;
        auto t = translate(named, w);
        site_ = nullptr;
        bound_.clear();
        if (!t) continue;
        add_constraint(*t, fmt::format("assert({}) in {} at line {} (the launch at line {})", text, *kernel, line, l.line));
      }
    }
  }

  void derive_thread_limits() {
    const std::string& m = s_.masked;
    for (const auto& l : launches_) {
      std::string b = sv(m, l.cfg[1]);
      if (int_literal(b)) continue;
      std::vector<std::string> dims;
      if (util::is_identifier(b) && !const_param_.count(b)) {
        std::string var;
        if (auto args = dim3_args(l.cfg[1], l.pos, &var)) {
          for (auto r : *args) dims.push_back(sv(m, r));
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
        auto t = translate(d, l.pos);
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

  struct ArrayDecl {
    size_t pos = 0;
    int line = 0;
    std::string kernel;             // the __global__ whose body holds it; "" outside every kernel
    std::string name;
    std::optional<int> elem_bytes;  // nullopt: a type kopt cannot size
    std::vector<std::string> dims;  // the bracketed sizes
  };

  static int elem_bytes_of(const std::string& type) {
    static const std::map<std::string, int> sizes{{"float", 4},  {"int", 4},     {"unsigned", 4}, {"uint", 4},   {"double", 8},
                                                 {"half", 2},   {"__half", 2},  {"char", 1},     {"float2", 8}, {"float4", 16},
                                                 {"int2", 8},   {"int4", 16},   {"__nv_bfloat16", 2}, {"uint32_t", 4}, {"int32_t", 4},
                                                 {"int64_t", 8}, {"uint64_t", 8}, {"half2", 4}, {"__half2", 4}};
    auto it = sizes.find(type);
    return it == sizes.end() ? 0 : it->second;
  }

  // Arrays of the file: __shared__ ones (shared = true) or the per-thread (register) arrays of __global__ bodies.
  std::vector<ArrayDecl> arrays(bool shared) const {
    const std::string& m = s_.masked;
    static const std::regex sh(R"(__shared__\s+(?:__align__\(\d+\)\s+|alignas\(\d+\)\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)((?:\s*\[[^\]]+\])+))");
    static const std::regex local(R"((^|[;{}(\n])[ \t]*(?:const\s+)?(float|double|int|unsigned|half|__half|half2|__half2|float2|float4|int2|int4|__nv_bfloat16|uint32_t|int32_t|int64_t|uint64_t)\s+([A-Za-z_]\w*)((?:\s*\[[^\]]+\])+)\s*(?=[=;]))");
    auto kernels = function_bodies("__global__");
    std::vector<ArrayDecl> out;
    const std::regex& re = shared ? sh : local;
    for (auto it = std::sregex_iterator(m.begin(), m.end(), re); it != std::sregex_iterator(); ++it) {
      ArrayDecl a;
      size_t type_idx = shared ? 1 : 2;
      a.pos = static_cast<size_t>(it->position(type_idx));
      a.line = s_.line_of(a.pos);
      for (const auto& [name, body] : kernels)
        if (inside(body, a.pos)) a.kernel = name;
      if (!shared) {
        if (a.kernel.empty()) continue;  // host code
        std::string ln = m.substr(s_.line_start(a.pos), a.pos - s_.line_start(a.pos));
        if (ln.find("__shared__") != npos || ln.find("extern") != npos || ln.find("static") != npos) continue;
      }
      a.name = (*it)[type_idx + 1];
      int b = elem_bytes_of((*it)[type_idx]);
      if (b > 0) a.elem_bytes = b;
      std::string dims = (*it)[type_idx + 2];
      static const std::regex dim(R"(\[([^\]]+)\])");
      for (auto jt = std::sregex_iterator(dims.begin(), dims.end(), dim); jt != std::sregex_iterator(); ++jt) a.dims.push_back((*jt)[1]);
      out.push_back(a);
    }
    return out;
  }

  // An array's element count as an expression in parameter names at a site; nullopt when a size is not derived;
  // `any_param` says whether a derived name appears.
  std::optional<std::string> element_expr(const ArrayDecl& a, bool* any_param) const {
    std::vector<std::string> f;
    for (const auto& e : a.dims) {
      if (auto v = int_literal(e)) {
        f.push_back(std::to_string(*v));
      } else if (auto t = translate(e, a.pos)) {
        f.push_back("(" + *t + ")");
        *any_param = true;
      } else {
        return std::nullopt;
      }
    }
    return util::join(f, " * ");
  }

  // Static shared memory per block within 48 KiB: per kernel (its __shared__ arrays and those outside every kernel),
  // at each of its launches (a template kernel launched in two branches gets one constraint per launch).
  void derive_shared_memory() {
    auto all = arrays(true);
    if (all.empty()) return;
    std::set<std::string> kernels;
    for (const auto& a : all) kernels.insert(a.kernel);
    bool unreadable = false;
    for (const auto& k : kernels) {
      if (k.empty() && kernels.size() > 1) continue;  // counted with each kernel
      std::vector<const ArrayDecl*> group;
      for (const auto& a : all)
        if (a.kernel == k || a.kernel.empty()) group.push_back(&a);
      std::vector<const Launch*> sites{nullptr};
      if (template_body_of_.count(k)) {
        sites.clear();
        for (const auto& l : launches_)
          if (l.kernel == k) sites.push_back(&l);
        if (sites.empty()) sites.push_back(nullptr);
      }
      for (const Launch* site : sites) {
        site_ = site;
        std::vector<std::string> terms;
        bool any_param = false, complete = true;
        for (const auto* a : group) {
          auto e = a->elem_bytes ? element_expr(*a, &any_param) : std::nullopt;
          if (!e) {
            complete = false;
            continue;
          }
          terms.push_back(fmt::format("{} * {}", *a->elem_bytes, *e));
        }
        site_ = nullptr;
        if (any_param && complete)
          add_constraint(fmt::format("{} <= {}", util::join(terms, " + "), kMaxStaticSmemBytes),
                         fmt::format("static shared memory of the __shared__ arrays{} (from line {}) within {} KiB per block{}",
                                     k.empty() ? "" : " of " + k, group.front()->line, kMaxStaticSmemBytes / 1024,
                                     site ? fmt::format(" (the launch at line {})", site->line) : ""));
        else if (any_param)
          unreadable = true;
      }
    }
    if (unreadable)
      d_.notes.push_back("some __shared__ arrays have sizes or types kopt cannot read: the shared-memory limit is left to "
                         "ptxas (a point over it is pruned at compile time)");
  }

  // The dynamic shared memory of a launch (its third configuration argument, or the statements defining its variable)
  // over derived names: within 227 KiB a block (sm_90 with the opt-in).
  void derive_dynamic_shared_memory() {
    const std::string& m = s_.masked;
    for (const auto& l : launches_) {
      if (l.cfg.size() < 3) continue;
      std::string e = sv(m, l.cfg[2]);
      auto t = translate(e, l.pos);
      if (!t) continue;
      add_constraint(fmt::format("{} <= {}", *t, kMaxBlockSmemBytes),
                     fmt::format("dynamic shared memory of the launch of {} at line {} within {} KiB a block (H100/H200)", l.kernel,
                                 l.line, kMaxBlockSmemBytes / 1024));
    }
  }

  // A kernel's per-thread arrays (accumulators `float acc[TM * TN]`, `float regM[TM]`) over derived names: each at most
  // kMaxPerThreadArrayElems elements, and the parameters sizing them are per-thread work (values 1..16).
  void derive_per_thread_arrays() {
    for (const auto& a : arrays(false)) {
      for (const Launch* site : sites_for(a.pos)) {
        site_ = site;
        bool any_param = false;
        auto e = element_expr(a, &any_param);
        site_ = nullptr;
        if (!e || !any_param) continue;
        auto parsed = Expr::parse(*e);
        if (!parsed) continue;
        Bindings top, original;  // every parameter at its largest value: a product over them within the limit always is
        for (const auto& p : d_.params) {
          top[p.name] = p.values.empty() ? p.default_value : p.values.back();
          original[p.name] = p.default_value;
        }
        // The limit, or the project's own size where that is larger (a warp tile's 128 accumulators): the original
        // stays in the space, and nothing past it does.
        const auto at_original = parsed->eval(original);
        const int64_t own = at_original ? *at_original : 0;
        const int64_t cap = std::max(kMaxPerThreadArrayElems, own);
        if (auto v = parsed->eval(top); v && *v <= cap) continue;
        add_constraint(fmt::format("{} <= {}", *e, cap),
                       fmt::format("per-thread array {}[...] of {} at line {}: at most {} elements a thread ({}past that the "
                                   "registers spill and nvcc takes minutes){}",
                                   a.name, a.kernel, a.line, cap,
                                   own > kMaxPerThreadArrayElems ? fmt::format("the original's; {} elsewhere: ", kMaxPerThreadArrayElems) : "",
                                   site ? fmt::format(" (the launch at line {})", site->line) : ""));
        for (const auto& n : parsed->names())
          for (auto& p : d_.params)
            if (p.name == n && p.role == ValueRole::kTile) {
              p.role = ValueRole::kPerThread;
              p.values = values_for(p.role, p.default_value);
            }
      }
    }
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
  std::map<std::string, std::string> define_suffix_;  // `#define B 256u`: the literal's suffix (u, L, UL...)
  std::set<std::string> warp_widths_;  // constants that are the warp's width (32), left alone: 32 in derived expressions
  std::vector<Launch> launches_;
  const std::vector<IncludedText>& included_;
  std::map<std::string, std::vector<std::string>> tparams_;
  std::vector<std::pair<Range, std::set<std::string>>> template_bodies_;  // a kernel template's body, its parameters
  std::map<std::string, Range> template_body_of_;                          // a kernel template's name -> its body
  std::map<std::pair<size_t, size_t>, std::string> site_targ_param_;       // (launch position, argument index) -> param
  std::vector<Constant> constants_;
  std::map<std::string, std::vector<Alias>> aliases_;
  std::map<std::string, std::string> const_param_;                 // C++ constant name -> its param (unique names only)
  struct ScopedParam {
    std::string name;
    Range scope;
    size_t decl = 0;
    std::string param;
  };
  std::vector<ScopedParam> scoped_param_;  // a constant declared once in each branch: one param per declaration
  std::vector<Constant> computed_;         // locals with an initialiser that is not a literal (const or not)
  mutable const Launch* site_ = nullptr;   // translate's launch site: binds a kernel's template parameters to its arguments
  std::map<std::string, std::pair<std::string, bool>> bound_;  // translate's names bound to an expression (derived?)
  std::map<std::string, std::vector<size_t>> block_of_;            // kernel -> indices of its block-size params
  std::map<std::string, std::vector<std::pair<size_t, std::string>>> targ_site_;  // kernel -> (position, param)
};

}  // namespace

FrontEnd derive_cuda(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& included) {
  CudaDeriver c(text, file_name, included);
  FrontEnd f;
  f.derivation = c.run();
  f.edits = c.edits();
  f.prelude = c.prelude();
  f.postlude = c.postlude();
  return f;
}

}  // namespace kopt::search::derive_detail
