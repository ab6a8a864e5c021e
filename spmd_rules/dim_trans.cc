#include "dim_trans.h"

#include "errors.h"

namespace spmd {

std::string DimTrans::to_string() const {
  if (inputs.empty()) return "Singleton()";
  std::string s;
  if (inputs.size() == 1) s = "InputDim(" + std::to_string(inputs[0]) + ")";
  else {
    s = "Flatten(";
    for (std::size_t i = 0; i < inputs.size(); ++i) s += (i ? "," : "") + std::string("InputDim(") + std::to_string(inputs[i]) + ")";
    s += ")";
  }
  if (split.empty()) return s;
  std::string shape;
  for (std::size_t i = 0; i < split.size(); ++i) shape += (i ? "," : "") + std::to_string(split[i]);
  return "Split(" + s + ", (" + shape + "), " + std::to_string(split_id) + ")";
}

Shape resolve_reshape_target(const std::string& op, const Shape& src, const std::vector<int64_t>& shape) {
  if (shape.size() > kMaxRank) throw ValueError(op + ": attribute 'shape' has more than " + std::to_string(kMaxRank) + " dims");
  // An input dim of unknown size (-1, a dynamic dim) is only allowed where the shape copies it
  // with 0: it stays a dim of its own (of unknown size), and the sizes are counted without it.
  for (std::size_t i = 0; i < src.size(); ++i)
    if (src[i] < 0 && (i >= shape.size() || shape[i] != 0))
      throw ValueError(op + ": input 'x' has unknown size at dim " + std::to_string(i) +
                       ", which attribute 'shape' does not copy with 0; reshaping it needs its size");
  Shape tgt;
  int unknown = -1;
  int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0) {
      if (i >= src.size())
        throw ValueError(op + ": attribute 'shape' has 0 at dim " + std::to_string(i) + ", but the input has rank " +
                         std::to_string(src.size()));
      d = src[i];
      if (d < 0) {  // a copied dynamic dim
        tgt.push_back(d);
        continue;
      }
    } else if (d == -1) {
      if (unknown >= 0)
        throw ValueError(op + ": attribute 'shape' has -1 at dims " + std::to_string(unknown) + " and " +
                         std::to_string(i) + "; at most one dim can be inferred");
      unknown = static_cast<int>(i);
    } else if (d < 0) {
      throw ValueError(op + ": attribute 'shape' has size " + std::to_string(d) + " at dim " + std::to_string(i));
    }
    tgt.push_back(d);
    if (d != -1) known *= d;
  }
  int64_t total = 1;
  for (int64_t d : src)
    if (d >= 0) total *= d;
  if (unknown >= 0) {
    if (known == 0 || total % known != 0)
      throw ValueError(op + ": cannot infer dim " + std::to_string(unknown) + " of attribute 'shape': " +
                       std::to_string(total) + " elements do not divide into " + std::to_string(known));
    tgt[unknown] = total / known;
  } else if (known != total) {
    throw ValueError(op + ": attribute 'shape' holds " + std::to_string(known) + " elements, but the input holds " +
                     std::to_string(total));
  }
  return tgt;
}

DimTrans make_split(const SmallVec<int8_t, kMaxRank>& inputs, const SmallVec<int64_t, kMaxRank>& parts, std::size_t p) {
  DimTrans dt;
  if (parts[p] == 1) return dt;
  dt.inputs = inputs;
  if (parts.size() == 1) return dt;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == 1) continue;
    if (i < p) ++dt.split_id;
    dt.split.push_back(parts[i]);
  }
  return dt;
}

DimTransList reshape_dim_trans(const Shape& src, const Shape& tgt, const std::string& op) {
  auto unaligned = [&]() {
    return ValueError(op + ": a dim of unknown size (-1) does not line up with one of unknown size in the result; "
                           "only a dim that stays as it is may be dynamic");
  };
  // Walk both shapes at once; each step consumes a group of src dims and a group of tgt dims
  // of equal size. A size-1 dim on one side alone is consumed on its own.
  DimTransList out;
  std::size_t si = 0, ti = 0;
  while (si < src.size() || ti < tgt.size()) {
    SmallVec<int8_t, kMaxRank> group;
    SmallVec<int64_t, kMaxRank> parts;
    int64_t s = 1, t = 1;
    if (si < src.size()) {
      s = src[si];
      group.push_back(static_cast<int8_t>(si++));
    }
    if (ti < tgt.size()) {
      t = tgt[ti];
      parts.push_back(tgt[ti++]);
    }
    if ((s < 0 || t < 0) && s != 1 && t != 1) {
      // A dim of unknown size (copied with 0) maps to itself, never merged or cut.
      if (s >= 0 || t >= 0) throw unaligned();
      out.push_back(make_split(group, parts, 0));
      continue;
    }
    if (s == 1 && t != 1 && !group.empty()) {
      --ti;  // a size-1 source dim alone: it vanishes
      parts.clear();
    } else if (s != 1 && t == 1 && !parts.empty()) {
      --si;  // a size-1 target dim alone: it comes from nothing
      group.clear();
    } else {
      while (s != t) {
        if ((s < t && si < src.size() && src[si] < 0) || (s > t && ti < tgt.size() && tgt[ti] < 0)) throw unaligned();
        if (s < t) {
          if (si >= src.size()) break;
          group.push_back(static_cast<int8_t>(si));
          s *= src[si++];
        } else {
          if (ti >= tgt.size()) break;
          parts.push_back(tgt[ti]);
          t *= tgt[ti++];
        }
      }
    }
    if (parts.empty()) continue;
    SmallVec<int8_t, kMaxRank> dims;
    for (int8_t d : group)
      if (src[d] != 1) dims.push_back(d);
    for (std::size_t p = 0; p < parts.size(); ++p) out.push_back(make_split(dims, parts, p));
  }
  return out;
}

