// The output shape of each reshape-like op, from its attributes. The DimTrans itself always
// comes from reshape_dim_trans(input shape, output shape): flatten, squeeze and unsqueeze are
// reshapes whose target the attributes describe.
#pragma once
#include <string>
#include <vector>

#include "dim_trans.h"
#include "dist_meta_tensor.h"

namespace spmd {

Shape reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape);
Shape flatten_target(const std::string& op, const DistMetaTensor& x, int64_t start_axis, int64_t stop_axis);
Shape squeeze_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis);
Shape unsqueeze_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis);

// How each input dim comes from the output dims, for the reverse rules. Reshape-like ops use the
// reshape walk from the output shape back; flatten cuts its flattened dim into the input dims
// (size-1 ones included, as Paddle does).
DimTransList reshape_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape);
DimTransList flatten_reverse_trans(const std::string& op, const DistMetaTensor& x, int64_t start_axis, int64_t stop_axis);
DimTransList squeeze_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis);
DimTransList unsqueeze_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis);

}  // namespace spmd
