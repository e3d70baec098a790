#pragma once
// Internal to the derivation (search/derive*.cpp): small text helpers over a source and its masked copy, and the
// two language front ends. Not part of the library's interface.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "search/derive.h"
#include "search/expr.h"
#include "util/strings.h"

namespace kopt::search::derive_detail {

inline constexpr size_t npos = std::string::npos;

inline bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

inline std::string upper(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

inline bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// A decimal number of at most 12 digits (never throws); -1 otherwise.
inline int64_t small_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 12) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoll(digits);
}

// A plain decimal literal, optionally with an integer suffix (returned in `suffix`).
inline std::optional<int64_t> int_literal(std::string_view s, std::string* suffix = nullptr) {
  std::string t = util::trim(s);
  while (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = util::trim(t.substr(1, t.size() - 2));
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0 || i > 12) return std::nullopt;
  std::string suf = t.substr(i);
  for (char c : suf)
    if (c != 'u' && c != 'U' && c != 'l' && c != 'L') return std::nullopt;
  if (suffix) *suffix = suf;
  return std::stoll(t.substr(0, i));
}

// Positions of `word` as a whole word in `s`.
inline std::vector<size_t> word_positions(std::string_view s, std::string_view word) {
  std::vector<size_t> out;
  size_t p = 0;
  while ((p = s.find(word, p)) != npos) {
    size_t e = p + word.size();
    if ((p == 0 || !word_char(s[p - 1])) && (e >= s.size() || !word_char(s[e]))) out.push_back(p);
    p = e;
  }
  return out;
}

// Index of the bracket closing the one at `open`, npos when unbalanced.
inline size_t match_close(std::string_view s, size_t open) {
  char o = s[open];
  char c = o == '(' ? ')' : o == '[' ? ']' : o == '{' ? '}' : '>';
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    else if (s[i] == c && --depth == 0) return i;
  }
  return npos;
}

// The position of the bracket opening the one closing at s[close] (')', ']' or '}'), searching backwards; npos if none.
inline size_t match_open(std::string_view s, size_t close) {
  char c = s[close];
  char o = c == ')' ? '(' : c == ']' ? '[' : '{';
  int depth = 0;
  for (size_t j = close + 1; j-- > 0;) {
    if (s[j] == c) ++depth;
    else if (s[j] == o && --depth == 0) return j;
  }
  return npos;
}

struct Range {
  size_t begin = 0, end = 0;  // [begin, end), trimmed
};

// Top-level comma-separated pieces of s[begin, end), trimmed.
inline std::vector<Range> split_args(std::string_view s, size_t begin, size_t end) {
  std::vector<Range> out;
  int depth = 0;
  size_t start = begin;
  auto push = [&](size_t b, size_t e) {
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    out.push_back({b, e});
  };
  for (size_t i = begin; i < end; ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) {
      push(start, i);
      start = i + 1;
    }
  }
  if (end > begin) push(start, end);
  return out;
}

inline std::string sv(std::string_view s, Range r) { return std::string(s.substr(r.begin, r.end - r.begin)); }

struct Edit {
  size_t pos = 0, len = 0;
  std::string text;
};

inline std::string apply_edits(std::string text, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
  size_t limit = npos;
  for (const auto& e : edits) {
    if (e.pos + e.len > limit) continue;  // overlapping: the later edit wins (never expected)
    text.replace(e.pos, e.len, e.text);
    limit = e.pos;
  }
  return text;
}

inline std::vector<int64_t> sorted_unique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

inline std::vector<int64_t> values_for(ValueRole role, int64_t d) {
  std::vector<int64_t> v{d};
  auto powers = [&](int64_t lo, int64_t hi) {
    for (int64_t p = 1; p <= hi; p *= 2)
      if (p >= lo) v.push_back(p);
  };
  switch (role) {
    case ValueRole::kBlockThreads: powers(32, kMaxThreadsPerBlock); break;
    case ValueRole::kTile: powers(std::max<int64_t>(1, d / 8), std::min(8 * d, kMaxTileValue)); break;
    case ValueRole::kBlockDim: powers(std::max<int64_t>(1, d / 8), std::min(8 * d, kMaxThreadsPerBlock)); break;
    case ValueRole::kPerThread: powers(1, 16); break;
    case ValueRole::kUnroll: powers(1, 16); break;
    case ValueRole::kMinBlocks: v.insert(v.end(), {1, 2, 4}); break;
    case ValueRole::kMaxThreads: powers(d, kMaxThreadsPerBlock); break;
    case ValueRole::kNumWarps: powers(1, 32); break;
    case ValueRole::kNumStages: v.insert(v.end(), {1, 2, 3, 4}); break;
    case ValueRole::kListed: break;
    case ValueRole::kGridBlocks: powers(std::max<int64_t>(1, d / 8), 8 * d); break;
    case ValueRole::kLauncherThreads:
      v.push_back(0);
      powers(32, kMaxThreadsPerBlock);
      break;
    case ValueRole::kLauncherTile:
      v.push_back(0);
      powers(4, 16384);
      break;
    case ValueRole::kOwnNumWarps:
      v.push_back(0);
      powers(1, 32);
      break;
  }
  return sorted_unique(v);
}

