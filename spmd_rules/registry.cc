#include "registry.h"

#include <algorithm>
#include <memory>

#include "errors.h"

namespace spmd {

const char* arg_kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::kTensor: return "DistTensorSpec";
    case ArgKind::kOptionalTensor: return "DistTensorSpec or None";
    case ArgKind::kOutputTensor: return "DistTensorSpec or None";
    case ArgKind::kTensorList: return "list of DistTensorSpec";
    case ArgKind::kBool: return "bool";
    case ArgKind::kInt: return "int";
    case ArgKind::kInt64: return "int";
    case ArgKind::kFloat: return "float";
    case ArgKind::kStr: return "str";
    case ArgKind::kDType: return "dtype";
    case ArgKind::kIntList: return "list of int";
    case ArgKind::kInt64List: return "list of int";
    case ArgKind::kFloatList: return "list of float";
    case ArgKind::kBoolList: return "list of bool";
  }
  return "?";
}

const char* arg_kind_id(ArgKind k) {
  switch (k) {
    case ArgKind::kTensor: return "tensor";
    case ArgKind::kOptionalTensor: return "optional_tensor";
    case ArgKind::kOutputTensor: return "output_tensor";
    case ArgKind::kTensorList: return "tensor_list";
    case ArgKind::kBool: return "bool";
    case ArgKind::kInt: return "int";
    case ArgKind::kInt64: return "int64";
    case ArgKind::kFloat: return "float";
    case ArgKind::kStr: return "str";
    case ArgKind::kDType: return "dtype";
    case ArgKind::kIntList: return "int_list";
    case ArgKind::kInt64List: return "int64_list";
    case ArgKind::kFloatList: return "float_list";
    case ArgKind::kBoolList: return "bool_list";
  }
  return "?";
}

std::string Signature::describe() const {
  std::string s;
  for (std::size_t i = 0; i < params.size(); ++i) {
    s += (i ? ", " : "") + params[i].name;
    if (params[i].kind == ArgKind::kOptionalTensor || params[i].kind == ArgKind::kOutputTensor) s += "?";
    if (params[i].kind == ArgKind::kTensorList) s += "[]";
    if (params[i].has_default && !is_tensor_kind(params[i].kind)) s += "=...";
  }
  return s;
}

const DistMetaTensor& absent_tensor() {
  static const DistMetaTensor t;
  return t;
}

Registry& Registry::instance() {
  static Registry* r = [] {
    auto* reg = new Registry();
    register_generated_rules(*reg);
    return reg;
  }();
  return *r;
}

void Registry::add(RuleEntry entry) {
  auto owned = std::make_unique<RuleEntry>(std::move(entry));
  const RuleEntry* e = owned.get();
  auto claim = [&](const std::string& name) {
    if (!by_name_.emplace(name, e).second)
      throw ValueError("rule name '" + name + "' (" + e->spec + ") is registered twice");
  };
  claim(e->name);
  for (const std::string& a : e->aliases) claim(a);
  entries_.push_back(std::move(owned));
}

const RuleEntry* Registry::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& kv : by_name_) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

void Registry::link_grad_rules() {
  for (auto& e : entries_) {
    if (e->second_kind != SecondKind::kGrad) continue;
    auto it = by_name_.find(e->grad_rule);
    if (it == by_name_.end()) throw ValueError(e->spec + ": grad rule '" + e->grad_rule + "' is not registered");
    e->second = it->second->forward;
  }
}

std::vector<const RuleEntry*> Registry::entries() const {
  std::vector<const RuleEntry*> out;
  for (const auto& e : entries_) out.push_back(e.get());
  return out;
}

}  // namespace spmd
