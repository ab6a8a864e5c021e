// Hand-written reduction rules (see rules_yaml/reduction.yaml for why each is not YAML).
#pragma once
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo ReductionGradSpmd(const DistMetaTensor& x, const DistMetaTensor& out_grad, const std::vector<int64_t>& axis,
                           bool keep_dim, bool reduce_all);

}  // namespace spmd
