#include "handwritten/reduction.h"

#include <cmath>

#include "generated_support.h"

namespace spmd {

namespace {

const std::vector<int64_t> kEveryDim;  // an empty axis list reduces every dim

EinsumOptions legacy_keep() {
  return einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kKeep, /*divisible=*/true,
                        /*keep_input_partial=*/false, /*sources=*/~0u);
}

// p_norm of the shards combines into the norm for these orders only: sum |x| (p=1), the count
// of non-zeros (p=0), max |x| (p=inf), min |x| (p=-inf). Others need the reduced dims whole.
bool pnorm_partial(float p, ReduceType* t) {
  if (p == 1.0f || p == 0.0f) *t = ReduceType::kSum;
  else if (std::isinf(p)) *t = p > 0 ? ReduceType::kMax : ReduceType::kMin;
  else return false;
  return true;
}

SpmdInfo argminmax(const EinsumRule& rule, const DistMetaTensor& x, const DistMetaTensor* out, int axis, bool keepdims,
                   bool flatten) {
  EinsumCall call(rule);
  call.input(0, x);
  if (out) call.output(0, *out);
  if (flatten) call.reduce(0, kEveryDim, keepdims, ReduceType::kSum, "axis", /*whole=*/true);
  else call.reduce(0, static_cast<int64_t>(axis), keepdims, ReduceType::kSum, "axis", /*whole=*/true);
  return out ? call.reverse() : call.forward();
}

const EinsumRule& argmax_rule() {
  static const EinsumRule rule("argmax", "... -> ...", {"x"}, {"out"}, legacy_keep());
  return rule;
}
const EinsumRule& argmin_rule() {
  static const EinsumRule rule("argmin", "... -> ...", {"x"}, {"out"}, legacy_keep());
  return rule;
}

SpmdInfo logsumexp(const DistMetaTensor& x, const DistMetaTensor* out, const std::vector<int64_t>& axis, bool keepdims,
                   bool reduce_all) {
  // log(sum(exp)) of shards is no reduce type of the shards' results: the reduced dims are whole.
  static const EinsumRule rule("logsumexp", "... -> ...", {"x"}, {"out"}, legacy_keep());
  EinsumCall call(rule);
  call.input(0, x);
  if (out) call.output(0, *out);
  call.reduce(0, reduce_all ? kEveryDim : axis, keepdims, ReduceType::kSum, "axis", /*whole=*/true);
  return out ? call.reverse() : call.forward();
}

SpmdInfo pnorm(const DistMetaTensor& x, const DistMetaTensor* out, float porder, int axis, bool keepdims, bool asvector) {
  static const EinsumRule rule("p_norm", "... -> ...", {"x"}, {"out"}, legacy_keep());
  EinsumCall call(rule);
  call.input(0, x);
  if (out) call.output(0, *out);
  ReduceType type = ReduceType::kSum;
  const bool whole = !pnorm_partial(porder, &type);
  if (asvector) call.reduce(0, kEveryDim, keepdims, type, "axis", whole);
  else call.reduce(0, static_cast<int64_t>(axis), keepdims, type, "axis", whole);
  return out ? call.reverse() : call.forward();
}

}  // namespace

SpmdInfo LogsumexpSpmd(const DistMetaTensor& x, const std::vector<int64_t>& axis, bool keepdims, bool reduce_all) {
  return logsumexp(x, nullptr, axis, keepdims, reduce_all);
}
SpmdInfo LogsumexpSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, const std::vector<int64_t>& axis,
                              bool keepdims, bool reduce_all) {
  return logsumexp(x, &out, axis, keepdims, reduce_all);
}
SpmdInfo PNormSpmd(const DistMetaTensor& x, float porder, int axis, float, bool keepdims, bool asvector) {
  return pnorm(x, nullptr, porder, axis, keepdims, asvector);
}
SpmdInfo PNormSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, float porder, int axis, float,
                          bool keepdims, bool asvector) {
  return pnorm(x, &out, porder, axis, keepdims, asvector);
}
SpmdInfo ArgMaxSpmd(const DistMetaTensor& x, int axis, bool keepdims, bool flatten) {
  return argminmax(argmax_rule(), x, nullptr, axis, keepdims, flatten);
}
SpmdInfo ArgMaxSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, int axis, bool keepdims, bool flatten) {
  return argminmax(argmax_rule(), x, &out, axis, keepdims, flatten);
}
SpmdInfo ArgMinSpmd(const DistMetaTensor& x, int axis, bool keepdims, bool flatten) {
  return argminmax(argmin_rule(), x, nullptr, axis, keepdims, flatten);
}
SpmdInfo ArgMinSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out, int axis, bool keepdims, bool flatten) {
  return argminmax(argmin_rule(), x, &out, axis, keepdims, flatten);
}

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
