#include "handwritten/slice_concat.h"

#include <algorithm>

#include "generated_support.h"

namespace spmd {

namespace {

// Paddle's 1-D view of a dim split over several mesh dims: the largest, the first on a tie.
int8_t view_1d(const MeshDims& m, const ProcessMesh& mesh) {
  int8_t best = m[0];
  for (int8_t d : m)
    if (mesh.dim_size(d) > mesh.dim_size(best)) best = d;
  return best;
}

}  // namespace

SpmdInfo StridedSliceSpmd(const DistMetaTensor& input, const std::vector<int64_t>& axes,
                          const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                          const std::vector<int64_t>& strides) {
  static const EinsumRule rule("strided_slice", "... -> ...", {"input"}, {"out"},
                               einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kClear, /*divisible=*/true,
                                              /*keep_input_partial=*/false, /*sources=*/~0u));
  if (starts.size() != axes.size() || ends.size() != axes.size() || strides.size() != axes.size())
    throw ValueError("strided_slice: attributes 'starts', 'ends' and 'strides' have " + std::to_string(starts.size()) +
                     ", " + std::to_string(ends.size()) + " and " + std::to_string(strides.size()) +
                     " entries; they need one per entry of 'axes' (" + std::to_string(axes.size()) + ")");
  for (std::size_t i = 0; i < strides.size(); ++i)
    if (strides[i] == 0) throw ValueError("strided_slice: attribute 'strides' has a 0 at entry " + std::to_string(i));
  EinsumCall call(rule);
  call.input(0, input);
  // The one case a split of a strided dim stays, as Paddle keeps it but only where it is right:
  // the last dim alone, with a positive stride k, split into n shards. With N elements in equal
  // shards of L (k dividing L), a start s < k that every shard reads the same way (0 <= s, or
  // s <= -N: 0) and an end past N - k + s (a negative end counts from each shard's end, which
  // then cuts no selected element), each rank takes L / k elements at offsets s, s + k, ...: its
  // block of the N / k results. Uneven shards only allow the identity (k = 1, all of the dim).
  const int64_t rank = static_cast<int64_t>(input.rank());
  bool keep_last = false;
  if (axes.size() == 1 && rank > 0 && (axes[0] == rank - 1 || axes[0] == -1) && input.attr.rank() == input.rank() &&
      !input.attr.dim(rank - 1).empty() && input.attr.mesh()) {
    const int64_t N = input.shape[rank - 1], k = strides[0];
    const int64_t n = input.attr.mesh()->dim_size(view_1d(input.attr.dim(rank - 1), *input.attr.mesh()));
    if (N > 0 && k > 0 && n > 0) {
      const int64_t s = starts[0] >= 0 ? starts[0] : (starts[0] <= -N ? 0 : -1);  // -1: shards would misread it
      const int64_t e = ends[0] >= 0 ? std::min(ends[0], N) : std::max<int64_t>(ends[0] + N, 0);
      if (N % n == 0) keep_last = (N / n) % k == 0 && s >= 0 && s < k && e > N - k + s;
      else keep_last = k == 1 && s == 0 && e == N && ends[0] >= N;
    }
  }
  static const std::vector<int64_t> kNone;
  call.whole_axes(0, keep_last ? kNone : axes, /*empty_all=*/false, "axes");
  return call.forward();
}

}  // namespace spmd
