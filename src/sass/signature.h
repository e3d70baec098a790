#pragma once
// A method's SASS signature: what its presence looks like in the machine code. It is data, stored in the
// method registry (data/methods.json) and read by `kopt sass` / the verifier.
//
// Patterns are instruction tokens: an opcode with optional modifiers, e.g. "LDG.E.128", "HMMA", "LDGSTS".
// A pattern matches an instruction whose opcode equals the pattern's opcode and whose modifiers contain
// the pattern's modifiers in order (so "LDG.E.128" matches "LDG.E.128.CONSTANT" but not "LDG.E";
// "HMMA" never matches inside another word such as "XHMMA").
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::sass {

struct Signature {
  std::vector<std::string> require_any;  // at least one of these must appear (empty: no constraint)
  std::vector<std::string> require_all;  // every one of these must appear
  std::vector<std::string> forbid;       // none of these may appear (e.g. "LDL", "STL" for "no spills")
  std::map<std::string, int> min_counts; // pattern -> minimum number of matching instructions
  bool empty() const { return require_any.empty() && require_all.empty() && forbid.empty() && min_counts.empty(); }
};

// {"require_any": [...], "require_all": [...], "forbid": [...], "min_counts": {"HMMA": 4}}; every key optional.
Result<Signature> signature_from_json(const util::Json& j);
util::Json to_json(const Signature& s);

}  // namespace kopt::sass
