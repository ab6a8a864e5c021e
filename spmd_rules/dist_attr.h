// How one tensor is laid out on a mesh: for each tensor dim the mesh dims that split it
// (outermost first; empty = replicated), and for each mesh dim whether the tensor is a
// partial value awaiting a reduction of that type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "spmd_limits.h"
#include "process_mesh.h"
#include "small_vector.h"

namespace spmd {

// Paddle's numbering, so reduce_base's int attribute means the same thing.
enum class ReduceType : int8_t { kSum = 0, kMax = 1, kMin = 2, kProd = 3, kAvg = 4, kAny = 5, kAll = 6 };
constexpr int kNumReduceTypes = 7;
const char* reduce_type_name(ReduceType t);
bool parse_reduce_type(const std::string& name, ReduceType* out);

using MeshDims = SmallVec<int8_t, kMaxMeshDims>;   // the mesh dims splitting one tensor dim
using DimsMapping = SmallVec<MeshDims, kMaxRank>;

class TensorDistAttr {
 public:
  TensorDistAttr() = default;
  explicit TensorDistAttr(MeshPtr mesh) : mesh_(std::move(mesh)) {}
  TensorDistAttr(MeshPtr mesh, std::size_t rank) : mesh_(std::move(mesh)) { dims_.resize(rank); }

  const MeshPtr& mesh() const { return mesh_; }
  void set_mesh(MeshPtr mesh) { mesh_ = std::move(mesh); }

  std::size_t rank() const { return dims_.size(); }
  const DimsMapping& dims() const { return dims_; }
  DimsMapping& dims() { return dims_; }
  const MeshDims& dim(std::size_t i) const { return dims_[i]; }
  void set_dim(std::size_t i, const MeshDims& m) { dims_[i] = m; }

  // Paddle's 1-D view: the first (outermost) mesh dim of each tensor dim, -1 if none.
  std::vector<int64_t> dims_mapping() const;
  void set_dims_mapping(const std::vector<int64_t>& m);
  std::vector<std::vector<int64_t>> multi_dims_mapping() const;
  void set_multi_dims_mapping(const std::vector<std::vector<int64_t>>& m);

  bool is_partial() const { return partial_mask_ != 0; }
  bool is_partial_on(int mesh_dim) const { return (partial_mask_ >> mesh_dim) & 1u; }
  ReduceType partial_type(int mesh_dim) const { return partial_type_[mesh_dim]; }
  uint8_t partial_mask() const { return partial_mask_; }
  void set_partial(int mesh_dim, ReduceType t) {
    partial_mask_ |= static_cast<uint8_t>(1u << mesh_dim);
    partial_type_[mesh_dim] = t;
  }
  void clear_partial(int mesh_dim) { partial_mask_ &= static_cast<uint8_t>(~(1u << mesh_dim)); }
  void clear_partial() { partial_mask_ = 0; }
  std::vector<int64_t> partial_dims() const;

  // Every mesh dim in range, used at most once, and not both splitting and partial.
  // problem() says what is wrong ("" if nothing: no allocation on the good path);
  // validate() throws ValueError with it, after `what` (e.g. "matmul: input 'x'").
  std::string problem() const;
  void validate(const std::string& what) const;
  std::string to_string() const;

  friend bool operator==(const TensorDistAttr& a, const TensorDistAttr& b);

 private:
  MeshPtr mesh_;
  DimsMapping dims_;
  uint8_t partial_mask_ = 0;
  ReduceType partial_type_[kMaxMeshDims]{};
};

}  // namespace spmd
