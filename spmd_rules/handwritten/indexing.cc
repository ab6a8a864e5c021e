// index_put(x, indices, value): the K 1-D indices (factor m) address x's leading K dims (group I),
// which must be whole, as must m (every rank writes every selected element). The selected block
// is [M, rest of x], and the 1-D value broadcasts against it from the right:
// * K < rank(x) and value has x's last size: value is x's last dim (z), split as x's is;
// * value has size 1, or K = rank(x): value (v) is whole and pairs with no dim of x.
// As Paddle 3.3.1, only x proposes splits (forward and grad); the rest follow it. The grad's
// value_grad sums out_grad's selected block down to value's shape, so it is partial over every
// split dim it lacks (EinsumOptions::per_output_partial).
#include "handwritten/indexing.h"

#include <string>

#include "generated_support.h"

namespace spmd {

namespace {

enum class ValueDim { kLast, kNone, kAll };  // x "I R z" + value "z" | x "I R z" + value "v" | x "I" + value "v"

EinsumOptions index_put_options(bool grad) {
  EinsumOptions o = einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kClear, /*divisible=*/true,
                                   /*keep_input_partial=*/false, /*sources=*/1u);
  o.per_output_partial = grad;
  return o;
}

ValueDim value_dim(const char* op, const DistMetaTensor& x, const std::vector<const DistMetaTensor*>& indices,
                   const DistMetaTensor& value) {
  if (indices.empty()) throw ValueError(std::string(op) + ": input 'indices' is an empty list");
  if (indices.size() > x.rank())
    throw ValueError(std::string(op) + ": input 'indices' has " + std::to_string(indices.size()) +
                     " tensors, but input 'x' has rank " + std::to_string(x.rank()));
  if (value.rank() != 1)
    throw ValueError(std::string(op) + ": input 'value' has rank " + std::to_string(value.rank()) +
                     ", but must have rank 1");
  if (indices.size() == x.rank()) return ValueDim::kAll;
  return value.shape[0] == 1 ? ValueDim::kNone : ValueDim::kLast;
}

const EinsumRule& forward_rule(ValueDim d) {
  static const EinsumRule last("index_put", "I R z, m, z -> I R z", {"x", "indices[]", "value"}, {"out"},
                               index_put_options(false));
  static const EinsumRule none("index_put", "I R z, m, v -> I R z", {"x", "indices[]", "value"}, {"out"},
                               index_put_options(false));
  static const EinsumRule all("index_put", "I, m, v -> I", {"x", "indices[]", "value"}, {"out"},
                              index_put_options(false));
  return d == ValueDim::kLast ? last : d == ValueDim::kNone ? none : all;
}

const EinsumRule& grad_rule(ValueDim d) {
  static const EinsumRule last("index_put_grad", "I R z, m, z, I R z -> I R z, z",
                               {"x", "indices[]", "value", "out_grad"}, {"x_grad", "value_grad"},
                               index_put_options(true));
  static const EinsumRule none("index_put_grad", "I R z, m, v, I R z -> I R z, v",
                               {"x", "indices[]", "value", "out_grad"}, {"x_grad", "value_grad"},
                               index_put_options(true));
  static const EinsumRule all("index_put_grad", "I, m, v, I -> I, v", {"x", "indices[]", "value", "out_grad"},
                              {"x_grad", "value_grad"}, index_put_options(true));
  return d == ValueDim::kLast ? last : d == ValueDim::kNone ? none : all;
}

void whole_indices(EinsumCall& call, std::size_t k) {
  call.group_length('I', static_cast<int64_t>(k));
  call.replicate_letter('I');
  call.replicate_letter('m');
  call.replicate_letter('v');
}

}  // namespace

SpmdInfo IndexPutSpmd(const DistMetaTensor& x, const std::vector<const DistMetaTensor*>& indices,
                      const DistMetaTensor& value, bool) {
  EinsumCall call(forward_rule(value_dim("index_put", x, indices, value)));
  call.input(0, x).input(1, indices).input(2, value);
  whole_indices(call, indices.size());
  return call.forward();
}

SpmdInfo IndexPutGradSpmd(const DistMetaTensor& x, const std::vector<const DistMetaTensor*>& indices,
                          const DistMetaTensor& value, const DistMetaTensor& out_grad, bool) {
  EinsumCall call(grad_rule(value_dim("index_put_grad", x, indices, value)));
  call.input(0, x).input(1, indices).input(2, value).input(3, out_grad);
  whole_indices(call, indices.size());
  return call.forward();
}

}  // namespace spmd
