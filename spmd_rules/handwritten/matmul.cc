// Grads of matmul and bmm, as Paddle 3.3.1 infers them: the forward rule settles x and y, and
// out_grad takes the layout of the forward output (so the three agree); each grad keeps its
// operand's layout and is partial over the factors it contracts (grad_support.h). Paddle
// rejects the call when the forward output is partial (k split); spmdkit then takes out_grad
// whole on those mesh dims, which is right.
#include "matmul.h"

#include <string>

#include "../errors.h"
#include "generated_rules.h"
#include "grad_support.h"

namespace spmd {

namespace {

SpmdInfo grads_from_forward(SpmdInfo fwd, const DistMetaTensor& out_grad) {
  TensorDistAttr x = std::get<TensorDistAttr>(fwd.inputs[0]);
  TensorDistAttr y = std::get<TensorDistAttr>(fwd.inputs[1]);
  TensorDistAttr g = std::get<TensorDistAttr>(fwd.outputs[0]);
  g.clear_partial();
  if (g.rank() != out_grad.rank())
    throw ValueError("matmul_grad: input 'out_grad' has rank " + std::to_string(out_grad.rank()) +
                     ", but the forward output has rank " + std::to_string(g.rank()));
  SpmdInfo info;
  info.inputs = {x, y, g};
  info.outputs = {x, y};
  mark_grad_partials(info);
  return info;
}

}  // namespace

SpmdInfo BmmGrad(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad) {
  for (const auto* t : {&x, &y, &out_grad})
    if (t->rank() != 3)
      throw ValueError("bmm_grad: input '" + std::string(t == &x ? "x" : t == &y ? "y" : "out_grad") +
                       "' has rank " + std::to_string(t->rank()) + ", bmm takes 3-D tensors");
  return grads_from_forward(BmmInferSpmd(x, y), out_grad);
}

SpmdInfo MatmulGrad(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad, bool trans_x,
                    bool trans_y) {
  return grads_from_forward(MatmulInferSpmd(x, y, trans_x, trans_y), out_grad);
}

}  // namespace spmd
