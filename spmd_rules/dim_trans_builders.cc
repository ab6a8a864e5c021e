#include "dim_trans_builders.h"

#include "dim_trans.h"
#include "errors.h"

namespace spmd {

static int64_t norm_axis(const std::string& op, const char* attr, int64_t axis, int64_t rank) {
  const int64_t r = std::max<int64_t>(rank, 1);
  if (axis < -r || axis >= r)
    throw ValueError(op + ": attribute '" + attr + "' = " + std::to_string(axis) + " is out of range for input 'x' of rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

Shape reshape_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape) {
  return resolve_reshape_target(op, x.shape, shape);
}

Shape flatten_target(const std::string& op, const DistMetaTensor& x, int64_t start_axis, int64_t stop_axis) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) return Shape{1};
  int64_t start = norm_axis(op, "start_axis", start_axis, rank);
  int64_t stop = norm_axis(op, "stop_axis", stop_axis, rank);
  if (start > stop)
    throw ValueError(op + ": attribute 'start_axis' (" + std::to_string(start_axis) + ") comes after 'stop_axis' (" +
                     std::to_string(stop_axis) + ")");
  Shape out;
  for (int64_t d = 0; d < start; ++d) out.push_back(x.shape[d]);
  int64_t p = 1;
  for (int64_t d = start; d <= stop; ++d) {
    if (x.shape[d] < 0 && start < stop)
      throw ValueError(op + ": input 'x' has unknown size at dim " + std::to_string(d) +
                       ", which the flatten merges; flattening it needs its size");
    p *= x.shape[d];
  }
  out.push_back(p);
  for (int64_t d = stop + 1; d < rank; ++d) out.push_back(x.shape[d]);
  return out;
}

Shape squeeze_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  uint32_t drop = 0;
  if (axis.empty()) {
    for (int64_t d = 0; d < rank; ++d)
      if (x.shape[d] == 1) drop |= 1u << d;
  } else {
    for (int64_t a : axis) {
      int64_t d = norm_axis(op, "axis", a, rank);
      if (rank > 0 && x.shape[d] == 1) drop |= 1u << d;  // a named dim that is not 1 stays, as in Paddle
    }
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!(drop & (1u << d))) out.push_back(x.shape[d]);
  return out;
}

Shape unsqueeze_target(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis) {
  // Axes are inserted one after another; a negative one counts from the end of the shape so far.
  Shape out = x.shape;
  for (int64_t a : axis) {
    const int64_t cur = static_cast<int64_t>(out.size());
    if (a < -cur - 1 || a > cur)
      throw ValueError(op + ": attribute 'axis' = " + std::to_string(a) + " is out of range for a result of rank " +
                       std::to_string(cur + 1));
    out.insert(static_cast<std::size_t>(a < 0 ? a + cur + 1 : a), 1);
  }
  return out;
}

DimTransList reshape_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& shape) {
  return reshape_dim_trans(reshape_target(op, x, shape), x.shape, op);
}

DimTransList flatten_reverse_trans(const std::string& op, const DistMetaTensor& x, int64_t start_axis, int64_t stop_axis) {
  const Shape out = flatten_target(op, x, start_axis, stop_axis);
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) return DimTransList();
  const int64_t start = norm_axis(op, "start_axis", start_axis, rank), stop = norm_axis(op, "stop_axis", stop_axis, rank);
  auto from = [&](int64_t out_dim) {
    SmallVec<int8_t, kMaxRank> inputs;
    if (out[out_dim] != 1) inputs.push_back(static_cast<int8_t>(out_dim));
    return inputs;
  };
  DimTransList trans;
  for (int64_t d = 0; d < start; ++d) trans.push_back(make_split(from(d), Shape{x.shape[d]}, 0));
  const Shape parts(x.shape.begin() + start, x.shape.begin() + stop + 1);
  // Cut even where all other parts have size 1: the part holding the split must then divide.
  for (std::size_t p = 0; p < parts.size(); ++p) trans.push_back(make_split(from(start), parts, p));
  for (int64_t d = stop + 1; d < rank; ++d) trans.push_back(make_split(from(d - stop + start), Shape{x.shape[d]}, 0));
  return trans;
}

DimTransList squeeze_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis) {
  return reshape_dim_trans(squeeze_target(op, x, axis), x.shape, op);
}

DimTransList unsqueeze_reverse_trans(const std::string& op, const DistMetaTensor& x, const std::vector<int64_t>& axis) {
  return reshape_dim_trans(unsqueeze_target(op, x, axis), x.shape, op);
}

}  // namespace spmd
