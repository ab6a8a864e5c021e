// Hand-written scan and data-dependent rules (rules_yaml/scan.yaml):
// * cumsum: with flatten the output is x flattened to 1-D (whole), otherwise the scan axis is
//   whole; the spec language has no attribute-chosen output shape;
// * unique, nonzero: data-dependent output shapes, so every tensor is whole (as in Paddle).
#pragma once
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo UniqueSpmd(const DistMetaTensor& x, bool return_index, bool return_inverse, bool return_counts,
                    const std::vector<int64_t>& axis, const std::string& dtype);
SpmdInfo NonzeroSpmd(const DistMetaTensor& x);
SpmdInfo NonzeroSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out);

}  // namespace spmd
