// Projection of an op's tensor shardings onto its factors and back (Shardy's
// ShardingProjection): each dim's axes are dealt to the dim's factors major to minor, splitting
// an axis into sub-axes where a factor takes only part of it (compound factors of a reshape).
#pragma once
#include <tuple>
#include <vector>

#include "graph.h"

namespace spmd::prop {

struct FactorSlot {
  AxisList axes;        // the axes this tensor gives the factor, major to minor
  bool present = false; // the tensor has the factor
  bool closed = false;  // may not grow here: closed dim, hidden priority, a full or overflowed dim
  bool grew = false;    // propagation appended axes (the dim must be written back)
  int origin = kNoOrigin;
};

// A factor's axes that the tensors agree on, and the tensor they come from (aggressive propagation).
struct Candidate {
  AxisList axes;
  int src = -1;  // the tensor whose axes these are
};

struct Projection {
  int num_tensors = 0, num_factors = 0;
  int mesh = -1;
  const int* values = nullptr;       // per tensor: its value id (operands, then results)
  std::vector<int> value_ids;        // where `values` points when project() was not given them
  std::vector<FactorSlot> slots;     // [tensor * num_factors + factor]
  std::vector<AxisList> reserved;    // per tensor: axes no factor may take (replicated, overflow, hidden, manual)
  std::vector<uint8_t> updatable;    // per tensor: bit 0, pass-through factors may write it; bit 1, the other factors
  const FactorTable* table = nullptr; // the op's table (its kinds: op priorities move pass-through factors first)
  std::vector<uint8_t> must_divide;  // per factor: it is not minor-most somewhere, so its axes must divide it
  // scratch of propagate_aggressive, kept here so that a rule application allocates nothing
  std::vector<Candidate> candidates;
  std::vector<int> order;
  std::vector<std::tuple<bool, int64_t, int64_t, int, int>> order_keys;
  FactorSlot& at(int t, int f) { return slots[t * num_factors + f]; }
  const FactorSlot& at(int t, int f) const { return slots[t * num_factors + f]; }
};

// Fills `p` for `op` (reusing its storage). Dims the user gave a priority above
// `priority_threshold` are hidden: they neither give nor take axes. Returns false when the
// op's tensors lie on different meshes (such an op does not propagate).
// `dirs`: FactorDirs, the direction each kind of factor propagates in. `values`: the op's tensor
// values (operands, then results) from a compact list, if the caller has one (the op's own
// vectors lie elsewhere on the heap: one cache miss more per rule application).
bool project(const Graph& g, const Op& op, int priority_threshold, FactorDirs dirs, Projection& p, const int* values = nullptr);

// Writes the grown slots back into the value shardings; appends changed value ids to `changed`
// and gives their dims the origin of the factor that grew them.
void write_back(Graph& g, const Op& op, const Projection& p, std::vector<int>& changed);

// The effective priority of a user dim (an unmarked one is p0).
inline int effective_priority(const DimSharding& d) { return d.priority < 0 ? 0 : d.priority; }

}  // namespace spmd::prop
