// Flattened dims: one tensor dim that is the flattening of several factors ((N) in the notation,
// or a tensor given with one dim where its pattern has several: EinsumOptions::flat_inputs /
// flat_outputs, Paddle's 1-D layer_norm mean [prod(leading dims)]).
//
// A block of a flattened dim is a block of its leading factor with the other factors whole, so
// only the leading factor may stay split: a split of a later one is undone after the merge.
#include "einsum_engine.h"

namespace spmd {

bool EinsumCall::given_flat(bool is_input, std::size_t k, std::size_t pattern_rank) const {
  const Bound& b = (is_input ? in_ : out_)[k];
  const uint32_t mask = is_input ? rule_.options.flat_inputs : rule_.options.flat_outputs;
  return b.t && ((mask >> b.pattern) & 1u) && b.t->rank() == 1 && pattern_rank > 1;
}

void EinsumCall::flatten_slots(Slots& s) {
  flat_slots_ = true;
  Slot flat;
  for (const Slot& slot : s)
    for (int i = 0; i < slot.n; ++i) flat.f[flat.n++] = slot.f[i];  // a size-1 (n == 0) dim adds nothing
  s.clear();
  s.push_back(flat);
}

void EinsumCall::whole_flat_tails() {
  if (!flat_slots_) return;  // most rules: nothing to do
  auto undo = [&](const SmallVec<Slots, kMaxTensors>& all) {
    for (const Slots& slots : all)
      for (const Slot& slot : slots) {
        bool tail = false;  // some later factor has more than one element
        for (int i = 1; i < slot.n; ++i) {
          factors_[slot.f[i]].mesh.clear();
          tail |= factors_[slot.f[i]].size != 1;
        }
        // Uneven blocks of the leading factor are not blocks of the flattened dim.
        if (tail) pop_until_divisible(factors_[slot.f[0]]);
      }
  };
  undo(in_slots_);
  undo(out_slots_);
}

}  // namespace spmd