// A dim split over several mesh dims and cut into parts none of which takes the whole split (4
// heads over (a, b), |a| = |b| = 2, cut into 2 x 2): its mesh dims, major first, fill the parts
// in order, a part taking the next mesh dim while it still divides the part, and the next part
// starting only once this one is split all the way. The input keeps the mesh dims placed that way
// (each device's block of the dim is then a block of the parts): (a, b) -> 2 over a, 2 over b, as
// Shardy's factors give it. Without any placed, the dim is left whole, as before.
static void split_over_parts(const DistMetaTensor& in, const DimTransList& trans, int8_t d, const MeshDims& m,
                             DimTransResult& r) {
  SmallVec<int8_t, kMaxRank> outs;  // the output dim of each part, in part order
  SmallVec<int64_t, kMaxRank> sizes;
  for (std::size_t o = 0; o < trans.size(); ++o) {
    const DimTrans& t = trans[o];
    if (t.split.empty() || t.inputs.size() != 1 || t.inputs[0] != d) continue;
    if (outs.empty()) sizes = t.split;
    if (static_cast<std::size_t>(t.split_id) != outs.size()) return;  // parts out of order: not expected
    outs.push_back(static_cast<int8_t>(o));
  }
  if (outs.size() != sizes.size()) return;
  const MeshPtr& mesh = in.attr.mesh();
  MeshDims kept;
  MeshDims per_part[kMaxRank];
  std::size_t p = 0;
  int64_t filled = 1;
  for (int8_t x : m) {
    const int64_t k = mesh->dim_size(x);
    if (p >= sizes.size() || sizes[p] % (filled * k) != 0) break;
    per_part[p].push_back(x);
    kept.push_back(x);
    filled *= k;
    if (filled == sizes[p]) {
      ++p;
      filled = 1;
    }
  }
  if (kept.empty()) return;
  r.input.set_dim(d, kept);
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (!per_part[i].empty()) r.output.set_dim(outs[i], per_part[i]);
}

DimTransResult infer_from_dim_trans(const DistMetaTensor& in, const DimTransList& trans, bool absorb) {
  const std::size_t rank = in.rank();
  const MeshPtr& mesh = in.attr.mesh();
  auto shards = [&](const MeshDims& m) {
    int64_t n = 1;
    for (int8_t d : m) n *= mesh->dim_size(d);
    return n;
  };
  // For each input dim: the output dim that carries its split, or -1 if it cannot keep one.
  int8_t target[kMaxRank];
  for (std::size_t d = 0; d < rank; ++d) target[d] = -1;
  // Per input dim, the size of the leading split part it would become (0: no check).
  int64_t part_size[kMaxRank] = {};
  DimsMapping dims = in.attr.dims();
  for (std::size_t o = 0; o < trans.size(); ++o) {
    const DimTrans& t = trans[o];
    if (t.singleton()) continue;
    if (!t.split.empty() && t.split_id != 0) continue;  // only the leading part can hold a split
    const int8_t lead = t.inputs[0];
    target[lead] = static_cast<int8_t>(o);
    if (!t.split.empty()) part_size[lead] = t.split[0];
    // The leading dim of a flatten may take over the splits of the dims flattened after it, as
    // long as it still divides evenly: the flattened dim is then split the same way.
    if (!absorb || dims[lead].empty()) continue;
    for (std::size_t j = 1; j < t.inputs.size(); ++j) {
      const MeshDims& next = dims[t.inputs[j]];
      if (next.empty()) break;
      MeshDims joined = dims[lead];
      bool clash = false;
      for (int8_t m : next) {
        clash |= joined.contains(m);
        if (!clash) joined.push_back(m);
      }
      const int64_t n = shards(joined);
      if (clash || in.shape[lead] % n != 0 || (part_size[lead] > 0 && part_size[lead] % n != 0)) break;
      dims[lead] = joined;
      dims[t.inputs[j]].clear();
    }
  }
  DimTransResult r{TensorDistAttr(mesh, rank), TensorDistAttr(mesh, trans.size())};
  for (std::size_t d = 0; d < rank; ++d) {
    const MeshDims& m = dims[d];
    if (m.empty() || target[d] < 0 || in.shape[d] == 1) continue;
    const int64_t ways = shards(m);
    const DimTrans& t = trans[target[d]];
    // Flattened with later dims, the input dim itself must split evenly to stay a block split.
    if (t.inputs.size() > 1 && in.shape[d] % ways != 0) continue;
    if (part_size[d] > 0 && part_size[d] % ways != 0) {
      if (t.inputs.size() == 1) split_over_parts(in, trans, static_cast<int8_t>(d), m, r);
      continue;
    }
    r.input.set_dim(d, m);
    r.output.set_dim(target[d], m);
  }
  return r;
}

