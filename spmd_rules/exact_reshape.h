// StableHLO's / JAX's reshape: the target shape is literal (a 0 is a dim of size 0, there is no
// -1), unlike Paddle's, whose 0 copies the input dim and -1 takes the rest.
#pragma once
#include <string>
#include <vector>

#include "dim_trans.h"
#include "dist_meta_tensor.h"

namespace spmd {

Shape exact_reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape);
DimTransList exact_reshape_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape);

// jax.reshape: exact_reshape with `dimensions` (a transpose first) required empty or in order.
Shape jax_reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& new_sizes,
                         const std::vector<int64_t>& dimensions);
DimTransList jax_reshape_reverse_trans(const std::string& op, const DistMetaTensor& x,
                                       const std::vector<int64_t>& new_sizes, const std::vector<int64_t>& dimensions);

}  // namespace spmd
