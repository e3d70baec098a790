#pragma once
// Integer constraint expressions of the search-space annotations, e.g. "BM*BN <= 16384" or
// "KOPT_TENSOR_CORES == 0 || BK % 16 == 0". Pure: parse once, evaluate against any binding of names.
//
// Grammar (C precedence, lowest first): || ; && ; == != ; < <= > >= ; + - ; * / % ; unary ! - + ;
// primary = integer | identifier | ( expr ). Values are 64-bit signed integers; comparisons and logic
// give 0 or 1; / and % truncate toward zero like C. Division by zero and overflow are errors.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace kopt::search {

using Bindings = std::map<std::string, int64_t, std::less<>>;

class Expr {
 public:
  // Errors say what was expected and at which column ("column 7: expected a value, found ')'").
  static Result<Expr> parse(std::string_view text);

  // Unknown names are errors naming the known ones.
  Result<int64_t> eval(const Bindings& names) const;
  bool holds(const Bindings& names) const;  // eval succeeded and is non-zero

  // Fast path for hot loops: values[i] is the value of slot_names()[i]; nullopt on any error.
  std::optional<int64_t> eval_slots(const std::vector<int64_t>& values) const;

  const std::string& text() const { return text_; }
  const std::vector<std::string>& names() const { return names_; }  // identifiers used, sorted, unique
  const std::vector<std::string>& slot_names() const { return slot_names_; }  // in order of first use

  struct Node;

 private:
  std::string text_;
  std::vector<std::string> names_, slot_names_;
  std::shared_ptr<const Node> root_;  // immutable, so copies may share it
};

}  // namespace kopt::search
