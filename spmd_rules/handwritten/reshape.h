// Hand-written reshape rules (rules_yaml/reshape.yaml):
// * reshape_grad(x, out_grad): x_grad is out_grad reshaped to x's shape. The target shape is a
//   tensor's, and, as Paddle's ReshapeGradInferSpmd, x's layout leads: out_grad is asked for the
//   layout reshaping x's gives (DimTrans forward), x_grad gets x's (as far as it survives).
#pragma once
#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo ReshapeGradSpmd(const DistMetaTensor& x, const DistMetaTensor& out_grad);

}  // namespace spmd
