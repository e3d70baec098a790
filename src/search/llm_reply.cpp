#include "search/llm_reply.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <tuple>
#include <regex>
#include <set>

#include "util/strings.h"

namespace kopt::search {

using util::Json;

namespace {

struct Block {
  std::string info;  // the info string, trimmed
  std::string text;
  std::string before;  // the last non-empty text line within two lines before the fence
  size_t line = 0;     // 1-based line of the opening fence
  bool closed = false;
};

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// A fence line: up to 3 spaces, then 3+ backticks or tildes. Returns {char, length, info}.
std::optional<std::tuple<char, size_t, std::string>> fence(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return std::nullopt;
  char ch = line[i];
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == ch) ++n;
  if (n < 3) return std::nullopt;
  return std::make_tuple(ch, n, util::trim(line.substr(i + n)));
}

std::vector<Block> blocks_of(std::string_view content) {
  std::vector<Block> out;
  auto lines = util::split_lines(content);
  std::string last_text;
  size_t last_text_line = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto f = fence(lines[i]);
    if (!f) {
      if (!util::trim(lines[i]).empty()) {
        last_text = lines[i];
        last_text_line = i;
      }
      continue;
    }
    Block b;
    b.info = std::get<2>(*f);
    b.line = i + 1;
    if (!last_text.empty() && i - last_text_line <= 2) b.before = last_text;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      auto close = fence(lines[j]);
      if (close && std::get<0>(*close) == std::get<0>(*f) && std::get<1>(*close) >= std::get<1>(*f) && std::get<2>(*close).empty()) {
        b.closed = true;
        break;
      }
      b.text += lines[j] + "\n";
    }
    out.push_back(std::move(b));
    i = j;
    last_text.clear();
  }
  return out;
}

std::string basename_of(const std::string& path) {
  auto p = path.find_last_of("/\\");
  return p == std::string::npos ? path : path.substr(p + 1);
}

// The first file name with a source extension in `s` (a path is cut to its base name).
std::string file_name_in(const std::string& s) {
  static const std::regex kName(R"(([A-Za-z0-9_./\\-]+\.(cu|cuh|py|cpp|h|hpp)))");
  static const std::regex kKeyed(R"((?:file|filename|title|path)\s*[=:]\s*["']?([^"'\s]+))", std::regex::icase);
  std::smatch m;
  if (std::regex_search(s, m, kKeyed)) return basename_of(m[1].str());
  if (std::regex_search(s, m, kName)) return basename_of(m[1].str());
  return "";
}

// A comment on the block's first line that names its file: "// file: v1.cu", "// v1.cu", "# v1.py".
std::string name_from_first_line(const std::string& text) {
  std::string first = util::trim(text.substr(0, text.find('\n')));
  if (!util::starts_with(first, "//") && !util::starts_with(first, "#") && !util::starts_with(first, "/*")) return "";
  if (util::starts_with(first, "#include") || util::starts_with(first, "#if") || util::starts_with(first, "#define") ||
      util::starts_with(first, "#pragma"))
    return "";
  return file_name_in(first);
}

bool code_language(const std::string& info, SourceLanguage lang) {
  std::string word = lower(info.substr(0, info.find_first_of(" \t{")));
  if (word.empty()) return true;
  static const std::set<std::string> kCuda = {"cuda", "cu", "cpp", "c++", "c", "cxx", "cc", "cuh"};
  static const std::set<std::string> kPython = {"python", "py", "python3"};
  if ((lang == SourceLanguage::kPython ? kPython : kCuda).count(word)) return true;
  return !file_name_in(info).empty();  // "v1.cu" alone as the info string
}

// A manifest block's JSON as {"candidates": [...]}: a bare entry or a list of entries is wrapped.
std::optional<Json> as_manifest(const Json& j) {
  if (j.is_object() && j.contains("candidates")) return j;
  if (j.is_object() && j.contains("file")) return Json{{"candidates", Json::array({j})}};
  if (j.is_array() && !j.empty() && j[0].is_object() && j[0].contains("file")) return Json{{"candidates", j}};
  return std::nullopt;
}

}  // namespace

bool valid_candidate_file_name(std::string_view name, SourceLanguage lang) {
  static const std::regex kOk(R"([A-Za-z0-9_][A-Za-z0-9_.\-]*)");
  std::string n(name);
  if (!std::regex_match(n, kOk) || n.find("..") != std::string::npos) return false;
  return language_of(n) == lang && (lang == SourceLanguage::kPython ? n.size() > 3 && n.substr(n.size() - 3) == ".py"
                                                                    : n.size() > 3 && n.substr(n.size() - 3) == ".cu");
}

