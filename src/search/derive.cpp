#include "search/derive.h"

#include <regex>

#include "search/derive_text.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search {

using namespace derive_detail;  // NOLINT: the derivation's own helpers

namespace {

std::string header_lines(const Derivation& d, const std::string& c) {
  std::string out;
  for (const auto& p : d.params) {
    out += fmt::format("{} derived: {}\n", c, p.reason);
    out += fmt::format("{} @kopt param {} values={} default={}", c, p.name, format_values(p.values), p.default_value);
    if (d.language == SourceLanguage::kPython) out += fmt::format(" kind={}", param_kind_name(p.kind));
    if (!p.follows.empty()) out += fmt::format(" follows={}", fmt::join(p.follows, ","));
    if (!p.covers.empty()) out += fmt::format(" covers={}", p.covers);
    if (!p.when.empty()) out += fmt::format(" when={}", p.when);
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
    case DeriveSite::kLauncherLocal: return "launcher_local";
    case DeriveSite::kHelperArgument: return "helper_argument";
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
    case ValueRole::kBlockDim: return "block_dim";
    case ValueRole::kUnroll: return "unroll";
    case ValueRole::kMinBlocks: return "min_blocks";
    case ValueRole::kMaxThreads: return "max_threads";
    case ValueRole::kNumWarps: return "num_warps";
    case ValueRole::kNumStages: return "num_stages";
    case ValueRole::kListed: return "listed";
    case ValueRole::kPerThread: return "per_thread";
    case ValueRole::kLauncherThreads: return "launcher_threads";
    case ValueRole::kGridBlocks: return "grid_blocks";
    case ValueRole::kOwnNumWarps: return "own_num_warps";
    case ValueRole::kLauncherTile: return "launcher_tile";
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

std::vector<IncludedText> local_includes(const std::filesystem::path& kernel, std::string_view text) {
  namespace fs = std::filesystem;
  if (language_of(kernel.string()) == SourceLanguage::kPython) return python_modules(kernel, text);
  static const std::regex include(R"re(^[ \t]*#[ \t]*include[ \t]*"([^"]+)")re");
  std::vector<IncludedText> out;
  for (const auto& line : util::split_lines(text)) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    const fs::path p = kernel.parent_path() / m[1].str();
    std::error_code ec;
    if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) > (4u << 20)) continue;
    if (auto t = util::read_file(p)) out.push_back({m[1].str(), std::move(t).value()});
  }
  return out;
}

Result<Derivation> derive(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& included) {
  KOPT_TRY_ASSIGN(Annotations ann, parse_annotations(text, file_name));
  SourceLanguage lang = language_of(file_name);
  Derivation d;
  std::vector<Edit> edits;
  std::vector<std::string> prelude, postlude;
  FrontEnd f = lang == SourceLanguage::kCuda ? derive_cuda(text, file_name, included) : derive_triton(text, file_name, included);
  d = std::move(f.derivation);
  edits = std::move(f.edits);
  prelude = std::move(f.prelude);
  postlude = std::move(f.postlude);
  check_constraints(d);
  {  // a note said twice (two grid entries of the same literal) is said once
    std::set<std::string> seen;
    std::erase_if(d.notes, [&](const std::string& n) { return !seen.insert(n).second; });
  }
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
  for (const auto& p : d.params) {
    util::Json e = {{"name", p.name},
                    {"origin", p.origin},
                    {"kind", param_kind_name(p.kind)},
                    {"site", derive_site_name(p.site)},
                    {"role", value_role_name(p.role)},
                    {"default", p.default_value},
                    {"values", p.values},
                    {"line", p.line},
                    {"reason", p.reason}};
    if (!p.covers.empty()) e["covers"] = p.covers;
    if (!p.when.empty()) e["when"] = p.when;
    j["params"].push_back(std::move(e));
  }
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
