#pragma once
// C++ names of kernels: demangling and the pieces kopt matches against source-level names.
#include <string>
#include <string_view>

namespace kopt::sass {

// abi::__cxa_demangle; returns the input unchanged when it is not a mangled C++ name (extern "C" kernels).
std::string demangle(const std::string& mangled);
// "void demo::reduce<1024>(float const*, float*)" -> "demo::reduce" (no return type, template arguments
// or parameters). "saxpy" -> "saxpy".
std::string qualified_name(std::string_view demangled);
// "void demo::reduce<1024>(float const*, float*)" -> "reduce".
std::string base_name(std::string_view demangled);

}  // namespace kopt::sass
