#pragma once
// The ceilings probe's CUDA source (src/roofline/ceilings_probe.cu), embedded in kopt so that kopt can build
// the probe wherever it runs. Its definition is generated at build time by cmake/embed_ceilings_probe.cmake
// (build/generated/ceilings_probe_source.cpp), as the report's assets are.
#include <string>
#include <string_view>

namespace kopt::roofline {

const std::string& ceilings_probe_source();

}  // namespace kopt::roofline
