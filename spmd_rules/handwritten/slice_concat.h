// Hand-written slice/concat rules (rules_yaml/slice_concat.yaml), built from EinsumCall:
// * strided_slice: the strided dims are whole, except that a split of the last dim may stay when
//   it alone is strided over all of it and every shard holds a whole number of strides (then
//   each rank's strided shard is its shard of the result). Which dims are whole depends on the
//   attribute values, the dim's size and its shard count.
#pragma once
#include <cstdint>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo StridedSliceSpmd(const DistMetaTensor& input, const std::vector<int64_t>& axes,
                          const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                          const std::vector<int64_t>& strides);

}  // namespace spmd
