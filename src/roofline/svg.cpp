#include "roofline/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kopt::roofline {

std::optional<SvgPoint> svg_point(const RooflineResult& r) {
  if (!r.floor || !r.efficiency || !r.floor->arithmetic_intensity || !(r.floor->flops > 0)) return std::nullopt;
  SvgPoint p;
  p.label = r.kernel.empty() ? "kernel" : r.kernel;
  p.arithmetic_intensity = *r.floor->arithmetic_intensity;
  p.achieved_tflops = r.efficiency->achieved_tflops;
  p.efficiency = r.efficiency->efficiency;
  p.below_floor = r.efficiency->below_floor;
  return p;
}

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += ch;
    }
  }
  return o;
}

std::string color_of(Roof r) {
  switch (r) {
    case Roof::kFp32Fma: return "#1f77b4";
    case Roof::kFp64Fma: return "#17becf";
    case Roof::kFp64Tensor: return "#8c564b";
    case Roof::kTf32Tensor: return "#9467bd";
    case Roof::kFp16Tensor: return "#2ca02c";
    case Roof::kBf16Tensor: return "#bcbd22";
    case Roof::kFp8Tensor: return "#ff7f0e";
    case Roof::kInt8Tensor: return "#e377c2";
    default: return "#444444";
  }
}

std::string tick_text(double v) {
  if (v >= 1) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

struct Scale {
  double lo, hi, px0, px1;  // log10 range mapped onto [px0, px1]
  double operator()(double v) const { return px0 + (std::log10(v) - lo) / (hi - lo) * (px1 - px0); }
};

}  // namespace

