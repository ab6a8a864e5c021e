// Fixed bounds that let the hot path use inline storage only.
#pragma once
#include <cstddef>

namespace spmd {

constexpr std::size_t kMaxRank = 12;       // tensor dims
constexpr std::size_t kMaxMeshDims = 8;    // mesh dims (also the most mesh dims on one tensor dim)
constexpr std::size_t kMaxTensors = 64;    // tensors taking part in one rule call (list elements count one each)
constexpr std::size_t kMaxFactors = 64;    // factors (einsum letters) in one rule call

}  // namespace spmd
