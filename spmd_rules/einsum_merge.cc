// The factor engine, step 2: collect the splits the source tensors propose for each factor and
// merge them by the rule's policy (docs/conflict_policy.md).
#include "einsum_engine.h"

#include <cstring>
#include <limits>

#include "errors.h"

namespace spmd {

int64_t EinsumCall::shards(const MeshDims& m) const {
  int64_t n = 1;
  for (int8_t d : m) n *= mesh_->dim_size(d);
  return n;
}

void EinsumCall::pop_until_divisible(Factor& f) const {
  if (f.size < 0) return;  // unknown size: nothing to check
  while (!f.mesh.empty() && shards(f.mesh) > 1 && f.size % shards(f.mesh) != 0) f.mesh.pop_back();
}

// Paddle's 1-D view of a co-shard: the mesh dim of largest size, the first on a tie.
int8_t EinsumCall::view_1d(const MeshDims& m) const {
  int8_t best = m[0];
  for (int8_t d : m)
    if (mesh_->dim_size(d) > mesh_->dim_size(best)) best = d;
  return best;
}

// Every split the source tensors propose, in source order (tensor by tensor, dim by dim).
void EinsumCall::collect(bool from_outputs) {
  const auto& bound = from_outputs ? out_ : in_;
  const auto& slots = from_outputs ? out_slots_ : in_slots_;
  int8_t seen = 0;
  // Paddle's einsum outer product: the first input with a split dim is the only one proposing.
  int only = -1;
  if (!from_outputs && rule_.options.outer_first_split && eq_text_ && eq_.outer)
    for (std::size_t k = 0; k < bound.size() && only < 0; ++k)
      if (bound[k].t)
        for (const MeshDims& m : bound[k].t->attr.dims())
          if (!m.empty()) only = static_cast<int>(k);
  const bool claim = rule_.options.replicated_claim || (from_outputs && rule_.options.reverse_replicated_claim);
  // Source order: the tensors in bound order, or the arguments the rule lists in its order
  // (source_order going forward, reverse_sources in reverse), list elements in theirs.
  SmallVec<uint8_t, kMaxTensors> order;
  auto add_arg = [&](const ArgRange& r) {
    for (int k = r.first; k < r.first + r.count; ++k) order.push_back(static_cast<uint8_t>(k));
  };
  if (from_outputs && rule_.options.reverse_sources[0]) {
    for (uint8_t a : rule_.options.reverse_sources) {
      if (!a || a > out_args_.size()) break;
      add_arg(out_args_[a - 1]);
    }
  } else if (!from_outputs && rule_.options.source_count) {
    for (int i = 0; i < rule_.options.source_count; ++i) {
      const int arg = static_cast<int>((rule_.options.source_order >> (4 * i)) & 15u);
      if (arg < static_cast<int>(in_args_.size())) add_arg(in_args_[arg]);
    }
  } else {
    for (std::size_t k = 0; k < bound.size(); ++k) order.push_back(static_cast<uint8_t>(k));
  }
  for (uint8_t k : order) {
    const DistMetaTensor* t = bound[k].t;
    if (!t || (!from_outputs && !((rule_.options.sources >> bound[k].pattern) & 1u))) continue;
    if (only >= 0 && static_cast<int>(k) != only) continue;
    for (std::size_t d = 0; d < slots[k].size(); ++d) {
      const Slot& slot = slots[k][d];
      if (slot.n == 0) continue;
      int f = slot.f[0];
      if ((slot.one && rule_.options.ones == Ones::kBroadcast) || factors_[f].mismatch) {
        if (one_factor_ < 0) {
          one_factor_ = static_cast<int8_t>(new_factor());
          factors_[one_factor_].in_output = true;  // never contracted: it leaves nothing partial
        }
        f = one_factor_;
      }
      if (factors_[f].seen < 0) factors_[f].seen = seen++;
      // A dim forced whole claims nothing (unless the rule merges first and replicates after).
      if (factors_[f].need_replication && !claim) continue;
      // A dim the op creates (an output letter in no input pattern) is born whole: in reverse, a
      // given output's split of it is one no input layout produces, so it proposes nothing.
      if (factors_[f].born) continue;
      if (!t->attr.dim(d).empty())
        proposals_.push_back({static_cast<uint8_t>(f), static_cast<uint8_t>(k), t->attr.dim(d)});
    }
  }
}

void EinsumCall::merge_legacy() {
  // Claims of mesh dims, in the order factors took them; the first claim of a mesh dim keeps it.
  SmallVec<int8_t, kMaxFactors> claim_order;
  for (const Proposal& p : proposals_) {
    Factor& f = factors_[p.factor];
    if (!f.mesh.empty()) continue;  // already split: a different proposal loses (Paddle raises here)
    f.mesh.push_back(view_1d(p.mesh));
    claim_order.push_back(static_cast<int8_t>(p.factor));
  }
  if (narrow_conflicts_) {
    // Only factors that meet in some tensor compete for a mesh dim (see build_meets).
    uint64_t kept[kMaxMeshDims] = {};
    for (int8_t k : claim_order) {
      Factor& f = factors_[k];
      if (kept[f.mesh[0]] & meets_[k]) f.mesh.clear();
      else kept[f.mesh[0]] |= uint64_t{1} << k;
    }
    return;
  }
  uint32_t used = 0;
  for (int8_t k : claim_order) {
    Factor& f = factors_[k];
    if (used & (1u << f.mesh[0])) f.mesh.clear();
    else used |= 1u << f.mesh[0];
  }
}

// With `depends`, two factors compete for a mesh dim only if some tensor holds both: an input,
// or an output together with the factors it sums over (a split contracted factor makes the
// output partial on that mesh dim, which its own splits cannot use). Without `depends` every
// output sums over every input, and every pair competes.
void EinsumCall::build_meets() {
  const auto& depends = rule_.options.depends;
  narrow_conflicts_ = !depends.empty();
  if (!narrow_conflicts_) return;
  std::memset(meets_, 0, sizeof(meets_));
  uint64_t in_mask[kMaxTensors] = {};
  auto add = [&](uint64_t m) {
    for (std::size_t f = 0; f < factors_.size(); ++f)
      if (m >> f & 1u) meets_[f] |= m;
  };
  auto mask_of = [](const Slots& slots) {
    uint64_t m = 0;
    for (const Slot& slot : slots)
      for (int f = 0; f < slot.n; ++f) m |= uint64_t{1} << slot.f[f];
    return m;
  };
  for (std::size_t k = 0; k < in_.size(); ++k) {
    if (!in_[k].t) continue;
    in_mask[k] = mask_of(in_slots_[k]);
    add(in_mask[k]);
  }
  for (std::size_t k = 0; k < out_.size(); ++k) {
    const uint32_t from = out_[k].pattern < depends.size() ? depends[out_[k].pattern] : ~0u;
    uint64_t m = mask_of(out_slots_[k]);
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (from >> in_[i].pattern & 1u) m |= in_mask[i];
    add(m);
  }
}

// A factor's proposals, longest and most sharded first (stable), joined without repeats.
void EinsumCall::join_proposals(Factor& f, int k) const {
  SmallVec<uint8_t, 2 * kMaxTensors> idx;
  for (std::size_t p = 0; p < proposals_.size(); ++p)
    if (proposals_[p].factor == k) idx.push_back(static_cast<uint8_t>(p));
  std::stable_sort(idx.begin(), idx.end(), [&](uint8_t a, uint8_t b) {
    const MeshDims& x = proposals_[a].mesh;
    const MeshDims& y = proposals_[b].mesh;
    if (x.size() != y.size()) return x.size() > y.size();
    return shards(x) > shards(y);
  });
  for (uint8_t p : idx)
    for (int8_t d : proposals_[p].mesh)
      if (!f.mesh.contains(d)) f.mesh.push_back(d);
}

void EinsumCall::merge_coshard() {
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    Factor& f = factors_[k];
    join_proposals(f, static_cast<int>(k));
    if (rule_.options.divisible) pop_until_divisible(f);
  }
  // A mesh dim wanted by several factors goes to the largest; on a tie, the first seen.
  if (narrow_conflicts_) {
    // Only factors that meet in some tensor compete: in that order, each keeps the mesh dim
    // unless a factor it meets kept it already.
    for (int m = 0; m < mesh_->ndim(); ++m) {
      SmallVec<int8_t, kMaxFactors> want;
      for (std::size_t k = 0; k < factors_.size(); ++k)
        if (factors_[k].mesh.contains(static_cast<int8_t>(m))) want.push_back(static_cast<int8_t>(k));
      std::stable_sort(want.begin(), want.end(), [&](int8_t a, int8_t b) {
        const Factor& x = factors_[a];
        const Factor& y = factors_[b];
        return x.size != y.size ? x.size > y.size : x.seen < y.seen;
      });
      uint64_t kept = 0;
      for (int8_t k : want) {
        if (!(kept & meets_[k])) {
          kept |= uint64_t{1} << k;
          continue;
        }
        MeshDims& md = factors_[k].mesh;
        for (std::size_t j = 0; j < md.size(); ++j)
          if (md[j] == m) {
            md.erase(j);
            break;
          }
      }
    }
    return;
  }
  for (int m = 0; m < mesh_->ndim(); ++m) {
    int win = -1;
    for (std::size_t k = 0; k < factors_.size(); ++k) {
      const Factor& f = factors_[k];
      if (!f.mesh.contains(static_cast<int8_t>(m))) continue;
      if (win < 0 || (rule_.options.conflict_first ? f.seen < factors_[win].seen
                                                   : f.size > factors_[win].size ||
                                                         (f.size == factors_[win].size && f.seen < factors_[win].seen)))
        win = static_cast<int>(k);
    }
    for (std::size_t k = 0; k < factors_.size(); ++k) {
      if (static_cast<int>(k) == win) continue;
      MeshDims& md = factors_[k].mesh;
      for (std::size_t j = 0; j < md.size(); ++j)
        if (md[j] == m) {
          md.erase(j);
          break;
        }
    }
  }
}

