#include "process_mesh.h"

#include "errors.h"
#include "spmd_limits.h"

namespace spmd {

ProcessMesh::ProcessMesh(std::vector<int64_t> shape, std::vector<int64_t> process_ids,
                         std::vector<std::string> dim_names)
    : shape_(std::move(shape)), process_ids_(std::move(process_ids)), dim_names_(std::move(dim_names)) {
  if (shape_.size() > kMaxMeshDims)
    throw ValueError("ProcessMesh: at most " + std::to_string(kMaxMeshDims) + " mesh dims are supported, got " +
                     std::to_string(shape_.size()));
  int64_t n = 1;
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] <= 0)
      throw ValueError("ProcessMesh: mesh dim " + std::to_string(i) + " has size " + std::to_string(shape_[i]));
    n *= shape_[i];
  }
  if (n != static_cast<int64_t>(process_ids_.size()))
    throw ValueError("ProcessMesh: shape holds " + std::to_string(n) + " processes but " +
                     std::to_string(process_ids_.size()) + " process ids were given");
  if (dim_names_.empty())
    for (std::size_t i = 0; i < shape_.size(); ++i) dim_names_.push_back("d" + std::to_string(i));
  if (dim_names_.size() != shape_.size())
    throw ValueError("ProcessMesh: " + std::to_string(dim_names_.size()) + " dim names for " +
                     std::to_string(shape_.size()) + " mesh dims");
}

static std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string ProcessMesh::to_string() const {
  std::string names;
  for (std::size_t i = 0; i < dim_names_.size(); ++i) names += (i ? "," : "") + dim_names_[i];
  return "{shape: [" + join(shape_) + "], process_ids: [" + join(process_ids_) + "], dim_names: [" + names + "]}";
}

}  // namespace spmd