static void check_x(const std::string& op, const char* role, const char* name, const DistMetaTensor& t) {
  const std::string what = op + ": " + role + " '" + name + "'";
  if (t.attr.rank() != t.rank())
    throw ValueError(what + ": dims_mapping has " + std::to_string(t.attr.rank()) + " entries but the shape has rank " +
                     std::to_string(t.rank()));
  t.attr.validate(what);
}

// The mapping with each co-split dim read as its largest mesh dim (first on a tie).
static TensorDistAttr view_1d(const TensorDistAttr& a) {
  TensorDistAttr v = a;
  for (std::size_t d = 0; d < a.rank(); ++d) {
    const MeshDims& m = a.dim(d);
    if (m.size() < 2) continue;
    int8_t best = m[0];
    for (int8_t x : m)
      if (a.mesh()->dim_size(x) > a.mesh()->dim_size(best)) best = x;
    v.set_dim(d, MeshDims{best});
  }
  return v;
}

SpmdInfo dim_trans_forward(const std::string& op, const DistMetaTensor& x_in, const Shape& out_shape,
                           DimTransOptions options) {
  const bool keep_partial = options.keep_partial;
  const DistMetaTensor x = options.view_1d ? DistMetaTensor(x_in.shape, view_1d(x_in.attr)) : x_in;
  check_x(op, "input", "x", x);
  DimTransList trans = reshape_dim_trans(x.shape, out_shape, op);  // unknown dims map to themselves
  DimTransResult r = infer_from_dim_trans(x, trans, /*absorb=*/true);
  for (int64_t m : keep_partial ? x.attr.partial_dims() : std::vector<int64_t>()) {
    r.input.set_partial(m, x.attr.partial_type(m));
    r.output.set_partial(m, x.attr.partial_type(m));
  }
  SpmdInfo info;
  info.inputs.emplace_back(std::move(r.input));
  info.outputs.emplace_back(std::move(r.output));
  return info;
}

SpmdInfo dim_trans_reverse(const std::string& op, const DistMetaTensor& x, const DistMetaTensor& out,
                           const Shape& out_shape, const DimTransList& trans, DimTransOptions options) {
  const bool keep_partial = options.keep_partial;
  // Only x's shape is read here (its layout is what this infers), so its dims_mapping is not
  // checked: Paddle's own tests give a reverse rule an x whose shape was changed alone.
  (void)x;
  check_x(op, "output", "out", out);
  if (out.shape.size() != out_shape.size())
    throw ValueError(op + ": output 'out' has rank " + std::to_string(out.rank()) + ", but the attributes give rank " +
                     std::to_string(out_shape.size()));
  // Paddle's reverse rules read a co-split output dim as its largest mesh dim; doing the same
  // loses nothing a reverse rule is asked for and keeps the answers equal.
  DistMetaTensor src(out_shape, view_1d(out.attr));
  DimTransResult r = infer_from_dim_trans(src, trans, /*absorb=*/false);
  // A partial output asks for an input partial the same way (reshaping is linear).
  for (int64_t m : keep_partial ? out.attr.partial_dims() : std::vector<int64_t>()) {
    const bool split = [&] {
      for (const MeshDims& d : r.input.dims())
        if (d.contains(static_cast<int8_t>(m))) return true;
      return false;
    }();
    if (split) continue;
    r.input.set_partial(static_cast<int>(m), out.attr.partial_type(static_cast<int>(m)));
    r.output.set_partial(static_cast<int>(m), out.attr.partial_type(static_cast<int>(m)));
  }
  SpmdInfo info;
  info.inputs.emplace_back(std::move(r.output));
  info.outputs.emplace_back(std::move(r.input));
  return info;
}

}  // namespace spmd
