#include "search/annotations.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>
#include <set>

#include "search/method.h"
#include "util/strings.h"

namespace kopt::search {

namespace {

// The comment text of a line ("" when none), skipping comment markers inside string literals.
std::string comment_of(std::string_view line, SourceLanguage lang) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (lang == SourceLanguage::kCuda && line.compare(i, 2, "//") == 0) return std::string(line.substr(i + 2));
    else if (lang == SourceLanguage::kPython && c == '#') return std::string(line.substr(i + 1));
  }
  return "";
}

Result<int64_t> parse_int(std::string_view s, const std::string& what) {
  std::string t = util::trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size())
    return input_error(fmt::format("{} '{}' is not an integer", what, t));
  return v;
}

// "values=1,2 kind=constexpr" -> {values: "1,2", kind: "constexpr"}; text before the first key is `head`.
struct KeyValues {
  std::string head;
  std::map<std::string, std::string> kv;
};
Result<KeyValues> split_key_values(const std::string& s) {
  static const std::regex key_re("([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*");
  KeyValues out;
  std::vector<std::smatch> keys;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), key_re); it != std::sregex_iterator(); ++it) {
    // A key starts the text or follows whitespace (so "a==b" inside a value is not a key).
    size_t pos = static_cast<size_t>(it->position(0));
    if (pos != 0 && !std::isspace(static_cast<unsigned char>(s[pos - 1]))) continue;
    if (pos + it->length(0) < s.size() && s[pos + it->length(0)] == '=') continue;
    keys.push_back(*it);
  }
  out.head = util::trim(keys.empty() ? s : s.substr(0, static_cast<size_t>(keys[0].position(0))));
  for (size_t i = 0; i < keys.size(); ++i) {
    size_t start = static_cast<size_t>(keys[i].position(0) + keys[i].length(0));
    size_t end = i + 1 < keys.size() ? static_cast<size_t>(keys[i + 1].position(0)) : s.size();
    std::string key = keys[i][1].str();
    if (out.kv.count(key)) return input_error(fmt::format("'{}' given twice", key));
    out.kv[key] = util::trim(s.substr(start, end - start));
  }
  return out;
}

Result<std::vector<int64_t>> values_list(const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& part : util::split(text, ',', false)) {
    KOPT_TRY_ASSIGN(int64_t v, parse_int(part, "value"));
    out.push_back(v);
  }
  return out;
}

