// DimTrans: how each output dim of a reshape-like op is made from input dims, and the
// inference that follows from it in either direction.
//
// Each output dim is one of: Singleton (size 1, from nothing), InputDim (one input dim as is),
// Flatten (several input dims merged), or Split (part `split_id` of a flattened group cut into
// `split`). A split can only stay on the leading input dim of a Flatten, and only on the
// leading part of a Split whose size the mesh divides: anything else must be gathered first.
#pragma once
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "spmd_info.h"

namespace spmd {

struct DimTrans {
  SmallVec<int8_t, kMaxRank> inputs;   // input dims (of size > 1) flattened into this output dim
  SmallVec<int64_t, kMaxRank> split;   // non-empty: the flattened group is cut into these sizes
  int8_t split_id = 0;                 // ... and this output dim is that part

  bool singleton() const { return inputs.empty(); }
  std::string to_string() const;
};
using DimTransList = SmallVec<DimTrans, kMaxRank>;

// Part `p` of cutting the flattened `inputs` into `parts`: a size-1 part is a Singleton; the
// other parts are numbered among themselves (size-1 parts hold nothing); a single part is the
// flattened dims themselves.
DimTrans make_split(const SmallVec<int8_t, kMaxRank>& inputs, const SmallVec<int64_t, kMaxRank>& parts, std::size_t p);

// The DimTrans of reshaping `src` to `tgt` (shapes of equal size). A dim of unknown size (< 0)
// must line up with one in the other shape (a dynamic dim a reshape copies with 0): it maps to
// it as it is; anything else throws ValueError.
DimTransList reshape_dim_trans(const Shape& src, const Shape& tgt, const std::string& op = "reshape");

// Resolves 0 (keep the input dim) and one -1 (whatever is left) in a reshape target.
Shape resolve_reshape_target(const std::string& op, const Shape& src, const std::vector<int64_t>& shape);

// Forward: the layout `in` must have and the output layout, for output rank trans.size().
struct DimTransResult {
  TensorDistAttr input;
  TensorDistAttr output;
};
// absorb: the leading dim of a flatten takes over the splits of the dims after it (co-shard).
DimTransResult infer_from_dim_trans(const DistMetaTensor& in, const DimTransList& trans, bool absorb);

// A reshape-like rule, both directions: the output is `x` reshaped to `out_shape`.
struct DimTransOptions {
  // A partial input stays partial and so does the output (reshaping moves elements, which
  // commutes with the pending reduction); otherwise the input must be reduced first.
  bool keep_partial = true;
  // Read a dim split over several mesh dims as its largest one (Paddle's legacy squeeze/unsqueeze).
  bool view_1d = false;
};

SpmdInfo dim_trans_forward(const std::string& op, const DistMetaTensor& x, const Shape& out_shape,
                           DimTransOptions options = {});
// `trans` says how each dim of x comes from the dims of `out` (shape `out_shape`).
SpmdInfo dim_trans_reverse(const std::string& op, const DistMetaTensor& x, const DistMetaTensor& out,
                           const Shape& out_shape, const DimTransList& trans, DimTransOptions options = {});

}  // namespace spmd
