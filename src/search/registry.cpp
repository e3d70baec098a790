#include "search/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <regex>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::search {

namespace fs = std::filesystem;
using util::Json;

namespace {

bool is_snake_case(std::string_view s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return s.back() != '_' && s.find("__") == std::string_view::npos;
}

// Field readers: each failure names the method and the field.
class MethodReader {
 public:
  MethodReader(const Json& j, std::string where) : j_(j), where_(std::move(where)) {}

  Result<std::string> str(const char* key, bool required = true) const {
    if (!j_.contains(key)) {
      if (!required) return std::string();
      return err(fmt::format("missing '{}'", key));
    }
    if (!j_[key].is_string()) return err(fmt::format("'{}' must be a string", key));
    return j_[key].get<std::string>();
  }
  Result<std::vector<std::string>> strings(const Json& parent, const char* key) const {
    std::vector<std::string> out;
    if (!parent.contains(key)) return out;
    if (!parent[key].is_array()) return err(fmt::format("'{}' must be a list of strings", key));
    for (const auto& v : parent[key]) {
      if (!v.is_string() || v.get<std::string>().empty()) return err(fmt::format("'{}' must hold non-empty strings", key));
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  Error err(const std::string& what) const { return input_error(where_ + ": " + what); }

 private:
  const Json& j_;
  std::string where_;
};

Result<Method> method_from_json(const Json& j, const std::string& origin, size_t index) {
  if (!j.is_object()) return input_error(fmt::format("{}: methods[{}] must be an object", origin, index));
  std::string id = j.contains("id") && j["id"].is_string() ? j["id"].get<std::string>() : fmt::format("#{}", index);
  MethodReader r(j, fmt::format("{}: method '{}'", origin, id));
  static const std::set<std::string> kKeys = {"id",      "name",    "axis",      "description", "evidence",
                                              "numerics", "min_arch", "backends", "sass",        "relations",
                                              "flags",   "flag_param"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!kKeys.count(it.key())) return r.err(fmt::format("unknown field '{}'", it.key()));

  Method m;
  KOPT_TRY_ASSIGN(m.id, r.str("id"));
  KOPT_TRY_ASSIGN(m.name, r.str("name"));
  KOPT_TRY_ASSIGN(m.description, r.str("description"));
  KOPT_TRY_ASSIGN(std::string axis, r.str("axis"));
  auto ax = parse_axis(axis);
  if (!ax) return r.err(fmt::format("axis '{}' is not compute, memory or latency", axis));
  m.axis = *ax;
  KOPT_TRY_ASSIGN(std::string numerics, r.str("numerics"));
  auto nm = parse_numerics(numerics);
  if (!nm) return r.err(fmt::format("numerics '{}' is not bitwise_preserving, reordered_equivalent or tolerance_changing", numerics));
  m.numerics = *nm;
  KOPT_TRY_ASSIGN(std::string arch, r.str("min_arch"));
  std::smatch match;
  if (!std::regex_match(arch, match, std::regex("sm_([0-9]{2,3})a?")))
    return r.err(fmt::format("min_arch '{}' is not of the form sm_XY", arch));
  m.min_arch = std::stoi(match[1].str());

  KOPT_TRY_ASSIGN(auto backends, r.strings(j, "backends"));
  for (const auto& b : backends) {
    auto be = parse_backend(b);
    if (!be) return r.err(fmt::format("backend '{}' is not cuda, cutlass or triton", b));
    m.backends.push_back(*be);
  }

  if (j.contains("evidence")) {
    if (!j["evidence"].is_array()) return r.err("'evidence' must be a list");
    for (const auto& e : j["evidence"]) {
      if (!e.is_object() || !e.contains("metric") || !e.contains("op") || !e.contains("value") || !e.contains("why") ||
          !e["metric"].is_string() || !e["op"].is_string() || !e["value"].is_number() || !e["why"].is_string())
        return r.err("each evidence item needs metric (string), op (string), value (number) and why (string)");
      auto op = parse_op(e["op"].get<std::string>());
      if (!op) return r.err(fmt::format("evidence op '{}' is not one of > < >= <=", e["op"].get<std::string>()));
      m.evidence.push_back({e["metric"].get<std::string>(), *op, e["value"].get<double>(), e["why"].get<std::string>()});
    }
  }

  if (j.contains("sass")) {
    auto sig = sass::signature_from_json(j["sass"]);
    if (!sig) return r.err("sass: " + sig.error().message);
    m.sass = std::move(sig).value();
  }

  if (j.contains("relations")) {
    const Json& rel = j["relations"];
    if (!rel.is_object()) return r.err("'relations' must be an object");
    for (auto it = rel.begin(); it != rel.end(); ++it)
      if (it.key() != "conflicts" && it.key() != "requires" && it.key() != "subsumes")
        return r.err(fmt::format("unknown relation '{}' (conflicts, requires, subsumes)", it.key()));
    KOPT_TRY_ASSIGN(m.relations.conflicts, r.strings(rel, "conflicts"));
    KOPT_TRY_ASSIGN(m.relations.requires_ids, r.strings(rel, "requires"));
    KOPT_TRY_ASSIGN(m.relations.subsumes, r.strings(rel, "subsumes"));
  }

  KOPT_TRY_ASSIGN(m.flags, r.strings(j, "flags"));
  if (j.contains("flag_param")) {
    const Json& fp = j["flag_param"];
    if (!fp.is_object() || !fp.contains("name") || !fp["name"].is_string() || !fp.contains("values") ||
        !fp["values"].is_array() || fp["values"].empty())
      return r.err("'flag_param' needs a name and a non-empty list of integer values");
    FlagParam p{fp["name"].get<std::string>(), {}};
    for (const auto& v : fp["values"]) {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0) return r.err("flag_param values must be positive integers");
      p.values.push_back(v.get<int64_t>());
    }
    m.flag_param = std::move(p);
  }
  return m;
}

}  // namespace

Result<Registry> Registry::from_json(const Json& j, const std::string& origin) {
  if (!j.is_object() || !j.contains("methods") || !j["methods"].is_array())
    return input_error(origin + ": expected an object with a 'methods' list");
  Registry reg;
  for (size_t i = 0; i < j["methods"].size(); ++i) {
    KOPT_TRY_ASSIGN(Method m, method_from_json(j["methods"][i], origin, i));
    reg.methods_.push_back(std::move(m));
  }
  return reg;
}

const Method* Registry::find(std::string_view id) const {
  for (const auto& m : methods_)
    if (m.id == id) return &m;
  return nullptr;
}

bool Registry::conflicts(std::string_view a, std::string_view b) const {
  auto lists = [&](std::string_view x, std::string_view y) {
    const Method* m = find(x);
    return m && std::find(m->relations.conflicts.begin(), m->relations.conflicts.end(), y) != m->relations.conflicts.end();
  };
  return lists(a, b) || lists(b, a);
}

std::vector<std::string> Registry::requirements(std::string_view id) const {
  std::vector<std::string> out, todo;
  if (const Method* m = find(id)) todo = m->relations.requires_ids;
  while (!todo.empty()) {
    std::string next = todo.back();
    todo.pop_back();
    if (next == id || std::find(out.begin(), out.end(), next) != out.end()) continue;
    out.push_back(next);
    if (const Method* m = find(next))
      for (const auto& r : m->relations.requires_ids) todo.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Json to_json(const Method& m) {
  Json ev = Json::array();
  for (const auto& e : m.evidence)
    ev.push_back({{"metric", e.metric}, {"op", op_text(e.op)}, {"value", e.value}, {"why", e.why}});
  Json backends = Json::array();
  for (Backend b : m.backends) backends.push_back(backend_name(b));
  Json j = {{"id", m.id},
            {"name", m.name},
            {"axis", axis_name(m.axis)},
            {"description", m.description},
            {"evidence", ev},
            {"numerics", numerics_name(m.numerics)},
            {"min_arch", fmt::format("sm_{}", m.min_arch)},
            {"backends", backends},
            {"sass", sass::to_json(m.sass)},
            {"relations",
             {{"conflicts", m.relations.conflicts},
              {"requires", m.relations.requires_ids},
              {"subsumes", m.relations.subsumes}}},
            {"guard", guard_macro(m.id)}};
  if (!m.flags.empty()) j["flags"] = m.flags;
  if (m.flag_param) j["flag_param"] = {{"name", m.flag_param->name}, {"values", m.flag_param->values}};
  return j;
}

std::vector<std::string> lint(const Registry& r, const LintOptions& opts) {
  std::vector<std::string> problems;
  auto add = [&](const std::string& id, const std::string& what) { problems.push_back(fmt::format("method '{}': {}", id, what)); };
  if (r.methods().size() < opts.min_methods)
    problems.push_back(fmt::format("the registry holds {} methods, fewer than {}", r.methods().size(), opts.min_methods));

  std::map<std::string, int> seen;
  for (const auto& m : r.methods()) seen[m.id]++;
  for (const auto& [id, n] : seen)
    if (n > 1) add(id, fmt::format("id used {} times", n));

  static const std::regex kMetric("[a-z0-9]+__[a-z0-9_]+(\\.[a-z0-9_]+)*");
  for (const auto& m : r.methods()) {
    if (!is_snake_case(m.id)) add(m.id, "id is not snake_case");
    if (util::trim(m.name).empty()) add(m.id, "empty name");
    std::string desc = util::trim(m.description);
    if (desc.size() < opts.min_description_chars || util::split(desc, ' ').size() < 6 || desc == m.name)
      add(m.id, fmt::format("description is too short to help anyone (needs {}+ characters, 6+ words)",
                            opts.min_description_chars));
    if (m.backends.empty()) add(m.id, "no backends");
    for (size_t i = 0; i < m.backends.size(); ++i)
      for (size_t k = i + 1; k < m.backends.size(); ++k)
        if (m.backends[i] == m.backends[k]) add(m.id, fmt::format("backend '{}' listed twice", backend_name(m.backends[i])));
    if (m.min_arch < 70 || m.min_arch > 120) add(m.id, fmt::format("min_arch sm_{} is out of range", m.min_arch));
    if (m.evidence.empty()) add(m.id, "no evidence: kopt could never tell when to pick it");
    for (const auto& e : m.evidence) {
      if (!std::regex_match(e.metric, kMetric)) add(m.id, fmt::format("'{}' is not a Nsight Compute metric name", e.metric));
      else if (opts.known_metrics && !opts.known_metrics->count(e.metric))
        add(m.id, fmt::format("metric '{}' is not among the known Nsight Compute metrics", e.metric));
      if (util::trim(e.why).size() < 10) add(m.id, fmt::format("evidence on '{}' has no real 'why'", e.metric));
    }
    auto check_ids = [&](const std::vector<std::string>& ids, const char* rel) {
      for (const auto& other : ids) {
        if (other == m.id) add(m.id, fmt::format("{} itself", rel));
        else if (!r.find(other)) add(m.id, fmt::format("{} unknown method '{}'", rel, other));
      }
    };
    check_ids(m.relations.conflicts, "conflicts with");
    check_ids(m.relations.requires_ids, "requires");
    check_ids(m.relations.subsumes, "subsumes");
    auto reqs = r.requirements(m.id);
    for (const auto& q : reqs) {
      if (r.conflicts(m.id, q)) add(m.id, fmt::format("requires '{}' and conflicts with it", q));
      for (const auto& q2 : reqs)
        if (q < q2 && r.conflicts(q, q2)) add(m.id, fmt::format("requires both '{}' and '{}', which conflict", q, q2));
      const Method* qm = r.find(q);
      if (qm && qm->min_arch > m.min_arch)
        add(m.id, fmt::format("requires '{}' (sm_{}) but claims sm_{}", q, qm->min_arch, m.min_arch));
    }
    for (const auto& q : m.relations.requires_ids) {
      auto back = r.requirements(q);
      if (std::find(back.begin(), back.end(), m.id) != back.end()) add(m.id, fmt::format("requirement cycle through '{}'", q));
    }
    for (const auto& s : m.relations.subsumes)
      if (std::find(reqs.begin(), reqs.end(), s) != reqs.end()) add(m.id, fmt::format("both requires and subsumes '{}'", s));
    if (m.flag_param) {
      bool placeholder = std::any_of(m.flags.begin(), m.flags.end(), [](const std::string& f) { return f.find("{value}") != std::string::npos; });
      if (!placeholder) add(m.id, "flag_param without a '{value}' in its flags");
    }
    for (const auto& f : m.flags)
      if (f.empty() || f[0] != '-') add(m.id, fmt::format("flag '{}' does not start with '-'", f));
  }
  return problems;
}

fs::path methods_json_path() {
  std::vector<fs::path> cands;
  if (const char* v = std::getenv("KOPT_DATA_DIR"); v && *v) cands.emplace_back(v);
  cands.push_back(util::executable_dir() / ".." / "share" / "kopt" / "data");  // cmake --install
  cands.push_back(util::executable_dir() / ".." / "data");
  cands.push_back(util::executable_dir() / "data");
  cands.push_back(fs::path(KOPT_SOURCE_DIR) / "data");
  for (const auto& c : cands) {
    std::error_code ec;
    if (fs::is_regular_file(c / "methods.json", ec)) return fs::weakly_canonical(c / "methods.json", ec);
  }
  return {};
}

Result<Registry> load_registry(const fs::path& path) {
  KOPT_TRY_ASSIGN(Json j, util::read_json(path));
  return Registry::from_json(j, path.string());
}

Result<RegistryRef> registry() {
  static std::once_flag once;
  static std::optional<Registry> loaded;
  static Error failure;
  std::call_once(once, [] {
    fs::path p = methods_json_path();
    if (p.empty()) {
      failure = input_error("data/methods.json not found next to kopt (../data), in the source tree, or in $KOPT_DATA_DIR");
      return;
    }
    auto r = load_registry(p);
    if (!r) {
      failure = r.error();
      return;
    }
    LintOptions opts;
    opts.min_methods = 1;  // a user's own, smaller registry is fine at run time; the test holds data/ to 60
    auto problems = lint(r.value(), opts);
    if (!problems.empty()) {
      failure = input_error(fmt::format("{}: {} problem(s), first: {}", p.string(), problems.size(), problems.front()));
      return;
    }
    loaded = std::move(r).value();
  });
  if (!loaded) return failure;
  return RegistryRef(*loaded);
}

const Method* find_method(std::string_view id) {
  auto r = registry();
  return r ? r.value().get().find(id) : nullptr;
}

}  // namespace kopt::search
