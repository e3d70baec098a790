#include "cli/commands.h"

namespace kopt::cli {

int cmd_profile(const Args&) { return not_available("profile", "planned in issue #6"); }

}  // namespace kopt::cli
