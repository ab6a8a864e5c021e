#include "handwritten/reduction.h"

#include "generated_support.h"

namespace spmd {

SpmdInfo ReductionGradSpmd(const DistMetaTensor& x, const DistMetaTensor& out_grad, const std::vector<int64_t>& axis,
                           bool keep_dim, bool reduce_all) {
  // Per call notation: x "abc", out_grad x's letters without the reduced ones ('1' with keep_dim),
  // x_grad like x. x_grad's reduced dims may follow x's splits: each rank broadcasts its shard.
  const int64_t r = static_cast<int64_t>(x.rank());
  if (r > 26) throw ValueError("reduction_grad: input 'x' has rank " + std::to_string(r) + ", at most 26 is supported");
  uint32_t reduced = 0;
  if (reduce_all || axis.empty()) reduced = r ? (1u << r) - 1 : 0;
  for (int64_t a : axis) {
    const int64_t lim = std::max<int64_t>(r, 1);
    if (a < -lim || a >= lim)
      throw ValueError("reduction_grad: attribute 'axis' = " + std::to_string(a) + " is out of range for input 'x' of rank " +
                       std::to_string(r));
    if (r) reduced |= 1u << (a < 0 ? a + r : a);
  }
  std::string xs, gs;
  for (int64_t d = 0; d < r; ++d) {
    const char c = static_cast<char>('a' + d);
    xs += c;
    if (!(reduced & (1u << d))) gs += c;
    else if (keep_dim) gs += '1';
  }
  const EinsumRule rule("reduction_grad", xs + ", " + gs + " -> " + xs, {"x", "out_grad"}, {"x_grad"},
                        einsum_options(ReduceType::kSum, Merge::kCoShard, Ones::kClear, /*divisible=*/false,
                                       /*keep_input_partial=*/false, /*sources=*/~0u));
  EinsumCall call(rule);
  call.input(0, x);
  call.input(1, out_grad);
  return call.forward();
}

}  // namespace spmd
