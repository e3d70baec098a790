#include "loop/determinism.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "util/strings.h"

namespace kopt::loop {

namespace {

struct Row {
  DeterminismVerdict v;
  std::string_view name, text;
};
constexpr std::array<Row, 4> kRows = {{
    {DeterminismVerdict::kBitwiseEqual, "bitwise_equal", "two runs on the same inputs gave identical outputs"},
    {DeterminismVerdict::kWithinTolerance, "within_tolerance", "two runs differ, within the tolerance"},
    {DeterminismVerdict::kNondeterministic, "nondeterministic",
     "two runs on the same inputs differ beyond what the numerics mode allows (a race or uninitialised memory?)"},
    {DeterminismVerdict::kIncomparable, "incomparable", "the two runs' outputs cannot be compared"},
}};
static_assert(kRows.size() == static_cast<size_t>(DeterminismVerdict::kIncomparable) + 1, "one row per verdict");

contract::TensorMap outputs_of(const contract::TensorMap& m) {
  contract::TensorMap out;
  for (const auto& [k, t] : m)
    if (util::starts_with(k, "out.")) out[k.substr(4)] = t;
  return out.empty() ? m : out;
}

std::vector<std::string> keys(const contract::TensorMap& m) {
  std::vector<std::string> k;
  for (const auto& [n, t] : m) k.push_back(n);
  return k;
}

}  // namespace

std::string_view determinism_name(DeterminismVerdict v) { return kRows[static_cast<size_t>(v)].name; }
std::string_view describe(DeterminismVerdict v) { return kRows[static_cast<size_t>(v)].text; }

DeterminismResult judge_determinism(const contract::TensorMap& run_a, const contract::TensorMap& run_b, bool strict,
                                    runner::Tolerance tol) {
  DeterminismResult r;
  const auto a = outputs_of(run_a), b = outputs_of(run_b);
  if (a.empty() || keys(a) != keys(b)) {
    r.reason = fmt::format("the runs' outputs differ in names: [{}] vs [{}]", util::join(keys(a), ", "), util::join(keys(b), ", "));
    return r;
  }
  std::vector<std::string> beyond, within;
  for (const auto& [name, ta] : a) {
    const auto& tb = b.at(name);
    if (ta.dtype != tb.dtype || ta.shape != tb.shape || ta.data.size() != tb.data.size() ||
        ta.data.size() != static_cast<size_t>(ta.numel()) * contract::dtype_size(ta.dtype)) {
      r.reason = "output " + name + ": the runs' tensors differ in dtype, shape or size";
      return r;
    }
    auto c = runner::compare(ta.dtype, ta.shape, ta.data.data(), tb.data.data(), ta.numel(), tol);
    r.outputs[name] = runner::to_json(c);
    if (c.bitwise_equal) continue;
    // Bitwise-different elements, counted directly: compare() counts only those beyond the tolerance.
    const size_t es = contract::dtype_size(ta.dtype);
    int64_t differing = 0, first = -1;
    for (int64_t i = 0; i < ta.numel(); ++i)
      if (std::memcmp(ta.data.data() + i * es, tb.data.data() + i * es, es) != 0) {
        if (first < 0) first = i;
        ++differing;
      }
    r.outputs[name]["bitwise_differing"] = differing;
    r.outputs[name]["first_bitwise_difference"] = first;
    std::string what = fmt::format("{}: {} of {} elements differ bitwise (first at {}), {} beyond the tolerance (max abs diff {:.3g})",
                                   name, differing, ta.numel(), first, c.mismatches, c.max_abs_err);
    (strict || !c.ok ? beyond : within).push_back(what);
  }
  if (!beyond.empty()) {
    r.verdict = DeterminismVerdict::kNondeterministic;
    r.reason = std::string(strict ? "strict numerics: outputs must be bitwise identical across runs; " : "") +
               "two runs on the same inputs differ: " + util::join(beyond, "; ");
  } else if (!within.empty()) {
    r.verdict = DeterminismVerdict::kWithinTolerance;
    r.reason = "two runs differ within the tolerance (atomics or another run-to-run order?): " + util::join(within, "; ");
  } else {
    r.verdict = DeterminismVerdict::kBitwiseEqual;
    r.reason = std::string(describe(r.verdict));
  }
  return r;
}

Result<DeterminismResult> judge_determinism_bytes(const std::string& run_a, const std::string& run_b, bool strict,
                                                  runner::Tolerance tol) {
  KOPT_TRY_ASSIGN(auto a, contract::parse_safetensors(run_a, "the first run's outputs"));
  KOPT_TRY_ASSIGN(auto b, contract::parse_safetensors(run_b, "the second run's outputs"));
  return judge_determinism(a, b, strict, tol);
}

util::Json to_json(const DeterminismResult& r) {
  return {{"verdict", determinism_name(r.verdict)}, {"rejects", r.rejects()}, {"reason", r.reason}, {"outputs", r.outputs}};
}

}  // namespace kopt::loop
