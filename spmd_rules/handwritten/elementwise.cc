#include "handwritten/elementwise.h"

#include "generated_support.h"

namespace spmd {

namespace {

// One grad of a broadcast binary op: operand `which` (0 = x, 1 = y) gets the grad.
std::string operand_pattern(const DistMetaTensor& t, const DistMetaTensor& out_grad, const char* name) {
  const int64_t r = static_cast<int64_t>(t.rank()), R = static_cast<int64_t>(out_grad.rank());
  if (r > R)
    throw ValueError(std::string("elementwise_binary_grad: input '") + name + "' has rank " + std::to_string(r) +
                     ", more than out_grad's " + std::to_string(R));
  std::string p;
  for (int64_t j = 0; j < r; ++j) {
    const int64_t d = R - r + j;
    p += (t.shape[j] == 1 && out_grad.shape[d] != 1) ? '1' : static_cast<char>('a' + d);
  }
  return p;
}

}  // namespace

SpmdInfo ElementwiseBinaryGradSpmd(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out_grad,
                                   int) {
  const int64_t R = static_cast<int64_t>(out_grad.rank());
  if (R > 26) throw ValueError("elementwise_binary_grad: input 'out_grad' has rank " + std::to_string(R) + ", at most 26");
  std::string o;
  for (int64_t d = 0; d < R; ++d) o += static_cast<char>('a' + d);
  const std::string xp = operand_pattern(x, out_grad, "x"), yp = operand_pattern(y, out_grad, "y");
  // The grads follow out_grad; letters of out_grad that an operand lacks are summed over, so a
  // split one leaves that operand's grad partial SUM.
  const EinsumOptions opts = einsum_options(ReduceType::kSum, Merge::kCoShard, Ones::kClear, /*divisible=*/false,
                                            /*keep_input_partial=*/false, /*sources=*/1u << 2);
  const std::string ins = xp + ", " + yp + ", " + o + " -> ";
  SpmdInfo info;
  for (int which = 0; which < 2; ++which) {
    const EinsumRule rule("elementwise_binary_grad", ins + (which ? yp : xp), {"x", "y", "out_grad"},
                          {which ? "y_grad" : "x_grad"}, opts);
    EinsumCall call(rule);
    call.input(0, x);
    call.input(1, y);
    call.input(2, out_grad);
    SpmdInfo one = call.forward();
    if (which == 0) info = std::move(one);
    else info.outputs.push_back(std::move(one.outputs[0]));
  }
  return info;
}

}  // namespace spmd
