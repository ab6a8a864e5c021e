// Hand-written attention rules (rules_yaml/attention.yaml), built from the factor engine.
#pragma once
#include "../dist_meta_tensor.h"
#include "../spmd_info.h"

namespace spmd {

SpmdInfo FlashAttention(const DistMetaTensor& q, const DistMetaTensor& k, const DistMetaTensor& v,
                        const DistMetaTensor& fixed_seed_offset, const DistMetaTensor& attn_mask, float dropout,
                        bool causal, bool return_softmax, bool is_test);
SpmdInfo FlashAttentionReverse(const DistMetaTensor& q, const DistMetaTensor& k, const DistMetaTensor& v,
                               const DistMetaTensor& fixed_seed_offset, const DistMetaTensor& attn_mask,
                               const DistMetaTensor& out, const DistMetaTensor& softmax,
                               const DistMetaTensor& softmax_lse, const DistMetaTensor& seed_offset, float dropout,
                               bool causal, bool return_softmax, bool is_test);

}  // namespace spmd
