#pragma once
// Held-out shapes (issue 18): shapes not used in the search, on which the champion and the baseline are checked
// and timed after it, as the generalisation check. `--holdout-shapes FILE` (matrix.h's format) or, by default,
// awkward shapes derived from the user's dims by awkward_shapes(). Pure.
//
// Derived from the scaled axes (matrix.h scaled_axes: the up-to-three largest dims >= 64), each at about half
// the user's value h = v / 2 (quick to run, and never the search's own shapes); other dims keep the user's value:
//  * tile_plus_one:  h rounded down to a multiple of 128 (of 32 when h < 128), plus 1: one element past a tile;
//  * tile_minus_one: the same multiple minus 1: one element short of a tile;
//  * primes:         the largest primes <= h, distinct across the axes (so M != N != K catches swapped extents);
//  * unit_<axis>:    that axis 1, the others at the matrix's 0.5 scale (multiples of their alignment).
// Shapes equal to one another or to a search case are dropped. No scalable axis: no derived shapes (a note says
// so; give --holdout-shapes).
#include <string>
#include <vector>

#include "core/dims.h"
#include "workload/matrix.h"

namespace kopt::workload {

struct HoldoutShapes {
  std::vector<Case> cases;  // weight 1 each, origin kHoldoutDerived
  std::string note;         // why there are none, when there are none
};

HoldoutShapes awkward_shapes(const Dims& user, const std::vector<Case>& search_cases = {});

bool is_prime(int64_t v);
int64_t largest_prime_at_most(int64_t v);  // 0 when v < 2

}  // namespace kopt::workload
