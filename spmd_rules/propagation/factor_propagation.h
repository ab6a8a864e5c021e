// The two per-op strategies over a projection (Shardy's basic and aggressive factor propagation).
// Both grow factor slots in place; neither removes an axis.
//  - basic: per factor, the longest axis list every tensor agrees with (a closed tensor caps
//    it), cut at the first axis that another factor of the op already uses anywhere (no
//    conflict is resolved);
//  - aggressive: the same lists, but each tensor takes as much as it can, factors in order
//    pass-through first, then by the size of the tensor the axes come from (bigger first), so a
//    cross-factor conflict goes to the factor whose source tensor is larger.
// Operands grow sideways (from another operand) only up to what a closed result allows.
#pragma once
#include "projection.h"

namespace spmd::prop {

void propagate_basic(const Graph& g, const Op& op, Projection& p);
void propagate_aggressive(const Graph& g, const Op& op, Projection& p);

// The longest list both `a` and `b` are prefixes of... cut at their first disagreement (a
// sub-axis and its whole axis agree on the sub-axis).
AxisList common_prefix(const AxisList& a, const AxisList& b);

}  // namespace spmd::prop
