// Hand-written loss rules (rules_yaml/loss.yaml), built from the factor engine.
#pragma once
#include "../dist_meta_tensor.h"
#include "../spmd_info.h"

namespace spmd {

SpmdInfo CrossEntropyWithSoftmax(const DistMetaTensor& x, const DistMetaTensor& label, bool soft_label,
                                 bool use_softmax, bool numeric_stable_mode, int ignore_index, int axis);
SpmdInfo CrossEntropyWithSoftmaxReverse(const DistMetaTensor& x, const DistMetaTensor& label,
                                        const DistMetaTensor& softmax, const DistMetaTensor& loss, bool soft_label,
                                        bool use_softmax, bool numeric_stable_mode, int ignore_index, int axis);

}  // namespace spmd
