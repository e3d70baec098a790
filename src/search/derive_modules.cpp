// The modules a Triton wrapper imports its kernels from, found as Python would find them where that can be told
// without running the file: beside the wrapper, on the paths it puts on sys.path (string literals, __file__ and
// os.path.join / dirname / abspath / realpath / normpath of them), and on PYTHONPATH (search/derive.h: local_includes).
#include <cstdlib>
#include <regex>

#include "search/derive_text.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search::derive_detail {

namespace fs = std::filesystem;

namespace {

class PathEval {
 public:
  PathEval(std::string_view text, const fs::path& file)
      : text_(text), masked_(mask_code(text, SourceLanguage::kPython)), file_(file) {
    // Names assigned once at the top level (`_FETCHED = os.path.join(...)`, `_PKG = "/opt/proj"`): where their
    // expression is. (No blanks are skipped after '=': the masked text blanks a string literal, so they would swallow
    // it; eval trims by the file's own text.)
    static const std::regex assign(R"((^|\n)([A-Za-z_]\w*)[ \t]*=(?!=)([^\n]+))");
    std::map<std::string, int> count;
    for (auto it = std::sregex_iterator(masked_.begin(), masked_.end(), assign); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[2];
      const size_t b = static_cast<size_t>(it->position(3));
      names_[name] = {b, b + static_cast<size_t>(it->length(3))};
      ++count[name];
    }
    std::erase_if(names_, [&](const auto& n) { return count[n.first] != 1; });
  }

  // The path an expression of the wrapper evaluates to, if it is made only of what this understands.
  std::optional<std::string> eval(size_t b, size_t e, int depth = 0) const {
    if (depth > 8) return std::nullopt;
    // Trimmed by the file's own text: the masked text blanks a string literal, quotes and all.
    while (b < e && std::isspace(static_cast<unsigned char>(text_[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(text_[e - 1]))) --e;
    if (b >= e) return std::nullopt;
    const std::string_view t = text_.substr(b, e - b), m = std::string_view(masked_).substr(b, e - b);
    if ((t.front() == '"' || t.front() == '\'') && t.size() >= 2 && t.back() == t.front() && util::trim(std::string(m)).empty() &&
        t.find('\\') == std::string_view::npos)
      return std::string(t.substr(1, t.size() - 2));  // one plain literal (no escapes, no prefix)
    if (m == "__file__") return fs::absolute(file_).string();
    if (util::is_identifier(std::string(m))) {
      auto it = names_.find(std::string(m));
      if (it == names_.end()) return std::nullopt;
      return eval(it->second.first, it->second.second, depth + 1);
    }
    static const std::regex call(R"(^(os\.path\.|)(join|dirname|abspath|realpath|normpath)[ \t]*\()");
    std::smatch cm;
    const std::string head(m.substr(0, std::min<size_t>(m.size(), 40)));
    if (!std::regex_search(head, cm, call)) return std::nullopt;
    const size_t open = b + static_cast<size_t>(cm.length(0)) - 1;
    const size_t close = match_close(masked_, open);
    if (close == npos || close + 1 != e) return std::nullopt;
    std::vector<std::string> args;
    for (auto r : args_of(open, close)) {
      auto v = eval(r.begin, r.end, depth + 1);
      if (!v) return std::nullopt;
      args.push_back(*v);
    }
    const std::string fn = cm[2];
    if (fn == "join") {
      if (args.empty()) return std::nullopt;
      fs::path p(args[0]);
      for (size_t i = 1; i < args.size(); ++i) p /= args[i];
      return p.string();
    }
    if (args.size() != 1) return std::nullopt;
    if (fn == "dirname") return fs::path(args[0]).parent_path().string();
    if (fn == "abspath" || fn == "normpath") return fs::absolute(args[0]).lexically_normal().string();
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(args[0], ec);
    return ec ? fs::absolute(args[0]).lexically_normal().string() : real.string();
  }

  // The folders `sys.path.insert(i, X)` / `sys.path.append(X)` add, where X evaluates.
  std::vector<fs::path> sys_path_entries() const {
    static const std::regex add(R"(\bsys\.path\.(insert|append)[ \t]*\()");
    std::vector<fs::path> out;
    for (auto it = std::sregex_iterator(masked_.begin(), masked_.end(), add); it != std::sregex_iterator(); ++it) {
      const size_t open = static_cast<size_t>(it->position(0) + it->length(0) - 1);
      const size_t close = match_close(masked_, open);
      if (close == npos) continue;
      auto args = args_of(open, close);
      const size_t which = (*it)[1] == "insert" ? 1 : 0;
      if (args.size() != which + 1) continue;
      if (auto p = eval(args[which].begin, args[which].end)) out.push_back(fs::path(*p).lexically_normal());
    }
    return out;
  }

 private:
  // The arguments between `open` and `close`, untrimmed (split_args trims by the masked text, which blanks a string
  // literal to nothing): eval trims them by the file's text.
  std::vector<Range> args_of(size_t open, size_t close) const {
    std::vector<Range> out;
    int depth = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i < close; ++i) {
      const char c = masked_[i];
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if (c == ')' || c == ']' || c == '}')
        --depth;
      else if (c == ',' && depth == 0) {
        out.push_back({start, i});
        start = i + 1;
      }
    }
    if (!util::trim(std::string(text_.substr(start, close - start))).empty()) out.push_back({start, close});
    return out;
  }

  std::string_view text_;
  std::string masked_;
  fs::path file_;
  std::map<std::string, std::pair<size_t, size_t>> names_;
};

}  // namespace

std::vector<IncludedText> python_modules(const fs::path& kernel, std::string_view text) {
  PathEval eval(text, kernel);
  std::vector<fs::path> roots = {fs::absolute(kernel).parent_path()};
  for (auto& p : eval.sys_path_entries()) roots.push_back(std::move(p));
  if (const char* pp = std::getenv("PYTHONPATH"))
    for (const auto& d : util::split(pp, ':'))
      if (!d.empty()) roots.emplace_back(d);
  static const std::regex from(R"((^|\n)[ \t]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b)");
  const std::string masked = mask_code(text, SourceLanguage::kPython);
  std::vector<IncludedText> out;
  for (auto it = std::sregex_iterator(masked.begin(), masked.end(), from); it != std::sregex_iterator(); ++it) {
    const std::string module = (*it)[2];
    if (std::any_of(out.begin(), out.end(), [&](const IncludedText& t) { return t.spelled == module; })) continue;
    std::string rel = module;
    std::replace(rel.begin(), rel.end(), '.', '/');
    for (const auto& root : roots) {
      std::error_code ec;
      fs::path f = root / (rel + ".py");
      if (!fs::is_regular_file(f, ec)) f = root / rel / "__init__.py";
      if (!fs::is_regular_file(f, ec) || fs::file_size(f, ec) > (4u << 20)) continue;
      if (auto t = util::read_file(f)) out.push_back({module, std::move(t).value()});
      break;
    }
  }
  return out;
}

}  // namespace kopt::search::derive_detail
