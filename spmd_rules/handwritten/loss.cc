// cross_entropy_with_softmax: the factor engine ("..., ... -> ..., ..." with the class axis
// whole, legacy merge). Hand-written for one detail the spec language cannot say yet: going in
// reverse Paddle merges loss before softmax, so loss wins a conflict; binding the outputs in
// that order gives the engine the same proposal order.
#include "loss.h"

#include "../einsum_engine.h"

namespace spmd {

namespace {

const EinsumRule& ce_rule() {
  EinsumOptions o;
  o.merge = Merge::kLegacy;
  static const EinsumRule rule("cross_entropy_with_softmax", "..., ... -> ..., ...", {"x", "label"},
                               {"softmax", "loss"}, o);
  return rule;
}

}  // namespace

SpmdInfo CrossEntropyWithSoftmax(const DistMetaTensor& x, const DistMetaTensor& label, bool, bool, bool, int,
                                 int axis) {
  EinsumCall call(ce_rule());
  call.input(0, x).input(1, label).replicate(0, static_cast<int64_t>(axis), "axis");
  return call.forward();
}

SpmdInfo CrossEntropyWithSoftmaxReverse(const DistMetaTensor& x, const DistMetaTensor& label,
                                        const DistMetaTensor& softmax, const DistMetaTensor& loss, bool, bool, bool,
                                        int, int axis) {
  EinsumCall call(ce_rule());
  call.input(0, x).input(1, label).output(1, loss).output(0, softmax);
  call.replicate(0, static_cast<int64_t>(axis), "axis");
  return call.reverse();
}

}  // namespace spmd
