#include "workload/holdout.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/strings.h"

namespace kopt::workload {

namespace {

int64_t tile_base(int64_t h) {
  if (h >= 128) return h / 128 * 128;
  if (h >= 32) return h / 32 * 32;
  return 0;
}

}  // namespace

bool is_prime(int64_t v) {
  if (v < 2) return false;
  if (v % 2 == 0) return v == 2;
  for (int64_t d = 3; d * d <= v; d += 2)
    if (v % d == 0) return false;
  return true;
}

int64_t largest_prime_at_most(int64_t v) {
  for (int64_t p = v; p >= 2; --p)
    if (is_prime(p)) return p;
  return 0;
}

HoldoutShapes awkward_shapes(const Dims& user, const std::vector<Case>& search_cases) {
  HoldoutShapes out;
  const auto axes = scaled_axes(user);
  if (axes.empty()) {
    out.note = fmt::format("no dimension >= {}: no awkward shapes derived (give --holdout-shapes FILE)", kMinScalableDim);
    return out;
  }
  std::vector<Case> made;
  auto add = [&](const std::string& name, Dims d, const std::string& note) {
    Case c;
    c.name = name;
    c.requested = c.realised = std::move(d);
    c.weight = 1;
    c.origin = CaseOrigin::kHoldoutDerived;
    c.note = note;
    made.push_back(std::move(c));
  };
  Dims plus = user, minus = user, primes = user;
  int64_t prime_cap = -1;
  for (const auto& a : axes) {  // alphabetical: each further axis gets the next smaller prime
    const int64_t h = std::max<int64_t>(2, user.at(a) / 2);
    const int64_t t = tile_base(h);
    plus[a] = t > 0 ? t + 1 : (h | 1);
    minus[a] = t > 1 ? t - 1 : std::max<int64_t>(1, h - 1);
    int64_t p = largest_prime_at_most(prime_cap < 0 ? h : std::min(h, prime_cap - 1));
    if (p == 0) p = largest_prime_at_most(h);  // ran out of smaller primes: reuse one
    primes[a] = std::max<int64_t>(p, 2);
    prime_cap = primes[a];
  }
  const std::string ax = util::join(axes, ", ");
  add("tile_plus_one", plus, ax + " at about half the given value, one element past a multiple of 128 (32)");
  add("tile_minus_one", minus, ax + " at about half the given value, one element short of a multiple of 128 (32)");
  add("primes", primes, ax + " at distinct primes near half the given value");
  const Dims half = scale_dims(user, axes, 0.5);
  for (const auto& a : axes) {
    Dims d = half;
    d[a] = 1;
    add("unit_" + a, d, a + " = 1, the other scaled axes at half the given value");
  }
  for (auto& c : made) {
    auto clash = [&](const Case& o) { return o.requested == c.requested || o.realised == c.requested; };
    if (std::any_of(out.cases.begin(), out.cases.end(), clash) || std::any_of(search_cases.begin(), search_cases.end(), clash))
      continue;
    out.cases.push_back(std::move(c));
  }
  return out;
}

}  // namespace kopt::workload
