#include "search/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace kopt::search {

struct Expr::Node {
  enum class Kind { kNumber, kName, kUnary, kBinary } kind;
  int64_t number = 0;
  std::string name;  // identifier, or the operator text of a unary/binary node
  std::shared_ptr<const Node> lhs, rhs;
  int slot = -1;     // identifiers: index into Expr::slot_names()
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;

struct Token {
  enum class Kind { kNumber, kName, kOp, kEnd } kind;
  std::string text;
  size_t column = 0;  // 1-based
};

Result<std::vector<Token>> tokenize(std::string_view s) {
  static const char* const kTwoChar[] = {"==", "!=", "<=", ">=", "&&", "||"};
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t col = i + 1;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j]))) ++j;
      out.push_back({Token::Kind::kNumber, std::string(s.substr(i, j - i)), col});
      i = j;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Token::Kind::kName, std::string(s.substr(i, j - i)), col});
      i = j;
      continue;
    }
    bool two = false;
    for (const char* op : kTwoChar) {
      if (s.substr(i, 2) == op) {
        out.push_back({Token::Kind::kOp, op, col});
        i += 2;
        two = true;
        break;
      }
    }
    if (two) continue;
    if (std::string_view("+-*/%()<>!").find(c) != std::string_view::npos) {
      out.push_back({Token::Kind::kOp, std::string(1, c), col});
      ++i;
      continue;
    }
    return input_error(fmt::format("column {}: unexpected character '{}'", col, c));
  }
  out.push_back({Token::Kind::kEnd, "", s.size() + 1});
  return out;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Result<NodePtr> parse_all() {
    KOPT_TRY_ASSIGN(NodePtr n, parse_level(0));
    if (peek().kind != Token::Kind::kEnd)
      return input_error(fmt::format("column {}: unexpected '{}' after a complete expression", peek().column,
                                     peek().text));
    return n;
  }

 private:
  // Binary operator levels, lowest precedence first.
  static const std::vector<std::vector<std::string>>& levels() {
    static const std::vector<std::vector<std::string>> l = {
        {"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
    return l;
  }

  const Token& peek() const { return toks_[pos_]; }

  Result<NodePtr> parse_level(size_t level) {
    if (level == levels().size()) return parse_unary();
    KOPT_TRY_ASSIGN(NodePtr lhs, parse_level(level + 1));
    while (peek().kind == Token::Kind::kOp) {
      const auto& ops = levels()[level];
      if (std::find(ops.begin(), ops.end(), peek().text) == ops.end()) break;
      std::string op = toks_[pos_++].text;
      KOPT_TRY_ASSIGN(NodePtr rhs, parse_level(level + 1));
      lhs = std::make_shared<Expr::Node>(Expr::Node{Expr::Node::Kind::kBinary, 0, op, lhs, rhs});
    }
    return lhs;
  }

  Result<NodePtr> parse_unary() {
    const Token& t = peek();
    if (t.kind == Token::Kind::kOp && (t.text == "!" || t.text == "-" || t.text == "+")) {
      std::string op = toks_[pos_++].text;
      KOPT_TRY_ASSIGN(NodePtr operand, parse_unary());
      return NodePtr(std::make_shared<Expr::Node>(Expr::Node{Expr::Node::Kind::kUnary, 0, op, operand, nullptr}));
    }
    return parse_primary();
  }

  Result<NodePtr> parse_primary() {
    const Token t = peek();
    if (t.kind == Token::Kind::kNumber) {
      ++pos_;
      int64_t v = 0;
      for (char c : t.text) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
          return input_error(fmt::format("column {}: '{}' is not a decimal integer", t.column, t.text));
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
          return input_error(fmt::format("column {}: integer '{}' is too large", t.column, t.text));
      }
      return NodePtr(std::make_shared<Expr::Node>(Expr::Node{Expr::Node::Kind::kNumber, v, "", nullptr, nullptr}));
    }
    if (t.kind == Token::Kind::kName) {
      ++pos_;
      auto it = std::find(slots_.begin(), slots_.end(), t.text);
      int slot = static_cast<int>(it - slots_.begin());
      if (it == slots_.end()) slots_.push_back(t.text);
      return NodePtr(std::make_shared<Expr::Node>(Expr::Node{Expr::Node::Kind::kName, 0, t.text, nullptr, nullptr, slot}));
    }
    if (t.kind == Token::Kind::kOp && t.text == "(") {
      ++pos_;
      KOPT_TRY_ASSIGN(NodePtr inner, parse_level(0));
      if (peek().text != ")" || peek().kind != Token::Kind::kOp)
        return input_error(fmt::format("column {}: expected ')' to close the '(' at column {}", peek().column,
                                       t.column));
      ++pos_;
      return inner;
    }
    if (t.kind == Token::Kind::kEnd) return input_error(fmt::format("column {}: expected a value, found the end", t.column));
    return input_error(fmt::format("column {}: expected a value, found '{}'", t.column, t.text));
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;

 public:
  std::vector<std::string> slots_;
};

void collect_names(const Expr::Node& n, std::vector<std::string>& out) {
  if (n.kind == Expr::Node::Kind::kName) out.push_back(n.name);
  if (n.lhs) collect_names(*n.lhs, out);
  if (n.rhs) collect_names(*n.rhs, out);
}

Result<int64_t> eval_node(const Expr::Node& n, const Bindings& names, const std::string& text) {
  using K = Expr::Node::Kind;
  switch (n.kind) {
    case K::kNumber: return n.number;
    case K::kName: {
      auto it = names.find(n.name);
      if (it != names.end()) return it->second;
      std::vector<std::string> known;
      for (const auto& [k, v] : names) known.push_back(k);
      return input_error(fmt::format("unknown name '{}' in '{}' (known: {})", n.name, text,
                                     known.empty() ? std::string("none") : util::join(known, ", ")));
    }
    case K::kUnary: {
      KOPT_TRY_ASSIGN(int64_t v, eval_node(*n.lhs, names, text));
      if (n.name == "!") return int64_t{v == 0};
      if (n.name == "+") return v;
      int64_t r = 0;
      if (__builtin_sub_overflow(int64_t{0}, v, &r)) return input_error(fmt::format("overflow in '{}'", text));
      return r;
    }
    case K::kBinary: {
      const std::string& op = n.name;
      KOPT_TRY_ASSIGN(int64_t a, eval_node(*n.lhs, names, text));
      if (op == "&&" && a == 0) return int64_t{0};  // short-circuit, like C
      if (op == "||" && a != 0) return int64_t{1};
      KOPT_TRY_ASSIGN(int64_t b, eval_node(*n.rhs, names, text));
      int64_t r = 0;
      bool overflow = false;
      if (op == "+") overflow = __builtin_add_overflow(a, b, &r);
      else if (op == "-") overflow = __builtin_sub_overflow(a, b, &r);
      else if (op == "*") overflow = __builtin_mul_overflow(a, b, &r);
      else if (op == "/" || op == "%") {
        if (b == 0) return input_error(fmt::format("division by zero in '{}'", text));
        if (a == INT64_MIN && b == -1) overflow = true;
        else r = op == "/" ? a / b : a % b;
      } else if (op == "==") r = a == b;
      else if (op == "!=") r = a != b;
      else if (op == "<") r = a < b;
      else if (op == "<=") r = a <= b;
      else if (op == ">") r = a > b;
      else if (op == ">=") r = a >= b;
      else if (op == "&&" || op == "||") r = b != 0;
      if (overflow) return input_error(fmt::format("integer overflow in '{}'", text));
      return r;
    }
  }
  return internal_error("unreachable expression node");
}

}  // namespace

