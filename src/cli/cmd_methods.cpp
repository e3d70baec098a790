#include "cli/commands.h"

namespace kopt::cli {

int cmd_methods(const Args&) { return not_available("methods", "planned in issue #7"); }

}  // namespace kopt::cli
