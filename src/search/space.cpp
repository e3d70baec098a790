#include "search/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "util/strings.h"

namespace kopt::search {

int SearchSpace::dim_index(std::string_view name) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].name == name) return static_cast<int>(i);
  return -1;
}

int SearchSpace::method_dim(std::string_view method_id) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].kind != DimKind::kParam && dims[i].method == method_id) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> SearchSpace::offered_methods() const {
  std::vector<std::string> out;
  for (const auto& d : dims)
    if (d.kind != DimKind::kParam) out.push_back(d.method);
  return out;
}

Config SearchSpace::default_config() const {
  Config c;
  for (const auto& d : dims) c.push_back(d.default_index);
  return c;
}

Bindings SearchSpace::bindings(const Config& c) const {
  Bindings b;
  for (size_t i = 0; i < dims.size() && i < c.size(); ++i) b[dims[i].name] = dims[i].values[static_cast<size_t>(c[i])];
  return b;
}

bool SearchSpace::in_range(const Config& c) const {
  if (c.size() != dims.size()) return false;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] < 0 || static_cast<size_t>(c[i]) >= dims[i].values.size()) return false;
  return true;
}

bool SearchSpace::valid(const Config& c) const {
  if (!in_range(c)) return false;
  std::vector<int64_t> values;
  for (const auto& k : constraints) {
    values.clear();
    for (const auto& name : k.expr.slot_names()) {
      int d = dim_index(name);
      if (d < 0) return false;
      values.push_back(dims[static_cast<size_t>(d)].values[static_cast<size_t>(c[static_cast<size_t>(d)])]);
    }
    auto v = k.expr.eval_slots(values);
    if (!v || *v == 0) return false;
  }
  return true;
}

double SearchSpace::size() const {
  double n = 1;
  for (const auto& d : dims) n *= static_cast<double>(d.values.size());
  return n;
}

std::string SearchSpace::key(const Config& c) const {
  std::string s;
  for (size_t i = 0; i < dims.size() && i < c.size(); ++i) {
    if (i) s += ',';
    s += fmt::format("{}={}", dims[i].name, dims[i].values[static_cast<size_t>(c[i])]);
  }
  return s;
}

bool method_fits_arch(const Method& m, int arch) {
  if (arch < m.min_arch) return false;
  static const std::regex specific("sm_([0-9]+)a\\b");
  for (const auto& f : m.flags) {
    std::smatch match;
    if (std::regex_search(f, match, specific) && std::stoi(match[1].str()) != arch) return false;
  }
  return true;
}

Result<SearchSpace> build_space(const Annotations& ann, const Registry& reg, const SpaceOptions& opts) {
  SearchSpace s;
  s.source_file = ann.file;
  s.language = ann.language;
  s.backend = opts.backend;
  s.constraints = ann.constraints;
  if (ann.language == SourceLanguage::kPython && opts.backend != Backend::kTriton)
    return input_error(fmt::format("{} is a Python file but the backend is {}", ann.file, backend_name(opts.backend)));

  for (const auto& p : ann.params) {
    Dim d{p.name, DimKind::kParam, p.kind, "", p.values, 0, p.where};
    d.default_index = static_cast<int>(std::find(p.values.begin(), p.values.end(), p.default_value) - p.values.begin());
    d.follows = p.follows;
    d.covers = p.covers;
    d.when = p.when;
    s.dims.push_back(std::move(d));
  }

  for (const auto& md : ann.methods) {
    const Method* m = reg.find(md.id);
    if (!m) {
      std::string best;
      size_t best_d = 4;
      for (const auto& cand : reg.methods()) {
        size_t dist = util::edit_distance(md.id, cand.id);
        if (dist < best_d) best_d = dist, best = cand.id;
      }
      return input_error(fmt::format("{}: unknown method '{}'{} (kopt methods lists them)", md.where, md.id,
                                     best.empty() ? "" : fmt::format("; did you mean '{}'?", best)));
    }
    if (!m->supports(opts.backend))
      return input_error(fmt::format("{}: method '{}' does not apply to {} kernels", md.where, md.id, backend_name(opts.backend)));
    if (!method_fits_arch(*m, opts.arch)) {
      // Still a dimension (the guard must be defined), but pinned off.
      s.notes.push_back(fmt::format("{}: method '{}' needs sm_{}; the device is sm_{}: kept off", md.where, md.id, m->min_arch, opts.arch));
      s.dims.push_back({md.guard, DimKind::kGuard, ParamKind::kDefine, md.id, {0}, 0, md.where});
      continue;
    }
    s.dims.push_back({md.guard, DimKind::kGuard, ParamKind::kDefine, md.id, {0, 1}, 0, md.where});
  }

  if (opts.offer_flag_methods && opts.backend != Backend::kTriton) {
    for (const auto& m : reg.methods()) {
      if (!m.is_flag_method() || !m.supports(opts.backend)) continue;
      if (s.method_dim(m.id) >= 0) continue;  // declared by the kernel too
      if (!method_fits_arch(m, opts.arch)) continue;
      if (!numerics_allows(opts.numerics, m.numerics)) {
        s.notes.push_back(fmt::format("flag method '{}' ({}) not offered in numerics mode {}", m.id, numerics_name(m.numerics),
                                      numerics_mode_name(opts.numerics)));
        continue;
      }
      Dim d{guard_macro(m.id), DimKind::kFlag, ParamKind::kDefine, m.id, {0, 1}, 0, ""};
      if (m.flag_param) {
        d.values = {0};
        d.values.insert(d.values.end(), m.flag_param->values.begin(), m.flag_param->values.end());
      }
      s.dims.push_back(std::move(d));
    }
  }

  // The baseline must satisfy the declared constraints, or the space contradicts the kernel itself.
  if (!s.constraints.empty()) {
    Bindings b = s.bindings(s.default_config());
    for (const auto& c : s.constraints) {
      auto v = c.expr.eval(b);
      if (!v) return input_error(fmt::format("{}: constraint '{}': {}", c.where, c.expr.text(), v.error().message));
      if (v.value() == 0)
        return input_error(fmt::format("{}: constraint '{}' fails for the default values ({}); set default= on the params",
                                       c.where, c.expr.text(), s.key(s.default_config())));
    }
  }
  return s;
}

}  // namespace kopt::search