namespace {

bool is_manifest_block(const Block& b) {
  std::string info_l = lower(b.info);
  std::string trimmed = util::trim(b.text);
  return info_l.rfind("json", 0) == 0 ||
         (file_name_in(b.info).empty() && !trimmed.empty() && (trimmed[0] == '{' || trimmed[0] == '['));
}

void read_manifest_block(const Block& b, ParsedReply& r) {
  if (!b.closed) {
    r.problems.push_back(fmt::format("the manifest block (line {}) is not closed: the reply was cut short", b.line));
    return;
  }
  Json j;
  try {
    j = Json::parse(b.text);
  } catch (const Json::parse_error& e) {
    r.problems.push_back(fmt::format("the manifest block (line {}) is not valid JSON: {}", b.line, e.what()));
    return;
  }
  auto m = as_manifest(j);
  if (!m) {
    if (lower(b.info).rfind("json", 0) == 0)
      r.problems.push_back(fmt::format("the JSON block on line {} is not a manifest {{\"candidates\": [...]}}", b.line));
    return;
  }
  if (!(*m)["candidates"].is_array()) {
    r.problems.push_back(fmt::format("the manifest block (line {}): \"candidates\" must be a list", b.line));
    return;
  }
  if (!r.manifest) r.manifest = Json{{"candidates", Json::array()}};
  for (auto& e : (*m)["candidates"]) {
    Json entry = e;
    if (entry.is_object() && entry.contains("file") && entry["file"].is_string())
      entry["file"] = basename_of(entry["file"].get<std::string>());
    (*r.manifest)["candidates"].push_back(std::move(entry));
  }
}

}  // namespace

ParsedReply parse_reply(std::string_view content, SourceLanguage lang) {
  ParsedReply r;
  const std::string ext = lang == SourceLanguage::kPython ? ".py" : ".cu";
  auto all = blocks_of(content);
  // The manifest first: a name found only in the prose before a block counts when the manifest lists it
  // ("Here is my change to champion.cu:" names no candidate).
  for (const Block& b : all)
    if (is_manifest_block(b)) read_manifest_block(b, r);
  std::set<std::string> listed;
  if (r.manifest)
    for (const auto& e : (*r.manifest)["candidates"])
      if (e.is_object() && e.value("file", Json()).is_string()) listed.insert(e["file"].get<std::string>());

  std::vector<const Block*> unnamed;
  std::map<std::string, size_t> by_name;
  for (const Block& b : all) {
    if (is_manifest_block(b) || !code_language(b.info, lang)) continue;  // a shell command, a log: not a candidate
    if (!b.closed) {
      r.problems.push_back(fmt::format("the code block on line {} is not closed: the reply was cut short (raise "
                                       "--llm-max-tokens?)", b.line));
      continue;
    }
    std::string name = file_name_in(b.info);
    if (name.empty()) name = name_from_first_line(b.text);
    if (name.empty() && !b.before.empty()) {
      std::string prose = file_name_in(b.before);
      if (!r.manifest || listed.count(prose)) name = prose;
    }
    if (name.empty()) {
      unnamed.push_back(&b);
      continue;
    }
    if (!valid_candidate_file_name(name, lang)) {
      r.problems.push_back(fmt::format("the code block on line {} is for '{}': a candidate must be one complete {} file "
                                       "with a plain name such as v1{}", b.line, name, ext, ext));
      continue;
    }
    if (auto it = by_name.find(name); it != by_name.end()) {
      r.problems.push_back(fmt::format("'{}' appears in two code blocks; the later one (line {}) is used", name, b.line));
      r.files[it->second].text = b.text;
      continue;
    }
    by_name[name] = r.files.size();
    r.files.push_back({name, b.text});
  }
  // One unnamed block and one manifest entry without a block: they belong together.
  std::vector<std::string> missing;
  for (const auto& f : listed)
    if (!by_name.count(f)) missing.push_back(f);
  if (unnamed.size() == 1 && missing.size() == 1 && valid_candidate_file_name(missing[0], lang)) {
    r.files.push_back({missing[0], unnamed[0]->text});
  } else {
    for (const Block* b : unnamed)
      r.problems.push_back(fmt::format("the code block on line {} names no file: open it with ```{} file=v1{}", b->line,
                                       lang == SourceLanguage::kPython ? "python" : "cuda", ext));
  }
  return r;
}

}  // namespace kopt::search
