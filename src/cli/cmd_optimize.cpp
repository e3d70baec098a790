#include "cli/commands.h"

namespace kopt::cli {

int cmd_optimize(const Args&) { return not_available("optimize", "planned in issue #8"); }

}  // namespace kopt::cli
