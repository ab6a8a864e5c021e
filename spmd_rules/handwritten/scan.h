// Hand-written scan-family rule (rules_yaml/scan.yaml): unique's outputs are data-dependent and
// their ranks depend on three flags and the axis list (rank-0 placeholders for outputs not asked
// for, as Paddle returns them); every tensor is whole.
#pragma once
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo UniqueSpmd(const DistMetaTensor& x, bool return_index, bool return_inverse, bool return_counts,
                    const std::vector<int64_t>& axis, const std::string& dtype);

}  // namespace spmd
