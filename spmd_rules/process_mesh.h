// A logical grid of devices. Shared, immutable: every dist attr on the mesh points to one copy.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace spmd {

class ProcessMesh {
 public:
  ProcessMesh(std::vector<int64_t> shape, std::vector<int64_t> process_ids,
              std::vector<std::string> dim_names);

  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& process_ids() const { return process_ids_; }
  const std::vector<std::string>& dim_names() const { return dim_names_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim_size(int mesh_dim) const { return shape_[mesh_dim]; }
  int64_t size() const { return static_cast<int64_t>(process_ids_.size()); }
  std::string to_string() const;

  friend bool operator==(const ProcessMesh& a, const ProcessMesh& b) {
    return a.shape_ == b.shape_ && a.process_ids_ == b.process_ids_ && a.dim_names_ == b.dim_names_;
  }

 private:
  std::vector<int64_t> shape_;
  std::vector<int64_t> process_ids_;
  std::vector<std::string> dim_names_;
};

using MeshPtr = std::shared_ptr<const ProcessMesh>;

}  // namespace spmd
