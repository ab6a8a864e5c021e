#include "graph.h"

#include <climits>

#include "errors.h"

namespace spmd::prop {
namespace {

std::string value_label(const Graph& g, int v) {
  return "value " + std::to_string(v) + (g.names[v].empty() ? "" : " '" + g.names[v] + "'");
}

void check_axes(const Graph& g, int v) {
  const TensorSharding& s = g.shardings[v];
  const bool has_axes = !s.replicated.empty() || [&] {
    for (const DimSharding& d : s.dims)
      if (!d.axes.empty()) return true;
    return false;
  }();
  if (s.mesh < -1 || s.mesh >= static_cast<int>(g.meshes.size()))
    throw ValueError(value_label(g, v) + ": mesh " + std::to_string(s.mesh) + " does not exist");
  if (has_axes && s.mesh < 0) throw ValueError(value_label(g, v) + ": a sharding with axes needs a mesh");
  if (s.dims.size() != g.shapes[v].size())
    throw ValueError(value_label(g, v) + ": sharding has " + std::to_string(s.dims.size()) + " dims, the value has rank " +
                     std::to_string(g.shapes[v].size()));
  AxisList seen;
  // `dim`: the dim the axis is in (-1: the replicated axes); its label is built only on an error
  auto check = [&](const AxisRef& a, int dim) {
    auto where = [&] { return dim < 0 ? std::string("replicated axes") : "dim " + std::to_string(dim); };
    const Mesh& m = g.meshes[s.mesh];
    if (a.axis < 0 || a.axis >= static_cast<int>(m.axis_sizes.size()))
      throw ValueError(value_label(g, v) + " " + where() + ": axis index " + std::to_string(a.axis) + " is not in mesh '" + m.name + "'");
    const int64_t n = m.axis_sizes[a.axis];
    if (a.pre < 1 || a.size < 1 || n % (a.pre * a.size) != 0)
      throw ValueError(value_label(g, v) + " " + where() + ": sub-axis (" + std::to_string(a.pre) + ")" + std::to_string(a.size) +
                       " does not divide axis '" + m.axis_names[a.axis] + "' of size " + std::to_string(n));
    if (uses_overlapping(seen, a))
      throw ValueError(value_label(g, v) + " " + where() + ": axis " + axis_to_string(m, a) + " is used twice");
    seen.push_back(a);
  };
  for (std::size_t d = 0; d < s.dims.size(); ++d)
    for (const AxisRef& a : s.dims[d].axes) check(a, static_cast<int>(d));
  for (const AxisRef& a : s.replicated) check(a, -1);
}

// Checks one op; the message (with its op label) is built only when something is wrong, since
// this runs over every op at the start of each propagation.
void check_op(const Graph& g, int o, std::vector<uint8_t>& used) {
  const Op& op = g.ops[o];
  auto fail = [&](const std::string& what) {
    throw ValueError("op " + std::to_string(o) + " '" + op.name + "': " + what);
  };
  if (op.table < 0 || op.table >= static_cast<int>(g.tables.size())) fail("no factor table");
  const FactorTable& t = g.tables[op.table];
  if (t.operands.size() != op.operands.size() || t.results.size() != op.results.size())
    fail("the factor table has " + std::to_string(t.operands.size()) + " operands and " + std::to_string(t.results.size()) +
         " results, the op " + std::to_string(op.operands.size()) + " and " + std::to_string(op.results.size()));
  if (t.kinds.size() != t.sizes.size() || t.blocked.size() != t.sizes.size())
    fail("the factor table's kinds/blocked do not match its factor count");
  for (int i = 0; i < op.num_tensors(); ++i) {
    const int v = op.tensor_value(i);
    if (v < 0 || v >= g.num_values()) fail("tensor " + std::to_string(i) + " names no value (" + std::to_string(v) + ")");
    const auto& dims = op.is_result(i) ? t.results[i - op.operands.size()] : t.operands[i];
    const auto& shape = g.shapes[v];
    if (dims.size() != shape.size())
      fail(value_label(g, v) + " has rank " + std::to_string(shape.size()) + ", the factor table gives it " +
           std::to_string(dims.size()) + " dims");
    used.assign(t.sizes.size(), 0);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      int64_t size = 1;
      for (int f : dims[d]) {
        if (f < 0 || f >= t.num_factors()) fail("dim " + std::to_string(d) + " names factor " + std::to_string(f) + " that does not exist");
        if (used[f]) fail("factor " + std::to_string(f) + " appears twice in " + value_label(g, v));
        used[f] = 1;
        size *= t.sizes[f];
      }
      // A permutation factor (slice, pad, concatenate) may differ in size between tensors.
      const bool permuted = dims[d].size() == 1 && t.kinds[dims[d][0]] == FactorTable::Kind::kPermutation;
      // A dim of size-1 factors only is never split and shares nothing (Shardy's convention for a
      // convolution's kernel spatial dims, a dynamic_slice's sliced dims): any size.
      if (size != shape[d] && !(dims[d].empty() && shape[d] == 1) && !permuted && size != 1)
        fail("dim " + std::to_string(d) + " of " + value_label(g, v) + " has size " + std::to_string(shape[d]) +
             ", its factors multiply to " + std::to_string(size));
    }
  }
}

}  // namespace

