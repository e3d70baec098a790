#include "cli/commands.h"

namespace kopt::cli {

int cmd_bench(const Args&) { return not_available("bench", "planned in issue #3"); }

}  // namespace kopt::cli