// A name people give per-thread work: TM, TN, ITEMS_PER_THREAD, kItemsPerThread, VEC_SIZE, vec_size, WPT...
inline bool per_thread_name(const std::string& name) {
  static const std::regex re(
      R"(^k?_?(T[MNK]|THREAD_?[MN]|TILE_?[MN]_?PER_?THREAD|ITEMS?|NUM_?ITEMS|ITEMS?_?PER_?THREAD|.*PER_?THREAD.*|VEC|VEC_?SIZE|VEC_?LEN|VEC_?WIDTH|VECTOR_?SIZE|WPT|RPT|EPT)$)",
      std::regex::icase);
  return std::regex_match(name, re);
}

// A name people give the warp's width: WARP_SIZE, WARPSIZE, kWarpSize, warp_size, THREADS_PER_WARP, kLanesPerWarp...
// At 32 it is the hardware's (every NVIDIA GPU): lane arithmetic, shuffles and warp counts assume it, so it is no
// tunable, whatever its uses (a survey of llm.c, cuda-samples and SGEMM_CUDA, 2026-12-07).
inline bool warp_width_name(const std::string& name) {
  static const std::regex re(R"(^k?_?(WARP_?(SIZE|SZ|THREADS|WIDTH|LANES)|(THREADS|LANES)_?(PER|IN)_?WARP)$)", std::regex::icase);
  return std::regex_match(name, re);
}

// Common ground of the CUDA and Triton derivations: the text, its masked copy, lines, names.
struct Source {
  std::string_view text;
  std::string masked;
  std::vector<size_t> line_starts;
  std::set<std::string> identifiers;  // every identifier of the (masked) source
  std::set<std::string> taken;        // names generated so far

  Source(std::string_view t, SourceLanguage lang) : text(t), masked(mask_code(t, lang)) {
    line_starts.push_back(0);
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == '\n') line_starts.push_back(i + 1);
    for (size_t i = 0; i < masked.size();) {
      if (word_char(masked[i]) && !std::isdigit(static_cast<unsigned char>(masked[i]))) {
        size_t e = i;
        while (e < masked.size() && word_char(masked[e])) ++e;
        identifiers.insert(masked.substr(i, e - i));
        i = e;
      } else if (word_char(masked[i])) {
        while (i < masked.size() && word_char(masked[i])) ++i;
      } else {
        ++i;
      }
    }
  }
  int line_of(size_t pos) const {
    return static_cast<int>(std::upper_bound(line_starts.begin(), line_starts.end(), pos) - line_starts.begin());
  }
  size_t line_start(size_t pos) const { return line_starts[static_cast<size_t>(line_of(pos) - 1)]; }
  size_t line_end(size_t pos) const {
    size_t e = masked.find('\n', pos);
    return e == npos ? masked.size() : e;
  }
  // A name free in the source and not generated yet; never KOPT_* (reserved for method guards).
  std::string unique_name(std::string base) {
    if (util::starts_with(base, "KOPT_")) base = "P_" + base;
    std::string n = base;
    for (int k = 2; identifiers.count(n) || taken.count(n); ++k) n = fmt::format("{}_{}", base, k);
    taken.insert(n);
    return n;
  }
};

inline std::string format_values(const std::vector<int64_t>& v) {
  std::vector<std::string> s;
  for (auto x : v) s.push_back(std::to_string(x));
  return util::join(s, ",");
}

// What a front end derived, and the edits that make the instrumented copy (derive.cpp assembles it).
struct FrontEnd {
  Derivation derivation;
  std::vector<Edit> edits;
  std::vector<std::string> prelude, postlude;  // macro blocks, then constexprs, under the @kopt lines
};

FrontEnd derive_cuda(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& included = {});
// The modules a Triton wrapper imports from (`from MODULE import ...`), each the first file found beside it, on the
// sys.path entries it adds (where they evaluate without running it) or on PYTHONPATH, as spelled with its text.
std::vector<IncludedText> python_modules(const std::filesystem::path& kernel, std::string_view text);
// `modules` (Triton): the files of the modules run_kernel's kernels are imported from (local_includes), where a
// kernel's body says whether one block of a tile covers an argument (DerivedParam::covers).
FrontEnd derive_triton(std::string_view text, const std::string& file_name, const std::vector<IncludedText>& modules = {});

}  // namespace kopt::search::derive_detail
