#pragma once
// Finding a method's SASS signature by id. The method registry (search/registry) provides one lookup;
// a JSON file of {"method-id": {signature}, ...} provides another (`kopt sass --signature FILE`).
#include <functional>
#include <string>

#include "core/result.h"
#include "sass/signature.h"
#include "util/json_io.h"

namespace kopt::sass {

using SignatureLookup = std::function<Result<Signature>(const std::string& method_id)>;

// From {"vec4": {"require_any": ["LDG.E.128"]}, ...}. Input error for a malformed file; the lookup
// answers an input error for an unknown id, naming the known ones.
Result<SignatureLookup> lookup_from_json(const util::Json& j);
// Asks `first`, then `second` for ids `first` does not know (either may be empty).
SignatureLookup first_then(SignatureLookup first, SignatureLookup second);

}  // namespace kopt::sass
