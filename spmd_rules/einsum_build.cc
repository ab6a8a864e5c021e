// The factor engine, step 3: write every tensor's layout from the merged factors, and the
// outputs' partial state (contractions, kept partial inputs).
#include "einsum_engine.h"

#include <cstring>
#include <limits>

#include "errors.h"

namespace spmd {

TensorDistAttr EinsumCall::layout(const Slots& slots, const DistMetaTensor* t) const {
  TensorDistAttr a(t ? t->attr.mesh() : mesh_, slots.size());
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const Slot& slot = slots[d];
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    if (slot.one && slot.n == 1 && factors_[slot.f[0]].size > 1) continue;  // it broadcasts: whole
    a.set_dim(d, factors_[slot.f[0]].mesh);
  }
  return a;
}

// Partial states a sum of the inputs carries: SUM, or AVG (a mean of means is the mean).
static bool additive_partial(const TensorDistAttr& a) {
  for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
    if (a.is_partial_on(m) && a.partial_type(m) != ReduceType::kSum && a.partial_type(m) != ReduceType::kAvg)
      return false;
  return true;
}

// Forward: the inputs (a bit per bound tensor) that keep their pending reductions, which the
// outputs then carry (KeepPartial).
uint64_t EinsumCall::partial_keepers() const {
  const KeepPartial policy = rule_.options.keep_partial;
  uint64_t all = 0;
  for (std::size_t k = 0; k < in_.size(); ++k)
    if (in_[k].t) all |= uint64_t{1} << k;
  switch (policy) {
    case KeepPartial::kNone:
      return 0;
    case KeepPartial::kAll:
      return all;
    case KeepPartial::kJoint: {  // add_n: only if every input has the same SUM/AVG partial state
      const DistMetaTensor* first = nullptr;
      for (const Bound& b : in_) {
        if (!b.t) continue;
        const TensorDistAttr& a = b.t->attr;
        if (!a.is_partial() || !additive_partial(a)) return 0;
        if (!first) first = b.t;
        if (a.partial_mask() != first->attr.partial_mask()) return 0;
        for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
          if (a.is_partial_on(m) && a.partial_type(m) != first->attr.partial_type(m)) return 0;
      }
      return all;
    }
    case KeepPartial::kFirst: {
      // Multilinear ops: (sum_i x_i) * y = sum_i (x_i * y), so one operand may stay partial: as
      // Paddle 3.3.1's multiply, the partial input of highest rank (the first on a tie), if no
      // split of any tensor uses its mesh dims (else all of it reduces).
      int keeper = -1;
      for (std::size_t k = 0; k < in_.size(); ++k)
        if (in_[k].t && in_[k].t->attr.is_partial() && (keeper < 0 || in_[k].t->rank() > in_[keeper].t->rank()))
          keeper = static_cast<int>(k);
      if (keeper < 0 || !additive_partial(in_[keeper].t->attr)) return 0;
      uint32_t split = 0;
      for (const Factor& f : factors_)
        for (int8_t m : f.mesh) split |= 1u << m;
      return (in_[keeper].t->attr.partial_mask() & split) ? 0 : uint64_t{1} << keeper;
    }
  }
  return 0;
}

// Does output `out` lack factor `factor`: no dim of it that could carry the factor's split?
bool EinsumCall::lacks(std::size_t out, int factor) const {
  for (const Slot& slot : out_slots_[out]) {
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    if (slot.one && slot.n == 1 && factors_[slot.f[0]].size > 1) continue;  // a broadcast dim sums over it
    for (int i = 0; i < slot.n; ++i)
      if (slot.f[i] == factor) return false;
  }
  return true;
}

// The mesh dims output `out` is partial over (forward): those of the split factors it lacks,
// among the factors of the inputs it depends on (per_output_partial, depends), or of the factors
// in no output.
uint8_t EinsumCall::output_partial(std::size_t out, ReduceType* types) const {
  const auto& depends = rule_.options.depends;
  const uint32_t inputs = out_[out].pattern < depends.size() ? depends[out_[out].pattern] : ~0u;
  // An output `depends` does not list (~0u) follows the global rule: partial over the factors
  // in no output (a kernel that reduces internally, as c_softmax's loss).
  const bool per_output = rule_.options.per_output_partial || inputs != ~0u;
  uint8_t mask = 0;
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    const Factor& f = factors_[k];
    if (f.mesh.empty() || static_cast<int>(k) == one_factor_) continue;  // the anonymous factor splits nothing
    bool contracted = !per_output && !f.in_output;
    if (per_output && lacks(out, static_cast<int>(k))) {
      for (std::size_t i = 0; i < in_.size() && !contracted; ++i) {
        if (!in_[i].t || !(inputs >> in_[i].pattern & 1u)) continue;
        for (const Slot& slot : in_slots_[i])
          for (int j = 0; j < slot.n; ++j) contracted |= slot.f[j] == k;
      }
    }
    if (!contracted) continue;
    for (int8_t m : f.mesh) {
      mask |= static_cast<uint8_t>(1u << m);
      types[m] = f.has_reduce ? f.reduce : rule_.options.partial;
    }
  }
  return mask;
}

