#include "runner/compare.h"

#include <atomic>
#include <thread>

#include <fmt/format.h>

#include <cctype>
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

namespace {

// One chunk's share of a comparison; chunks are merged in order, so the result does not depend on how many threads
// ran them (the sums are added chunk by chunk in index order).
struct Partial {
  bool equal = true;  // the chunk's bytes are bitwise equal (every chunk's: the whole output is)
  int64_t mismatches = 0, nan_or_inf_mismatches = 0, poisoned = 0;
  int64_t first_bad_index = -1;
  double expected_at_first_bad = 0, actual_at_first_bad = 0;
  double max_abs_err = 0, max_rel_err = 0, err2 = 0, ref2 = 0;
};

// kSize: the element's size when known at compile time (4, 8: the poison test is one integer compare), else 0.
template <size_t kSize, typename Decode>
Partial compare_range_as(DType t, const Decode& decode, const unsigned char* expected, const unsigned char* actual, int64_t begin,
                         int64_t end, Tolerance tol) {
  Partial r;
  const size_t es = kSize ? kSize : contract::dtype_size(t);
  const unsigned char pb = poison_byte(t);
  r.equal = std::memcmp(expected + begin * static_cast<int64_t>(es), actual + begin * static_cast<int64_t>(es),
                        static_cast<size_t>(end - begin) * es) == 0;
  for (int64_t i = begin; i < end; ++i) {
    const unsigned char* ap = actual + i * static_cast<int64_t>(es);
    bool poisoned = true;
    if constexpr (kSize == 4) {
      uint32_t w;
      std::memcpy(&w, ap, 4);
      poisoned = w == 0x01010101u * pb;
    } else if constexpr (kSize == 8) {
      uint64_t w;
      std::memcpy(&w, ap, 8);
      poisoned = w == 0x0101010101010101ull * pb;
    } else {
      for (size_t b = 0; b < es; ++b) poisoned = poisoned && ap[b] == pb;
    }
    double e = decode(expected, i), a = decode(actual, i);
    bool bad;
    if (!(std::isfinite(e) && std::isfinite(a))) [[unlikely]] {
      // NaN matches NaN; an infinity matches the same infinity; anything else is a mismatch.
      bool same = (std::isnan(e) && std::isnan(a)) || (std::isinf(e) && std::isinf(a) && (e > 0) == (a > 0));
      bad = !same;
      if (bad) ++r.nan_or_inf_mismatches;
    } else {
      double d = std::fabs(a - e);
      r.max_abs_err = std::max(r.max_abs_err, d);
      if (e != 0) r.max_rel_err = std::max(r.max_rel_err, d / std::fabs(e));
      r.err2 += d * d;
      r.ref2 += e * e;
      bad = d > tol.atol + tol.rtol * std::fabs(e);
    }
    r.poisoned += poisoned;
    if (bad) {
      if (r.mismatches == 0) {
        r.first_bad_index = i;
        r.expected_at_first_bad = e;
        r.actual_at_first_bad = a;
      }
      ++r.mismatches;
    }
  }
  return r;
}

// The common types decode inline; the others through element_as_double.
Partial compare_range(DType t, const unsigned char* expected, const unsigned char* actual, int64_t begin, int64_t end,
                      Tolerance tol) {
  if (t == DType::kF32)
    return compare_range_as<4>(
        t, [](const unsigned char* d, int64_t i) { return static_cast<double>(load<float>(d, i)); }, expected, actual, begin, end,
        tol);
  if (t == DType::kF64)
    return compare_range_as<8>(
        t, [](const unsigned char* d, int64_t i) { return load<double>(d, i); }, expected, actual, begin, end, tol);
  return compare_range_as<0>(
      t, [t](const unsigned char* d, int64_t i) { return element_as_double(t, d, i); }, expected, actual, begin, end, tol);
}

// Elements per chunk: large outputs are compared on several threads (a 4096 x 4096 float output is 16 chunks). The
// chunking fixes the order of the sums (rel_l2_err): changing it changes the last bits of the figures.
constexpr int64_t kChunk = 1 << 20;

}  // namespace

CompareResult compare(DType t, const std::vector<int64_t>& shape, const unsigned char* expected,
                      const unsigned char* actual, int64_t numel, Tolerance tol) {
  CompareResult r;
  r.numel = numel;
  const int64_t chunks = std::max<int64_t>(1, (numel + kChunk - 1) / kChunk);
  std::vector<Partial> parts(static_cast<size_t>(chunks));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next++; c < chunks; c = next++)
      parts[static_cast<size_t>(c)] = compare_range(t, expected, actual, c * kChunk, std::min(numel, (c + 1) * kChunk), tol);
  };
  const int64_t threads = std::min<int64_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  double err2 = 0, ref2 = 0;
  int64_t poisoned = 0;
  r.bitwise_equal = true;
  for (const auto& p : parts) {
    if (p.mismatches > 0 && r.mismatches == 0) {
      r.first_bad_index = p.first_bad_index;
      r.expected_at_first_bad = p.expected_at_first_bad;
      r.actual_at_first_bad = p.actual_at_first_bad;
    }
    r.bitwise_equal = r.bitwise_equal && p.equal;
    r.mismatches += p.mismatches;
    r.nan_or_inf_mismatches += p.nan_or_inf_mismatches;
    poisoned += p.poisoned;
    r.max_abs_err = std::max(r.max_abs_err, p.max_abs_err);
    r.max_rel_err = std::max(r.max_rel_err, p.max_rel_err);
    err2 += p.err2;
    ref2 += p.ref2;
  }
  // An output bitwise equal to the expected one has no element "never written", even where the expected value is
  // the poison pattern's.
  r.still_poisoned = r.bitwise_equal ? 0 : poisoned;
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

std::optional<double> unwritten_share(std::string_view message) {
  auto number_before = [&](size_t end) -> std::optional<double> {  // the integer that ends at `end`
    size_t b = end;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(message[b - 1]))) --b;
    if (b == end) return std::nullopt;
    return std::stod(std::string(message.substr(b, end - b)));
  };
  const size_t m = message.find("MISMATCH ");
  const size_t w = message.find(" elements never written");
  if (m == std::string_view::npos || w == std::string_view::npos) return std::nullopt;
  const size_t slash = message.find('/', m), of = message.find(" elements", m);
  if (slash == std::string_view::npos || of == std::string_view::npos || slash > of) return std::nullopt;
  auto numel = number_before(of);
  auto never = number_before(w);
  if (!numel || !never || *numel <= 0 || *never > *numel) return std::nullopt;
  return *never / *numel;
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
