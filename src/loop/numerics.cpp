#include "loop/numerics.h"

#include <fmt/format.h>

#include <limits>

namespace kopt::loop {

namespace {
double num(const util::Json& c, const char* k) {
  if (!c.contains(k)) return 0;
  if (c[k].is_number()) return c[k].get<double>();
  return std::numeric_limits<double>::infinity();  // "nan"/"inf": never within a finite baseline error
}
}  // namespace

StrictVerdict judge_strict(const util::Json& cand, const util::Json& base) {
  StrictVerdict v;
  if (!cand.contains("seeds") || !base.contains("seeds")) {
    v.ok = false;
    v.reason = "strict mode needs the per-seed errors of both the candidate and the baseline";
    return v;
  }
  for (const auto& cs : cand["seeds"]) {
    const util::Json* bs = nullptr;
    for (const auto& b : base["seeds"])
      if (b.value("seed", -1) == cs.value("seed", -2)) bs = &b;
    if (!bs) continue;
    for (auto it = cs["outputs"].begin(); it != cs["outputs"].end(); ++it) {
      if (!(*bs)["outputs"].contains(it.key())) continue;
      const auto& b = (*bs)["outputs"][it.key()];
      for (const char* k : {"max_abs_err", "rel_l2_err"}) {
        double c = num(it.value(), k), lim = num(b, k);
        if (c > lim * (1 + 1e-12) + 1e-300) {
          v.ok = false;
          v.reason = fmt::format("seed {} output {}: {} {:.3g} exceeds the baseline's {:.3g} (strict mode)",
                                 cs.value("seed", -1), it.key(), k, c, lim);
          return v;
        }
      }
    }
  }
  return v;
}

}  // namespace kopt::loop
