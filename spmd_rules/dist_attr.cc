#include "dist_attr.h"

#include "errors.h"

namespace spmd {

static const char* const kReduceNames[kNumReduceTypes] = {"sum", "max", "min", "prod", "avg", "any", "all"};

const char* reduce_type_name(ReduceType t) { return kReduceNames[static_cast<int>(t)]; }

bool parse_reduce_type(const std::string& name, ReduceType* out) {
  for (int i = 0; i < kNumReduceTypes; ++i)
    if (name == kReduceNames[i]) {
      *out = static_cast<ReduceType>(i);
      return true;
    }
  return false;
}

std::vector<int64_t> TensorDistAttr::dims_mapping() const {
  std::vector<int64_t> out(dims_.size(), -1);
  for (std::size_t i = 0; i < dims_.size(); ++i)
    if (!dims_[i].empty()) out[i] = dims_[i][0];
  return out;
}

static int8_t checked_mesh_dim(int64_t d) {
  // Range against the mesh is checked by validate(); here only what fits the storage.
  if (d < -1 || d >= static_cast<int64_t>(kMaxMeshDims))
    throw ValueError("mesh dim " + std::to_string(d) + " is out of range");
  return static_cast<int8_t>(d);
}

void TensorDistAttr::set_dims_mapping(const std::vector<int64_t>& m) {
  if (m.size() > kMaxRank) throw ValueError("tensors of rank > " + std::to_string(kMaxRank) + " are not supported");
  dims_.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    dims_[i].clear();
    int8_t d = checked_mesh_dim(m[i]);
    if (d >= 0) dims_[i].push_back(d);
  }
}

std::vector<std::vector<int64_t>> TensorDistAttr::multi_dims_mapping() const {
  std::vector<std::vector<int64_t>> out(dims_.size());
  for (std::size_t i = 0; i < dims_.size(); ++i) out[i].assign(dims_[i].begin(), dims_[i].end());
  return out;
}

void TensorDistAttr::set_multi_dims_mapping(const std::vector<std::vector<int64_t>>& m) {
  if (m.size() > kMaxRank) throw ValueError("tensors of rank > " + std::to_string(kMaxRank) + " are not supported");
  dims_.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    dims_[i].clear();
    for (int64_t d : m[i]) {
      if (d == -1) continue;  // tolerate Paddle-style [-1] for "replicated"
      if (dims_[i].size() >= kMaxMeshDims) throw ValueError("tensor dim " + std::to_string(i) + " has too many mesh dims");
      dims_[i].push_back(checked_mesh_dim(d));
    }
  }
}

std::vector<int64_t> TensorDistAttr::partial_dims() const {
  std::vector<int64_t> out;
  for (int d = 0; d < static_cast<int>(kMaxMeshDims); ++d)
    if (is_partial_on(d)) out.push_back(d);
  return out;
}

std::string TensorDistAttr::problem() const {
  if (!mesh_) return "has no process_mesh";
  const int nd = mesh_->ndim();
  uint32_t used = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i)
    for (int8_t d : dims_[i]) {
      if (d < 0 || d >= nd)
        return "dim " + std::to_string(i) + " is mapped to mesh dim " + std::to_string(d) + ", but the mesh has " +
               std::to_string(nd) + " dims";
      if (used & (1u << d))
        return "mesh dim " + std::to_string(d) + " is used twice (again at tensor dim " + std::to_string(i) + ")";
      used |= 1u << d;
    }
  for (int d = 0; d < static_cast<int>(kMaxMeshDims); ++d) {
    if (!is_partial_on(d)) continue;
    if (d >= nd) return "partial on mesh dim " + std::to_string(d) + ", but the mesh has " + std::to_string(nd) + " dims";
    if (used & (1u << d)) return "mesh dim " + std::to_string(d) + " both splits a dim and is partial";
  }
  return std::string();
}

void TensorDistAttr::validate(const std::string& what) const {
  std::string p = problem();
  if (p.empty()) return;
  throw ValueError(what + (p.compare(0, 4, "has ") == 0 ? " " : ": ") + p);
}

std::string TensorDistAttr::to_string() const {
  std::string s = "{process_mesh: " + (mesh_ ? mesh_->to_string() : std::string("none")) + ", dims_mapping: [";
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    s += i ? ", " : "";
    if (dims_[i].empty()) s += "-1";
    else if (dims_[i].size() == 1) s += std::to_string(dims_[i][0]);
    else {
      s += "[";
      for (std::size_t j = 0; j < dims_[i].size(); ++j) s += (j ? "," : "") + std::to_string(dims_[i][j]);
      s += "]";
    }
  }
  s += "], partial: {";
  bool first = true;
  for (int d = 0; d < static_cast<int>(kMaxMeshDims); ++d)
    if (is_partial_on(d)) {
      s += (first ? "" : ", ") + std::to_string(d) + ": " + reduce_type_name(partial_type_[d]);
      first = false;
    }
  return s + "}}";
}

bool operator==(const TensorDistAttr& a, const TensorDistAttr& b) {
  if (a.partial_mask_ != b.partial_mask_ || a.dims_ != b.dims_) return false;
  for (int d = 0; d < static_cast<int>(kMaxMeshDims); ++d)
    if (a.is_partial_on(d) && a.partial_type_[d] != b.partial_type_[d]) return false;
  if (a.mesh_ == b.mesh_) return true;
  return a.mesh_ && b.mesh_ && *a.mesh_ == *b.mesh_;
}

}  // namespace spmd
