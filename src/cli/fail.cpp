#include "cli/fail.h"

#include <cstdio>
#include <string>

#include "util/output.h"

namespace kopt::cli {

int report_failure(std::string_view command, const Error& e) {
  std::fprintf(stderr, "kopt %.*s: %s\n", static_cast<int>(command.size()), command.data(), e.message.c_str());
  util::note_failure(e.message);
  return to_int(e.code == ExitCode::kOk ? ExitCode::kOther : e.code);
}

}  // namespace kopt::cli
