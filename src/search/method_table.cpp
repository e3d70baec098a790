#include "search/method_table.h"

#include <fmt/format.h>

#include "util/output.h"
#include "util/strings.h"

namespace kopt::search {

std::vector<const Method*> filter_methods(const Registry& reg, const MethodFilter& f) {
  std::vector<const Method*> out;
  for (const auto& m : reg.methods()) {
    if (f.axis && m.axis != *f.axis) continue;
    if (f.backend && !m.supports(*f.backend)) continue;
    if (f.numerics && !numerics_allows(*f.numerics, m.numerics)) continue;
    out.push_back(&m);
  }
  return out;
}

namespace {
std::string backends_text(const Method& m) {
  std::vector<std::string> b;
  for (Backend x : m.backends) b.emplace_back(backend_name(x));
  return util::join(b, ",");
}
}  // namespace

std::string format_method_table(const std::vector<const Method*>& methods) {
  size_t id_w = 2;
  for (const Method* m : methods) id_w = std::max(id_w, m->id.size());
  std::string s = fmt::format("{:<{}}  {:<8} {:<21} {:<6} {:<19} {}\n", "id", id_w, "axis", "numerics", "arch", "backends", "name");
  for (const Method* m : methods)
    s += fmt::format("{:<{}}  {:<8} {:<21} {:<6} {:<19} {}{}\n", m->id, id_w, axis_name(m->axis), numerics_name(m->numerics),
                     fmt::format("sm_{}", m->min_arch), backends_text(*m), m->name, m->is_flag_method() ? " [flag]" : "");
  s += fmt::format("{} method(s). `kopt methods ID` shows one in full.\n", methods.size());
  return s;
}

std::string format_method_csv(const std::vector<const Method*>& methods) {
  std::string s = "id,name,axis,numerics,min_arch,backends,flag_method\r\n";
  for (const Method* m : methods)
    s += fmt::format("{},{},{},{},sm_{},{},{}\r\n", util::csv_cell(m->id), util::csv_cell(m->name), axis_name(m->axis),
                     numerics_name(m->numerics), m->min_arch, util::csv_cell(backends_text(*m)),
                     m->is_flag_method() ? "true" : "false");
  return s;
}

std::string format_method_card(const Method& m) {
  std::string s = fmt::format("{} ({})\n  axis {}, numerics {}, min arch sm_{}, backends {}, guard {}\n\n  {}\n", m.name, m.id,
                              axis_name(m.axis), numerics_name(m.numerics), m.min_arch, backends_text(m), guard_macro(m.id),
                              m.description);
  if (!m.flags.empty()) {
    s += fmt::format("\n  compiler flags: {}", util::join(m.flags, " "));
    if (m.flag_param) {
      std::vector<std::string> vals;
      for (auto v : m.flag_param->values) vals.push_back(std::to_string(v));
      s += fmt::format(" ({{value}} in {})", util::join(vals, ", "));
    }
    s += "\n";
  }
  s += "\n  evidence (any one calls for it):\n";
  for (const auto& e : m.evidence) s += fmt::format("    {} {} {:g}: {}\n", e.metric, op_text(e.op), e.value, e.why);
  if (!m.sass.empty()) s += fmt::format("\n  SASS signature: {}\n", sass::to_json(m.sass).dump());
  auto rel = [&](const char* what, const std::vector<std::string>& ids) {
    if (!ids.empty()) s += fmt::format("  {}: {}\n", what, util::join(ids, ", "));
  };
  if (!m.relations.conflicts.empty() || !m.relations.requires_ids.empty() || !m.relations.subsumes.empty()) s += "\n";
  rel("conflicts with", m.relations.conflicts);
  rel("requires", m.relations.requires_ids);
  rel("subsumes", m.relations.subsumes);
  return s;
}

}  // namespace kopt::search
