#pragma once
// Handlers of the subcommands. Each takes the arguments after the subcommand name and returns an exit code.
#include <string>
#include <vector>

namespace kopt::cli {

using Args = std::vector<std::string>;
int cmd_optimize(const Args& args);
int cmd_bench(const Args& args);
int cmd_check(const Args& args);
int cmd_profile(const Args& args);
int cmd_sass(const Args& args);
int cmd_roofline(const Args& args);
int cmd_doctor(const Args& args);
int cmd_report(const Args& args);
int cmd_export(const Args& args);
int cmd_compare(const Args& args);
int cmd_methods(const Args& args);
int cmd_annotate(const Args& args);
int cmd_llm_check(const Args& args);
int cmd_db(const Args& args);
int cmd_search_replay(const Args& args);  // internal: `kopt __search-replay`

// For subcommands not built yet: says so plainly and returns non-zero.
int not_available(const std::string& name, const std::string& where);

}  // namespace kopt::cli
