#pragma once
// options.json as a run record: what `kopt optimize` was started with, as the report reads it (report/run_data.cpp:
// the run's kernel, dims, numerics and generator, when it started, the champion's reproduce command, the arch of the
// occupancy figures). loop/options.cpp writes the file (options_to_json) and reads it back for --resume through this
// record; the keys both read are named once, in `options_key`, which the writer uses too, so they cannot drift.
//
// Strict about types, tolerant of absence (record/run_record.h): every field is optional, so a run directory older
// than a key loads with that field nullopt; a field of the wrong type is a RecordError naming it. null is absent
// (atol and rtol are written null for "the ref.py's or the default").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dims.h"
#include "util/json_io.h"

namespace kopt::record {

// The keys of options.json that the record reads. The writer (loop::options_to_json) writes each under its constant.
namespace options_key {
inline constexpr const char* kKernel = "kernel";
inline constexpr const char* kRef = "ref";
inline constexpr const char* kDims = "dims";
inline constexpr const char* kSeeds = "seeds";
inline constexpr const char* kNumerics = "numerics";
inline constexpr const char* kAtol = "atol";
inline constexpr const char* kRtol = "rtol";
inline constexpr const char* kArch = "arch";
inline constexpr const char* kNvccFlags = "nvcc_flags";
inline constexpr const char* kIncludeDirs = "include_dirs";
inline constexpr const char* kDefines = "defines";
inline constexpr const char* kGenerator = "generator";
inline constexpr const char* kMaxTimeS = "max_time_s";
}  // namespace options_key

struct OptionsRecord {
  std::optional<std::string> kernel, ref;  // as the run was started (absolute paths)
  std::optional<Dims> dims;
  std::optional<int64_t> seeds;
  std::optional<std::string> numerics;    // search::numerics_mode_name's
  std::optional<double> atol, rtol;       // absent or null: ref.py's, else the default
  std::optional<std::string> arch;        // nvcc's -arch ("sm_90a")
  std::optional<std::vector<std::string>> nvcc_flags, include_dirs;
  std::optional<std::map<std::string, std::string>> defines;  // the user's -D NAME[=VALUE]
  std::optional<std::string> generator;   // loop::generator_text's
  std::optional<double> max_time_s;       // the timing budget per candidate
  std::optional<std::string> meta_time;   // meta.time: when the run started
  // The whole file but its meta block, as written: the report's document carries it unchanged (run.options). Shown,
  // never read by key: what a reader needs is a field above.
  util::Json as_written = util::Json::object();
  bool operator==(const OptionsRecord&) const = default;
};

// Throws RecordError naming the field ("dims.M: expected an integer, found a string"); read it through parse_file.
OptionsRecord options_record_from_json(const util::Json& j);

}  // namespace kopt::record
