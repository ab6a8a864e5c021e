// flash_attention: the factor engine with one twist the spec language cannot say yet: going in
// reverse, Paddle infers from softmax and softmax_lse only (out proposes nothing), just as
// going forward v proposes nothing (`sources`, which names inputs only).
#include "attention.h"

#include "../einsum_engine.h"

namespace spmd {

namespace {

const EinsumRule& flash_rule() {
  EinsumOptions o;
  o.merge = Merge::kLegacy;
  o.sources = (1u << 0) | (1u << 1) | (1u << 4);  // q, k, attn_mask: v follows them
  static const EinsumRule rule(
      "flash_attention", "b s ... d, b t ... d, b t ... d, z, b ... s t -> b s ... d, b ... s t, b ... s, z",
      {"q", "k", "v", "fixed_seed_offset", "attn_mask"}, {"out", "softmax", "softmax_lse", "seed_offset"}, o);
  return rule;
}

void bind_inputs(EinsumCall& call, const DistMetaTensor& q, const DistMetaTensor& k, const DistMetaTensor& v,
                 const DistMetaTensor& fixed_seed_offset, const DistMetaTensor& attn_mask) {
  call.input(0, q).input(1, k).input(2, v).input(3, fixed_seed_offset).input(4, attn_mask);
  // The query and key sequences (softmax rows and columns) and the head dim stay whole.
  for (char c : {'s', 't', 'd', 'z'}) call.replicate_letter(c);
}

// The tensor with its layout forgotten: it proposes nothing, and gets the inferred layout.
DistMetaTensor unproposing(const DistMetaTensor& t) {
  if (t.absent()) return t;
  return DistMetaTensor(t.shape, TensorDistAttr(t.attr.mesh(), t.rank()));
}

}  // namespace

SpmdInfo FlashAttention(const DistMetaTensor& q, const DistMetaTensor& k, const DistMetaTensor& v,
                        const DistMetaTensor& fixed_seed_offset, const DistMetaTensor& attn_mask, float, bool, bool,
                        bool) {
  EinsumCall call(flash_rule());
  bind_inputs(call, q, k, v, fixed_seed_offset, attn_mask);
  return call.forward();
}

SpmdInfo FlashAttentionReverse(const DistMetaTensor& q, const DistMetaTensor& k, const DistMetaTensor& v,
                               const DistMetaTensor& fixed_seed_offset, const DistMetaTensor& attn_mask,
                               const DistMetaTensor& out, const DistMetaTensor& softmax,
                               const DistMetaTensor& softmax_lse, const DistMetaTensor& seed_offset, float, bool, bool,
                               bool) {
  EinsumCall call(flash_rule());
  bind_inputs(call, q, k, v, fixed_seed_offset, attn_mask);
  const DistMetaTensor out_free = unproposing(out), seed_free = unproposing(seed_offset);
  call.output(0, out_free).output(1, softmax).output(2, softmax_lse).output(3, seed_free);
  return call.reverse();
}

}  // namespace spmd
