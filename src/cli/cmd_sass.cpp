#include "cli/commands.h"

namespace kopt::cli {

int cmd_sass(const Args&) { return not_available("sass", "planned in issue #4"); }

}  // namespace kopt::cli
