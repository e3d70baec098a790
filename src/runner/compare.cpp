#include "runner/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace kopt::runner {

using contract::DType;

namespace {
double half_to_double(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::nan("") : INFINITY;
  else v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}
double bf16_to_double(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
template <typename T>
T load(const unsigned char* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
}  // namespace

double element_as_double(DType t, const unsigned char* d, int64_t i) {
  switch (t) {
    case DType::kF32: return load<float>(d, i);
    case DType::kF64: return load<double>(d, i);
    case DType::kF16: return half_to_double(load<uint16_t>(d, i));
    case DType::kBF16: return bf16_to_double(load<uint16_t>(d, i));
    case DType::kI8: return load<int8_t>(d, i);
    case DType::kI16: return load<int16_t>(d, i);
    case DType::kI32: return load<int32_t>(d, i);
    case DType::kI64: return static_cast<double>(load<int64_t>(d, i));
    case DType::kU8: return load<uint8_t>(d, i);
    case DType::kU16: return load<uint16_t>(d, i);
    case DType::kU32: return load<uint32_t>(d, i);
    case DType::kU64: return static_cast<double>(load<uint64_t>(d, i));
    case DType::kBool: return load<uint8_t>(d, i) ? 1.0 : 0.0;
  }
  return 0;
}

unsigned char poison_byte(DType t) { return contract::is_float(t) ? 0xFF : 0xA5; }

Tolerance default_tolerance(DType t) {
  switch (t) {
    case DType::kF64: return {1e-8, 1e-7};
    case DType::kF32: return {1e-4, 1e-4};
    case DType::kF16: return {1e-2, 1e-2};
    case DType::kBF16: return {2e-2, 2e-2};
    default: return {0, 0};
  }
}

CompareResult compare(DType t, const std::vector<int64_t>& shape, const unsigned char* expected,
                      const unsigned char* actual, int64_t numel, Tolerance tol) {
  CompareResult r;
  r.numel = numel;
  const size_t es = contract::dtype_size(t);
  r.bitwise_equal = std::memcmp(expected, actual, static_cast<size_t>(numel) * es) == 0;
  const unsigned char pb = poison_byte(t);
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < numel; ++i) {
    const unsigned char* ap = actual + i * static_cast<int64_t>(es);
    bool poisoned = true;
    for (size_t b = 0; b < es; ++b) poisoned = poisoned && ap[b] == pb;
    double e = element_as_double(t, expected, i), a = element_as_double(t, actual, i);
    bool bad;
    if (std::isnan(e) || std::isnan(a) || std::isinf(e) || std::isinf(a)) {
      // NaN matches NaN; an infinity matches the same infinity; anything else is a mismatch.
      bool same = (std::isnan(e) && std::isnan(a)) || (std::isinf(e) && std::isinf(a) && (e > 0) == (a > 0));
      bad = !same;
      if (bad) ++r.nan_or_inf_mismatches;
    } else {
      double d = std::fabs(a - e);
      r.max_abs_err = std::max(r.max_abs_err, d);
      if (e != 0) r.max_rel_err = std::max(r.max_rel_err, d / std::fabs(e));
      err2 += d * d;
      ref2 += e * e;
      bad = d > tol.atol + tol.rtol * std::fabs(e);
    }
    if (poisoned && !(r.bitwise_equal)) ++r.still_poisoned;
    if (bad) {
      if (r.mismatches == 0) {
        r.first_bad_index = i;
        r.expected_at_first_bad = e;
        r.actual_at_first_bad = a;
      }
      ++r.mismatches;
    }
  }
  r.rel_l2_err = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  if (r.first_bad_index >= 0 && !shape.empty()) {
    int64_t rem = r.first_bad_index;
    r.first_bad_coords.assign(shape.size(), 0);
    for (size_t d = shape.size(); d-- > 0;) {
      r.first_bad_coords[d] = shape[d] > 0 ? rem % shape[d] : 0;
      rem = shape[d] > 0 ? rem / shape[d] : 0;
    }
  }
  r.ok = r.mismatches == 0;
  return r;
}

std::string CompareResult::summary() const {
  if (ok)
    return fmt::format("ok{} max_abs={:.3g} max_rel={:.3g} rel_l2={:.3g}", bitwise_equal ? " (bitwise)" : "",
                       max_abs_err, max_rel_err, rel_l2_err);
  std::string coords;
  for (size_t i = 0; i < first_bad_coords.size(); ++i) coords += (i ? "," : "") + std::to_string(first_bad_coords[i]);
  std::string s = fmt::format("MISMATCH {}/{} elements; first bad index {} [{}]: expected {:.6g}, got {:.6g}; max_abs={:.3g} rel_l2={:.3g}",
                              mismatches, numel, first_bad_index, coords, expected_at_first_bad, actual_at_first_bad,
                              max_abs_err, rel_l2_err);
  if (still_poisoned > 0) s += fmt::format("; {} elements never written (still poisoned)", still_poisoned);
  return s;
}

util::Json to_json(const CompareResult& c) {
  auto num = [](double v) { return std::isfinite(v) ? util::Json(v) : util::Json(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")); };
  return {{"ok", c.ok},
          {"numel", c.numel},
          {"mismatches", c.mismatches},
          {"nan_or_inf_mismatches", c.nan_or_inf_mismatches},
          {"still_poisoned", c.still_poisoned},
          {"bitwise_equal", c.bitwise_equal},
          {"max_abs_err", num(c.max_abs_err)},
          {"max_rel_err", num(c.max_rel_err)},
          {"rel_l2_err", num(c.rel_l2_err)},
          {"first_bad_index", c.first_bad_index},
          {"first_bad_coords", c.first_bad_coords},
          {"expected_at_first_bad", num(c.expected_at_first_bad)},
          {"actual_at_first_bad", num(c.actual_at_first_bad)},
          {"summary", c.summary()}};
}

}  // namespace kopt::runner
