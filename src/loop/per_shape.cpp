#include "loop/per_shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "util/strings.h"

namespace kopt::loop {

namespace {

double log_of(int64_t v) { return std::log(v > 1 ? static_cast<double>(v) : 1.0); }

int64_t value_of(const DimValues& d, const std::string& k) {
  auto it = d.find(k);
  return it == d.end() ? 1 : it->second;
}

bool faster_beyond_noise(const std::optional<runner::PairedComparison>& c, double min_effect) {
  return c && c->rounds >= 5 && c->median_ratio > 0 && c->ci95_high < 1.0 - min_effect;
}

}  // namespace

std::vector<std::string> varying_keys(const std::vector<DispatchCase>& cases) {
  std::set<std::string> names;
  for (const auto& c : cases)
    for (const auto& [k, v] : c.point) names.insert(k);
  std::vector<std::string> keys;
  for (const auto& k : names) {
    bool differs = false;
    for (const auto& c : cases) differs |= value_of(c.point, k) != value_of(cases.front().point, k);
    if (differs) keys.push_back(k);
  }
  return keys;
}

size_t nearest_case(const std::vector<DispatchCase>& cases, const std::vector<std::string>& keys, const DimValues& dims) {
  size_t best = 0;
  double best_d = 0, best_s = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    double d = 0, s = 0;
    for (const auto& k : keys) {
      const double a = log_of(value_of(dims, k)) - log_of(value_of(cases[i].point, k));
      d += a * a;
      s += log_of(value_of(cases[i].point, k));
    }
    if (i == 0 || d < best_d || (d == best_d && s >= best_s)) best = i, best_d = d, best_s = s;
  }
  return best;
}

DispatchPlan plan_dispatch(const std::vector<DispatchCase>& cases, const std::string& champion,
                           const std::vector<DispatchContender>& contenders, double min_effect) {
  DispatchPlan p;
  p.keys = varying_keys(cases);
  p.chosen.assign(cases.size(), champion);
  p.why.assign(cases.size(), "no contender faster beyond the noise: the champion");
  // First pass: the fastest contender beyond the noise at each case.
  std::vector<int> pick(cases.size(), -1);
  for (size_t i = 0; i < cases.size(); ++i)
    for (size_t j = 0; j < contenders.size(); ++j) {
      const auto& cmp = i < contenders[j].vs_champion.size() ? contenders[j].vs_champion[i] : std::nullopt;
      if (!faster_beyond_noise(cmp, min_effect)) continue;
      if (pick[i] < 0 || cmp->median_ratio < contenders[pick[i]].vs_champion[i]->median_ratio) pick[i] = static_cast<int>(j);
    }
  // Second pass: a contender chosen at another case stands in where it is faster beyond the noise too and its CI
  // overlaps the fastest one's (the two are not told apart there): one configuration fewer.
  for (size_t i = 0; i < cases.size(); ++i) {
    if (pick[i] < 0) continue;
    const auto& best = *contenders[pick[i]].vs_champion[i];
    for (size_t o = 0; o < cases.size(); ++o) {
      const int j = pick[o];
      if (o == i || j < 0 || j == pick[i]) continue;
      const auto& cmp = contenders[j].vs_champion[i];
      if (faster_beyond_noise(cmp, min_effect) && cmp->ci95_low <= best.ci95_high) {
        pick[i] = j;
        break;
      }
    }
    const auto& c = *contenders[pick[i]].vs_champion[i];
    p.chosen[i] = contenders[pick[i]].id;
    p.why[i] = fmt::format("faster than the champion beyond the noise: ratio {:.3f}, 95% CI [{:.3f}, {:.3f}]", c.median_ratio,
                           c.ci95_low, c.ci95_high);
  }
  for (size_t i = 0; i < cases.size(); ++i)
    if (p.chosen[i] == champion && std::find(p.configs.begin(), p.configs.end(), champion) == p.configs.end())
      p.configs.insert(p.configs.begin(), champion);
  for (size_t i = 0; i < cases.size(); ++i)
    if (std::find(p.configs.begin(), p.configs.end(), p.chosen[i]) == p.configs.end()) p.configs.push_back(p.chosen[i]);
  // Buckets: the cases in order along the varying dims, adjacent ones with the same configuration merged.
  std::vector<size_t> order(cases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    for (const auto& k : p.keys)
      if (value_of(cases[a].point, k) != value_of(cases[b].point, k))
        return value_of(cases[a].point, k) < value_of(cases[b].point, k);
    return false;
  });
  for (size_t i : order) {
    if (p.buckets.empty() || p.buckets.back().config != p.chosen[i]) p.buckets.push_back({p.chosen[i], {}});
    p.buckets.back().cases.push_back(cases[i].name);
  }
  if (cases.size() < 2)
    p.reason = "one case: nothing to dispatch on";
  else if (p.keys.empty())
    p.reason = "the cases differ in no scalar parameter of solve(): the rule would have nothing to read";
  else if (p.configs.size() < 2)
    p.reason =
        p.configs.front() == champion
            ? "no configuration is faster than the champion beyond the noise at any case: the champion serves every case"
            : "one configuration (" + p.configs.front() + ") is fastest at every case: a single configuration, no dispatch";
  p.worthwhile = p.reason.empty();
  return p;
}

// The dispatcher's fixed part: the nearest case in log space and every configuration's solve(), loaded up front.
constexpr std::string_view kDispatchRuntime = R"(double log_of(long long v) { return log(v > 1 ? (double)v : 1.0); }

