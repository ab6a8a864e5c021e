#include "conv.h"

#include "../einsum_engine.h"

namespace spmd {

static const EinsumRule& conv2d_rule() {
  EinsumOptions o;
  o.merge = Merge::kLegacy;
  o.ones = Ones::kKeep;
  // Contracting over the in-channels c leaves the output partial; the spatial dims need halos.
  static const EinsumRule rule("conv2d", "n c h w, o c i j -> n o p q", {"input", "filter"}, {"out"}, o);
  return rule;
}

static void whole_spatial(EinsumCall& call) {
  for (char c : {'h', 'w', 'i', 'j'}) call.replicate_letter(c);
}

SpmdInfo Conv2dRule(const DistMetaTensor& input, const DistMetaTensor& filter) {
  EinsumCall call(conv2d_rule());
  call.input(0, input).input(1, filter);
  whole_spatial(call);
  return call.forward();
}

SpmdInfo Conv2dRuleReverse(const DistMetaTensor& input, const DistMetaTensor& filter, const DistMetaTensor& out) {
  // The output's spatial dims p, q are born in the op: a split of them proposes nothing
  // (the engine would otherwise echo it back, which no input layout produces).
  DistMetaTensor o = out;
  for (std::size_t d = 2; d < o.attr.rank(); ++d) o.attr.set_dim(d, MeshDims());
  EinsumCall call(conv2d_rule());
  call.input(0, input).input(1, filter).output(0, o);
  whole_spatial(call);
  return call.reverse();
}

}  // namespace spmd
