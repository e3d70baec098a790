#pragma once
// C++ names of kernels: demangling and the pieces kopt matches against source-level names.
#include <string>
#include <string_view>

namespace kopt::sass {

// abi::__cxa_demangle; returns the input unchanged when it is not a mangled C++ name (extern "C" kernels).
// When __cxa_demangle fails on a mangled name, outer_name() of it: GNU's demangler (gcc 12, binutils'
// c++filt) rejects some CUTLASS 3 kernel names that llvm-cxxfilt reads (a 1,224-character
// cutlass::device_kernel<GemmUniversal<...>>, tests/data/sass/cuobjdump-13.5/cutlass_gemm_sm90a.sass.txt).
std::string demangle(const std::string& mangled);
// The function's nested name read directly from the mangling, template arguments and parameters elided:
// "_ZN7cutlass13device_kernelINS_4gemm..." -> "cutlass::device_kernel<...>(...)". The input unchanged when
// it does not start with a plain nested name.
std::string outer_name(const std::string& mangled);
// "void demo::reduce<1024>(float const*, float*)" -> "demo::reduce" (no return type, template arguments
// or parameters). "saxpy" -> "saxpy".
std::string qualified_name(std::string_view demangled);
// "void demo::reduce<1024>(float const*, float*)" -> "reduce".
std::string base_name(std::string_view demangled);

}  // namespace kopt::sass
