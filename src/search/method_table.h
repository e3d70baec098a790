#pragma once
// Text views of the registry for `kopt methods`: a table, a method's full card, and the filter.
#include <optional>
#include <string>
#include <vector>

#include "search/registry.h"

namespace kopt::search {

struct MethodFilter {
  std::optional<Axis> axis;
  std::optional<Backend> backend;
  std::optional<NumericsMode> numerics;  // only methods this mode admits
};

std::vector<const Method*> filter_methods(const Registry& reg, const MethodFilter& f);
std::string format_method_table(const std::vector<const Method*>& methods);
std::string format_method_card(const Method& m);
// The table as CSV (RFC 4180, CRLF line ends): id, name, axis, numerics, min_arch, backends, flag_method.
std::string format_method_csv(const std::vector<const Method*>& methods);

}  // namespace kopt::search
