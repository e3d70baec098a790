#pragma once
// The SASS signatures of the methods `kopt sass` verifies (for .cu and Triton .py kernels alike): a
// --signature FILE.json is asked first, then the method registry (data/methods.json).
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sass/signature.h"

namespace kopt::cli {

// method id -> signature, in the order given (ids trimmed). Errors name the unknown method or the bad file.
Result<std::vector<std::pair<std::string, sass::Signature>>> method_signatures(const std::vector<std::string>& methods,
                                                                               const std::string& signature_file);

}  // namespace kopt::cli
