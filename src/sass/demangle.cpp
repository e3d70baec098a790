#include "sass/demangle.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>

namespace kopt::sass {

std::string demangle(const std::string& mangled) {
  if (mangled.rfind("_Z", 0) != 0) return mangled;
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return outer_name(mangled);
  std::string s(out);
  std::free(out);
  return s;
}

std::string outer_name(const std::string& mangled) {
  // _Z [N] <len><id> <len><id> ... [I...] : only plain source names; anything else gives up.
  if (mangled.rfind("_Z", 0) != 0) return mangled;
  size_t i = 2;
  bool nested = i < mangled.size() && mangled[i] == 'N';
  if (nested) ++i;
  std::string name;
  while (i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i]))) {
    size_t len = 0;
    while (i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i])) && len < 100000)
      len = len * 10 + static_cast<size_t>(mangled[i++] - '0');
    if (len == 0 || i + len > mangled.size()) return mangled;
    name += (name.empty() ? "" : "::") + mangled.substr(i, len);
    i += len;
    if (!nested) break;
  }
  if (name.empty()) return mangled;
  bool templ = i < mangled.size() && mangled[i] == 'I';
  return name + (templ ? "<...>" : "") + "(...)";
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
