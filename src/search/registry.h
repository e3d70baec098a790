#pragma once
// The method registry: data/methods.json, loaded once, looked up by id. Parsing checks each field;
// lint() checks the registry as a whole (unique ids, relations, descriptions...).
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "search/method.h"
#include "util/json_io.h"

namespace kopt::search {

class Registry {
 public:
  // `origin` names the source in errors ("data/methods.json: method 'x': ...").
  static Result<Registry> from_json(const util::Json& j, const std::string& origin);

  const std::vector<Method>& methods() const { return methods_; }
  const Method* find(std::string_view id) const;  // nullptr when unknown
  // Symmetric: true when either method lists the other under conflicts.
  bool conflicts(std::string_view a, std::string_view b) const;
  // Everything `id` requires, directly or transitively (without `id` itself); unknown ids are skipped.
  std::vector<std::string> requirements(std::string_view id) const;

 private:
  std::vector<Method> methods_;
};

util::Json to_json(const Method& m);

struct LintOptions {
  size_t min_methods = 60;
  size_t min_description_chars = 40;
  const std::set<std::string>* known_metrics = nullptr;  // when set, every evidence metric must be in it
};
// Every problem found, one sentence each; empty when the registry is clean.
std::vector<std::string> lint(const Registry& r, const LintOptions& opts = {});

// Where data/methods.json is: $KOPT_DATA_DIR, next to the executable (exe_dir/../share/kopt/data as `cmake
// --install` lays it out, exe_dir/../data, exe_dir/data), then
// the source tree (KOPT_SOURCE_DIR/data). Empty when none has it.
std::filesystem::path methods_json_path();
Result<Registry> load_registry(const std::filesystem::path& path);

// The process-wide registry, loaded and linted on first use (later calls return the same outcome).
using RegistryRef = std::reference_wrapper<const Registry>;
Result<RegistryRef> registry();
// Shorthand for registry lookups: nullptr when the registry failed to load or the id is unknown.
const Method* find_method(std::string_view id);

}  // namespace kopt::search
