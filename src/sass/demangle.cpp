#include "sass/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace kopt::sass {

std::string demangle(const std::string& mangled) {
  if (mangled.rfind("_Z", 0) != 0) return mangled;
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return mangled;
  std::string s(out);
  std::free(out);
  return s;
}

namespace {
constexpr std::string_view kAnon = "(anonymous namespace)";
}

std::string qualified_name(std::string_view d) {
  // 1. Cut the parameter list: the first '(' outside template arguments that is not "(anonymous namespace)".
  int angle = 0;
  size_t end = d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    char c = d[i];
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(' && angle == 0) {
      if (d.substr(i, kAnon.size()) == kAnon) {
        i += kAnon.size() - 1;
        continue;
      }
      end = i;
      break;
    }
  }
  std::string_view name = d.substr(0, end);
  // 2. Drop a return type: everything up to the last space outside template arguments and the anonymous
  //    namespace marker.
  angle = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (name.substr(i, kAnon.size()) == kAnon) {
      i += kAnon.size() - 1;
      continue;
    }
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == ' ' && angle == 0) start = i + 1;
  }
  name = name.substr(start);
  // 3. Drop trailing template arguments "<...>".
  if (!name.empty() && name.back() == '>') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == '>') ++depth;
      else if (name[i] == '<' && --depth == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  return std::string(name);
}

std::string base_name(std::string_view demangled) {
  std::string q = qualified_name(demangled);
  int angle = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i] == '<') ++angle;
    else if (q[i] == '>' && angle > 0) --angle;
    else if (angle == 0 && q[i] == ':' && q[i + 1] == ':') start = i + 2;
  }
  return q.substr(start);
}

}  // namespace kopt::sass
