// The Triton front end of the derivation (search/derive.h): literal tl.constexpr and launch options at the launches
// in run_kernel, the grid literals that follow them, and an existing @triton.autotune's configs.
#include <sstream>

#include "search/derive_text.h"

namespace kopt::search::derive_detail {

namespace {

// The decorators of the def whose line starts at `line_start` in `masked`, nearest first, with where each line starts:
// the lines right above starting with '@', and the lines of a multi-line decorator between them (an autotune's
// configs: lines ending in `,`, `[`, `]`, `(` or `)`, and any line inside its open brackets). A blank line (a comment
// is blank once masked) is skipped inside a decorator's brackets and between decorators, never above the first.
std::vector<std::pair<size_t, std::string>> decorators_above(const std::string& masked, size_t line_start) {
  std::vector<std::pair<size_t, std::string>> out;
  int open = 0;  // closing brackets of the lines taken so far not yet matched by an opening one above them
  auto previous = [&](size_t scan, size_t* start) {  // the line ending just before `scan`, trimmed
    const size_t prev_end = scan - 1;               // the '\n' ending the previous line
    // (A file that starts with a line break: the line before is empty, not the whole file again.)
    size_t prev_start = prev_end == 0 ? npos : masked.rfind('\n', prev_end - 1);
    *start = prev_start == npos ? 0 : prev_start + 1;
    return util::trim(masked.substr(*start, prev_end - *start));
  };
  for (size_t scan = line_start; scan > 0;) {
    size_t prev_start = 0;
    std::string line = previous(scan, &prev_start);
    if (line.empty()) {
      if (out.empty()) break;
      if (open > 0) {  // inside a decorator's brackets
        scan = prev_start;
        continue;
      }
      // Between two decorators: what lies above the blank lines counts only where its topmost line is a decorator's.
      size_t above = prev_start, s = 0;
      while (above > 0 && previous(above, &s).empty()) above = s;
      auto rest = above > 0 ? decorators_above(masked, above) : decltype(out){};
      if (!rest.empty() && rest.back().second[0] == '@') out.insert(out.end(), rest.begin(), rest.end());
      break;
    }
    const char last = line.back();
    if (open == 0 && line[0] != '@' && last != ',' && last != '[' && last != ']' && last != ')' && last != '(') break;
    for (char c : line) open += (c == ')' || c == ']' || c == '}') ? 1 : (c == '(' || c == '[' || c == '{') ? -1 : 0;
    open = std::max(open, 0);
    out.emplace_back(prev_start, std::move(line));
    scan = prev_start;
  }
  return out;
}

bool is_jit_decorator(const std::string& line) {
  return line[0] == '@' && (line.find("triton.jit") != npos || line.rfind("@jit", 0) == 0);
}

// The keyword of a call's argument `KEY=value` ("" for a positional one, `a == b` included).
std::string keyword_of(std::string_view arg) {
  const size_t eq = arg.find('=');
  if (eq == npos || (eq + 1 < arg.size() && arg[eq + 1] == '=')) return "";
  std::string key = util::trim(std::string(arg.substr(0, eq)));
  return util::is_identifier(key) ? key : "";
}

// A @triton.jit function as its file spells it (masked: comments and strings blanked): its parameters in order, the
// tl.constexpr ones, and its body.
struct JitBody {
  std::vector<std::string> params;
  std::set<std::string> constexprs;
  std::string body;
  size_t begin = 0;  // where the body starts in the text read
};

// `def NAME(...)` at any indentation in `masked`, decorated by @triton.jit or @jit (under any @triton.autotune or
// @triton.heuristics): its parameters and the lines of its body (those indented deeper).
std::optional<JitBody> jit_body(const std::string& masked, const std::string& name) {
  const std::regex def("(^|\\n)([ \\t]*)def[ \\t]+" + name + "[ \\t]*\\(");
  std::smatch m;
  if (!std::regex_search(masked, m, def)) return std::nullopt;
  const size_t start = static_cast<size_t>(m.position(0) + m.length(1));
  const size_t indent = static_cast<size_t>(m.length(2));
  const auto decorators = decorators_above(masked, start);
  if (std::none_of(decorators.begin(), decorators.end(), [](const auto& d) { return is_jit_decorator(d.second); }))
    return std::nullopt;
  const size_t open = static_cast<size_t>(m.position(0) + m.length(0) - 1);
  const size_t close = match_close(masked, open);
  if (close == npos) return std::nullopt;
  JitBody k;
  for (auto r : split_args(masked, open + 1, close)) {
    const std::string a = sv(masked, r);
    const std::string p = util::trim(a.substr(0, a.find_first_of(":=")));
    if (p.empty() && util::trim(a).empty()) continue;  // after a trailing comma
    if (!util::is_identifier(p)) return std::nullopt;  // *args, **kwargs: positions are not known
    k.params.push_back(p);
    if (const size_t colon = a.find(':'); colon != npos && a.find("constexpr", colon) != npos) k.constexprs.insert(p);
  }
  // The body: the lines after the signature's, up to the first non-blank one no deeper than the def.
  const size_t sig_end = masked.find('\n', close);
  const size_t body = sig_end == npos ? masked.size() : sig_end + 1;
  size_t body_end = masked.size();
  for (size_t ls = body; ls < masked.size();) {
    size_t le = masked.find('\n', ls);
    if (le == npos) le = masked.size();
    const size_t first = masked.find_first_not_of(" \t\r", ls);
    if (first != npos && first < le && first - ls <= indent) {
      body_end = ls;
      break;
    }
    ls = le + 1;
  }
  k.body = masked.substr(body, body_end - body);
  k.begin = body;
  return k;
}

// The parameter one block of constexpr `c` covers: every use of `c` in the body is the extent of `tl.arange(0, c)`
// (no loop over blocks, no program id scaled by it), and such a range, or a name assigned one, is compared `< A`,
// A another parameter (a constexpr too: its launch says whether a dim is passed): lanes past `c` of A's extent are
// never read (Liger-Kernel's row kernels:
// `col_offsets = tl.arange(0, BLOCK_SIZE); mask = col_offsets < n_cols`). "" otherwise (two such A too).
std::string covered_by(const JitBody& k, const std::string& c) {
  const std::string& b = k.body;
  const std::string range = "tl\\.arange\\(\\s*0\\s*,\\s*" + c + "\\s*\\)";
  const std::regex word("\\b" + c + "\\b"), whole(range);
  auto count = [&](const std::regex& re) {
    return static_cast<size_t>(std::distance(std::sregex_iterator(b.begin(), b.end(), re), std::sregex_iterator()));
  };
  const size_t uses = count(word);
  if (uses == 0 || uses != count(whole)) return "";
  std::vector<std::string> terms = {range};
  const std::regex assigned("(^|\\n)[ \\t]*([A-Za-z_]\\w*)[ \\t]*=[ \\t]*" + range + "[ \\t]*(?=\\n|$)");
  for (auto it = std::sregex_iterator(b.begin(), b.end(), assigned); it != std::sregex_iterator(); ++it) {
    const std::string v = (*it)[2];
    if (count(std::regex("\\b" + v + "\\s*(\\+|-|\\*|/|//|%|\\||&)?=(?!=)")) == 1) terms.push_back(v);  // never assigned again
  }
  std::set<std::string> bounds;
  for (const auto& t : terms) {
    const std::regex less("(^|[^\\w.])" + t + "\\s*<\\s*([A-Za-z_]\\w*)\\b(?!\\s*[-+*/%.(\\[])");
    for (auto it = std::sregex_iterator(b.begin(), b.end(), less); it != std::sregex_iterator(); ++it) bounds.insert((*it)[2]);
  }
  std::erase_if(bounds,
                [&](const std::string& a) { return a == c || std::find(k.params.begin(), k.params.end(), a) == k.params.end(); });
  return bounds.size() == 1 ? *bounds.begin() : "";
}

class TritonDeriver {
 public:
  TritonDeriver(std::string_view text, std::string file, const std::vector<IncludedText>& modules)
      : s_(text, SourceLanguage::kPython), file_(std::move(file)), modules_(modules) {}

