// examples/cutlass_gemm's `@kopt` annotations through the real parser and registry: the space kopt
// optimize searches for a CUTLASS kernel.
#include <gtest/gtest.h>

#include "search/annotations.h"
#include "search/registry.h"
#include "search/space.h"
#include "testing/test_support.h"
#include "util/fs.h"

namespace kopt::search {
namespace {

TEST(CutlassExampleSpace, AnnotationsGiveTheDocumentedSpace) {
  auto path = std::filesystem::path(testing_support::source_dir()) / "examples/cutlass_gemm/kernel.cu";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto text = util::read_file(path);
  ASSERT_TRUE(text);
  auto ann = parse_annotations(*text, "kernel.cu");
  ASSERT_TRUE(ann) << ann.error().message;
  auto reg = registry();
  ASSERT_TRUE(reg) << reg.error().message;
  SpaceOptions opts;
  opts.backend = Backend::kCutlass;
  opts.offer_flag_methods = false;
  auto space = build_space(*ann, *reg, opts);
  ASSERT_TRUE(space) << space.error().message;
  ASSERT_EQ(space->dims.size(), 7u);
  EXPECT_EQ(space->size(), 1296);
  auto def = space->default_config();
  EXPECT_TRUE(space->valid(def));
  EXPECT_EQ(space->key(def), "TILE_M=128,TILE_N=128,TILE_K=64,STAGES=0,CLUSTER_M=1,CLUSTER_N=1,PINGPONG=0");
  // Every point of the product, counted through the constraints: the 624 that CUTLASS's builders accept
  // (docs/CUTLASS.md: each one's types were instantiated with nvcc 13.0 and CUTLASS 4.2.0).
  int valid = 0;
  Config c(space->dims.size(), 0);
  for (;;) {
    valid += space->valid(c) ? 1 : 0;
    size_t d = 0;
    while (d < c.size() && ++c[d] == static_cast<int>(space->dims[d].values.size())) c[d++] = 0;
    if (d == c.size()) break;
  }
  EXPECT_EQ(valid, 624);
}

}  // namespace
}  // namespace kopt::search
