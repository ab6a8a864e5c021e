// Rule registry: registry name -> {forward function, second function}. The second function is
// either the reverse rule (inputs and outputs in, infers the inputs from the outputs) or a grad
// rule (forward inputs and output grads in, infers the grads), as Paddle registers it.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "factor_table.h"
#include "rule_args.h"
#include "spmd_info.h"

namespace spmd {

using RuleFn = SpmdInfo (*)(const ArgPack&);

struct RuleFunction {
  Signature signature;
  RuleFn fn = nullptr;
};

enum class SecondKind : uint8_t { kNone, kReverse, kGrad };

struct RuleEntry {
  std::string name;        // the primary name (the YAML `op`)
  std::string spec;        // "rules_yaml/matmul.yaml: matmul", for messages
  RuleFunction forward;
  RuleFunction second;
  SecondKind second_kind = SecondKind::kNone;
  std::string grad_rule;   // for grad second functions: the entry whose forward computes the grads
  std::vector<std::string> aliases;
  bool handwritten = false;
  uint8_t num_inputs = 0;  // tensor parameters that are the op's inputs; the outputs follow them
  // The factor table of a forward call (same arguments); null for hand-written rules.
  FactorTable (*factors)(const ArgPack&) = nullptr;
};

class Registry {
 public:
  static Registry& instance();
  void add(RuleEntry entry);
  const RuleEntry* find(const std::string& name) const;
  std::vector<std::string> names() const;   // every accepted name, aliases included, sorted
  std::vector<const RuleEntry*> entries() const;
  // Points each grad second function at the forward function of the entry it names.
  void link_grad_rules();

 private:
  std::vector<std::unique_ptr<RuleEntry>> entries_;
  std::unordered_map<std::string, const RuleEntry*> by_name_;
};

// Defined by the generated code: registers every rule of rules_yaml/.
void register_generated_rules(Registry& registry);
inline void link_grad_rules(Registry& registry) { registry.link_grad_rules(); }

}  // namespace spmd