Result<Expr> Expr::parse(std::string_view text) {
  if (util::trim(text).empty()) return input_error("empty expression");
  KOPT_TRY_ASSIGN(auto toks, tokenize(text));
  Parser p(std::move(toks));
  KOPT_TRY_ASSIGN(NodePtr root, p.parse_all());
  Expr e;
  e.slot_names_ = p.slots_;
  e.text_ = util::trim(text);
  e.root_ = root;
  collect_names(*root, e.names_);
  std::sort(e.names_.begin(), e.names_.end());
  e.names_.erase(std::unique(e.names_.begin(), e.names_.end()), e.names_.end());
  return e;
}

Result<int64_t> Expr::eval(const Bindings& names) const {
  if (!root_) return internal_error("evaluating an empty expression");
  return eval_node(*root_, names, text_);
}

namespace {
std::optional<int64_t> fast_eval(const Expr::Node& n, const std::vector<int64_t>& v) {
  using K = Expr::Node::Kind;
  switch (n.kind) {
    case K::kNumber: return n.number;
    case K::kName:
      if (n.slot < 0 || static_cast<size_t>(n.slot) >= v.size()) return std::nullopt;
      return v[static_cast<size_t>(n.slot)];
    case K::kUnary: {
      auto a = fast_eval(*n.lhs, v);
      if (!a) return std::nullopt;
      if (n.name == "!") return int64_t{*a == 0};
      if (n.name == "+") return *a;
      int64_t r = 0;
      if (__builtin_sub_overflow(int64_t{0}, *a, &r)) return std::nullopt;
      return r;
    }
    case K::kBinary: {
      const char op0 = n.name[0], op1 = n.name.size() > 1 ? n.name[1] : '\0';
      auto a = fast_eval(*n.lhs, v);
      if (!a) return std::nullopt;
      if (op0 == '&' && *a == 0) return int64_t{0};
      if (op0 == '|' && *a != 0) return int64_t{1};
      auto b = fast_eval(*n.rhs, v);
      if (!b) return std::nullopt;
      int64_t r = 0;
      switch (op0) {
        case '+': if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt; return r;
        case '-': if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt; return r;
        case '*': if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt; return r;
        case '/':
        case '%':
          if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
          return op0 == '/' ? *a / *b : *a % *b;
        case '=': return int64_t{*a == *b};
        case '!': return int64_t{*a != *b};
        case '<': return op1 == '=' ? int64_t{*a <= *b} : int64_t{*a < *b};
        case '>': return op1 == '=' ? int64_t{*a >= *b} : int64_t{*a > *b};
        case '&':
        case '|': return int64_t{*b != 0};
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> Expr::eval_slots(const std::vector<int64_t>& values) const {
  if (!root_) return std::nullopt;
  return fast_eval(*root_, values);
}

bool Expr::holds(const Bindings& names) const {
  auto r = eval(names);
  return r.ok() && r.value() != 0;
}

}  // namespace kopt::search
