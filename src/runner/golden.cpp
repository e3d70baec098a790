#include "runner/golden.h"

#include "runner/sealed.h"
#include "util/json_io.h"

namespace kopt::runner {

std::string_view role_name(BufferRole r) {
  switch (r) {
    case BufferRole::kInput: return "input";
    case BufferRole::kOutput: return "output";
    case BufferRole::kInOut: return "inout";
  }
  return "input";
}

std::optional<BufferRole> parse_role(std::string_view name) {
  for (auto r : {BufferRole::kInput, BufferRole::kOutput, BufferRole::kInOut})
    if (role_name(r) == name) return r;
  return std::nullopt;
}

Result<Golden> load_golden(const std::filesystem::path& dir) {
  Golden g;
  g.dir = dir;
  KOPT_TRY_ASSIGN(util::Json sj, util::read_json(dir / "signature.json"));
  KOPT_TRY_ASSIGN(g.signature, contract::signature_from_json(sj.contains("signature") ? sj["signature"] : sj));
  KOPT_TRY_ASSIGN(g.manifest, util::read_json(dir / "manifest.json"));
  const auto& m = g.manifest;
  try {
    for (const auto& s : m.at("seeds")) g.seeds.push_back(s.get<int>());
    for (const auto& b : m.at("buffers")) {
      BufferSpec spec;
      spec.name = b.at("name").get<std::string>();
      const auto role_text = b.at("role").get<std::string>();
      auto role = parse_role(role_text);
      if (!role)
        return input_error("golden manifest: buffer " + spec.name + " has an unknown role '" + role_text +
                           "' (input, output or inout)");
      spec.role = *role;
      auto dt = contract::parse_dtype(b.at("dtype").get<std::string>());
      if (!dt) return input_error("golden manifest: buffer " + spec.name + " has an unknown dtype");
      spec.dtype = *dt;
      spec.shape = b.at("shape").get<std::vector<int64_t>>();
      spec.nbytes = b.at("nbytes").get<int64_t>();
      g.buffers[spec.name] = spec;
    }
    if (m.contains("scalars"))
      for (auto it = m["scalars"].begin(); it != m["scalars"].end(); ++it) g.scalars[it.key()] = it.value().get<double>();
    const auto& t = m.at("tolerances");
    g.tol = {t.at("atol").get<double>(), t.at("rtol").get<double>()};
    g.approx_tol = {t.value("approx_atol", g.tol.atol * 10), t.value("approx_rtol", g.tol.rtol * 10)};
    g.sizes_guessed = m.value("sizes_guessed", false);
    g.sealed = sealed_token(m);
  } catch (const std::exception& e) {
    return input_error("golden manifest " + (dir / "manifest.json").string() + " is malformed: " + e.what());
  }
  if (g.seeds.empty()) return input_error("golden manifest lists no seeds");
  for (const auto& p : g.signature.params) {
    if (p.kind == contract::ParamKind::kPointer) {
      auto it = g.buffers.find(p.name);
      if (it == g.buffers.end()) return input_error("golden data has no buffer for solve parameter '" + p.name + "'");
      if (it->second.dtype != p.dtype)
        return input_error("golden buffer '" + p.name + "' is " + std::string(contract::dtype_name(it->second.dtype)) +
                           " but solve takes " + std::string(contract::dtype_name(p.dtype)));
    } else if (!g.scalars.count(p.name)) {
      return input_error("golden data has no value for scalar parameter '" + p.name +
                         "' (give it as a dimension --" + p.name + "=... or return it from setup)");
    }
  }
  return g;
}

Result<contract::TensorMap> load_seed(const Golden& g, int seed) {
  return contract::read_safetensors(g.dir / ("seed_" + std::to_string(seed) + ".safetensors"));
}

}  // namespace kopt::runner