void EinsumCall::merge_matmul() {
  // Batch dims: follow the operand with the most co-split dims, then the most shards, then the
  // most batch dims; add the other operand's mesh dims that are still free.
  int follow = -1, max_co = -1, max_nb = -1;
  int64_t max_sh = -1;
  for (std::size_t k = 0; k < in_.size() && k < 2; ++k) {
    if (!in_[k].t) continue;
    int co = 0, nb = 0;
    MeshDims used;
    for (std::size_t d = 0; d < in_slots_[k].size(); ++d) {
      if (!factors_[in_slots_[k][d].f[0]].batch || in_slots_[k][d].n == 0) continue;
      ++nb;
      const MeshDims& m = in_[k].t->attr.dim(d);
      co += m.size() > 1;
      for (int8_t x : m)
        if (!used.contains(x)) used.push_back(x);
    }
    const int64_t sh = shards(used);
    if (co > max_co || sh > max_sh || (sh == max_sh && nb > max_nb)) {
      max_co = co, max_sh = sh, max_nb = nb, follow = static_cast<int>(k);
    }
  }
  uint32_t used = 0;
  // The followed operand's batch splits as they are; then, dim by dim, the other operand's free
  // mesh dims, trimmed until the dim divides (a trimmed mesh dim is free again).
  auto batch_dim = [&](int k, int64_t e) -> const MeshDims* {
    if (k < 0 || !in_[k].t) return nullptr;
    for (std::size_t d = 0; d < in_slots_[k].size(); ++d) {
      const Slot& slot = in_slots_[k][d];
      if (slot.n && slot.f[0] == ellipsis_first_ + e) return &in_[k].t->attr.dim(d);
    }
    return nullptr;
  };
  const int other = follow == 0 ? 1 : 0;
  for (int64_t e = 0; e < ellipsis_len_ && follow >= 0; ++e)
    if (const MeshDims* m = batch_dim(follow, e))
      for (int8_t x : *m) {
        factors_[ellipsis_first_ + e].mesh.push_back(x);
        used |= 1u << x;
      }
  SmallVec<int8_t, kMaxFactors> batch;
  for (int64_t e = 0; e < ellipsis_len_; ++e) {
    Factor& f = factors_[ellipsis_first_ + e];
    if (const MeshDims* m = follow >= 0 && static_cast<std::size_t>(other) < in_.size() ? batch_dim(other, e) : nullptr)
      for (int8_t x : *m)
        if (!(used & (1u << x))) {
          f.mesh.push_back(x);
          used |= 1u << x;
        }
    const MeshDims before = f.mesh;
    pop_until_divisible(f);
    for (std::size_t j = f.mesh.size(); j < before.size(); ++j) used &= ~(1u << before[j]);
    batch.push_back(static_cast<int8_t>(ellipsis_first_ + e));
  }
  std::stable_sort(batch.begin(), batch.end(), [&](int8_t a, int8_t b) { return factors_[a].size > factors_[b].size; });
  used = 0;
  auto keep_free = [&](Factor& f) {
    MeshDims kept;
    for (int8_t m : f.mesh)
      if (!(used & (1u << m))) kept.push_back(m);
    for (int8_t m : kept) used |= 1u << m;
    f.mesh = kept;
  };
  for (int8_t k : batch) keep_free(factors_[k]);
  // m, n, k: proposals joined as in the co-shard merge; m and n (larger first) beat k.
  const int m = letter_factor_['m' - 'a'], n = letter_factor_['n' - 'a'], kk = letter_factor_['k' - 'a'];
  SmallVec<int, 3> order;
  if (m >= 0) order.push_back(m);
  if (n >= 0) order.push_back(n);
  if (m >= 0 && n >= 0 && factors_[n].size > factors_[m].size) std::swap(order[0], order[1]);
  if (kk >= 0) order.push_back(kk);
  for (int k : order) {
    join_proposals(factors_[k], k);
    keep_free(factors_[k]);
  }
  if (kk >= 0) pop_until_divisible(factors_[kk]);
}

