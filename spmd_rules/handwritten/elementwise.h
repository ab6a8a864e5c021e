// Hand-written elementwise rules (rules_yaml/elementwise.yaml), each built from EinsumCall:
// * swiglu / label_smooth: when the optional second input is absent the op works along x's
//   last dim (swiglu halves it, label_smooth divides by its length), which must then be whole;
// * elementwise_*_grad: x_grad and y_grad take x's and y's own ranks and are partial over the
//   out_grad dims their operand broadcasts, so each grad is one call with a per-call notation.
#pragma once
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo ElementwiseBinaryGradSpmd(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad,
                                   int axis);

}  // namespace spmd
