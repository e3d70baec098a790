#include "record/options_record.h"

#include "record/fields.h"

namespace kopt::record {

using util::Json;

// The field list (fields.h), under the keys the writer writes.
template <class S, class F>
requires std::same_as<std::remove_const_t<S>, OptionsRecord> void each_field(S& s, F&& f) {
  namespace k = options_key;
  f(k::kKernel, s.kernel), f(k::kRef, s.ref), f(k::kDims, s.dims), f(k::kSeeds, s.seeds), f(k::kNumerics, s.numerics);
  f(k::kAtol, s.atol), f(k::kRtol, s.rtol), f(k::kArch, s.arch), f(k::kNvccFlags, s.nvcc_flags);
  f(k::kIncludeDirs, s.include_dirs), f(k::kDefines, s.defines), f(k::kGenerator, s.generator), f(k::kMaxTimeS, s.max_time_s);
}

OptionsRecord options_record_from_json(const Json& j) {
  OptionsRecord r = fields::fields_from_json<OptionsRecord>(j, "");
  if (const Json* m = fields::opt_object(j, "meta", "")) r.meta_time = fields::opt_string(*m, "time", "meta");
  r.as_written = j;
  r.as_written.erase("meta");
  return r;
}

}  // namespace kopt::record
