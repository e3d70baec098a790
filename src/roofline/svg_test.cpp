#include "roofline/svg.h"

#include <gtest/gtest.h>

#include <regex>
#include <vector>

#include "roofline/testing.h"

namespace kopt::roofline {

namespace {

// A small well-formedness check: every tag closes in order, attributes are quoted, no stray '<' or '&'.
// Returns "" when well formed, else what is wrong.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> stack;
  size_t i = 0;
  if (doc.rfind("<?xml", 0) == 0) i = doc.find("?>") + 2;
  while (i < doc.size()) {
    size_t lt = doc.find('<', i);
    std::string text = doc.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    for (size_t a = text.find('&'); a != std::string::npos; a = text.find('&', a + 1))
      if (!std::regex_search(text.substr(a), std::regex("^&(amp|lt|gt|quot|apos);"))) return "a bare & in text";
    if (lt == std::string::npos) break;
    size_t gt = doc.find('>', lt);
    if (gt == std::string::npos) return "an unclosed tag";
    std::string tag = doc.substr(lt + 1, gt - lt - 1);
    if (tag.find('<') != std::string::npos) return "a '<' inside a tag: " + tag;
    static const std::regex open(R"(^([A-Za-z][\w:-]*)(\s+[\w:-]+="[^"<]*")*\s*(/?)$)");
    static const std::regex close(R"(^/([A-Za-z][\w:-]*)$)");
    std::smatch m;
    if (std::regex_match(tag, m, close)) {
      if (stack.empty() || stack.back() != m[1].str()) return "</" + m[1].str() + "> closes nothing open";
      stack.pop_back();
    } else if (std::regex_match(tag, m, open)) {
      if (m[3].str().empty()) stack.push_back(m[1].str());
      if (stack.empty() && m[3].str().empty()) return "unreachable";
    } else {
      return "a malformed tag: <" + tag + ">";
    }
    i = gt + 1;
  }
  return stack.empty() ? "" : "<" + stack.back() + "> never closed";
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(XmlCheck, CatchesBrokenDocuments) {
  EXPECT_EQ(xml_problem("<svg><g></g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><g></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a < b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg x=1></svg>"), "");
}

TEST(RooflineSvg, IsWellFormedWithOneRoofPerCeilingAndOnePointPerKernel) {
  Ceilings c = testing::round_ceilings();
  std::vector<SvgPoint> points = {{"sgemm<4096> & co", 682.7, 41.0, 0.683, false}, {"saxpy", 0.1667, 0.58, 0.87, false}};
  std::string svg = render_svg(c, points);
  EXPECT_EQ(xml_problem(svg), "") << svg;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(count(svg, "class=\"roof-compute\""), 8u);  // every compute ceiling of round_ceilings()
  EXPECT_EQ(count(svg, "class=\"roof-dram\""), 1u);
  EXPECT_EQ(count(svg, "class=\"roof-dram-mix\""), 1u);  // the read-only rate beside the copy roof
  EXPECT_NE(svg.find("thin red: DRAM read 3900 GB/s"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"roof-l2\""), 1u);
  EXPECT_EQ(count(svg, "<circle class=\"kernel\""), 2u);
  EXPECT_NE(svg.find("sgemm&lt;4096&gt; &amp; co: 68% of floor"), std::string::npos);  // escaped, efficiency
  EXPECT_NE(svg.find("saxpy: 87% of floor"), std::string::npos);
  EXPECT_NE(svg.find("DRAM 4000 GB/s (measured)"), std::string::npos);
  EXPECT_NE(svg.find("fp64 tensor 60.0 TFLOP/s (datasheet)"), std::string::npos);
  EXPECT_EQ(count(svg, "stroke-dasharray=\"6 4\""), 1u);  // only the datasheet roof is dashed
  EXPECT_NE(svg.find("Arithmetic intensity (FLOP/byte"), std::string::npos);
  EXPECT_NE(svg.find("int8 tensor 1600.0 TOP/s"), std::string::npos);
}

TEST(RooflineSvg, PlacesPointsOnLogAxes) {
  Ceilings c = testing::round_ceilings();
  // Kernels a decade apart in intensity and in performance sit equally far apart on each axis.
  std::string svg = render_svg(c, {{"a", 1, 1, std::nullopt, false},
                                   {"b", 10, 10, std::nullopt, false},
                                   {"c", 100, 100, std::nullopt, false}});
  std::regex circle(R"re(<circle class="kernel" cx="([\d.]+)" cy="([\d.]+)")re");
  std::vector<std::pair<double, double>> xy;
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it)
    xy.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  ASSERT_EQ(xy.size(), 3u);
  EXPECT_GT(xy[1].first - xy[0].first, 20);   // more intensity: further right
  EXPECT_GT(xy[0].second - xy[1].second, 20);  // more TFLOP/s: higher (smaller y)
  EXPECT_NEAR(xy[2].first - xy[1].first, xy[1].first - xy[0].first, 0.2);
  EXPECT_NEAR(xy[1].second - xy[2].second, xy[0].second - xy[1].second, 0.2);
}

TEST(RooflineSvg, BelowFloorIsDrawnAsAWarning) {
  std::string svg = render_svg(testing::round_ceilings(), {{"k", 10, 100, 1.4, true}});
  EXPECT_NE(svg.find("BELOW FLOOR: check the measurement"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#ffcc00\""), std::string::npos);
}

TEST(RooflineSvg, CeilingsAloneOrNoneStillMakeADocument) {
  EXPECT_EQ(xml_problem(render_svg(testing::round_ceilings(), {})), "");
  Ceilings empty;
  empty.gpu_name = "unknown";
  std::string svg = render_svg(empty, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "class=\"roof-compute\""), 0u);
}

TEST(RooflineSvg, OnlyKernelsWithAModelAndWorkArePlaced) {
  RooflineResult heuristic;
  EXPECT_FALSE(svg_point(heuristic));
  RooflineResult r;
  r.kernel = "saxpy";
  r.floor = Floor{};
  r.floor->flops = 2;
  r.floor->arithmetic_intensity = 1.0 / 6;
  r.efficiency = Efficiency{0.58, 3487, 0.87, false, true};
  auto p = svg_point(r);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->label, "saxpy");
  EXPECT_DOUBLE_EQ(p->achieved_tflops, 0.58);
  EXPECT_DOUBLE_EQ(*p->efficiency, 0.87);
  r.floor->arithmetic_intensity.reset();  // bytes_min 0
  EXPECT_FALSE(svg_point(r));
}

}  // namespace kopt::roofline
