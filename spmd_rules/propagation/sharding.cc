#include "sharding.h"

namespace spmd::prop {

void append_merged(AxisList& list, const AxisRef& a, int64_t axis_size) {
  if (!list.empty()) {
    AxisRef& last = list.back();
    if (last.axis == a.axis && last.pre * last.size == a.pre) {
      last.size *= a.size;
      return;
    }
  }
  list.push_back(a);
  (void)axis_size;
}

int64_t product(const AxisList& list) {
  int64_t p = 1;
  for (const AxisRef& a : list) p *= a.size;
  return p;
}

bool uses_overlapping(const AxisList& list, const AxisRef& a) {
  for (const AxisRef& b : list)
    if (b.overlaps(a)) return true;
  return false;
}

std::string axis_to_string(const Mesh& mesh, const AxisRef& a) {
  std::string s = "\"" + mesh.axis_names[a.axis] + "\"";
  if (a.pre != 1 || a.size != mesh.axis_sizes[a.axis]) s += ":(" + std::to_string(a.pre) + ")" + std::to_string(a.size);
  return s;
}

}  // namespace spmd::prop