  Derivation run() {
    d_.file = file_;
    d_.language = SourceLanguage::kPython;
    const std::string& m = s_.masked;
    scan_jit();
    scan_imports();
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
    bool imported = false;          // `from pkg import kernel`: its signature and decorators are not in this file
    std::string module, original;   // imported: `from MODULE import ORIGINAL [as name]`
  };

  // A keyword of a launch that is a tl.constexpr: declared so in the file, or, for an imported kernel, spelled as
  // constexprs are (BLOCK_SIZE, BLOCK_N: upper case).
  static bool constexpr_key(const Jit& j, const std::string& key) {
    if (j.constexprs.count(key)) return true;
    if (!j.imported) return false;
    bool letter = false;
    for (char c : key) {
      if (std::islower(static_cast<unsigned char>(c))) return false;
      letter = letter || std::isupper(static_cast<unsigned char>(c));
    }
    return letter;
  }

  // Names imported with `from MODULE import a, b as c` (the kernels a wrapper launches from its project's package).
  void scan_imports() {
    const std::string& m = s_.masked;
    static const std::regex from(R"((^|\n)[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^\n)]*))");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), from); it != std::sregex_iterator(); ++it) {
      std::string list = (*it)[3];
      for (auto r : split_args(list, 0, list.size())) {
        std::string a = sv(list, r);
        size_t as = a.find(" as ");
        std::string name = util::trim(as == npos ? a : a.substr(as + 4));
        if (util::is_identifier(name) && !jits_.count(name)) {
          Jit j;
          j.imported = true;
          j.module = (*it)[2];
          j.original = util::trim(as == npos ? a : a.substr(0, as));
          jits_[name] = j;
        }
      }
    }
  }

  void scan_jit() {
    const std::string& m = s_.masked;
    static const std::regex def(R"((^|\n)([ \t]*)def[ \t]+([A-Za-z_]\w*)[ \t]*\()");
    for (auto it = std::sregex_iterator(m.begin(), m.end(), def); it != std::sregex_iterator(); ++it) {
      size_t dpos = static_cast<size_t>(it->position(0) + it->length(1));
      std::string name = (*it)[3];
      bool jit = false;
      std::optional<Range> autotune;
      for (const auto& [line_start, line] : decorators_above(m, dpos)) {
        if (line[0] != '@') continue;
        jit = jit || is_jit_decorator(line);
        if (line.find("triton.autotune") != npos) {
          size_t at = m.find('@', line_start);
          size_t open = m.find('(', at);
          size_t close = open == npos ? npos : match_close(m, open);
          if (close != npos) autotune = Range{at, close + 1};
        }
      }
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
      size_t name;  // where the kernel's name starts
      Range grid;
      size_t open, close;
      std::vector<Range> args;
    };
    std::vector<Site> sites;
    // `X[grid](...)` where X is no @triton.jit kernel kopt can name (an alias `fx = a if c else b`, `triton.jit(f)`,
    // `wrap_triton(k)`, a warmup handle): said, not derived.
    static const std::regex other(R"((\b[A-Za-z_][\w.]*|\))[ \t]*\[)");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), other); it != std::sregex_iterator(); ++it) {
      const std::string k = (*it)[1];
      if (jits_.count(k)) continue;
      const size_t lb = body_begin_ + static_cast<size_t>(it->position(0) + it->length(0) - 1);
      const size_t rb = match_close(m, lb);
      if (rb == npos || rb + 1 >= m.size() || m[rb + 1] != '(') continue;
      size_t from = body_begin_ + static_cast<size_t>(it->position(1));
      if (k == ")") {  // back to the call's name: `torch.library.wrap_triton(k)`
        int depth = 0;
        for (size_t j = from + 1; j-- > body_begin_;) {
          if (m[j] == ')') ++depth;
          else if (m[j] == '(' && --depth == 0) {
            from = j;
            break;
          }
        }
        while (from > body_begin_ && (word_char(m[from - 1]) || m[from - 1] == '.')) --from;
      }
      d_.notes.push_back(fmt::format("line {}: {}[...](...) launches a kernel kopt cannot name (not a @triton.jit function of "
                                     "this file or one imported by name: an alias, triton.jit(f), wrap_triton(k), a warmup "
                                     "handle): nothing derived from it; launch the kernel by its name to have it derived",
                                     s_.line_of(lb), util::trim(m.substr(from, lb - from))));
    }
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
      sites.push_back(
          {k, body_begin_ + static_cast<size_t>(it->position(1)), {lb + 1, rb}, open, close, split_args(m, open + 1, close)});
    }
    // Every launch's keywords first: `KEY=...` at a later launch is no assignment of a local named KEY.
    for (const auto& st : sites)
      for (auto r : st.args)
        if (!keyword_of(sv(m, r)).empty()) kw_positions_.insert(r.begin);
    bool warps_done = false, stages_done = false;
    for (const auto& st : sites) {
      const Jit& j = jits_[st.kernel];
      int line = s_.line_of(st.open);
      const auto covers = site_covers(st.kernel, st.args, line);
      std::set<std::string> given;
      for (auto r : st.args)
        if (std::string key = keyword_of(sv(m, r)); !key.empty()) given.insert(key);
      std::vector<std::string> flags;  // keywords given a bool, None, a string or a test
      for (auto r : st.args) {
        std::string a = sv(m, r);
        size_t eq = a.find('=');
        if (eq == npos) continue;
        std::string key = util::trim(a.substr(0, eq));
        auto v = int_literal(a.substr(eq + 1));
        bool launch = key == "num_warps" || key == "num_stages";
        // A named local instead of a literal: `BLOCK = 1024` earlier in run_kernel, then `BLOCK_SIZE=BLOCK`.
        std::string local = util::trim(a.substr(eq + 1));
        std::optional<std::pair<Range, int64_t>> named;
        if (!v && util::is_identifier(local) && !sig_names_.count(local) && !util::starts_with(local, "KOPT_") &&
            !s_.taken.count(local) && (launch || constexpr_key(j, key)))
          if ((named = local_constant(local))) v = named->second;
        const std::optional<std::string> defined = util::is_identifier(local) && !v ? local_expression(local) : std::nullopt;
        bool flag = !v && (flag_value(std::string(s_.text.substr(r.begin + eq + 1, r.end - r.begin - eq - 1))) ||
                           (defined && flag_value(*defined)));
        if (!v && !launch && constexpr_key(j, key) && computed_tile(st, key, local, line, covers)) continue;
        if (!v && (launch || constexpr_key(j, key)) && !sig_names_.count(local) && !local.empty()) {
          if (flag) {
            if (local != "True" && local != "False" && local != "None") flags.push_back(key);  // said once, below
          } else {
            // A value computed at run time (`B=triton.next_power_of_2(D)`, or a local assigned from an expression): the
            // launch keeps it, and the note says so.
            std::string shown = defined ? fmt::format("{} = {}", local, *defined) : local;
            d_.notes.push_back(fmt::format("line {}: {}={} of the launch of {}[...] is computed at run time ({}): left alone "
                                           "(kopt derives literals and locals assigned once from a literal)",
                                           line, key, local, st.kernel, shown));
          }
        }
        if (!v || (!named && a.substr(eq + 1).find_first_of("uUlL") != npos)) continue;
        if (!launch && !constexpr_key(j, key)) continue;
        if (sig_names_.count(key)) continue;
        if (launch && s_.taken.count(key)) continue;  // one num_warps / num_stages parameter for all launches
        // A launch option arrives as num_warps= / num_stages= whatever its param's name (docs/TRITON.md).
        std::string name = named ? (launch ? key : local) : param_name(key);
        if (named) s_.taken.insert(name);
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
        if (p.role == ValueRole::kTile && !tile_in_body(st.kernel, key)) {
          d_.notes.push_back(fmt::format("line {}: {}={} of {}[...] sizes no tile in {}'s body (no tl.arange, loop, tl.zeros or "
                                         "block shape reads it): it says what the kernel computes, left alone",
                                         line, key, *v, st.kernel, st.kernel));
          continue;
        }
        p.values = values_for(p.role, *v);
        if (p.role == ValueRole::kTile)  // a Triton tile: d/4..4d (its compile time grows with the tile's size)
          std::erase_if(p.values, [&](int64_t x) { return x != *v && (x * 4 < *v || x > 4 * *v); });
        p.line = line;
        p.reason = named ? fmt::format("run_kernel's {} = {} at line {}: {} of the launch of {}[...] at line {}", local, *v,
                                       s_.line_of(named->first.begin), key, st.kernel, line)
                         : fmt::format("literal {}={} in the launch of {}[...] in run_kernel at line {}", key, *v, st.kernel, line);
        if (auto c = covers.find(key); c != covers.end() && p.kind == ParamKind::kConstexpr) {
          p.covers = c->second.first;
          p.reason += fmt::format(
              "; one block of it covers {} ({} reads tl.arange(0, {}) masked by < {}, no loop over blocks): "
              "a value below {} is a wrong answer",
              p.covers, st.kernel, key, c->second.second, p.covers);
        }
        if (key == "num_warps") warps_done = true;
        if (named) {
          // The local now reads the parameter (`BLOCK = BLOCK`, `NW = num_warps`); the launch is unchanged.
          edits_.push_back({named->first.begin, named->first.end - named->first.begin, name});
        } else {
          // The literal becomes the parameter; the grid's literal of the same block size follows it.
          size_t vb = r.begin + eq + 1;
          while (std::isspace(static_cast<unsigned char>(m[vb]))) ++vb;
          edits_.push_back({vb, r.end - vb, name});
        }
        add_signature(name, *v);
        if (p.kind == ParamKind::kConstexpr) constexpr_by_value_[*v].push_back(name);
        d_.params.push_back(std::move(p));
      }
      if (!flags.empty())
        d_.notes.push_back(fmt::format("line {}: {} of the launch of {}[...] {} a switch (a bool, None, a string or a test), not "
                                       "a size: left alone",
                                       line, util::join(flags, ", "), st.kernel, flags.size() == 1 ? "is" : "are"));
      if (j.autotune) derive_autotune(st.kernel, *j.autotune, st.close, given);
      else if (j.imported && !given.count("num_warps") && !warps_done && !sig_names_.count("num_warps") &&
               !s_.taken.count("num_warps")) {
        own_num_warps(st.kernel, st.name, line);
        warps_done = true;
      } else if (!given.count("num_warps") && !warps_done && !sig_names_.count("num_warps") && !s_.taken.count("num_warps")) {
        // Triton's default is 4: passing it explicitly changes nothing.
        DerivedParam p = launch_option(
            "num_warps", ValueRole::kNumWarps, 4, line,
            fmt::format("num_warps of the launch of {}[...] at line {} (not given: Triton's default, 4)", st.kernel, line));
        edits_.push_back({st.close, 0, std::string(call_separator(st.open, st.close)) + "num_warps=num_warps"});
        add_signature("num_warps", 4);
        warps_done = true;
        d_.params.push_back(std::move(p));
      }
      if (!j.autotune && !j.imported && !given.count("num_stages") && !stages_done && !sig_names_.count("num_stages") &&
          !s_.taken.count("num_stages"))
        if (auto loop = pipelined_loop(st.kernel)) {
          // Triton's default on NVIDIA GPUs is 3: passing it explicitly changes nothing.
          DerivedParam p = launch_option(
              "num_stages", ValueRole::kNumStages, 3, line,
              fmt::format("num_stages of the launch of {}[...] at line {} (not given: Triton's default, 3; the loop of {} at line "
                          "{} loads in each step, and Triton pipelines those loads num_stages deep)",
                          st.kernel, line, st.kernel, *loop));
          std::string text = "num_stages=" + p.name;
          if (!edits_.empty() && edits_.back().pos == st.close && edits_.back().len == 0)
            edits_.back().text += ", " + text;  // after the num_warps just added, in one edit (a fixed order)
          else
            edits_.push_back({st.close, 0, std::string(call_separator(st.open, st.close)) + text});
          add_signature(p.name, 3);
          stages_done = true;
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

  // A tile run_kernel computes once and passes as constexpr `key` (`BLOCK_SIZE = triton.next_power_of_2(n_cols)`,
  // Liger's `BLOCK_SIZE, num_warps = calculate_settings(n_cols)`): a parameter whose 0, the baseline, keeps run_kernel's
  // own value and whose other values (4..16384) replace it: the copy adds `LOCAL = LOCAL if P == 0 else P` after the
  // assignment. Only a local assigned by one single-line statement of run_kernel's own level, where the kernel's body
  // (when kopt can read it) uses `key` to size a tile. False when it is not one (the caller then notes it).
  bool computed_tile(const auto& st, const std::string& key, const std::string& local, int line,
                     const std::map<std::string, std::pair<std::string, std::string>>& covers) {
    const std::string& m = s_.masked;
    if (!util::is_identifier(local) || sig_names_.count(local) || s_.taken.count(local) || util::starts_with(local, "KOPT_"))
      return false;
    const std::string body = m.substr(body_begin_, body_end_ - body_begin_);
    // `LOCAL = expr` or `A, LOCAL = expr` on one line (brackets balanced), LOCAL assigned nowhere else in run_kernel.
    const std::regex def("(^|\\n)([ \\t]+)((?:[A-Za-z_]\\w*[ \\t]*,[ \\t]*)*" + local +
                         "(?:[ \\t]*,[ \\t]*[A-Za-z_]\\w*)*)[ \\t]*=(?!=)([^\\n]*)");
    const std::regex any("\\b" + local + R"(\s*(\+|-|\*|/|//|%|\||&)?=(?!=))");
    std::smatch dm;
    if (!std::regex_search(body, dm, def)) return false;
    int assignments = 0;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), any); it != std::sregex_iterator(); ++it)
      assignments += kw_positions_.count(body_begin_ + static_cast<size_t>(it->position(0))) ? 0 : 1;
    const std::string targets = dm[3], rhs = dm[4];
    const bool tuple = targets.find(',') != npos;
    if (assignments != (tuple ? 0 : 1) && !(tuple && assignments <= 1)) return false;
    int depth = 0;
    for (char c : rhs) depth += (c == '(' || c == '[' || c == '{') ? 1 : (c == ')' || c == ']' || c == '}') ? -1 : 0;
    const std::string value = util::trim(rhs);
    if (depth != 0 || value.empty() || value == "True" || value == "False" || value == "None" || int_literal(value)) return false;
    // A kernel's body kopt cannot read: only a constexpr named as tiles are (BLOCK_SIZE, BLOCK_N, TILE, CHUNK_SIZE, BT).
    static const std::regex tile_name(R"(BLOCK|TILE|CHUNK|^B[MNKTCDHV]$)", std::regex::icase);
    if (!body_of(st.kernel) && !std::regex_search(key, tile_name)) return false;
    const std::string indent = dm[2];
    const size_t line_start = body_begin_ + static_cast<size_t>(dm.position(2));
    if (!tile_in_body(st.kernel, key)) return false;
    const std::string name = s_.unique_name("P_" + key);
    DerivedParam p;
    p.name = name;
    p.origin = key;
    p.kind = ParamKind::kConstexpr;
    p.site = DeriveSite::kLauncherLocal;
    p.role = ValueRole::kLauncherTile;
    p.default_value = 0;
    p.values = values_for(p.role, 0);
    p.line = s_.line_of(line_start);
    p.reason = fmt::format("{}={} of the launch of {}[...] at line {}, computed by run_kernel ({} = {} at line {}) (0: "
                           "run_kernel's own value; else that tile)",
                           key, local, st.kernel, line, util::trim(targets), util::trim(rhs), p.line);
    if (auto c = covers.find(key); c != covers.end()) {
      // One block covers the row: run_kernel's own tile (next_power_of_2 of it) is already the smallest right one, and
      // a larger one only masks more lanes.
      d_.notes.push_back(fmt::format("line {}: {}={} of the launch of {}[...] is computed by run_kernel ({} = {}) and one block "
                                     "of it covers {} ({} reads tl.arange(0, {}) masked by < {}, no loop over blocks): "
                                     "left alone (a smaller tile is a wrong answer, a larger one masks more lanes)",
                                     line, key, local, st.kernel, util::trim(targets), value, c->second.first, st.kernel, key,
                                     c->second.second));
      return true;
    }
    // A tile sized to the whole row (`next_power_of_2(D)`, capped or not) that the kernel does not loop over: a
    // program id scales it instead (fla's logsumexp: `i_d * B + tl.arange(0, B)`, the grid and the output's partials
    // follow run_kernel's B), so the wrapper's buffers assume run_kernel's own value.
    if (value.find("next_power_of_2") != npos && !loops_over(st.kernel, key)) {
      d_.notes.push_back(fmt::format("line {}: {}={} of the launch of {}[...] is computed by run_kernel ({} = {}) to span the "
                                     "whole extent, and {} does not loop over it (a program id scales it, or kopt cannot "
                                     "read the body): left alone (its grid and outputs follow run_kernel's value)",
                                     line, key, local, st.kernel, util::trim(targets), value, st.kernel));
      return true;
    }
    const size_t end = s_.line_end(line_start);
    edits_.push_back({end, 0, fmt::format("\n{0}{1} = {1} if {2} == 0 else {2}", indent, local, name)});
    add_signature(name, 0);
    s_.taken.insert(local);
    d_.params.push_back(std::move(p));
    return true;
  }

  // The kernel's body loops over tiles of constexpr `key` (`for start in range(0, n_cols, BLOCK_SIZE)`): any tile
  // covers the extent. False where the body cannot be read.
  bool loops_over(const std::string& kernel, const std::string& key) {
    const auto k = body_of(kernel);
    if (!k) return false;
    const std::regex loop("\\b(range|tl\\.range|tl\\.static_range)\\s*\\([^\\n]*\\b" + key + "\\b");
    return std::regex_search(k->body, loop);
  }

  // The line of a loop of this file's kernel's body whose steps load (`for k in range(...)` / `tl.range(...)`
  // with a tl.load, a descriptor's .load or a tl.dot in it): what num_stages pipelines. nullopt where there is none
  // (a tl.static_range is unrolled, not pipelined) or the body cannot be read.
  std::optional<int> pipelined_loop(const std::string& kernel) {
    const auto k = body_of(kernel);
    if (!k) return std::nullopt;
    static const std::regex loop(R"(^([ \t]*)for\s+\w+\s+in\s+(tl\.)?range\s*\()");
    static const std::regex load(R"((\btl\.load|\.load|\btl\.dot)\s*\()");
    std::vector<std::string> lines;
    std::istringstream in(k->body);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch lm;
      if (!std::regex_search(lines[i], lm, loop)) continue;
      const size_t indent = lm[1].length();
      for (size_t j = i + 1; j < lines.size(); ++j) {
        const size_t first = lines[j].find_first_not_of(" \t");
        if (first == npos) continue;
        if (first <= indent) break;
        if (std::regex_search(lines[j], load)) return s_.line_of(k->begin) + static_cast<int>(i);
      }
    }
    return std::nullopt;
  }

  // The body of a launched kernel: this file's, or its module's (modules_); nullopt where kopt cannot read it.
  std::optional<JitBody> body_of(const std::string& kernel) {
    const Jit& j = jits_[kernel];
    if (!j.imported) return jit_body(s_.masked, kernel);
    for (const auto& mod : modules_)
      if (mod.spelled == j.module) {
        auto [at, fresh] = masked_modules_.try_emplace(mod.spelled);  // masked once, however many launches read it
        if (fresh) at->second = mask_code(mod.text, SourceLanguage::kPython);
        if (auto k = jit_body(at->second, j.original)) return k;
      }
    return std::nullopt;
  }

  // Whether constexpr `key` sizes a tile in the kernel's body: a line that reads it also makes a range or a block
  // (tl.arange, range / tl.range / tl.static_range, tl.zeros / tl.full, a block_shape, tl.reshape), or passes it to a
  // function kopt does not follow. A constexpr the body reads otherwise (`head // kv_group_num`, `pos - WINDOW`, a
  // head dimension) says what the kernel computes, not how: not a tile. True where the body is not readable.
  bool tile_in_body(const std::string& kernel, const std::string& key) {
    const auto k = body_of(kernel);
    if (!k) return true;
    static const std::regex tile(R"(\b(tl\.arange|range|tl\.range|tl\.static_range|tl\.zeros|tl\.full|tl\.reshape|block_shape)\b)");
    static const std::regex call(R"(\b([A-Za-z_][\w.]*)\s*\()");
    const std::regex word("\\b" + key + "\\b");
    std::istringstream lines(k->body);
    for (std::string line; std::getline(lines, line);) {
      if (!std::regex_search(line, word)) continue;
      if (std::regex_search(line, tile)) return true;
      // Passed down: `_inner(x, BLOCK)` (the name is an argument of a call that is not triton.language's).
      for (auto it = std::sregex_iterator(line.begin(), line.end(), call); it != std::sregex_iterator(); ++it) {
        const std::string f = (*it)[1];
        if (util::starts_with(f, "tl.") || f == "min" || f == "max" || f == "int") continue;
        const size_t open = static_cast<size_t>(it->position(0) + it->length(0) - 1);
        const size_t close = match_close(line, open);
        if (close != npos && std::regex_search(line.substr(open, close - open), word)) return true;
      }
    }
    return false;
  }

  // Per constexpr of a launch whose one block covers a parameter of the kernel (covered_by): the run_kernel argument
  // passed as that parameter, and the parameter. The kernel's body is this file's, or its module's (modules_).
  std::map<std::string, std::pair<std::string, std::string>> site_covers(const std::string& kernel,
                                                                         const std::vector<Range>& args, int line) {
    std::map<std::string, std::pair<std::string, std::string>> out;
    const std::optional<JitBody> k = body_of(kernel);
    if (!k) return out;
    std::vector<std::string> positional;
    std::map<std::string, std::string> keyword;
    for (auto r : args) {
      const std::string a = util::trim(sv(s_.masked, r));
      if (a.empty() || a[0] == '*') return out;  // *args, **kwargs: the positions are not known
      if (std::string key = keyword_of(a); !key.empty())
        keyword[key] = util::trim(a.substr(a.find('=') + 1));
      else
        positional.push_back(a);
    }
    for (const auto& c : k->constexprs) {
      const std::string a = covered_by(*k, c);
      if (a.empty()) continue;
      const size_t i = static_cast<size_t>(std::find(k->params.begin(), k->params.end(), a) - k->params.begin());
      const std::string passed = i < positional.size() ? positional[i] : keyword.count(a) ? keyword[a] : "";
      if (sig_names_.count(passed))
        out[c] = {passed, a};
      else if (!passed.empty() && !int_literal(passed))  // a literal bound: a tile of its own, nothing to say
        d_.notes.push_back(
            fmt::format("line {}: one block of {} covers {} of {}, passed as {}, no argument of run_kernel: kopt "
                        "cannot tell which values are too small (a wrong answer prunes them)",
                        line, c, a, kernel, passed));
    }
    return out;
  }

  // `NAME = <int>` on a line of run_kernel's body, NAME assigned nowhere else in it: the literal and its value.
  std::optional<std::pair<Range, int64_t>> local_constant(const std::string& name) const {
    const std::string& m = s_.masked;
    std::string body = m.substr(body_begin_, body_end_ - body_begin_);
    std::regex def("(^|\\n)[ \\t]+" + name + R"([ \t]*=[ \t]*(\d+)[ \t]*(?=\n|$))");
    std::regex any("\\b" + name + R"(\s*(\+|-|\*|/|//|%|\||&)?=(?!=))");
    std::smatch dm;
    if (!std::regex_search(body, dm, def)) return std::nullopt;
    int assignments = 0;  // a launch's keyword `NAME=` is not an assignment
    for (auto it = std::sregex_iterator(body.begin(), body.end(), any); it != std::sregex_iterator(); ++it)
      assignments += kw_positions_.count(body_begin_ + static_cast<size_t>(it->position(0))) ? 0 : 1;
    if (assignments != 1) return std::nullopt;
    int64_t v = small_number(dm[2].str());
    if (v < 0) return std::nullopt;
    size_t b = body_begin_ + static_cast<size_t>(dm.position(2));
    return std::make_pair(Range{b, b + static_cast<size_t>(dm.length(2))}, v);
  }

  // What run_kernel assigns to local `name`, as the file writes it (strings shown): each distinct right-hand side, "; "
  // between them (a local assigned in two branches). The launch's own keyword (`NAME=NAME`) is no assignment.
  std::optional<std::string> local_expression(const std::string& name) const {
    const std::string& m = s_.masked;
    std::string body = m.substr(body_begin_, body_end_ - body_begin_);
    std::regex def("(^|\\n)([ \\t]+)" + name + R"([ \t]*=(?!=)[ \t]*([^\n]+))");
    std::vector<std::string> seen;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), def); it != std::sregex_iterator(); ++it) {
      const size_t at = body_begin_ + static_cast<size_t>(it->position(0) + it->length(1) + it->length(2));
      if (kw_positions_.count(at)) continue;
      const size_t rhs = body_begin_ + static_cast<size_t>(it->position(3));
      std::string e = util::trim(std::string(s_.text.substr(rhs, static_cast<size_t>(it->length(3)))));
      if (!e.empty() && e.back() == ',') e.pop_back();
      if (std::find(seen.begin(), seen.end(), e) == seen.end()) seen.push_back(e);
    }
    if (seen.empty()) return std::nullopt;
    return util::join(seen, "; ");
  }

  // A value that is a switch, not a size: a bool, None or a string, a comparison or a test (`x is not None`).
  static bool flag_value(const std::string& e) {
    static const std::regex flag(R"(\b(True|False|None|is|not|and|or|in)\b|==|!=|<|>|["'])");
    return std::regex_search(e, flag);
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

  // An imported kernel launched without num_warps: what it runs with is the project's choice, made where kopt cannot
  // see it (its @triton.autotune in the package, or Triton's default). The copy launches it through a helper appended
  // to the file: num_warps 0 (the baseline) is the launch as written; another value pins it, and an @triton.autotune
  // kernel then runs its first config with that num_warps (else its first config), without the autotuner.
  void own_num_warps(const std::string& kernel, size_t name_pos, int line) {
    DerivedParam p = launch_option("num_warps", 
        ValueRole::kOwnNumWarps, 0, line,
        fmt::format("num_warps of the launch of {}[...] at line {} ({} is imported; 0: the project's own choice, its "
                    "@triton.autotune's or Triton's default; else that many warps, an autotuned kernel's first config "
                    "with them, without the autotuner)",
                    kernel, line, kernel));
    edits_.push_back({name_pos, kernel.size(), fmt::format("{}({}, num_warps={})", kOwnHelper, kernel, p.name)});
    if (!helper_added_) {
      edits_.push_back({s_.text.size(), 0, std::string(s_.text.empty() || s_.text.back() == '\n' ? "" : "\n") + kOwnHelperText});
      helper_added_ = true;
    }
    add_signature(p.name, 0);
    d_.params.push_back(std::move(p));
  }

  // A launch option (num_warps, num_stages) added to a launch that does not give it.
  DerivedParam launch_option(const std::string& key, ValueRole role, int64_t default_value, int line, std::string reason) {
    DerivedParam p;
    p.name = param_name(key);
    p.origin = key;
    p.kind = key == "num_warps" ? ParamKind::kNumWarps : ParamKind::kNumStages;
    p.site = DeriveSite::kTritonLaunch;
    p.role = role;
    p.default_value = default_value;
    p.values = values_for(role, default_value);
    p.line = line;
    p.reason = std::move(reason);
    return p;
  }

  static constexpr const char* kOwnHelper = "_kopt_launch_options";
  static constexpr const char* kOwnHelperText = R"PY(

def _kopt_launch_options(kernel, **options):
    """kopt: `kernel` launched with these options; 0 leaves an option to the project (as the launch is written). An
    @triton.autotune kernel runs its first config with these options (else its first config), without the autotuner;
    @triton.heuristics above it still set their values, as Triton sets them."""
    options = {k: v for k, v in options.items() if v}
    if not options:
        return kernel
    layers, inner = [], kernel  # triton.runtime.Heuristics above an Autotuner: `values`, `arg_names`, `fn`
    while all(hasattr(inner, a) for a in ("values", "arg_names", "fn")) and not hasattr(inner, "configs"):
        layers.append(inner)
        inner = inner.fn
    fixed = {}
    configs = getattr(inner, "configs", None)
    if configs and hasattr(inner, "fn"):  # triton.runtime.Autotuner
        chosen = [c for c in configs if all(getattr(c, k, None) == v for k, v in options.items())] or list(configs)
        fixed = {k: v for k, v in chosen[0].all_kwargs().items() if v is not None}
        kernel = inner.fn
    else:
        layers = []  # no autotuner: the kernel as it is, the options its launch's keywords
    fixed.update(options)

    class _Pinned:
        def __getitem__(self, grid):
            launch = kernel[grid]

            def run(*args, **kwargs):
                for layer in layers:  # outermost first, as Heuristics.run
                    for name, heur in layer.values.items():
                        kwargs[name] = heur({**dict(zip(layer.arg_names, args)), **kwargs})
                return launch(*args, **{**kwargs, **fixed})

            return run

    return _Pinned()
)PY";

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
    // Configs kopt cannot read in full: a comprehension or a name where a value should be (`num_warps=nw for nw in
    // [2, 4, 8]`), a hook the autotuner calls before a run (pre_hook: the copy without it would compute otherwise).
    // Commenting the decorator out would lose what they say: the autotune stays as it is.
    const std::string masked = s_.masked.substr(deco.begin, deco.end - deco.begin);
    static const std::regex comprehension(R"(\bfor\b[^\n]*\bin\b)"), hook(R"(\bpre_hook\s*=)");
    // (The keys' quotes are blanked in the masked text: values by name are read in the original.)
    static const std::regex named_value(R"((['"][A-Za-z_]\w*['"]\s*:|\b(num_warps|num_stages|num_ctas)\s*=)\s*[A-Za-z_(])");
    if (std::regex_search(masked, comprehension) || std::regex_search(text, named_value) || std::regex_search(masked, hook)) {
      d_.notes.push_back(fmt::format("line {}: @triton.autotune of {} has configs kopt cannot read in full (a comprehension, "
                                     "a value by name, or a pre_hook): left alone, the autotuner chooses as the project wrote it",
                                     line, kernel));
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
  const std::vector<IncludedText>& modules_;
  std::map<std::string, std::string> masked_modules_;  // a module's masked text, by its name (site_covers)
  Derivation d_;
  std::vector<Edit> edits_;
  std::map<std::string, Jit> jits_;
  size_t sig_open_ = 0, sig_close_ = 0, body_begin_ = 0, body_end_ = 0;
  std::set<std::string> sig_names_;
  std::set<size_t> kw_positions_;
  std::vector<std::string> sig_add_;
  std::map<int64_t, std::vector<std::string>> constexpr_by_value_;
  bool helper_added_ = false;
};

}  // namespace

FrontEnd derive_triton(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& modules) {
  TritonDeriver t(text, file_name, modules);
  FrontEnd f;
  f.derivation = t.run();
  f.edits = t.edits();
  return f;
}

}  // namespace kopt::search::derive_detail
