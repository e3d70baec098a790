#include "cli/parse_messages.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace kopt::cli {

namespace {

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* o : app.get_options())
    if (o->check_name(name) || o->get_name() == name) return o;
  return nullptr;
}

// "INT" -> "a whole number", from the option's CLI11 type name.
std::string kind_of(const CLI::Option* o) {
  std::string t = o ? o->get_type_name() : "";
  if (t.find("UINT") != std::string::npos) return "a whole number >= 0";
  if (t.find("INT") != std::string::npos) return "a whole number";
  if (t.find("FLOAT") != std::string::npos) return "a number";
  if (t.find("BOOL") != std::string::npos) return "true or false";
  return "a value of type " + (t.empty() ? std::string("TEXT") : t);
}

std::string example_of(const CLI::Option* o) {
  std::string t = o ? o->get_type_name() : "";
  if (t.find("INT") != std::string::npos) return "3";
  if (t.find("FLOAT") != std::string::npos) return "0.5";
  return "";
}

std::string after(const std::string& s, const std::string& prefix) {
  return util::starts_with(s, prefix) ? s.substr(prefix.size()) : std::string();
}

// "{cold,warm}" -> "cold, warm"
std::string set_text(std::string s) {
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  std::string out;
  for (char c : s) out += c == ',' ? std::string(", ") : std::string(1, c);
  return out;
}

std::string describe_value(const std::string& name, const std::string& detail) {
  // Validators: "X not in {a,b}", "Value X not in range a to b"
  if (auto p = detail.find(" not in {"); p != std::string::npos)
    return fmt::format("{} '{}' is not one of {}", name, detail.substr(0, p), set_text(detail.substr(p + 8)));
  if (auto rest = after(detail, "Value "); !rest.empty()) {
    if (auto p = rest.find(" not in range "); p != std::string::npos) {
      std::string range = rest.substr(p + 14);
      if (auto to = range.find(" to "); to != std::string::npos) range = range.substr(0, to) + " and " + range.substr(to + 4);
      return fmt::format("{} {} is out of range: give a value between {}", name, rest.substr(0, p), range);
    }
  }
  return name + ": " + detail;
}

}  // namespace

std::string reword_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  const std::string msg = e.what();
  const std::string kind = e.get_name();
  if (kind == "ConversionError") {
    if (auto rest = after(msg, "Could not convert: "); !rest.empty()) {
      auto eq = rest.find(" = ");
      std::string name = rest.substr(0, eq), value = eq == std::string::npos ? "" : rest.substr(eq + 3);
      const CLI::Option* o = find_option(app, name);
      std::string ex = example_of(o);
      return fmt::format("{} '{}' is not {}{}", name, value, kind_of(o), ex.empty() ? "" : fmt::format(" (e.g. {} {})", name, ex));
    }
    if (auto rest = after(msg, "The value "); !rest.empty()) {
      auto p = rest.find(" is not an allowed value for ");
      if (p != std::string::npos) return fmt::format("{} '{}' is not an allowed value", rest.substr(p + 29), rest.substr(0, p));
    }
    return msg;
  }
  if (kind == "ValidationError") {
    auto colon = msg.find(": ");
    if (colon == std::string::npos) return msg;
    return describe_value(msg.substr(0, colon), msg.substr(colon + 2));
  }
  if (kind == "RequiredError") {
    if (msg.ends_with(" is required")) {
      std::string name = msg.substr(0, msg.size() - 12);
      const CLI::Option* o = find_option(app, name);
      std::string what = o ? o->get_description() : "";
      return fmt::format("{} is missing{}", name, what.empty() ? "" : ": " + what);
    }
    return msg;
  }
  if (kind == "ArgumentMismatch") {
    // "--json: 1 required FILE|- missing"
    if (auto p = msg.find(": "); p != std::string::npos && msg.find(" required ") != std::string::npos &&
                                 msg.ends_with(" missing")) {
      std::string name = msg.substr(0, p);
      const CLI::Option* o = find_option(app, name);
      std::string type = o ? o->get_type_name() : "";
      if (type == "FILE|-") return name + " needs a value: a file, or - for stdout";
      return fmt::format("{} needs a value{}", name, type.empty() ? "" : " (" + type + ")");
    }
    return msg;
  }
  // ExtrasError is matched by its text: CLI11 gives it the app's name, not its class's.
  for (const char* prefix : {"The following arguments were not expected: ", "The following argument was not expected: "})
    if (auto rest = after(msg, prefix); !rest.empty()) return "unexpected argument(s): " + rest;
  return msg;
}

}  // namespace kopt::cli