SpmdInfo EinsumCall::build(bool forward) {
  SpmdInfo info;
  info.inputs.reserve(in_args_.size());
  info.outputs.reserve(out_args_.size());
  // Inputs that keep a pending reduction hand it through to the outputs.
  uint8_t carried_mask = 0;
  ReduceType carried_type[kMaxMeshDims] = {};
  const bool align = rule_.options.merge == Merge::kAlign;
  const uint64_t keepers = forward ? partial_keepers() : 0;
  auto input_attr = [&](int k) {
    if (!in_[k].t) {
      if (!rule_.options.absent_replicated) return TensorDistAttr();
      // As Paddle's roi_align: an absent optional input comes back replicated, with the rank
      // its pattern gives when that is fixed.
      std::size_t rank = 0;
      for (const NotationItem& it : rule_.notation.inputs[in_[k].pattern]) {
        if (it.kind == NotationItem::kEllipsis || it.kind == NotationItem::kRest ||
            (it.kind == NotationItem::kGroup && group_len(it.name) < 0)) {
          rank = 0;
          break;
        }
        rank += it.kind == NotationItem::kGroup ? static_cast<std::size_t>(group_len(it.name))
                                                : (it.kind == NotationItem::kLetter && it.optional) ? 0 : 1;
      }
      return TensorDistAttr(mesh_, rank);
    }
    TensorDistAttr a = layout(in_slots_[k], in_[k].t);
    if (align)
      for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
        if ((align_partial_mask_ >> m) & 1u) a.set_partial(m, align_partial_type_[m]);
    if ((keepers >> k) & 1u) {
      uint32_t split = 0;
      for (const MeshDims& m : a.dims())
        for (int8_t d : m) split |= 1u << d;
      for (int64_t m : in_[k].t->attr.partial_dims())
        if (!(split & (1u << m))) {
          a.set_partial(static_cast<int>(m), in_[k].t->attr.partial_type(static_cast<int>(m)));
          carried_mask |= static_cast<uint8_t>(1u << m);
          carried_type[m] = in_[k].t->attr.partial_type(static_cast<int>(m));
        }
    }
    return a;
  };
  // An input added into an output takes that output's pending partial status.
  auto accumulated = [&](int arg, TensorDistAttr& a) {
    if (!forward || !a.mesh()) return;
    for (const Edit& e : edits_) {
      if (e.kind != Edit::kAccumulate || e.arg != arg || out_args_[e.axis].count == 0) continue;
      ReduceType types[kMaxMeshDims] = {};
      const uint8_t mask = output_partial(out_args_[e.axis].first, types);
      for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
        if (mask >> m & 1u) a.set_partial(m, types[m]);
    }
  };
  for (std::size_t j = 0; j < in_args_.size(); ++j) {
    const ArgRange& r = in_args_[j];
    if (rule_.options.unreturned >> j & 1u) continue;
    if (!r.list) {
      info.inputs.emplace_back(r.count ? input_attr(r.first) : TensorDistAttr());
      accumulated(static_cast<int>(j), std::get<TensorDistAttr>(info.inputs.back()));
      continue;
    }
    if (rule_.options.flat_list_inputs) {
      for (int k = r.first; k < r.first + r.count; ++k) info.inputs.emplace_back(input_attr(k));
      continue;
    }
    std::vector<TensorDistAttr> list;
    for (int k = r.first; k < r.first + r.count; ++k) list.push_back(input_attr(k));
    info.inputs.emplace_back(std::move(list));
  }
  uint8_t partial_mask = 0;
  ReduceType partial_type[kMaxMeshDims] = {};
  if (forward) {
    for (const Factor& f : factors_) {
      if (f.in_output || f.mesh.empty()) continue;
      for (int8_t m : f.mesh) {
        partial_mask |= static_cast<uint8_t>(1u << m);
        partial_type[m] = f.has_reduce ? f.reduce : rule_.options.partial;
      }
    }
  }
  const bool per_output = forward && (rule_.options.per_output_partial || !rule_.options.depends.empty());
  auto output_attr = [&](int k) {
    if (out_absent_[k]) return TensorDistAttr(mesh_, 0);
    TensorDistAttr a = layout(out_slots_[k], out_[k].t);
    uint8_t mask = partial_mask;
    ReduceType types[kMaxMeshDims] = {};
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) types[m] = partial_type[m];
    if (per_output) mask = output_partial(static_cast<std::size_t>(k), types);
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) {
      if (mask & (1u << m)) a.set_partial(m, types[m]);
      else if (carried_mask & (1u << m)) a.set_partial(m, carried_type[m]);
      else if (align && ((align_partial_mask_ >> m) & 1u)) a.set_partial(m, align_partial_type_[m]);
    }
    return a;
  };
  for (const ArgRange& r : out_args_) {
    if (r.list && rule_.options.flat_list_outputs) {  // one entry per tensor, as Paddle's split
      for (int k = r.first; k < r.first + r.count; ++k) info.outputs.emplace_back(output_attr(k));
      continue;
    }
    if (!r.list) {
      info.outputs.emplace_back(output_attr(r.first));
      continue;
    }
    std::vector<TensorDistAttr> list;
    for (int k = r.first; k < r.first + r.count; ++k) list.push_back(output_attr(k));
    info.outputs.emplace_back(std::move(list));
  }
  return info;
}

}  // namespace spmd
