// A tensor as a rule sees it: its global shape and how it is laid out.
// A default-constructed one (rank 0, no mesh) stands for an absent optional input.
#pragma once
#include <cstdint>
#include <vector>

#include "dist_attr.h"

namespace spmd {

using Shape = SmallVec<int64_t, kMaxRank>;

struct DistMetaTensor {
  Shape shape;
  TensorDistAttr attr;

  DistMetaTensor() = default;
  DistMetaTensor(Shape s, TensorDistAttr a) : shape(s), attr(std::move(a)) {}

  std::size_t rank() const { return shape.size(); }
  // Paddle marks an absent optional tensor by an empty shape and an empty mapping.
  bool absent() const { return shape.empty() && attr.rank() == 0 && !attr.mesh(); }
};

}  // namespace spmd
