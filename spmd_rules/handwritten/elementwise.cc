#include "handwritten/elementwise.h"

#include "generated_support.h"

namespace spmd {

namespace {

EinsumOptions legacy_broadcast() {
  return einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kBroadcast, /*divisible=*/true,
                        /*keep_input_partial=*/false, /*sources=*/~0u);
}

// Paddle passes an absent optional tensor as an empty (rank-0) spec, spmdkit as None.
bool missing(const DistMetaTensor& t) { return t.absent() || t.rank() == 0; }

SpmdInfo swiglu(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor* out) {
  static const EinsumRule rule("swiglu", "..., ... -> ...", {"x", "y"}, {"out"}, legacy_broadcast());
  // Without y, out = silu(x[..., :n/2]) * x[..., n/2:]: both halves must be on the same rank,
  // and out's last dim (n/2) is another dim, born whole.
  static const EinsumRule half("swiglu", "... n, ... -> ... 1", {"x", "y"}, {"out"}, legacy_broadcast());
  const bool halves = missing(y) && x.rank() > 0;
  EinsumCall call(halves ? half : rule);
  call.input(0, x);
  call.input(1, y);
  if (out) call.output(0, *out);
  if (halves) call.replicate_letter('n');
  return out ? call.reverse() : call.forward();
}

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

SpmdInfo SwigluSpmd(const DistMetaTensor& x, const DistMetaTensor& y) { return swiglu(x, y, nullptr); }
SpmdInfo SwigluSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& y, const DistMetaTensor& out) {
  return swiglu(x, y, &out);
}

SpmdInfo LabelSmoothSpmd(const DistMetaTensor& label, const DistMetaTensor& prior_dist, float) {
  // out = (1 - eps) * label + eps * prior_dist, or + eps / num_classes without prior_dist: the
  // class dim (the last) is then whole, as the kernel counts it.
  static const EinsumRule rule("label_smooth", "..., ... -> ...", {"label", "prior_dist"}, {"out"}, legacy_broadcast());
  EinsumCall call(rule);
  call.input(0, label);
  call.input(1, prior_dist);
  if (missing(prior_dist) && label.rank() > 0) call.replicate(0, int64_t{-1}, "label's class dim (no prior_dist)");
  return call.forward();
}

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
