#pragma once
// A unified diff of two texts (the format of `diff -u`), line by line: what the report shows between the baseline's
// source and the champion's. Pure.
#include <cstddef>
#include <string>
#include <string_view>

namespace kopt::util {

struct DiffStats {
  size_t added = 0, removed = 0;  // lines
  bool exact = true;              // false: the texts were too large for a minimal diff, the middle is replaced whole
};

// "--- a_name\n+++ b_name\n@@ -l,n +l,n @@\n..." with `context` unchanged lines around each change; empty when the
// texts are equal line for line. Texts whose differing middles hold more than `max_cells` line pairs get a diff
// that removes the whole middle and adds it back (correct, not minimal; stats->exact false).
std::string unified_diff(std::string_view a, std::string_view b, const std::string& a_name, const std::string& b_name,
                         size_t context = 3, DiffStats* stats = nullptr, size_t max_cells = 16'000'000);

}  // namespace kopt::util
