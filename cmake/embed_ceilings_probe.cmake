# Generates ceilings_probe_source.cpp: the ceilings probe's CUDA source (src/roofline/ceilings_probe.cu) as a byte
# array, so kopt builds the probe with nvcc wherever it runs, with no source tree there (docs/ROOFLINE.md). Run by
# the build (CMakeLists.txt): cmake -DSRC=.../ceilings_probe.cu -DOUT=... -P this file.
foreach(var SRC OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_ceilings_probe.cmake: ${var} is not set")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/embed_bytes.cmake")
set(arrays "")
kopt_embed_bytes(probe "${SRC}")

file(WRITE "${OUT}.tmp"
"// GENERATED at build time by cmake/embed_ceilings_probe.cmake from src/roofline/ceilings_probe.cu: do not edit.\n"
"#include \"roofline/probe_source.h\"\n\n"
"namespace kopt::roofline {\n\nnamespace {\n${arrays}}  // namespace\n\n"
"const std::string& ceilings_probe_source() {\n"
"  static const std::string text(reinterpret_cast<const char*>(k_probe), ${probe_size});\n"
"  return text;\n"
"}\n\n"
"}  // namespace kopt::roofline\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
