// The positional arguments of one rule call, already checked against the rule's signature.
// Tensors are borrowed from the caller; nothing is copied on the way to the rule.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dist_meta_tensor.h"

namespace spmd {

enum class ArgKind : uint8_t {
  kTensor, kOptionalTensor, kOutputTensor, kTensorList,  // kOutputTensor: a reverse rule's output
  kBool, kInt, kInt64, kFloat, kStr, kDType,
  kIntList, kInt64List, kFloatList, kBoolList,
};
const char* arg_kind_name(ArgKind k);  // for messages: "DistTensorSpec or None"
const char* arg_kind_id(ArgKind k);    // for tools: "optional_tensor"
inline bool is_tensor_kind(ArgKind k) { return k <= ArgKind::kTensorList; }

struct Arg {
  const DistMetaTensor* tensor = nullptr;
  std::vector<const DistMetaTensor*> tensors;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

struct Param {
  std::string name;
  ArgKind kind;
  bool has_default = false;
  Arg default_value;
};

struct Signature {
  std::vector<Param> params;
  std::string describe() const;   // "x, y, trans_x=False, trans_y=False"
};

using ArgPack = std::vector<Arg>;

// An absent optional tensor, shared so that a rule can always be handed a reference.
const DistMetaTensor& absent_tensor();

}  // namespace spmd
