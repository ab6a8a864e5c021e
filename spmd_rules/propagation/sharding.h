// The sharding of one value as propagation sees it (Shardy's TensorShardingAttr in compact form):
// per dim an axis list major->minor (whole axes or sub-axes), open or closed, a user priority, and
// the annotation it came from; plus explicitly replicated axes. Axes are indices into a mesh.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "small_vector.h"

namespace spmd::prop {

// A whole mesh axis (pre = 1, size = the axis size) or Shardy's sub-axis "name":(pre)size: the
// size-`size` slice of the axis that starts after `pre` devices' worth of it.
struct AxisRef {
  int32_t axis = 0;
  int32_t pre = 1;
  int32_t size = 1;
  bool operator==(const AxisRef& o) const { return axis == o.axis && pre == o.pre && size == o.size; }
  bool operator!=(const AxisRef& o) const { return !(*this == o); }
  // Two refs of one axis can be used together only if one lies wholly after the other in the
  // same decomposition of the axis: "x":(1)2 with "x":(2)2, not "x":(1)2 with "x":(3)2 on x=6.
  bool overlaps(const AxisRef& o) const {
    if (axis != o.axis) return false;
    const bool before = pre * size <= o.pre && o.pre % (pre * size) == 0;
    const bool after = o.pre * o.size <= pre && pre % (o.pre * o.size) == 0;
    return !before && !after;
  }
  // The largest major part of `this` that can be used together with `o` (size 1: none).
  int32_t free_prefix_before(const AxisRef& o) const {
    if (!overlaps(o)) return size;
    if (o.pre > pre && o.pre % pre == 0 && size % (o.pre / pre) == 0) return o.pre / pre;
    return 1;
  }
  // `this` is the major part of `o` (same start, smaller or equal size): "x":(1)2 of "x".
  bool is_prefix_of(const AxisRef& o) const { return axis == o.axis && pre == o.pre && size <= o.size && o.size % size == 0; }
};
// Inline storage: propagation builds and copies these lists on every rule application. A dim
// (or a factor) may hold at most kMaxAxes axis pieces; more is a ValueError.
inline constexpr std::size_t kMaxAxes = 16;
using AxisList = SmallVec<AxisRef, kMaxAxes>;

inline constexpr int kNoPriority = -1;  // a dim the user did not give a priority: p0
inline constexpr int kNoOrigin = -1;

struct DimSharding {
  AxisList axes;
  bool closed = false;
  int priority = kNoPriority;  // only meaningful on user-annotated dims
  bool user = false;           // set by a user annotation (never overridden by propagation)
  int origin = kNoOrigin;      // the value whose annotation these axes came from
};

struct TensorSharding {
  int mesh = -1;  // -1: not yet on a mesh (adopts the mesh of the op that first shards it)
  std::vector<DimSharding> dims;
  AxisList replicated;  // explicitly replicated: never used by propagation
};

struct Mesh {
  std::string name;
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
};

// Appends `a` to `list`, merging it with the previous ref when both are consecutive pieces of
// the same axis ("x":(1)2 then "x":(2)2 -> "x":(1)4, the whole axis when it covers it).
void append_merged(AxisList& list, const AxisRef& a, int64_t axis_size);
int64_t product(const AxisList& list);
bool uses_overlapping(const AxisList& list, const AxisRef& a);
std::string axis_to_string(const Mesh& mesh, const AxisRef& a);

}  // namespace spmd::prop
