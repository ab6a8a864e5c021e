// Shared by the hand-written grad rules of the contraction/norm family: the one step the
// factor engine cannot do yet. A grad rule has several outputs that contract different
// factors (matmul_grad: x_grad sums over n, y_grad over m), but the engine only makes an output
// partial over factors that are in NO output. Grads are sums of products, so an output is
// partial (SUM) over every mesh dim that splits some inferred input but not that output.
#pragma once
#include <variant>

#include "../einsum_engine.h"
#include "../spmd_info.h"

namespace spmd {

inline void mark_grad_partials(SpmdInfo& info) {
  uint32_t used = 0;
  auto add = [&](const TensorDistAttr& a) {
    for (const MeshDims& m : a.dims())
      for (int8_t d : m) used |= 1u << d;
  };
  for (const ArgDistAttr& in : info.inputs) {
    if (const auto* a = std::get_if<TensorDistAttr>(&in)) add(*a);
    else
      for (const TensorDistAttr& e : std::get<std::vector<TensorDistAttr>>(in)) add(e);
  }
  for (ArgDistAttr& out : info.outputs) {
    auto* a = std::get_if<TensorDistAttr>(&out);
    if (!a || !a->mesh()) continue;
    uint32_t mine = 0;
    for (const MeshDims& m : a->dims())
      for (int8_t d : m) mine |= 1u << d;
    for (int d = 0; d < static_cast<int>(kMaxMeshDims); ++d)
      if ((used >> d & 1u) && !(mine >> d & 1u) && !a->is_partial_on(d)) a->set_partial(d, ReduceType::kSum);
  }
}

}  // namespace spmd
