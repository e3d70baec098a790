#pragma once
// The SASS signatures of the methods `kopt sass` verifies (for .cu and Triton .py kernels alike): a
// --signature FILE.json is asked first, then the method registry (data/methods.json).
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sass/analysis.h"
#include "sass/signature.h"

namespace kopt::cli {

// method id -> signature, in the order given (ids trimmed). Errors name the unknown method or the bad file.
Result<std::vector<std::pair<std::string, sass::Signature>>> method_signatures(const std::vector<std::string>& methods,
                                                                               const std::string& signature_file);

// The names given with --kernel-name that match no function of the analysed binary: an input error naming them and
// the functions the binary holds (a dump that failed is the tool error's to report). Pure.
Status check_kernel_names(const std::vector<std::string>& asked, const sass::Analysis& a);

}  // namespace kopt::cli