// Paddle's AlignDimsSharding (concat, stack), mesh dim by mesh dim. A mesh dim that every source
// tensor places the same way stays: a split of a dim of the notation (not of a dim the rule keeps
// whole, like concat's axis), or a SUM/AVG partial. A disputed mesh dim goes to the free dim of
// least cost: the elements the sources that do not split it yet would hold per rank (their
// current local size times the mesh dim), the first dim on a tie; a dim smaller than the mesh dim
// cannot take it. Several mesh dims left on one dim keep the last (Paddle's 1-D placements).
void EinsumCall::merge_align(bool from_outputs) {
  const auto& bound = from_outputs ? out_ : in_;
  const auto& slots = from_outputs ? out_slots_ : in_slots_;
  SmallVec<uint8_t, kMaxTensors> src;
  for (std::size_t k = 0; k < bound.size(); ++k)
    if (bound[k].t && (from_outputs || ((rule_.options.sources >> bound[k].pattern) & 1u)))
      src.push_back(static_cast<uint8_t>(k));
  if (src.empty()) return;
  // How source k places mesh dim m: -1 replicated, the dim's factor (< 128), 128 + the dim for a
  // dim without one, 256 + reduce type for a partial.
  auto code = [&](int k, int m) -> int {
    const DistMetaTensor* t = bound[k].t;
    for (std::size_t d = 0; d < t->rank(); ++d)
      if (t->attr.dim(d).contains(static_cast<int8_t>(m))) {
        const Slot& sl = slots[k][d];
        return sl.n ? sl.f[0] : 128 + static_cast<int>(d);
      }
    if (t->attr.is_partial_on(m)) return 256 + static_cast<int>(t->attr.partial_type(m));
    return -1;
  };
  auto disputed = [&](int m) {
    const int c0 = code(src[0], m);
    for (std::size_t i = 1; i < src.size(); ++i)
      if (code(src[i], m) != c0) return true;
    return false;
  };
  SmallVec<int8_t, kMaxRank> align;  // the dims that may take a mesh dim, in the first source's order
  for (const Slot& sl : slots[src[0]])
    if (sl.n && !factors_[sl.f[0]].need_replication && !align.contains(static_cast<int8_t>(sl.f[0])))
      align.push_back(static_cast<int8_t>(sl.f[0]));
  uint64_t taken = 0;  // factors holding a mesh dim
  int8_t owner[kMaxMeshDims];
  std::memset(owner, -1, sizeof(owner));
  align_partial_mask_ = 0;
  const int nm = mesh_->ndim();
  for (int m = 0; m < nm; ++m) {
    if (disputed(m)) continue;
    const int c = code(src[0], m);
    if (c >= 0 && c < 128 && align.contains(static_cast<int8_t>(c))) {
      taken |= uint64_t{1} << c;
      owner[m] = static_cast<int8_t>(c);
    } else if (c >= 256) {
      const ReduceType t = static_cast<ReduceType>(c - 256);
      if (t == ReduceType::kSum || t == ReduceType::kAvg) {
        align_partial_mask_ |= static_cast<uint8_t>(1u << m);
        align_partial_type_[m] = t;
      }
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (int m = 0; m < nm; ++m) {
    if (!disputed(m)) continue;
    int best = -1;
    double best_cost = inf;
    for (int8_t f : align) {
      if ((taken >> f) & 1u) continue;
      double cost = 0.0;
      for (uint8_t k : src) {
        const DistMetaTensor* t = bound[k].t;
        std::size_t d = 0;
        while (d < slots[k].size() && !(slots[k][d].n && slots[k][d].f[0] == f)) ++d;
        if (d == slots[k].size()) continue;
        if (t->shape[d] < mesh_->dim_size(m)) {
          cost = inf;
          break;
        }
        if (!t->attr.dim(d).empty()) continue;  // already split: no new data to move
        int64_t local = 1;
        for (std::size_t j = 0; j < t->rank(); ++j) {
          int64_t n = t->shape[j];
          int8_t last = -1;  // Paddle divides by the highest mesh dim of a co-split dim only
          for (int8_t md : t->attr.dim(j)) last = std::max(last, md);
          if (last >= 0) n = (n + mesh_->dim_size(last) - 1) / mesh_->dim_size(last);
          local *= n;
        }
        if (local == 0) continue;
        cost += static_cast<double>(local) * static_cast<double>(mesh_->dim_size(m));
      }
      if (cost < best_cost) {
        best_cost = cost;
        best = f;
      }
    }
    if (best >= 0) {
      taken |= uint64_t{1} << best;
      owner[m] = static_cast<int8_t>(best);
    }
  }
  for (int m = 0; m < nm; ++m)
    if (owner[m] >= 0) {
      MeshDims& md = factors_[owner[m]].mesh;
      md.clear();
      md.push_back(static_cast<int8_t>(m));
    }
}

void EinsumCall::merge(bool from_outputs) {
  if (rule_.options.merge == Merge::kAlign) {
    merge_align(from_outputs);
    for (Factor& f : factors_)
      if (f.need_replication) f.mesh.clear();
    return;
  }
  collect(from_outputs);
  build_meets();
  Merge policy = rule_.options.merge;
  if (policy == Merge::kMatmul && from_outputs) policy = Merge::kCoShard;  // reverse: one source
  switch (policy) {
    case Merge::kLegacy: merge_legacy(); break;
    case Merge::kCoShard: merge_coshard(); break;
    case Merge::kMatmul: merge_matmul(); break;
    case Merge::kAlign: break;  // handled above
  }
  if (rule_.options.no_partial_letters) {
    bool partial = false;
    for (const Factor& f : factors_) partial |= !f.in_output && !f.mesh.empty() && !f.need_replication;
    if (partial)
      for (Factor& f : factors_)
        if (!f.in_output || (f.letter && (rule_.options.no_partial_letters >> (f.letter - 'a') & 1u))) f.mesh.clear();
  }
  for (Factor& f : factors_) {
    if (f.need_replication || (f.size == 1 && rule_.options.ones != Ones::kKeep)) f.mesh.clear();
    // An average of uneven shards is not the average: such a split must divide evenly.
    if (f.has_reduce && f.reduce == ReduceType::kAvg && !f.in_output) pop_until_divisible(f);
  }
  if (rule_.options.partial == ReduceType::kAvg)
    for (Factor& f : factors_)
      if (!f.in_output) pop_until_divisible(f);
  for (const Edit& e : edits_) {
    if (e.kind != Edit::kUnsplitIf) continue;
    const int8_t a = letter_factor_[e.letter - 'a'], b = letter_factor_[static_cast<char>(e.axis) - 'a'];
    if (a >= 0 && b >= 0 && !factors_[b].mesh.empty()) factors_[a].mesh.clear();
  }
  whole_flat_tails();
}

}  // namespace spmd
