#pragma once
// The roofline chart as SVG: log-log axes (arithmetic intensity in FLOP/byte against TFLOP/s), the DRAM
// slope, the L2 slope when measured, one horizontal roof per compute ceiling (datasheet ones dashed), and
// the kernels as labelled points. Pure: returns the document's text.
#include <optional>
#include <string>
#include <vector>

#include "roofline/analysis.h"
#include "roofline/ceilings.h"

namespace kopt::roofline {

struct SvgPoint {
  std::string label;                 // "matmul.cu"
  double arithmetic_intensity = 0;   // FLOP per byte of bytes_min
  double achieved_tflops = 0;
  std::optional<double> efficiency;  // shown next to the label
  bool below_floor = false;          // drawn as a warning, never as a success
};

// The point of an analysed kernel; nullopt without a workload model, with bytes_min 0 or flops 0 (a log axis
// cannot place it).
std::optional<SvgPoint> svg_point(const RooflineResult& r);

struct SvgOptions {
  int width = 960, height = 600;
  std::string title;  // default: "Roofline: <gpu name>"
};

std::string render_svg(const Ceilings& c, const std::vector<SvgPoint>& points, const SvgOptions& o = {});

}  // namespace kopt::roofline
