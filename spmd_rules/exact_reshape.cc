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

}  // namespace spmd
