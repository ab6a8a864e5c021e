// Hand-written rules of the indexing family (rules_yaml/indexing.yaml):
// * index_put and its grad: value's single dim pairs with x's last dim when the indices leave
//   dims of x over, and with no dim of x when they cover all of them (or when value has size 1
//   and broadcasts); the notation has no pattern chosen by the ranks, so this picks one of three
//   notations and runs the factor engine on it.
#pragma once
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

SpmdInfo IndexPutSpmd(const DistMetaTensor& x, const std::vector<const DistMetaTensor*>& indices,
                      const DistMetaTensor& value, bool accumulate);
SpmdInfo IndexPutGradSpmd(const DistMetaTensor& x, const std::vector<const DistMetaTensor*>& indices,
                          const DistMetaTensor& value, const DistMetaTensor& out_grad, bool accumulate);

}  // namespace spmd
