#include "sass/binaries.h"

#include <algorithm>

#include "sass/kernels.h"

namespace kopt::sass {

Analysis analyze_binaries(const std::vector<std::filesystem::path>& binaries, const std::vector<std::string>& kernel_names,
                          const std::string& arch, util::CommandRunner& runner, const DumpOptions& opts) {
  Analysis a;
  if (!binaries.empty()) a.binary = binaries.front();
  a.wanted = kernel_names;
  for (const auto& b : binaries) {
    auto dumped = dump_sass(b, runner, opts);
    if (!dumped) {
      a.tool_error = dumped.error().message;
      return a;
    }
    for (auto& f : *dumped) a.functions.push_back(std::move(f));
  }
  if (kernel_names.empty()) {
    for (const auto& f : a.functions)
      if ((arch.empty() || f.arch == arch) && std::find(a.wanted.begin(), a.wanted.end(), f.mangled) == a.wanted.end())
        a.wanted.push_back(f.mangled);
  }
  auto sel = select_functions(a.functions, a.wanted, arch);
  for (const auto* f : sel.functions) a.selected.push_back(static_cast<size_t>(f - a.functions.data()));
  a.unmatched = std::move(sel.unmatched);
  return a;
}

}  // namespace kopt::sass
