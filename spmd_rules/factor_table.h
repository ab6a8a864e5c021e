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

  bool operator==(const FactorTable& o) const {
    return sizes == o.sizes && kinds == o.kinds && blocked == o.blocked && operands == o.operands && results == o.results;
  }
  // The same table with factors renumbered in order of first use (operands, then results; dims
  // in order; a compound dim major to minor). Two tables that differ only in how their factors
  // are numbered have equal canonical forms.
  FactorTable canonical() const;
  bool equivalent(const FactorTable& o) const { return canonical() == o.canonical(); }
  // Adds a factor; returns its id.
  int add(int64_t size, Kind kind = Kind::kPassThrough);
};

// Shardy's factorization of a reshape from `in` to `out` (equal element counts): dims that
// agree from the major end share factors (their gcd), size-1 dims get their own factors, and
// once the two sides diverge each gets its own factors until their products meet again; a dim
// made of several factors is a compound dim. (factor_table.cc)
FactorTable reshape_factor_table(const std::string& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out);

}  // namespace spmd
