#pragma once
// CSV as Nsight Compute writes it (`--csv`): every field quoted, "" for a quote inside a field, fields may
// hold commas and line breaks. Numbers use ',' as a thousands separator ("456,703") and words for values
// that do not exist ("n/a", "no data"). Pure functions over text.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kopt::profile {

using CsvRow = std::vector<std::string>;

// Parses RFC-4180 CSV. Starts at the first line that begins with `"ID"` (ncu prints its own ==PROF== lines
// and the target's output before the table); returns no rows when there is no such line.
std::vector<CsvRow> parse_ncu_csv(std::string_view text);

// A metric value as ncu prints it: "456,703" -> 456703, "70.81" -> 70.81, "-3" -> -3, "1.5e+06" -> 1.5e6.
// Anything else ("n/a", "no data", "", "(256, 1, 1)", "8,524 (100; 75)", "PolicySpread") is unknown.
std::optional<double> parse_ncu_number(std::string_view text);

}  // namespace kopt::profile
