#include "util/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "util/strings.h"

namespace kopt::util {

namespace {

enum class Op { kSame, kRemove, kAdd };
struct Edit {
  Op op;
  size_t a, b;  // line indexes in a and b (the one that does not apply is where the edit sits)
};

// The edit script of a[lo_a, hi_a) against b[lo_b, hi_b) by a longest common subsequence.
void lcs_edits(const std::vector<std::string>& a, const std::vector<std::string>& b, size_t lo_a, size_t hi_a, size_t lo_b,
               size_t hi_b, size_t max_cells, std::vector<Edit>& out, bool& exact) {
  const size_t n = hi_a - lo_a, m = hi_b - lo_b;
  if (n * m > max_cells) {
    exact = false;
    for (size_t i = lo_a; i < hi_a; ++i) out.push_back({Op::kRemove, i, lo_b});
    for (size_t j = lo_b; j < hi_b; ++j) out.push_back({Op::kAdd, hi_a, j});
    return;
  }
  // len[i][j]: LCS length of a[lo_a+i..] and b[lo_b+j..]
  std::vector<uint32_t> len((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = a[lo_a + i] == b[lo_b + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[lo_a + i] == b[lo_b + j]) {
      out.push_back({Op::kSame, lo_a + i, lo_b + j});
      ++i, ++j;
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {  // removals first, as diff -u prints them
      out.push_back({Op::kRemove, lo_a + i, lo_b + j});
      ++i;
    } else {
      out.push_back({Op::kAdd, lo_a + i, lo_b + j});
      ++j;
    }
  }
}

std::string range(size_t start, size_t count) {
  // diff -u: a range of no lines names the line before it
  if (count == 0) return fmt::format("{},0", start);
  if (count == 1) return fmt::format("{}", start + 1);
  return fmt::format("{},{}", start + 1, count);
}

}  // namespace

std::string unified_diff(std::string_view a_text, std::string_view b_text, const std::string& a_name, const std::string& b_name,
                         size_t context, DiffStats* stats, size_t max_cells) {
  const auto a = split_lines(a_text), b = split_lines(b_text);
  DiffStats st;
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  std::vector<Edit> edits;
  for (size_t i = 0; i < pre; ++i) edits.push_back({Op::kSame, i, i});
  lcs_edits(a, b, pre, a.size() - suf, pre, b.size() - suf, max_cells, edits, st.exact);
  for (size_t k = suf; k-- > 0;) edits.push_back({Op::kSame, a.size() - 1 - k, b.size() - 1 - k});
  for (const auto& e : edits) {
    if (e.op == Op::kAdd) ++st.added;
    if (e.op == Op::kRemove) ++st.removed;
  }
  if (stats) *stats = st;
  if (st.added == 0 && st.removed == 0) return "";

  std::string out = "--- " + a_name + "\n+++ " + b_name + "\n";
  size_t k = 0;
  while (k < edits.size()) {
    // the next change, and the hunk around it: changes closer than 2 * context lines share one hunk
    while (k < edits.size() && edits[k].op == Op::kSame) ++k;
    if (k == edits.size()) break;
    size_t start = k >= context ? k - context : 0;
    size_t end = k;  // one past the hunk's last change
    size_t same_run = 0;
    for (size_t x = k; x < edits.size(); ++x) {
      if (edits[x].op == Op::kSame) {
        if (++same_run > 2 * context) break;
      } else {
        same_run = 0;
        end = x + 1;
      }
    }
    size_t stop = std::min(edits.size(), end + context);
    size_t a_start = edits[start].a, b_start = edits[start].b, a_count = 0, b_count = 0;
    std::string body;
    for (size_t x = start; x < stop; ++x) {
      const auto& e = edits[x];
      if (e.op == Op::kSame) body += " " + a[e.a] + "\n", ++a_count, ++b_count;
      else if (e.op == Op::kRemove) body += "-" + a[e.a] + "\n", ++a_count;
      else body += "+" + b[e.b] + "\n", ++b_count;
    }
    out += fmt::format("@@ -{} +{} @@\n", range(a_start, a_count), range(b_start, b_count)) + body;
    k = stop;
  }
  return out;
}

}  // namespace kopt::util
