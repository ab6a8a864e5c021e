// A rule's factor table (Shardy's OpShardingRule) for one call: the unit whole-program
// propagation works on. Each tensor dim maps to one or more factors (several: a compound dim of a
// reshape, major to minor); a factor is pass-through unless marked otherwise.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace spmd {

struct FactorTable {
  enum class Kind : uint8_t {
    kPassThrough,      // splits flow freely between the tensors that have the factor
    kReduction,        // in operands only (a contracted dim): split -> the results are partial
    kNeedReplication,  // must be whole on every rank (softmax's axis, a sorted dim)
    kPermutation,      // split only at the cost of a collective-permute (slice, pad, roll)
  };
  using DimFactors = std::vector<int>;            // factor ids of one dim, major to minor
  using TensorFactors = std::vector<DimFactors>;  // one entry per tensor dim

  std::vector<int64_t> sizes;   // per factor
  std::vector<Kind> kinds;      // per factor
  std::vector<bool> blocked;    // per factor: never propagated along (orthogonal to kind)
  std::vector<TensorFactors> operands;  // per input tensor (list arguments: one per element)
  std::vector<TensorFactors> results;   // per output tensor

  int num_factors() const { return static_cast<int>(sizes.size()); }
  // Shardy's printed form: ([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}
  // Factors are named i, j, k, ... z, then z_1, z_2, ... in id order; a compound dim prints as
  // its names joined (ij); a dim with no factor (a size-1 dim) prints as [].
  std::string to_string() const;
};

}  // namespace spmd
