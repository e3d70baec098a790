#include "db/record.h"

#include <array>
#include <utility>

#include "util/hash.h"

namespace kopt::db {

std::string canonical_key(const RecordKey& k) {
  // nlohmann::json's objects are std::maps: dump() writes keys sorted, without spaces, so equal keys give equal text.
  util::Json j = {{"kernel_hash", k.kernel_hash},
                  {"config", k.config},
                  {"dims", k.dims},
                  {"dtypes", k.dtypes},
                  {"gpu_model", k.gpu_model},
                  {"driver_version", k.driver_version},
                  {"nvcc_version", k.nvcc_version},
                  {"compile_flags", k.compile_flags},
                  {"timing_method", k.timing_method},
                  {"l2_mode", k.l2_mode},
                  {"measure_mode", k.measure_mode},
                  {"kopt_version", k.kopt_version}};
  return j.dump();
}

std::string key_hash(const RecordKey& k) {
  util::Hasher h;
  h.add("kopt-db-key-v1").add(canonical_key(k));
  return h.hex();
}

namespace {
constexpr std::array<std::pair<Verdict, std::string_view>, 4> kVerdictNames = {{
    {Verdict::kCorrect, "correct"},
    {Verdict::kIncorrect, "incorrect"},
    {Verdict::kCrashed, "crashed"},
    {Verdict::kTimedOut, "timed_out"},
}};
constexpr std::array<std::pair<Source, std::string_view>, 2> kSourceNames = {{
    {Source::kOptimize, "optimize"},
    {Source::kBench, "bench"},
}};
}  // namespace

std::string_view verdict_name(Verdict v) {
  for (const auto& [k, n] : kVerdictNames)
    if (k == v) return n;
  return "unknown";
}

std::string_view describe(Verdict v) {
  switch (v) {
    case Verdict::kCorrect: return "correct on every seed (and timed)";
    case Verdict::kIncorrect: return "a wrong result, or rejected by a gate (the note says which)";
    case Verdict::kCrashed: return "crashed or raised a CUDA error";
    case Verdict::kTimedOut: return "did not finish in time";
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (const auto& [k, n] : kVerdictNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string_view source_name(Source s) {
  for (const auto& [k, n] : kSourceNames)
    if (k == s) return n;
  return "unknown";
}

std::optional<Source> parse_source(std::string_view name) {
  for (const auto& [k, n] : kSourceNames)
    if (n == name) return k;
  return std::nullopt;
}

util::Json to_json(const Record& r) {
  auto opt = [](const std::optional<double>& v) { return v ? util::Json(*v) : util::Json(nullptr); };
  return {{"id", r.id},
          {"key_hash", key_hash(r.key)},
          {"kernel_hash", r.key.kernel_hash},
          {"kernel_path", r.kernel_path},
          {"config", r.key.config},
          {"dims", r.key.dims},
          {"dtypes", r.key.dtypes},
          {"gpu_model", r.key.gpu_model},
          {"driver_version", r.key.driver_version},
          {"nvcc_version", r.key.nvcc_version},
          {"compile_flags", r.key.compile_flags},
          {"timing_method", r.key.timing_method},
          {"l2_mode", r.key.l2_mode},
          {"measure_mode", r.key.measure_mode},
          {"kopt_version", r.key.kopt_version},
          {"source", source_name(r.source)},
          {"verdict", verdict_name(r.verdict)},
          {"run_status", r.run_status},
          {"note", r.note},
          {"median_ms", opt(r.median_ms)},
          {"ci95_low_ms", opt(r.ci95_low_ms)},
          {"ci95_high_ms", opt(r.ci95_high_ms)},
          {"samples", r.samples_ms.size()},
          {"samples_ms", r.samples_ms},
          {"resources", r.resources},
          {"recorded_at", r.recorded_at},
          {"run_dir", r.run_dir},
          {"raced", r.raced}};
}

}  // namespace kopt::db
