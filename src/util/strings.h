#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kopt::util {

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool skip_empty = true);
std::vector<std::string> split_lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool is_identifier(std::string_view s);
size_t edit_distance(std::string_view a, std::string_view b);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string shell_quote(const std::string& s);

// A switch's value that turns something off: "off", "0", "no" or "false" (any case, spaces around ignored).
bool is_off_word(std::string_view s);
// The environment variable `name` is set to such a value (KOPT_GOLDEN_CACHE=off, KOPT_DB=0, ...).
bool env_off(const char* name);
// kopt's own settings in this process's environment: every KOPT_* variable as NAME=VALUE, sorted (what evidence kept
// across runs is keyed on, since a child kopt starts reads them).
std::vector<std::string> kopt_environment();

}  // namespace kopt::util
