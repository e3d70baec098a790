#include "sass/signature_lookup.h"

#include <map>
#include <memory>

#include "util/strings.h"

namespace kopt::sass {

Result<SignatureLookup> lookup_from_json(const util::Json& j) {
  if (!j.is_object()) return input_error("a signature file must be a JSON object: {\"method-id\": {signature}, ...}");
  auto table = std::make_shared<std::map<std::string, Signature>>();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "meta") continue;  // files kopt wrote carry a meta block
    auto s = signature_from_json(it.value());
    if (!s) return input_error("signature of '" + it.key() + "': " + s.error().message);
    (*table)[it.key()] = std::move(s).value();
  }
  return SignatureLookup([table](const std::string& id) -> Result<Signature> {
    auto it = table->find(id);
    if (it != table->end()) return it->second;
    std::vector<std::string> known;
    for (const auto& [k, v] : *table) known.push_back(k);
    return input_error("no signature for method '" + id + "' (the file has: " +
                       (known.empty() ? std::string("none") : util::join(known, ", ")) + ")");
  });
}

SignatureLookup first_then(SignatureLookup first, SignatureLookup second) {
  return [first = std::move(first), second = std::move(second)](const std::string& id) -> Result<Signature> {
    if (!first && !second) return input_error("no signature source for method '" + id + "'");
    if (!first) return second(id);
    auto s = first(id);
    if (s || !second) return s;
    auto t = second(id);
    if (t) return t;
    return Error{t.error().code, t.error().message + "; " + s.error().message};
  };
}

}  // namespace kopt::sass
