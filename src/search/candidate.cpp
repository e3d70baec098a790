#include "search/candidate.h"

#include <algorithm>

#include "util/hash.h"

namespace kopt::search {

std::string candidate_hash(const std::string& source_text, const Candidate& c) {
  util::Hasher h;
  h.add("kopt-candidate-v1").add(source_text);
  h.add("flags");
  for (const auto& f : c.flags) h.add(f);
  h.add("defines");
  for (const auto& [k, v] : c.defines) h.add(k).add(v);
  h.add("constexprs");
  for (const auto& [k, v] : c.constexprs) h.add(k).add(std::to_string(v));
  h.add("launch");
  for (const auto& [k, v] : c.launch) h.add(k).add(std::to_string(v));
  return h.hex();
}

Candidate candidate_from_config(const SearchSpace& space, const Registry& reg, const Config& config,
                                const std::filesystem::path& source, const std::string& source_text,
                                const std::string& origin) {
  Candidate c;
  c.source = source;
  c.origin = origin;
  c.config = config;
  bool triton = space.language == SourceLanguage::kPython;
  for (size_t i = 0; i < space.dims.size(); ++i) {
    const Dim& d = space.dims[i];
    int64_t v = d.values[static_cast<size_t>(config[i])];
    switch (d.kind) {
      case DimKind::kParam:
        c.params[d.name] = v;
        if (d.param_kind == ParamKind::kDefine) c.defines[d.name] = std::to_string(v);
        else if (d.param_kind == ParamKind::kConstexpr) c.constexprs[d.name] = v;
        else c.launch[std::string(param_kind_name(d.param_kind))] = v;
        break;
      case DimKind::kGuard:
        c.guards[d.method] = v != 0;
        if (triton) c.constexprs[d.name] = v;
        else c.defines[d.name] = std::to_string(v);
        if (v) c.methods.push_back(d.method);
        break;
      case DimKind::kFlag:
        c.guards[d.method] = v != 0;
        if (v == 0) break;
        if (const Method* m = reg.find(d.method)) {
          auto flags = m->flags_for(m->flag_param ? std::optional<int64_t>(v) : std::nullopt);
          c.flags.insert(c.flags.end(), flags.begin(), flags.end());
          if (m->flag_param) c.params[m->flag_param->name] = v;
        }
        c.methods.push_back(d.method);
        break;
    }
  }
  std::sort(c.methods.begin(), c.methods.end());
  c.content_hash = candidate_hash(source_text, c);
  return c;
}

util::Json to_json(const Candidate& c) {
  util::Json j = {{"id", c.id},
                  {"source", c.source.string()},
                  {"flags", c.flags},
                  {"defines", c.defines},
                  {"constexprs", c.constexprs},
                  {"launch", c.launch},
                  {"params", c.params},
                  {"guards", c.guards},
                  {"methods", c.methods},
                  {"not_ablatable", c.not_ablatable},
                  {"origin", c.origin},
                  {"content_hash", c.content_hash}};
  j["config"] = c.config ? util::Json(*c.config) : util::Json(nullptr);
  return j;
}

}  // namespace kopt::search
