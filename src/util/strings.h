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

}  // namespace kopt::util
