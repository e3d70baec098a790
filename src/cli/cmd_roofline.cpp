#include "cli/commands.h"

namespace kopt::cli {

int cmd_roofline(const Args&) { return not_available("roofline", "planned in issue #5"); }

}  // namespace kopt::cli