int64_t Graph::num_elements(int v) const {
  int64_t n = 1;
  for (int64_t d : shapes[v]) n *= d;
  return n;
}

void Graph::validate() const {
  if (names.size() != shapes.size() || shardings.size() != shapes.size())
    throw ValueError("propagation graph: names/shardings/shapes have different lengths");
  for (const Mesh& m : meshes) {
    if (m.axis_sizes.size() > 64) throw ValueError("mesh '" + m.name + "': more than 64 axes");
    for (int64_t s : m.axis_sizes)
      if (s < 1 || s > INT32_MAX) throw ValueError("mesh '" + m.name + "': axis sizes must be in 1.." + std::to_string(INT32_MAX));
  }
  for (int v = 0; v < num_values(); ++v) check_axes(*this, v);
  std::vector<uint8_t> used;  // per factor of the op being checked
  for (; ops_checked < static_cast<int>(ops.size()); ++ops_checked) check_op(*this, ops_checked, used);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (int v : groups[gi]) {
      if (v < 0 || v >= num_values()) throw ValueError("sharding group " + std::to_string(gi) + ": no value " + std::to_string(v));
      if (shapes[v] != shapes[groups[gi][0]])
        throw ValueError("sharding group " + std::to_string(gi) + ": " + value_label(*this, v) + " and " +
                         value_label(*this, groups[gi][0]) + " have different shapes");
    }
}

void Graph::validate_sharding(int v) const { check_axes(*this, v); }

void Graph::check_new_ops() const {
  std::vector<uint8_t> used;
  try {
    for (; ops_checked < static_cast<int>(ops.size()); ++ops_checked) check_op(*this, ops_checked, used);
  } catch (const ValueError&) {
    // left for validate(), which reports it (a value added later may still make the op valid)
  }
}

std::string Graph::sharding_to_string(int v) const {
  const TensorSharding& s = shardings[v];
  if (s.mesh < 0) {
    std::string out = "[";
    for (std::size_t d = 0; d < s.dims.size(); ++d) out += (d ? ", " : "") + std::string("{?}");
    return out + "]";
  }
  const Mesh& m = meshes[s.mesh];
  std::string out = "<@" + m.name + ", [";
  // a maximal mesh (one device, no axes): Shardy writes its sharding without dims
  for (std::size_t d = 0; d < s.dims.size() && !m.axis_sizes.empty(); ++d) {
    const DimSharding& dim = s.dims[d];
    out += d ? ", {" : "{";
    for (std::size_t i = 0; i < dim.axes.size(); ++i) out += (i ? ", " : "") + axis_to_string(m, dim.axes[i]);
    if (!dim.closed) out += dim.axes.empty() ? "?" : ", ?";
    out += "}";
    if (dim.priority >= 0) out += "p" + std::to_string(dim.priority);
  }
  out += "]";
  if (!s.replicated.empty()) {
    out += ", replicated={";
    for (std::size_t i = 0; i < s.replicated.size(); ++i) out += (i ? ", " : "") + axis_to_string(m, s.replicated[i]);
    out += "}";
  }
  return out + ">";
}

}  // namespace spmd::prop