int nearest_case(const long long* v) {
  int best = 0;
  double best_d = 0, best_s = 0;
  for (int i = 0; i < kCases; ++i) {
    double d = 0, s = 0;
    for (int k = 0; k < kKeys; ++k) {
      const double a = log_of(v[k]) - log_of(kValues[i][k]);
      d += a * a;
      s += log_of(kValues[i][k]);
    }
    if (i == 0 || d < best_d || (d == best_d && s >= best_s)) best = i, best_d = d, best_s = s;
  }
  return best;
}

// Every configuration's solve(), loaded with this library (a namespace-scope object: constructed by dlopen, before the
// caller's first solve(), so a measuring process loads them all up front, as it loads the dispatcher).
struct Loaded {
  SolveFn fn[kConfigs] = {};
  std::string error;
  Loaded() {
    Dl_info info;
    std::string dir = ".";
    if (dladdr((const void*)&nearest_case, &info) && info.dli_fname) {
      dir = info.dli_fname;
      const size_t slash = dir.rfind('/');
      dir = slash == std::string::npos ? "." : dir.substr(0, slash);
    }
    for (int c = 0; c < kConfigs && error.empty(); ++c) {
      const std::string path = dir + "/" + kLibraries[c];
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      fn[c] = h ? (SolveFn)dlsym(h, "solve") : nullptr;
      if (!fn[c]) error = "cannot load solve() from " + path + ": " + (h ? "no solve" : dlerror());
    }
  }
};
const Loaded loaded;
}  // namespace

extern "C" int kopt_dispatch_case(const long long* values) { return nearest_case(values); }
extern "C" const char* kopt_dispatch_load_error() { return loaded.error.c_str(); }

)";

std::string dispatcher_source(const contract::KernelSignature& sig, const std::vector<DispatchCase>& cases,
                              const std::vector<std::string>& keys, const std::vector<size_t>& case_config,
                              const std::vector<std::string>& libraries) {
  std::string s;
  s += "// kopt per-shape dispatch (generated; docs/GATES.md \"The per-shape dispatch\").\n";
  s += "// solve() picks the configuration of the nearest measured case in log space of (" + util::join(keys, ", ") +
       "), ties to the larger case,\n// and calls that configuration's solve(), in its own library beside this one "
       "(dlopen RTLD_LOCAL: configurations of one\n// source keep their own kernels and symbols).\n";
  s += "// Pointers are passed as void* (the same ABI as the kernel's typed pointers: solve() is extern \"C\", and the caller\n"
       "// passes addresses), so the dispatcher needs none of the kernel's headers; scalars keep their types.\n";
  s += "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <dlfcn.h>\n#include <math.h>\n#include <stddef.h>\n#include "
       "<stdint.h>\n"
       "#include <stdio.h>\n#include <stdlib.h>\n\n#include <string>\n\n";
  s += "namespace {\n";
  const size_t nk = std::max<size_t>(keys.size(), 1);
  s += fmt::format("constexpr int kCases = {};\nconstexpr int kKeys = {};\nconstexpr int kConfigs = {};\n", cases.size(),
                   keys.size(), libraries.size());
  s += fmt::format("// per case: {}\nconst long long kValues[kCases][{}] = {{\n", util::join(keys, ", "), nk);
  for (const auto& c : cases) {
    std::vector<std::string> v;
    for (const auto& k : keys) v.push_back(std::to_string(value_of(c.point, k)) + "LL");
    if (v.empty()) v.push_back("1LL");
    s += "    {" + util::join(v, ", ") + "},  // " + c.name + "\n";
  }
  s += "};\nconst int kConfig[kCases] = {";
  for (size_t i = 0; i < case_config.size(); ++i) s += (i ? ", " : "") + std::to_string(case_config[i]);
  s += "};\nconst char* const kLibraries[kConfigs] = {";
  for (size_t i = 0; i < libraries.size(); ++i) s += (i ? ", \"" : "\"") + libraries[i] + "\"";
  s += "};\n\n";
  std::vector<std::string> types, names, params;
  for (const auto& p : sig.params) {
    const std::string type = p.kind == contract::ParamKind::kPointer ? (p.is_const ? "const void*" : "void*") : p.type_text;
    types.push_back(type);
    names.push_back(p.name);
    params.push_back(type + " " + p.name);
  }
  s += "typedef void (*SolveFn)(" + util::join(types, ", ") + ");\n\n";
  s += kDispatchRuntime;
  s += "extern \"C\" void solve(" + util::join(params, ", ") + ") {\n";
  std::vector<std::string> vals;
  for (const auto& k : keys) vals.push_back("(long long)" + k);
  if (vals.empty()) vals.push_back("1LL");
  s += fmt::format("  const long long v[{}] = {{{}}};\n", nk, util::join(vals, ", "));
  s +=
      "  if (!loaded.error.empty()) {\n    fprintf(stderr, \"kopt dispatch: %s\\n\", loaded.error.c_str());\n    abort();\n  }\n";
  s += "  loaded.fn[kConfig[nearest_case(v)]](" + util::join(names, ", ") + ");\n}\n";
  return s;
}

util::Json to_json(const DispatchPlan& p, const std::vector<DispatchCase>& cases) {
  util::Json per_case = util::Json::array();
  for (size_t i = 0; i < cases.size() && i < p.chosen.size(); ++i)
    per_case.push_back({{"case", cases[i].name}, {"point", cases[i].point}, {"weight", cases[i].weight},
                        {"config", p.chosen[i]}, {"why", p.why[i]}});
  util::Json buckets = util::Json::array();
  for (const auto& b : p.buckets) buckets.push_back({{"config", b.config}, {"cases", b.cases}});
  return {{"keys", p.keys},
          {"rule", "the nearest case in log space of the keys (ln max(v, 1), squared distance), ties to the larger case"},
          {"configs", p.configs},
          {"buckets", buckets},
          {"cases", per_case},
          {"worthwhile", p.worthwhile},
          {"reason", p.reason}};
}

}  // namespace kopt::loop
