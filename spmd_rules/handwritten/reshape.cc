#include "handwritten/reshape.h"

#include "generated_support.h"

namespace spmd {

SpmdInfo ReshapeGradSpmd(const DistMetaTensor& x, const DistMetaTensor& out_grad) {
  const char* op = "reshape_grad";
  if (out_grad.attr.rank() != out_grad.rank())
    throw ValueError(std::string(op) + ": input 'out_grad': dims_mapping has " + std::to_string(out_grad.attr.rank()) +
                     " entries but the shape has rank " + std::to_string(out_grad.rank()));
  const std::string problem = out_grad.attr.problem();  // "" on the good path: nothing allocated
  if (!problem.empty())
    throw ValueError(std::string(op) + ": input 'out_grad'" + (problem.compare(0, 4, "has ") == 0 ? " " : ": ") + problem);
  if (x.attr.mesh() && out_grad.attr.mesh() && !(*x.attr.mesh() == *out_grad.attr.mesh()))
    throw ValueError(std::string(op) + ": input 'out_grad' is on a different process mesh than 'x'");
  for (std::size_t d = 0; d < out_grad.rank(); ++d)
    if (out_grad.shape[d] < 0)
      throw ValueError(std::string(op) + ": input 'out_grad': dim " + std::to_string(d) + " has unknown size");
  // x only gives the shape: its pending reduction (if any) does not matter.
  TensorDistAttr xa = x.attr;
  xa.clear_partial();
  const DistMetaTensor xs(x.shape, xa);
  int64_t nx = 1, ng = 1;
  for (int64_t d : x.shape) nx *= d;
  for (int64_t d : out_grad.shape) ng *= d;
  if (nx >= 0 && nx != ng)
    throw ValueError(std::string(op) + ": input 'out_grad' has " + std::to_string(ng) + " elements, input 'x' " +
                     std::to_string(nx));
  const Shape& out_shape = out_grad.shape;
  SpmdInfo f = dim_trans_forward(op, xs, out_shape, DimTransOptions{/*keep_partial=*/false, /*view_1d=*/false});
  TensorDistAttr x_dst = std::get<TensorDistAttr>(f.inputs[0]);
  TensorDistAttr og_dst = std::get<TensorDistAttr>(f.outputs[0]);
  TensorDistAttr grad = x_dst;
  // Reshaping is linear: a pending reduction of out_grad carries over to x_grad.
  for (int64_t m : out_grad.attr.partial_dims()) {
    bool split = false;
    for (const MeshDims& d : og_dst.dims()) split |= d.contains(static_cast<int8_t>(m));
    if (split) continue;
    og_dst.set_partial(static_cast<int>(m), out_grad.attr.partial_type(static_cast<int>(m)));
    grad.set_partial(static_cast<int>(m), out_grad.attr.partial_type(static_cast<int>(m)));
  }
  SpmdInfo info;
  info.inputs.emplace_back(std::move(x_dst));
  info.inputs.emplace_back(std::move(og_dst));
  info.outputs.emplace_back(std::move(grad));
  return info;
}

}  // namespace spmd
