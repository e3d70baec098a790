#pragma once
// How a command reports a failure: "kopt CMD: message" on stderr, noted for `--json -` (util/output.h), and the
// exit code of its kind returned. Every command's failure goes through here, so `--json -` always has its message.
#include <string_view>

#include "core/result.h"

namespace kopt::cli {

int report_failure(std::string_view command, const Error& e);

}  // namespace kopt::cli
