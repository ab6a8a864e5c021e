#include "projection.h"

#include <numeric>

#include "errors.h"

namespace spmd::prop {
namespace {

const FactorTable::TensorFactors& tensor_factors(const FactorTable& t, const Op& op, int i) {
  return op.is_result(i) ? t.results[i - op.operands.size()] : t.operands[i];
}

// The body side of a manual_computation edge (the tensors without the manual factors).
bool is_inner(const Op& op, int i) { return op.manual_axes && (op.inner_tensors >> i & 1); }

void project_tensor(const Graph& g, const Op& op, int i, int threshold, Projection& p) {
  const FactorTable& table = g.tables[op.table];
  const TensorSharding& s = g.shardings[p.values[i]];
  AxisList& reserved = p.reserved[i];
  reserved = s.replicated;
  if (is_inner(op, i) && p.mesh >= 0) {  // inside the body the manual axes do not exist
    for (std::size_t a = 0; a < g.meshes[p.mesh].axis_sizes.size(); ++a)
      if (op.manual_axes >> a & 1) reserved.push_back({static_cast<int32_t>(a), 1, static_cast<int32_t>(g.meshes[p.mesh].axis_sizes[a])});
  }
  const auto& dims = tensor_factors(table, op, i);
  AxisList queue;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    static const DimSharding kUnsharded;
    const DimSharding& ds = d < s.dims.size() ? s.dims[d] : kUnsharded;  // (a reference, not a copy)
    std::size_t qi = 0;
    queue = ds.axes;
    const bool hidden = ds.user && effective_priority(ds) > threshold;
    bool closed_rest = ds.closed || hidden;
    for (std::size_t fi = 0; fi < dims[d].size(); ++fi) {
      const int f = dims[d][fi];
      const bool minor_most = fi + 1 == dims[d].size();
      if (!minor_most) p.must_divide[f] = 1;
      FactorSlot& slot = p.at(i, f);
      slot.present = true;
      slot.origin = ds.origin;
      int64_t cap = table.sizes[f];
      while (!hidden && qi < queue.size() && (cap > 1 || queue[qi].size == 1)) {  // size-1 axes stay with the factor
        const AxisRef a = queue[qi];
        if (cap % a.size == 0) {
          slot.axes.push_back(a);
          cap /= a.size;
          ++qi;
        } else if (a.size % cap == 0) {  // the factor takes the major part of the axis
          const auto c32 = static_cast<int32_t>(cap);  // cap < a.size here
          slot.axes.push_back({a.axis, a.pre, c32});
          queue[qi] = {a.axis, a.pre * c32, a.size / c32};
          cap = 1;
        } else if (minor_most) {  // Shardy allows a non-divisible split of the minor-most factor
          slot.axes.push_back(a);
          cap = 1;
          ++qi;
        } else if (const auto g = static_cast<int32_t>(std::gcd(cap, int64_t{a.size})); g > 1) {  // the part that fits
          slot.axes.push_back({a.axis, a.pre, g});
          queue[qi] = {a.axis, a.pre * g, a.size / g};
          cap /= g;
        } else {
          break;
        }
      }
      if (minor_most)  // the minor-most factor holds the rest of the dim
        for (; !hidden && qi < queue.size(); ++qi) slot.axes.push_back(queue[qi]);
      slot.closed = closed_rest;
      if (qi < queue.size()) slot.closed = true;  // a minor axis follows: this factor is fixed
      if (cap > 1 && qi < queue.size() && !hidden) {  // non-divisible: the rest stays on the dim only
        for (; qi < queue.size(); ++qi) reserved.push_back(queue[qi]);
        slot.closed = true;
      }
      if (cap > 1) closed_rest = true;  // a minor factor may grow only once this one is whole
    }
    for (; qi < queue.size(); ++qi) reserved.push_back(queue[qi]);  // hidden, or axes on a factorless dim
  }
}

}  // namespace

bool project(const Graph& g, const Op& op, int threshold, FactorDirs dirs, Projection& p, const int* values) {
  const FactorTable& table = g.tables[op.table];
  p.num_tensors = op.num_tensors();
  p.num_factors = table.num_factors();
  p.mesh = -1;
  if (!values) {
    p.value_ids.clear();
    for (int i = 0; i < p.num_tensors; ++i) p.value_ids.push_back(op.tensor_value(i));
    values = p.value_ids.data();
  }
  p.values = values;
  for (int i = 0; i < p.num_tensors; ++i) {
    const int m = g.shardings[values[i]].mesh;
    if (m < 0) continue;
    if (p.mesh >= 0 && m != p.mesh) return false;
    p.mesh = m;
  }
  // Reuse the slots' storage (this runs once per rule application): grow only, clear what is used.
  const std::size_t n = static_cast<std::size_t>(p.num_tensors) * p.num_factors;
  if (p.slots.size() < n) p.slots.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    FactorSlot& slot = p.slots[k];
    slot.axes.clear();
    slot.present = slot.closed = slot.grew = false;
    slot.origin = kNoOrigin;
  }
  if (p.reserved.size() < static_cast<std::size_t>(p.num_tensors)) p.reserved.resize(p.num_tensors);
  p.updatable.assign(p.num_tensors, 0);
  p.must_divide.assign(p.num_factors, 0);
  p.table = &table;
  for (int i = 0; i < p.num_tensors; ++i) {
    const int side = op.is_result(i) ? kForward : kBackward;
    p.updatable[i] = static_cast<uint8_t>(((dirs & side) != 0) | ((dirs >> 2 & side) != 0) << 1);
    project_tensor(g, op, i, threshold, p);
  }
  return true;
}

void write_back(Graph& g, const Op& op, const Projection& p, std::vector<int>& changed) {
  const FactorTable& table = g.tables[op.table];
  for (int i = 0; i < p.num_tensors; ++i) {
    const auto& dims = tensor_factors(table, op, i);
    const int v = p.values[i];
    TensorSharding& s = g.shardings[v];
    bool any = false;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      int origin = kNoOrigin;
      bool grew = false;
      for (int f : dims[d])
        if (p.at(i, f).grew) {
          grew = true;
          if (origin == kNoOrigin) origin = p.at(i, f).origin;
        }
      if (!grew) continue;
      DimSharding& ds = s.dims[d];
      AxisList axes;
      const auto& sizes = g.meshes[p.mesh].axis_sizes;
      for (int f : dims[d])
        for (const AxisRef& a : p.at(i, f).axes) append_merged(axes, a, sizes[a.axis]);
      if (axes == ds.axes) continue;
      ds.axes = std::move(axes);
      ds.origin = origin;
      any = true;
    }
    if (any) {
      s.mesh = p.mesh;
      changed.push_back(v);
    }
  }
}

}  // namespace spmd::prop
