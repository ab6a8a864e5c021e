// Hand-written reductions (rules_yaml/reduction.yaml): a bool attribute turns the reduction
// over `axis` into one over every dim (reduce_all, asvector, flatten), which the spec language
// cannot say yet. Each is one EinsumCall on "... -> ...".
#pragma once
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo LogsumexpSpmd(const DistMetaTensor& x, const std::vector<int64_t>& axis, bool keepdims, bool reduce_all);
SpmdInfo LogsumexpSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, const std::vector<int64_t>& axis,
                              bool keepdims, bool reduce_all);
SpmdInfo PNormSpmd(const DistMetaTensor& x, float porder, int axis, float epsilon, bool keepdims, bool asvector);
SpmdInfo PNormSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, float porder, int axis, float epsilon,
                          bool keepdims, bool asvector);
SpmdInfo ArgMaxSpmd(const DistMetaTensor& x, int axis, bool keepdims, bool flatten);
SpmdInfo ArgMaxSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, int axis, bool keepdims, bool flatten);
SpmdInfo ArgMinSpmd(const DistMetaTensor& x, int axis, bool keepdims, bool flatten);
SpmdInfo ArgMinSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, int axis, bool keepdims, bool flatten);
// sum's grad: out_grad broadcast back to x's shape (x_grad's reduced dims whole).
SpmdInfo ReductionGradSpmd(const DistMetaTensor& x, const DistMetaTensor& out_grad, const std::vector<int64_t>& axis,
                           bool keep_dim, bool reduce_all);

}  // namespace spmd
