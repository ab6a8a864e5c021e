#include "exact_reshape.h"

#include "errors.h"

namespace spmd {

Shape exact_reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape) {
  if (shape.size() > kMaxRank) throw ValueError(op + ": the target shape has more than " + std::to_string(kMaxRank) + " dims");
  int64_t in = 1, out = 1;
  for (int64_t n : x.shape) in *= n;
  Shape target;
  for (int64_t n : shape) {
    if (n < 0) throw ValueError(op + ": the target shape has a negative size " + std::to_string(n));
    out *= n;
    target.push_back(n);
  }
  if (in != out)
    throw ValueError(op + ": the target shape holds " + std::to_string(out) + " elements, but the input holds " +
                     std::to_string(in));
  return target;
}

DimTransList exact_reshape_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape) {
  return reshape_dim_trans(exact_reshape_target(op, x, shape), x.shape);
}

// jax.reshape's `dimensions` transposes the input first; the DimTrans engine does not, so only an
// empty or in-order list is taken (import_jax writes a transposing reshape as a transpose and a
// plain reshape): anything else would be read as a plain reshape, a wrong answer.
static void check_no_transpose(const std::string& op, const std::vector<int64_t>& dimensions) {
  for (std::size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] == static_cast<int64_t>(i)) continue;
    std::string text;
    for (int64_t d : dimensions) text += (text.empty() ? "" : ", ") + std::to_string(d);
    throw ValueError(op + ": attribute 'dimensions' = [" + text + "] transposes before reshaping, which this rule "
                     "does not take; give the transpose as its own op (jax.transpose) and 'dimensions' empty");
  }
}

Shape jax_reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& new_sizes,
                         const std::vector<int64_t>& dimensions) {
  check_no_transpose(op, dimensions);
  return exact_reshape_target(op, x, new_sizes);
}

DimTransList jax_reshape_reverse_trans(const std::string& op, const DistMetaTensor& x,
                                       const std::vector<int64_t>& new_sizes, const std::vector<int64_t>& dimensions) {
  check_no_transpose(op, dimensions);
  return exact_reshape_reverse_trans(op, x, new_sizes);
}

}  // namespace spmd
