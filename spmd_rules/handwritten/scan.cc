#include "handwritten/scan.h"

#include "generated_support.h"

namespace spmd {

namespace {

EinsumOptions legacy_keep() {
  return einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kKeep, /*divisible=*/true,
                        /*keep_input_partial=*/false, /*sources=*/~0u);
}

// Every tensor whole: the rule checks x and lays out tensors of the given ranks replicated.
SpmdInfo all_whole(const DistMetaTensor& x, std::initializer_list<int> out_ranks) {
  // EinsumCall validates x (mapping length, mesh dims) and replicates its group.
  static const EinsumRule rule("unique", "X -> X", {"x"}, {"out"}, legacy_keep());
  EinsumCall call(rule);
  call.input(0, x);
  call.replicate_letter('X');
  SpmdInfo info = call.forward();
  const MeshPtr& mesh = x.attr.mesh();
  info.outputs.clear();
  for (int r : out_ranks) info.outputs.emplace_back(TensorDistAttr(mesh, static_cast<std::size_t>(r)));
  return info;
}

}  // namespace

SpmdInfo UniqueSpmd(const DistMetaTensor& x, bool return_index, bool return_inverse, bool return_counts,
                    const std::vector<int64_t>& axis, const std::string&) {
  // out keeps x's rank when unique runs along an axis, else it is 1-D; the optional outputs are
  // 1-D, and rank-0 placeholders when not asked for (as Paddle returns them).
  const int out_rank = axis.empty() ? 1 : static_cast<int>(x.rank());
  return all_whole(x, {out_rank, return_index ? 1 : 0, return_inverse ? 1 : 0, return_counts ? 1 : 0});
}

}  // namespace spmd
