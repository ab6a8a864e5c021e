// Pattern builders: per-call einsum patterns for ops whose dims are related by dimension-number
// attributes (StableHLO's dot_general, broadcast_in_dim, gather, scatter, slices and pads).
// A YAML entry names one with `patterns: NAME(args)` and the notation `*` for each tensor
// argument the builder shapes (`@` for the result). The builder reads only shapes and attributes,
// and says which letters are never split (`whole`) and which dims of the first input the op
// resizes (`resized`: whole, and free to differ in size, as slice's). docs/spec_language.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "einsum_engine.h"

namespace spmd {

struct PatternPlan {
  Equation eq;                      // operand patterns by input argument, and the result's
  int64_t born[26];                 // factor-table sizes: result-only letters; resized letters in the result
  uint32_t whole = 0;               // a bit per letter a-z: never split
  std::vector<int64_t> resized;     // dims of input 0 the op resizes
  PatternPlan() { for (int64_t& b : born) b = -1; }
  void apply(EinsumCall& call, const char* attr) const;
};

void dot_general_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs,
                          const std::vector<int64_t>& lhs_contracting, const std::vector<int64_t>& rhs_contracting,
                          const std::vector<int64_t>& lhs_batching, const std::vector<int64_t>& rhs_batching);
// jax's ragged_dot_general: dot_general with the lhs ragged dim and the group count whole
void ragged_dot_general_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs,
                                 const DistMetaTensor& rhs, const DistMetaTensor& group_sizes,
                                 const std::vector<int64_t>& lhs_contracting, const std::vector<int64_t>& rhs_contracting,
                                 const std::vector<int64_t>& lhs_batching, const std::vector<int64_t>& rhs_batching,
                                 const std::vector<int64_t>& lhs_ragged_dimensions,
                                 const std::vector<int64_t>& rhs_group_dimensions);
// numpy dot of 1-D / 2-D operands (stablehlo.dot)
void dot_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs);
void broadcast_in_dim_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                               const std::vector<int64_t>& shape, const std::vector<int64_t>& broadcast_dimensions);
void gather_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand, const DistMetaTensor& indices,
                     const std::vector<int64_t>& offset_dims, const std::vector<int64_t>& collapsed_slice_dims,
                     const std::vector<int64_t>& start_index_map, const std::vector<int64_t>& slice_sizes,
                     const std::vector<int64_t>& operand_batching_dims,
                     const std::vector<int64_t>& start_indices_batching_dims, int64_t index_vector_dim);
void scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand, const DistMetaTensor& indices,
                      const DistMetaTensor& updates, const std::vector<int64_t>& update_window_dims,
                      const std::vector<int64_t>& inserted_window_dims,
                      const std::vector<int64_t>& scatter_dims_to_operand_dims,
                      const std::vector<int64_t>& input_batching_dims,
                      const std::vector<int64_t>& scatter_indices_batching_dims, int64_t index_vector_dim);
// scatter with a combiner that is not a sum: the updates' indexing dims are never split
void scatter_overwrite_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                const DistMetaTensor& indices, const DistMetaTensor& updates,
                                const std::vector<int64_t>& update_window_dims,
                                const std::vector<int64_t>& inserted_window_dims,
                                const std::vector<int64_t>& scatter_dims_to_operand_dims,
                                const std::vector<int64_t>& input_batching_dims,
                                const std::vector<int64_t>& scatter_indices_batching_dims, int64_t index_vector_dim);
void dynamic_slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                            const std::vector<int64_t>& slice_sizes);
void dynamic_update_slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                   const DistMetaTensor& update);
void slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                    const std::vector<int64_t>& start_indices, const std::vector<int64_t>& limit_indices,
                    const std::vector<int64_t>& strides);
void pad_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                  const std::vector<int64_t>& edge_padding_low, const std::vector<int64_t>& edge_padding_high,
                  const std::vector<int64_t>& interior_padding);
// jax.pad: padding_config flattened as (low, high, interior) per dim
void padding_config_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                             const std::vector<int64_t>& padding_config);
// reduce_window (window_builders.cc): empty strides / dilations / padding lists mean 1 / 0 per
// dim; padding is flat, a (low, high) pair per dim. The list form takes the operands[] of a
// variadic reduce_window (all of one shape; the notation gives the init values rank 0).
void window_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                     const std::vector<int64_t>& window_dimensions, const std::vector<int64_t>& window_strides,
                     const std::vector<int64_t>& base_dilations, const std::vector<int64_t>& window_dilations,
                     const std::vector<int64_t>& padding);
void reduce_window_patterns(PatternPlan& plan, const std::string& op, const std::vector<const DistMetaTensor*>& operands,
                            const std::vector<int64_t>& window_dimensions, const std::vector<int64_t>& window_strides,
                            const std::vector<int64_t>& base_dilations, const std::vector<int64_t>& window_dilations,
                            const std::vector<int64_t>& padding);
// select_and_gather_add (tangents, operand -> windowed) and select_and_scatter_add (source,
// operand -> operand-shaped): reduce_window's dims rule (window_builders.cc)
void window_pair_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& tangents,
                          const DistMetaTensor& operand, const std::vector<int64_t>& window_dimensions,
                          const std::vector<int64_t>& window_strides, const std::vector<int64_t>& base_dilations,
                          const std::vector<int64_t>& window_dilations, const std::vector<int64_t>& padding);
void window_scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& source,
                             const DistMetaTensor& operand, const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides, const std::vector<int64_t>& padding);
// stablehlo.select_and_scatter (operand, source, init_value): window_scatter's, in that order
void select_and_scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                 const DistMetaTensor& source, const std::vector<int64_t>& window_dimensions,
                                 const std::vector<int64_t>& window_strides, const std::vector<int64_t>& padding);
// convolution (window_builders.cc), JAX's ConvDimensionNumbers: lhs_spec = (batch, feature,
// spatial...) dims of lhs, rhs_spec = (output feature, input feature, spatial...) of rhs,
// out_spec = (batch, feature, spatial...) of the result; padding flat (low, high) per spatial dim.
void convolution_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs,
                          const std::vector<int64_t>& lhs_spec, const std::vector<int64_t>& rhs_spec,
                          const std::vector<int64_t>& out_spec, const std::vector<int64_t>& window_strides,
                          const std::vector<int64_t>& padding, const std::vector<int64_t>& lhs_dilation,
                          const std::vector<int64_t>& rhs_dilation, int64_t feature_group_count, int64_t batch_group_count);
// iota: no input; the result (given to forward) has `shape`, counting along `dimension`.
void iota_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& out, const std::vector<int64_t>& shape,
                   int64_t dimension);

// A tensor the op creates from nothing (stablehlo.constant): the result (given to forward) has `shape`.
void created_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& out, const std::vector<int64_t>& shape);

}  // namespace spmd
