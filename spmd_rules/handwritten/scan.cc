#include "handwritten/scan.h"

#include "generated_support.h"

namespace spmd {

namespace {

EinsumOptions legacy_keep() {
  return einsum_options(ReduceType::kSum, Merge::kLegacy, Ones::kKeep, /*divisible=*/true,
                        /*keep_input_partial=*/false, /*sources=*/~0u);
}

// Every tensor whole: the rule checks x and lays out tensors of the given ranks replicated.
SpmdInfo all_whole(const char* op, const DistMetaTensor& x, std::initializer_list<int> out_ranks) {
  // EinsumCall validates x (mapping length, mesh dims) and replicates its group.
  static const EinsumRule unique_rule("unique", "X -> X", {"x"}, {"out"}, legacy_keep());
  static const EinsumRule nonzero_rule("nonzero", "X -> X", {"x"}, {"out"}, legacy_keep());
  EinsumCall call(std::string(op) == "unique" ? unique_rule : nonzero_rule);
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
  return all_whole("unique", x, {out_rank, return_index ? 1 : 0, return_inverse ? 1 : 0, return_counts ? 1 : 0});
}

SpmdInfo NonzeroSpmd(const DistMetaTensor& x) { return all_whole("nonzero", x, {2}); }

SpmdInfo NonzeroSpmdReverse(const DistMetaTensor& x, const DistMetaTensor& out) {
  if (out.rank() != 2)
    throw ValueError("nonzero: output 'out' has rank " + std::to_string(out.rank()) + ", but must have rank 2");
  return all_whole("nonzero", x, {2});
}

}  // namespace spmd
