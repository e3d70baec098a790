#include "workload/working_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "util/strings.h"

namespace kopt::workload {

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// Multiplies with an overflow check.
bool mul(int64_t& acc, int64_t v) { return !__builtin_mul_overflow(acc, v, &acc); }

Extent inferred_extent(const std::vector<int64_t>& shape, const Dims& dims, SizeMethod& method) {
  Extent e;
  bool any_dim = false;
  for (int64_t v : shape) {
    if (v == 1) continue;
    std::vector<std::string> alts;
    for (const auto& [k, dv] : dims)
      if (dv == v) alts.push_back(k);
    if (!alts.empty()) {
      e.factors.push_back(alts);
      any_dim = true;
      continue;
    }
    bool paired = false;  // a flattened extent: the product of two dimensions
    for (auto a = dims.begin(); a != dims.end() && !paired; ++a)
      for (auto b = a; b != dims.end() && !paired; ++b)
        if (int64_t prod = 0; !__builtin_mul_overflow(a->second, b->second, &prod) && prod == v) {
          e.factors.push_back({a->first});
          e.factors.push_back({b->first});
          paired = any_dim = true;
        }
    if (!paired) e.constant *= v;
  }
  method = any_dim ? SizeMethod::kInferred : SizeMethod::kConstant;
  return e;
}

}  // namespace

std::string_view size_method_name(SizeMethod m) {
  switch (m) {
    case SizeMethod::kExact: return "exact";
    case SizeMethod::kGuessedRule: return "guessed_rule";
    case SizeMethod::kInferred: return "inferred";
    case SizeMethod::kConstant: return "constant";
  }
  return "?";
}

bool WorkingSetModel::exact() const {
  return std::none_of(buffers.begin(), buffers.end(), [](const BufferModel& b) { return b.method == SizeMethod::kInferred; });
}

