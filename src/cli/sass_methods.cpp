#include "cli/sass_methods.h"

#include <algorithm>

#include "sass/signature_lookup.h"
#include "search/registry.h"
#include "util/json_io.h"
#include "util/strings.h"

namespace kopt::cli {

namespace {
// Method ids resolve through the method registry (data/methods.json).
sass::SignatureLookup registry_lookup() {
  return [](const std::string& id) -> Result<sass::Signature> {
    auto reg = search::registry();
    if (!reg) return reg.error();
    const search::Method* m = search::find_method(id);
    if (!m)
      return input_error("'" + id + "' is not a method in the registry (see kopt methods); give its SASS signature "
                         "with --signature FILE.json");
    return m->sass;
  };
}
}  // namespace

Result<std::vector<std::pair<std::string, sass::Signature>>> method_signatures(const std::vector<std::string>& methods,
                                                                               const std::string& signature_file) {
  sass::SignatureLookup lookup = registry_lookup();
  if (!signature_file.empty()) {
    KOPT_TRY_ASSIGN(util::Json j, util::read_json(signature_file));
    KOPT_TRY_ASSIGN(sass::SignatureLookup from_file, sass::lookup_from_json(j));
    lookup = sass::first_then(from_file, lookup);
  }
  std::vector<std::pair<std::string, sass::Signature>> sigs;
  for (const auto& m : methods) {
    KOPT_TRY_ASSIGN(sass::Signature s, lookup(util::trim(m)));
    sigs.emplace_back(util::trim(m), std::move(s));
  }
  return sigs;
}

Status check_kernel_names(const std::vector<std::string>& asked, const sass::Analysis& a) {
  if (asked.empty() || !a.tool_error.empty() || a.unmatched.empty()) return ok_status();
  std::vector<std::string> held;
  for (const auto& f : a.functions)
    if (std::find(held.begin(), held.end(), f.demangled) == held.end()) held.push_back(f.demangled);
  return input_error("--kernel-name " + util::join(a.unmatched, ", ") + ": no function of " + (a.binary.empty() ? std::string("the binaries") : a.binary.string()) +
                     " has this name; it holds " + (held.empty() ? std::string("no function") : util::join(held, ", ")));
}

}  // namespace kopt::cli
