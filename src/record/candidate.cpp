#include "record/candidate.h"

namespace kopt::record {

CandidateConfig config_of(const search::Candidate& c) {
  return {c.id, c.source.string(), c.origin, c.content_hash, c.params, c.constexprs, c.launch, c.guards, c.defines, c.methods,
          c.flags, c.not_ablatable, c.config ? util::Json(*c.config) : util::Json(nullptr)};
}

search::Candidate candidate_of(const CandidateConfig& c, const std::string& where) {
  if (!c.id) throw RecordError(where + ".id: absent");
  if (!c.source) throw RecordError(where + ".source: absent");
  search::Candidate out;
  out.id = *c.id;
  out.source = *c.source;
  out.origin = c.origin.value_or("");
  out.content_hash = c.content_hash.value_or("");
  out.params = c.params.value_or(decltype(out.params){});
  out.constexprs = c.constexprs.value_or(decltype(out.constexprs){});
  out.launch = c.launch.value_or(decltype(out.launch){});
  out.guards = c.guards.value_or(decltype(out.guards){});
  out.defines = c.defines.value_or(decltype(out.defines){});
  out.methods = c.methods.value_or(decltype(out.methods){});
  out.flags = c.flags.value_or(decltype(out.flags){});
  out.not_ablatable = c.not_ablatable.value_or(decltype(out.not_ablatable){});
  if (c.config && c.config->is_array()) {
    try {
      out.config = c.config->get<search::Config>();
    } catch (const std::exception& e) {
      throw RecordError(where + ".config: " + e.what());
    }
  }
  return out;
}

}  // namespace kopt::record
