// The compact program propagation runs on: meshes, values (shape + sharding), ops (a factor
// table with operand and result value ids) and the compiler-API edges, which are ops too:
// sharding constraints and data-flow edges are identity tables, a propagation barrier is an
// identity table with an allowed direction, a manual_computation boundary maps the outer
// value's dims (manual part, local part) to the body value's local dims. Sharding groups are sets of values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "factor_table.h"
#include "sharding.h"

namespace spmd::prop {

enum Direction : uint8_t { kNone = 0, kForward = 1, kBackward = 2, kBoth = 3 };
// Per op, in one op-priority step: bits 0-1 the Direction of its pass-through factors, bits 2-3
// that of its other factors (Shardy decides the direction per factor).
using FactorDirs = uint8_t;
inline FactorDirs factor_dirs(Direction pass_through, Direction other) {
  return static_cast<FactorDirs>(pass_through | other << 2);
}
inline constexpr FactorDirs kAllBoth = 0xF;

// What moved a value's sharding last (Shardy's debug-sharding-origins, per value).
enum class Level : uint8_t { kUnset, kUser, kBasic, kAggressive, kGroup };

struct Provenance {
  int op = -1;              // the op whose rule last changed the value (-1: none)
  Level level = Level::kUnset;
  int user_priority = -1;   // the user-priority round (p0, p1, ...) it happened in
  int op_priority_step = -1;  // the op-priority step (0 = pass-through ops, 1 = + pass-through factors, 2 = all but a broadcast forward, 3 = any)
  int group = -1;           // set when a sharding group copied the sharding in
};

// The fields a rule application reads come first (one cache line); the name last.
struct Op {
  int table = -1;                 // index into Graph::tables (ops of the same shape share one)
  std::vector<int> operands, results;
  bool pass_through = false;      // elementwise-like, a reshape or a transpose: first in op priorities
  bool broadcast_like = false;    // has a factor that only results carry (set by the propagator)
  // Every tensor has the same dims and factors, and the op is not a data-flow edge (Shardy's
  // elementwise trait: aggressive propagation then takes the most sharded candidate first; set by
  // the propagator).
  bool elementwise = false;
  bool forward_early = false;     // a dynamic_slice: forward from op-priority step 0 (set by the propagator)
  bool multi_use_operands = false;  // an operand has several uses: no backward in step 0 (set by the propagator)
  bool multi_use_results = false;   // a result has several uses: no forward in step 0 (set by the propagator)
  Direction allowed = kBoth;      // a propagation barrier narrows this
  // A manual_computation boundary: the outer tensor's dims are compound (manual part, local
  // part) with the manual factor blocked; the body tensors (bit i of inner_tensors, operands
  // then results) may never take the manual axes.
  uint64_t manual_axes = 0;
  uint64_t inner_tensors = 0;
  std::string name;
  int num_tensors() const { return static_cast<int>(operands.size() + results.size()); }
  int tensor_value(int t) const { return t < static_cast<int>(operands.size()) ? operands[t] : results[t - operands.size()]; }
  bool is_result(int t) const { return t >= static_cast<int>(operands.size()); }
};

struct Graph {
  std::vector<Mesh> meshes;
  std::vector<FactorTable> tables;
  std::vector<std::vector<int64_t>> shapes;  // per value
  std::vector<std::string> names;            // per value
  std::vector<TensorSharding> shardings;     // per value
  std::vector<Op> ops;
  std::vector<std::vector<int>> groups;      // sharding groups (value ids)

  int num_values() const { return static_cast<int>(shapes.size()); }
  int64_t num_elements(int v) const;
  // Checks every id, rank, factor size and annotation; throws ValueError naming what is wrong.
  void validate() const;
  // The sharding checks of validate() for value `v` alone (after its sharding changed).
  void validate_sharding(int v) const;
  // Checks the ops added since the last check now, while they are in cache, so that validate()
  // need not read them again; an op that fails is left for validate() to report.
  void check_new_ops() const;
  // Ops [0, ops_checked) passed validate()'s op checks. An op's check reads only what never
  // changes once added (the op, its table, its values' shapes) and the counts of values and
  // tables, which only grow, so a checked op stays valid.
  mutable int ops_checked = 0;
  std::string sharding_to_string(int v) const;
};

}  // namespace spmd::prop
