// Hand-written matmul-family grad rules (rules_yaml/matmul.yaml), built from the factor engine.
#pragma once
#include "../dist_meta_tensor.h"
#include "../spmd_info.h"

namespace spmd {

SpmdInfo BmmGrad(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad);
SpmdInfo MatmulGrad(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad, bool trans_x,
                    bool trans_y);

}  // namespace spmd