Result<std::vector<int64_t>> range_values(const std::string& range, const std::string& step) {
  auto dots = range.find("..");
  if (dots == std::string::npos) return input_error(fmt::format("range '{}' must be LO..HI", range));
  KOPT_TRY_ASSIGN(int64_t lo, parse_int(range.substr(0, dots), "range start"));
  KOPT_TRY_ASSIGN(int64_t hi, parse_int(range.substr(dots + 2), "range end"));
  if (lo > hi) return input_error(fmt::format("range {}..{} is empty (start above end)", lo, hi));
  std::vector<int64_t> out;
  if (step == "pow2") {
    if (lo < 1) return input_error("step=pow2 needs a range starting at 1 or more");
    for (int64_t v = lo; v <= hi && out.size() <= kMaxParamValues; v *= 2) {
      out.push_back(v);
      if (v > hi / 2) break;  // the next doubling passes hi (and might overflow)
    }
  } else {
    int64_t s = 1;
    if (!step.empty()) {
      KOPT_TRY_ASSIGN(s, parse_int(step, "step"));
      if (s < 1) return input_error(fmt::format("step {} must be positive (or pow2)", s));
    }
    for (int64_t v = lo; v <= hi && out.size() <= kMaxParamValues; v += s) {
      out.push_back(v);
      if (v > hi - s) break;  // the next step passes hi (and might overflow)
    }
  }
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, std::string file) : text_(text) {
    ann_.file = std::move(file);
    ann_.language = language_of(ann_.file);
  }

  Result<Annotations> run() {
    auto lines = util::split_lines(text_);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string body = util::trim(comment_of(lines[i], ann_.language));
      if (!util::starts_with(body, "@kopt")) continue;
      if (body.size() > 5 && !std::isspace(static_cast<unsigned char>(body[5]))) continue;  // "@kopter": not ours
      std::string where = fmt::format("{}:{}", ann_.file, i + 1);
      auto st = directive(util::trim(std::string_view(body).substr(5)), where);
      if (!st) return input_error(where + ": " + st.error().message);
    }
    KOPT_TRY(check_names());
    return std::move(ann_);
  }

 private:
  Status directive(const std::string& d, const std::string& where) {
    auto sp = d.find_first_of(" \t");
    std::string verb = d.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : util::trim(std::string_view(d).substr(sp));
    if (verb == "param") return param(rest, where);
    if (verb == "method") return method(rest, where);
    if (verb == "constraint") return constraint(rest, where);
    return input_error(fmt::format("unknown @kopt directive '{}' (expected param, method or constraint)", verb));
  }

  Status param(const std::string& rest, const std::string& where) {
    KOPT_TRY_ASSIGN(KeyValues kv, split_key_values(rest));
    ParamDecl p;
    p.name = kv.head;
    p.where = where;
    if (!util::is_identifier(p.name)) return input_error(fmt::format("param needs a name (an identifier), got '{}'", p.name));
    if (util::starts_with(p.name, "KOPT_")) return input_error(fmt::format("'{}': names starting with KOPT_ are method guards", p.name));
    for (const auto& prev : ann_.params)
      if (prev.name == p.name) return input_error(fmt::format("param '{}' already declared at {}", p.name, prev.where));
    for (const auto& [k, v] : kv.kv)
      if (k != "values" && k != "range" && k != "step" && k != "kind" && k != "default" && k != "follows" && k != "covers" &&
          k != "when")
        return input_error(
            fmt::format("param '{}': unknown key '{}' (values, range, step, kind, default, follows, covers, when)", p.name, k));
    if (kv.kv.count("when")) {
      p.when = util::trim(kv.kv["when"]);
      if (auto e = Expr::parse(p.when); !e)
        return input_error(fmt::format("param '{}': when= takes a condition over dims (e.g. when=M >= 128 && N >= 128): {}", p.name,
                                       e.error().message));
    }
    if (kv.kv.count("covers")) {
      p.covers = util::trim(kv.kv["covers"]);
      if (!util::is_identifier(p.covers))
        return input_error(fmt::format("param '{}': covers= takes one name (a dim), got '{}'", p.name, kv.kv["covers"]));
    }
    if (kv.kv.count("follows"))
      for (const auto& f : util::split(kv.kv["follows"], ',')) {
        if (!util::is_identifier(util::trim(f)))
          return input_error(
              fmt::format("param '{}': follows= takes names separated by commas, got '{}'", p.name, kv.kv["follows"]));
        p.follows.push_back(util::trim(f));
      }
    bool has_values = kv.kv.count("values"), has_range = kv.kv.count("range");
    if (has_values == has_range) return input_error(fmt::format("param '{}' needs exactly one of values= or range=", p.name));
    if (kv.kv.count("step") && !has_range) return input_error(fmt::format("param '{}': step= goes with range=", p.name));
    if (has_values) {
      KOPT_TRY_ASSIGN(p.values, values_list(kv.kv["values"]));
    } else {
      KOPT_TRY_ASSIGN(p.values, range_values(kv.kv["range"], kv.kv.count("step") ? kv.kv["step"] : ""));
    }
    if (p.values.empty()) return input_error(fmt::format("param '{}' has no values", p.name));
    if (p.values.size() > kMaxParamValues)
      return input_error(fmt::format("param '{}' has more than {} values", p.name, kMaxParamValues));
    std::set<int64_t> uniq(p.values.begin(), p.values.end());
    if (uniq.size() != p.values.size()) return input_error(fmt::format("param '{}' lists a value twice", p.name));

    bool python = ann_.language == SourceLanguage::kPython;
    if (kv.kv.count("kind")) {
      const std::string& k = kv.kv["kind"];
      if (k == "define") p.kind = ParamKind::kDefine;
      else if (k == "constexpr") p.kind = ParamKind::kConstexpr;
      else if (k == "num_warps") p.kind = ParamKind::kNumWarps;
      else if (k == "num_stages") p.kind = ParamKind::kNumStages;
      else return input_error(fmt::format("param '{}': kind '{}' is not define, constexpr, num_warps or num_stages", p.name, k));
    } else if (python) {
      p.kind = p.name == "num_warps" ? ParamKind::kNumWarps : p.name == "num_stages" ? ParamKind::kNumStages : ParamKind::kConstexpr;
    }
    if (!python && p.kind != ParamKind::kDefine)
      return input_error(fmt::format("param '{}': kind {} is for Triton kernels; CUDA parameters are -D macros (kind=define)",
                                     p.name, param_kind_name(p.kind)));
    if (python && p.kind == ParamKind::kDefine)
      return input_error(fmt::format("param '{}': Triton parameters are constexpr, num_warps or num_stages, not define", p.name));
    for (const auto& prev : ann_.params)
      if (p.kind != ParamKind::kDefine && p.kind != ParamKind::kConstexpr && prev.kind == p.kind)
        return input_error(fmt::format("param '{}': {} is already set by '{}' at {}", p.name, param_kind_name(p.kind), prev.name, prev.where));

    p.default_value = p.values.front();
    if (kv.kv.count("default")) {
      KOPT_TRY_ASSIGN(p.default_value, parse_int(kv.kv["default"], "default"));
      if (!uniq.count(p.default_value))
        return input_error(fmt::format("param '{}': default {} is not one of its values", p.name, p.default_value));
    }
    ann_.params.push_back(std::move(p));
    return ok_status();
  }

  Status method(const std::string& rest, const std::string& where) {
    KOPT_TRY_ASSIGN(KeyValues kv, split_key_values(rest));
    MethodDecl m{kv.head, guard_macro(kv.head), where};
    if (m.id.empty() || !util::is_identifier(m.id) || m.id != util::trim(m.id))
      return input_error(fmt::format("method needs a registry id, got '{}'", m.id));
    for (const auto& [k, v] : kv.kv) {
      if (k != "guard") return input_error(fmt::format("method '{}': unknown key '{}' (guard)", m.id, k));
      if (v != m.guard)
        return input_error(fmt::format("method '{}': the guard must be {} (kopt defines it 0 or 1), not '{}'", m.id, m.guard, v));
    }
    for (const auto& prev : ann_.methods)
      if (prev.id == m.id) return input_error(fmt::format("method '{}' already declared at {}", m.id, prev.where));
    if (!guard_in_conditional(text_, m.guard, ann_.language))
      return input_error(fmt::format("method '{}': its guard {} is not used in any {} of the source", m.id, m.guard,
                                     ann_.language == SourceLanguage::kCuda ? "#if/#ifdef/#elif" : "if statement"));
    ann_.methods.push_back(std::move(m));
    return ok_status();
  }

  Status constraint(const std::string& rest, const std::string& where) {
    auto e = Expr::parse(rest);
    if (!e) return input_error("constraint '" + rest + "': " + e.error().message);
    ann_.constraints.push_back({std::move(e).value(), where});
    return ok_status();
  }

  // Constraints may use parameter names and declared method guards (0 or 1).
  Status check_names() {
    std::set<std::string> known;
    for (const auto& p : ann_.params) known.insert(p.name);
    for (const auto& m : ann_.methods) known.insert(m.guard);
    for (const auto& c : ann_.constraints)
      for (const auto& n : c.expr.names())
        if (!known.count(n))
          return input_error(fmt::format("{}: constraint '{}' uses unknown name '{}' (known: {})", c.where, c.expr.text(), n,
                                         known.empty() ? std::string("none") : util::join({known.begin(), known.end()}, ", ")));
    return ok_status();
  }

  std::string_view text_;
  Annotations ann_;
};

}  // namespace

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::kDefine: return "define";
    case ParamKind::kConstexpr: return "constexpr";
    case ParamKind::kNumWarps: return "num_warps";
    case ParamKind::kNumStages: return "num_stages";
  }
  return "?";
}

Result<Annotations> parse_annotations(std::string_view text, const std::string& file_name) {
  return Parser(text, file_name).run();
}

}  // namespace kopt::search
