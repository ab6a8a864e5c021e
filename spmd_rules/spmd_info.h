// What a rule returns: the layouts the inputs must have and the layouts the outputs get.
// A list input (concat's xs) gives one nested list entry.
#pragma once
#include <variant>
#include <vector>

#include "dist_attr.h"

namespace spmd {

using ArgDistAttr = std::variant<TensorDistAttr, std::vector<TensorDistAttr>>;

struct SpmdInfo {
  std::vector<ArgDistAttr> inputs;
  std::vector<ArgDistAttr> outputs;
};

}  // namespace spmd
