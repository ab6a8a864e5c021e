// Convolutions: the factor engine with the output's spatial dims (born in the op) kept whole in
// reverse too.
#pragma once
#include "../dist_meta_tensor.h"
#include "../spmd_info.h"

namespace spmd {

SpmdInfo Conv2dRule(const DistMetaTensor& input, const DistMetaTensor& filter);
SpmdInfo Conv2dRuleReverse(const DistMetaTensor& input, const DistMetaTensor& filter, const DistMetaTensor& out);

}  // namespace spmd