Result<WorkingSetModel> model_from_manifest(const util::Json& manifest) {
  WorkingSetModel m;
  Dims dims;
  try {
    if (manifest.contains("dims") && manifest["dims"].is_object()) dims = manifest["dims"].get<Dims>();
  } catch (const std::exception& e) {
    return input_error(std::string("golden manifest: bad dims: ") + e.what());
  }
  const auto buffers = manifest.value("buffers", util::Json::array());
  for (const auto& b : buffers) {
    BufferModel bm;
    bm.name = b.value("name", std::string());
    auto dt = contract::parse_dtype(b.value("dtype", std::string()));
    if (!dt) return input_error("golden manifest: buffer " + bm.name + " has an unknown dtype '" + b.value("dtype", std::string()) + "'");
    bm.dtype = *dt;
    std::vector<int64_t> shape;
    try {
      shape = b.value("shape", std::vector<int64_t>{});
    } catch (const std::exception& e) {
      return input_error("golden manifest: buffer " + bm.name + " has a malformed shape: " + e.what());
    }
    const std::string source = b.value("shape_source", std::string());
    if (b.contains("shape_expr") && b["shape_expr"].is_array()) {
      for (const auto& it : b["shape_expr"]) {
        if (it.is_string()) {
          std::string d = it.get<std::string>();
          if (!dims.count(d)) return input_error("golden manifest: buffer " + bm.name + "'s shape names dimension " + d + ", which the manifest's dims lack");
          bm.numel.factors.push_back({d});
        } else if (it.is_number_integer() && it.get<int64_t>() > 0) {
          bm.numel.constant *= it.get<int64_t>();
        } else {
          return input_error("golden manifest: buffer " + bm.name + " has a bad shape_expr entry " + it.dump());
        }
      }
      bm.method = SizeMethod::kExact;
    } else if (source == "guessed") {
      // The harness's rule (docs/HARNESS.md): the product of the two largest dims, else --ptr-size elements.
      int64_t numel = 1;
      for (int64_t v : shape) numel *= v;
      std::vector<std::pair<int64_t, std::string>> by_value;
      for (const auto& [k, v] : dims) by_value.emplace_back(v, k);
      std::stable_sort(by_value.begin(), by_value.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      int64_t two = 1;
      for (size_t i = 0; i < by_value.size() && i < 2; ++i) two *= by_value[i].first;
      if (!by_value.empty() && two == numel) {
        for (size_t i = 0; i < by_value.size() && i < 2; ++i) bm.numel.factors.push_back({by_value[i].second});
        bm.method = SizeMethod::kGuessedRule;
      } else {
        bm.numel.constant = numel;
        bm.method = SizeMethod::kConstant;
      }
    } else {
      bm.numel = inferred_extent(shape, dims, bm.method);
    }
    m.buffers.push_back(std::move(bm));
  }
  return m;
}

Result<WorkingSet> estimate(const WorkingSetModel& m, const Dims& dims) {
  WorkingSet w;
  w.exact = m.exact();
  for (const auto& b : m.buffers) {
    int64_t n = b.numel.constant;
    for (const auto& alts : b.numel.factors) {
      int64_t best = 0;
      for (const auto& d : alts) {
        auto it = dims.find(d);
        if (it == dims.end()) return input_error("buffer " + b.name + "'s size needs dimension " + d + ", which this case lacks");
        best = std::max(best, it->second);
      }
      if (!mul(n, best)) return input_error("buffer " + b.name + " is too large to size (overflow) at " + format_dims(dims));
    }
    int64_t bytes = n;
    if (!mul(bytes, static_cast<int64_t>(contract::dtype_size(b.dtype))) || __builtin_add_overflow(w.bytes, bytes, &w.bytes))
      return input_error("the working set is too large to size (overflow) at " + format_dims(dims));
    w.buffers.push_back({b.name, n, bytes});
  }
  return w;
}

util::Json to_json(const WorkingSet& w) {
  util::Json bufs = util::Json::array();
  for (const auto& b : w.buffers) bufs.push_back({{"name", b.name}, {"numel", b.numel}, {"bytes", b.bytes}});
  return {{"bytes", w.bytes}, {"exact", w.exact}, {"buffers", bufs}};
}

int64_t default_max_working_set_bytes(int64_t gpu_total_memory_bytes) {
  return gpu_total_memory_bytes > 0 ? gpu_total_memory_bytes / 16 : 0;
}

int64_t max_working_set_bytes(double option_mb, int64_t gpu_total_memory_bytes) {
  if (option_mb > 0) return static_cast<int64_t>(option_mb * 1024.0 * 1024.0);
  return default_max_working_set_bytes(gpu_total_memory_bytes);
}

Result<Fit> fit_to_limit(const WorkingSetModel& m, const Dims& requested, int64_t max_bytes) {
  Fit f;
  f.realised = requested;
  KOPT_TRY_ASSIGN(auto ws, estimate(m, requested));
  f.requested_bytes = f.realised_bytes = ws.bytes;
  if (max_bytes <= 0 || ws.bytes <= max_bytes) return f;
  f.axes = scaled_axes(requested);
  auto bytes_at = [&](double s) -> Result<int64_t> {
    KOPT_TRY_ASSIGN(auto w, estimate(m, scale_dims(requested, f.axes, s)));
    return w.bytes;
  };
  // The smallest scaling: every shrunk axis at one alignment unit (scale_dim's floor).
  constexpr double kSmallest = 1e-9;
  KOPT_TRY_ASSIGN(int64_t smallest, bytes_at(kSmallest));
  if (f.axes.empty() || smallest > max_bytes)
    return input_error(fmt::format("the case {} needs {} of buffers{}, above the working-set limit of {}; raise "
                                   "--max-working-set-mb or give smaller dims",
                                   format_dims(requested), mib(ws.bytes),
                                   f.axes.empty() ? std::string(" and has no dimension >= 64 to shrink")
                                                  : " (still " + mib(smallest) + " at its smallest)",
                                   mib(max_bytes)));
  double lo = kSmallest, hi = 1.0;  // bytes_at(lo) fits, bytes_at(hi) does not; scale_dim is monotone in f
  for (int i = 0; i < 60; ++i) {
    double mid = 0.5 * (lo + hi);
    KOPT_TRY_ASSIGN(int64_t b, bytes_at(mid));
    (b <= max_bytes ? lo : hi) = mid;
  }
  f.factor = lo;
  f.realised = scale_dims(requested, f.axes, lo);
  KOPT_TRY_ASSIGN(f.realised_bytes, bytes_at(lo));
  return f;
}

Result<std::vector<Case>> fit_cases(std::vector<Case> cases, const WorkingSetModel& m, int64_t max_bytes) {
  std::vector<Case> out;
  for (auto& c : cases) {
    KOPT_TRY_ASSIGN(Fit f, fit_to_limit(m, c.requested, max_bytes));
    c.realised = f.realised;
    if (f.fitted())
      c.note += fmt::format("; fitted to the working-set limit of {}: {} x{:.3f} ({} -> {})", mib(max_bytes),
                            util::join(f.axes, ", "), f.factor, mib(f.requested_bytes), mib(f.realised_bytes));
    auto same = std::find_if(out.begin(), out.end(), [&](const Case& o) { return o.realised == c.realised; });
    if (same != out.end()) {
      same->weight += c.weight;
      same->note += "; merged with " + c.name + " (the same dims after fitting)";
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

bool is_out_of_memory(std::string_view message) {
  static const std::regex re(R"(CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|OutOfMemoryError|out of memory|cudaError 2\b)",
                             std::regex::icase);
  return std::regex_search(message.begin(), message.end(), re);
}

OomDecision decide_oom_retry(OomWho who, bool out_of_memory, int retries_done, int64_t failed_ws, const OomPolicy& p) {
  OomDecision d;
  if (!out_of_memory) {
    d.reason = "not an out-of-memory failure";
    return d;
  }
  if (who == OomWho::kCandidate) {
    d.reason = "the candidate ran out of device memory where the baseline did not: the candidate's failure, not retried";
    return d;
  }
  const char* what = who == OomWho::kGoldenData ? "making the golden data" : "the baseline";
  if (retries_done >= p.max_retries) {
    d.reason = fmt::format("{} still ran out of device memory after {} smaller attempt(s); giving up on this case", what, retries_done);
    return d;
  }
  d.retry = true;
  d.next_max_bytes = static_cast<int64_t>(static_cast<double>(failed_ws) * p.shrink);
  d.reason = fmt::format("{} ran out of device memory at a working set of {}: retry {} of {} with the case fitted to {}", what,
                         mib(failed_ws), retries_done + 1, p.max_retries, mib(d.next_max_bytes));
  return d;
}

}  // namespace kopt::workload
