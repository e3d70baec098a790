#include "sass/analysis.h"

#include "compile/cutlass.h"
#include "sass/kernels.h"
#include "util/fs.h"
#include "util/strings.h"

namespace kopt::sass {

std::vector<const SassFunction*> Analysis::selected_functions() const {
  std::vector<const SassFunction*> out;
  for (size_t i : selected) out.push_back(&functions[i]);
  return out;
}

Analysis analyze(const std::filesystem::path& binary, const std::vector<std::string>& kernel_names,
                 const std::string& arch, util::CommandRunner& runner, const DumpOptions& opts) {
  Analysis a;
  a.binary = binary;
  a.wanted = kernel_names;
  auto dumped = dump_sass(binary, runner, opts);
  if (!dumped) {
    a.tool_error = dumped.error().message;
    return a;
  }
  a.functions = std::move(dumped).value();
  auto sel = select_functions(a.functions, kernel_names, arch);
  for (const auto* f : sel.functions) a.selected.push_back(static_cast<size_t>(f - a.functions.data()));
  a.unmatched = std::move(sel.unmatched);
  return a;
}

std::vector<std::string> kernel_names_from_source(const std::filesystem::path& source, bool cutlass) {
  auto text = util::read_file(source);
  auto names = text ? global_function_names(*text) : std::vector<std::string>{};
  if (cutlass || compile::is_cutlass_source(source)) names.push_back(kCutlassKernels);
  return names;
}

Result<Verification> verify_method(const Analysis& a, const Signature& sig) {
  if (!a.tool_error.empty()) {
    KOPT_TRY(verify(sig, {}));  // still reject malformed patterns
    if (sig.empty()) return verification_error(VerifyStatus::kNotApplicable, "the method has no SASS signature");
    return verification_error(VerifyStatus::kToolError, a.tool_error);
  }
  auto fns = a.selected_functions();
  if (fns.empty() && !sig.empty()) {
    KOPT_TRY(verify(sig, {}));
    std::vector<std::string> present;
    for (const auto& f : a.functions)
      if (present.size() < 10) present.push_back(f.demangled);
    if (a.functions.size() > present.size())
      present.push_back("and " + std::to_string(a.functions.size() - present.size()) + " more");
    std::string msg = a.wanted.empty() ? "no kernel name to look for (no __global__ function in the source and none given)"
                                       : "no function named " + util::join(a.wanted, ", ") + " in " + a.binary.string();
    msg += present.empty() ? "; it holds no device code" : "; it holds " + util::join(present, ", ");
    return verification_error(VerifyStatus::kInconclusive, msg);
  }
  return verify(sig, fns);
}

}  // namespace kopt::sass
