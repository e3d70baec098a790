#include "profile/csv.h"

#include <cctype>
#include <cstdlib>

namespace kopt::profile {

namespace {

// Offset of the first line starting with "ID" (quoted), or npos.
size_t table_start(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.substr(pos, 4) == "\"ID\"") return pos;
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return std::string_view::npos;
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "1,234,567" (groups of three after the first) or plain digits.
bool valid_grouping(std::string_view int_part) {
  if (int_part.find(',') == std::string_view::npos) return is_digits(int_part);
  size_t first = int_part.find(',');
  if (first == 0 || first > 3 || !is_digits(int_part.substr(0, first))) return false;
  size_t pos = first;
  while (pos < int_part.size()) {
    if (int_part[pos] != ',' || pos + 4 > int_part.size() || !is_digits(int_part.substr(pos + 1, 3))) return false;
    pos += 4;
  }
  return pos == int_part.size();
}

}  // namespace

std::vector<CsvRow> parse_ncu_csv(std::string_view text) {
  std::vector<CsvRow> rows;
  size_t i = table_start(text);
  if (i == std::string_view::npos) return rows;
  CsvRow row;
  std::string field;
  bool in_quotes = false, field_started = false;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_row = [&] {
    if (field_started || !row.empty()) end_field();
    if (!(row.size() == 1 && row[0].empty()) && !row.empty()) rows.push_back(std::move(row));
    row.clear();
  };
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"': in_quotes = true; field_started = true; break;
      case ',': end_field(); field_started = true; break;
      case '\r': break;
      case '\n': end_row(); break;
      default: field += c; field_started = true; break;
    }
  }
  end_row();
  // Lines after the table that are not CSV (a trailing "==PROF== Disconnected" line) come out as one-field
  // rows; drop them. Callers check the width of the rows they keep.
  std::vector<CsvRow> out;
  for (auto& r : rows)
    if (r.size() > 1) out.push_back(std::move(r));
  return out;
}

std::optional<double> parse_ncu_number(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  std::string_view body = s;
  if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
  size_t int_end = body.find_first_of(".eE");
  std::string_view int_part = body.substr(0, int_end);
  if (int_part.empty() && int_end == 0 && body.size() > 1 && body[0] == '.') {
    // ".5" style: no integer part
  } else if (!valid_grouping(int_part)) {
    return std::nullopt;
  }
  std::string cleaned;
  cleaned.reserve(s.size());
  for (char c : s)
    if (c != ',') cleaned += c;
  char* end = nullptr;
  double v = std::strtod(cleaned.c_str(), &end);
  if (end == cleaned.c_str() || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace kopt::profile