std::string render_svg(const Ceilings& c, const std::vector<SvgPoint>& points, const SvgOptions& o) {
  const double W = o.width, H = o.height;
  const double left = 80, right = 250, top = 50, bottom = 60;
  struct Line {
    Roof roof;
    double tflops;
    bool datasheet;
  };
  std::vector<Line> roofs;
  for (const auto& [r, x] : c.roofs)
    if (roof_info(r).kind == RoofKind::kCompute && x.value > 0)
      roofs.push_back({r, x.value, x.source == CeilingSource::kDatasheet});
  std::sort(roofs.begin(), roofs.end(), [](const Line& a, const Line& b) { return a.tflops > b.tflops; });
  auto dram = c.dram_roof();
  const double bw_tbs = dram ? c.find(*dram)->value / 1000.0 : 0;  // TB/s: TFLOP/s = AI * TB/s
  const Ceiling* l2 = c.find(Roof::kL2Read);

  // Ranges, in decades, covering the ridge points and the kernels.
  double max_peak = roofs.empty() ? 1 : roofs.front().tflops, min_peak = roofs.empty() ? 1 : roofs.back().tflops;
  double x_min = 0.1, x_max = bw_tbs > 0 ? 4 * max_peak / bw_tbs : 1000;
  double y_min = std::min(min_peak / 10, bw_tbs > 0 ? bw_tbs * x_min : min_peak / 10), y_max = 1.5 * max_peak;
  for (const auto& p : points) {
    if (!(p.arithmetic_intensity > 0) || !(p.achieved_tflops > 0)) continue;
    x_min = std::min(x_min, p.arithmetic_intensity / 2);
    x_max = std::max(x_max, p.arithmetic_intensity * 2);
    y_min = std::min(y_min, p.achieved_tflops / 2);
    y_max = std::max(y_max, p.achieved_tflops * 2);
  }
  Scale sx{std::floor(std::log10(x_min)), std::ceil(std::log10(x_max)), left, W - right};
  const double X0 = std::pow(10, sx.lo), X1 = std::pow(10, sx.hi);
  if (bw_tbs > 0) y_min = std::min(y_min, bw_tbs * X0);  // the DRAM slope starts inside the frame
  Scale sy{std::floor(std::log10(y_min)), std::ceil(std::log10(y_max)), H - bottom, top};

  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      W, H);
  std::string title = o.title.empty() ? "Roofline: " + c.gpu_name : o.title;
  s += fmt::format("<text x=\"{}\" y=\"28\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", left, esc(title));
  s += fmt::format("<text x=\"{}\" y=\"44\" font-size=\"11\" fill=\"#555\">{}; dashed roofs are datasheet values, "
                   "solid ones measured</text>\n",
                   left, esc(c.measured_at.empty() ? "ceilings" : "ceilings of " + c.measured_at));

  // Grid and ticks at every decade.
  s += "<g stroke=\"#e5e5e5\" stroke-width=\"1\">\n";
  for (double e = sx.lo; e <= sx.hi; ++e)
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", sx(std::pow(10, e)), top,
                     H - bottom);
  for (double e = sy.lo; e <= sy.hi; ++e)
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>\n", left, sy(std::pow(10, e)),
                     W - right);
  s += "</g>\n<g fill=\"#333\">\n";
  for (double e = sx.lo; e <= sx.hi; ++e)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", sx(std::pow(10, e)),
                     H - bottom + 16, tick_text(std::pow(10, e)));
  for (double e = sy.lo; e <= sy.hi; ++e)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                     sy(std::pow(10, e)) + 4, tick_text(std::pow(10, e)));
  s += "</g>\n";
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left, top,
                   W - right - left, H - bottom - top);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">Arithmetic intensity (FLOP/byte, of "
                   "bytes_min)</text>\n",
                   (left + W - right) / 2, H - 18);
  s += fmt::format("<text x=\"18\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0:.1f})\">"
                   "Performance (TFLOP/s; TOP/s for int8)</text>\n",
                   (top + H - bottom) / 2);

  // Roofs: the memory slopes up to the highest compute roof, then each compute roof from its ridge point.
  struct Label {
    double y;
    std::string text, color;
  };
  std::vector<Label> labels;
  s += "<g fill=\"none\" stroke-width=\"2\">\n";
  if (bw_tbs > 0) {
    double xr = std::min(max_peak / bw_tbs, X1);
    s += fmt::format("<line class=\"roof-dram\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#d62728\"{}/>\n",
                     sx(X0), sy(bw_tbs * X0), sx(xr), sy(bw_tbs * xr),
                     c.find(*dram)->source == CeilingSource::kDatasheet ? " stroke-dasharray=\"6 4\"" : "");
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d62728\" stroke=\"none\" transform=\"rotate({:.1f} "
                     "{:.1f} {:.1f})\">DRAM {:.0f} GB/s ({})</text>\n",
                     sx(X0) + 8, sy(bw_tbs * X0 * 1.6) - 6,
                     -std::atan2(sy(bw_tbs * X0) - sy(bw_tbs * X0 * 10), sx(X0 * 10) - sx(X0)) * 180 / std::numbers::pi, sx(X0) + 8,
                     sy(bw_tbs * X0 * 1.6) - 6, bw_tbs * 1000, describe(c.find(*dram)->source));
  }
  // The other measured DRAM mixes, thin: a kernel with a known read/write mix is judged against its own.
  std::string mixes;
  for (const auto& m : kDramMixes) {
    const Ceiling* x = c.find(m.roof);
    if (!dram || m.roof == *dram || !x || !(x->value > 0) || x->source != CeilingSource::kMeasured) continue;
    const double tbs = x->value / 1000, xr = std::min(max_peak / tbs, X1);
    s += fmt::format("<line class=\"roof-dram-mix\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"#d62728\" stroke-width=\"1\" stroke-opacity=\"0.45\"/>\n",
                     sx(X0), sy(tbs * X0), sx(xr), sy(tbs * xr));
    mixes += fmt::format("{}{} {:.0f}", mixes.empty() ? "" : ", ", roof_info(m.roof).label, x->value);
  }
  if (!mixes.empty())
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d62728\" stroke=\"none\" font-size=\"11\">thin red: {} "
                     "GB/s (a kernel whose read/write mix is known is judged against its own)</text>\n",
                     left + 8.0, H - bottom - 8.0, esc(mixes));
  if (l2 && l2->value > 0) {
    double l2_tbs = l2->value / 1000, xr = std::min(max_peak / l2_tbs, X1);
    s += fmt::format("<line class=\"roof-l2\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" "
                     "stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n",
                     sx(X0), sy(l2_tbs * X0), sx(xr), sy(l2_tbs * xr));
    labels.push_back({sy(l2_tbs * xr), fmt::format("L2 {:.0f} GB/s", l2->value), "#777"});
  }
  for (const auto& r : roofs) {
    double xr = bw_tbs > 0 ? std::max(r.tflops / bw_tbs, X0) : X0;
    s += fmt::format("<line class=\"roof-compute\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                     "stroke=\"{}\"{}/>\n",
                     sx(xr), sy(r.tflops), sx(X1), sy(r.tflops), color_of(r.roof),
                     r.datasheet ? " stroke-dasharray=\"6 4\"" : "");
    labels.push_back({sy(r.tflops), fmt::format("{} {:.1f} {}{}", roof_info(r.roof).label, r.tflops,
                                                roof_info(r.roof).unit, r.datasheet ? " (datasheet)" : ""),
                      color_of(r.roof)});
  }
  s += "</g>\n";
  // Roof labels right of the plot, pushed apart so that close roofs (fp16, bf16) stay readable.
  std::sort(labels.begin(), labels.end(), [](const Label& a, const Label& b) { return a.y < b.y; });
  double last = -1e9;
  s += "<g font-size=\"11\">\n";
  for (auto& l : labels) {
    double y = std::max(l.y + 4, last + 14);
    last = y;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{}</text>\n", W - right + 6, y, l.color, esc(l.text));
  }
  s += "</g>\n";

  // Kernels.
  for (const auto& p : points) {
    if (!(p.arithmetic_intensity > 0) || !(p.achieved_tflops > 0)) continue;
    double x = sx(p.arithmetic_intensity), y = sy(p.achieved_tflops);
    std::string eff = p.efficiency ? fmt::format(": {:.0f}% of floor", *p.efficiency * 100) : "";
    if (p.below_floor) eff += " (BELOW FLOOR: check the measurement)";
    s += fmt::format("<circle class=\"kernel\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" stroke=\"black\"/>\n", x,
                     y, p.below_floor ? "#ffcc00" : "#000000");
    // Left of the point when the label would run into the roof labels (about 7 px a character).
    const std::string text = p.label + eff;
    const bool flip = x + 8 + 7.0 * static_cast<double>(text.size()) > W - right;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" font-weight=\"bold\" stroke=\"white\" "
                     "stroke-width=\"3\" paint-order=\"stroke\" text-anchor=\"{}\">{}</text>\n",
                     flip ? x - 8 : x + 8, y - 8, flip ? "end" : "start", esc(text));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace kopt::roofline
