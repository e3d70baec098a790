#include "cli/commands.h"

namespace kopt::cli {

int cmd_report(const Args&) { return not_available("report", "planned in issue #8"); }

}  // namespace kopt::cli
