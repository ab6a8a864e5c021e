// What generated rule code uses: the engines, the registry, and small helpers that turn
// attributes into engine arguments with checked values.
#pragma once
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "dim_trans.h"
#include "dim_trans_builders.h"
#include "einsum_engine.h"
#include "errors.h"
#include "exact_reshape.h"
#include "pattern_builders.h"
#include "registry.h"

namespace spmd {

inline Param param(const char* name, ArgKind kind) { return Param{name, kind, false, Arg()}; }
inline Param param(const char* name, ArgKind kind, Arg def) { return Param{name, kind, true, std::move(def)}; }
inline Arg arg_bool(bool v) { Arg a; a.b = v; return a; }
inline Arg arg_int(int64_t v) { Arg a; a.i = v; return a; }
inline Arg arg_float(double v) { Arg a; a.f = v; return a; }
inline Arg arg_str(std::string v) { Arg a; a.s = std::move(v); return a; }
inline Arg arg_ints(std::vector<int64_t> v) { Arg a; a.ints = std::move(v); return a; }
inline Arg arg_floats(std::vector<double> v) { Arg a; a.floats = std::move(v); return a; }

// A group length given by an axis attribute (begin_norm_axis): negative counts from the end.
inline int64_t group_length_from_attr(const std::string& op, const char* attr, int64_t value, const DistMetaTensor& t) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  const int64_t len = value < 0 ? value + rank : value;
  if (len < 0 || len > rank)
    throw ValueError(op + ": attribute '" + attr + "' = " + std::to_string(value) + " is out of range for a tensor of rank " +
                     std::to_string(rank));
  return len;
}

// The same for a list argument (concat's x): the rank of its first present tensor.
inline int64_t group_length_from_attr(const std::string& op, const char* attr, int64_t value,
                                      const std::vector<const DistMetaTensor*>& ts) {
  for (const DistMetaTensor* t : ts)
    if (t && !t->absent()) return group_length_from_attr(op, attr, value, *t);
  return 0;
}

// A group length given by one dim of a tensor (gather_nd: the last dim of the index).
inline int64_t group_length_from_dim(const std::string& op, const char* tensor, const DistMetaTensor& t, int64_t dim) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  if (t.absent() || dim < -rank || dim >= rank)
    throw ValueError(op + ": input '" + tensor + "' has rank " + std::to_string(rank) + ", but dim " + std::to_string(dim) +
                     " of it gives the length of a dim group");
  const int64_t len = t.shape[static_cast<std::size_t>(dim < 0 ? dim + rank : dim)];
  if (len < 0)
    throw ValueError(op + ": input '" + tensor + "': dim " + std::to_string(dim) + " has unknown size " +
                     std::to_string(len) + ", but it gives the length of a dim group");
  return len;
}

// The common options in one call, for hand-written rules (generated code sets fields by name).
inline EinsumOptions einsum_options(ReduceType partial, Merge merge, Ones ones, bool divisible, bool keep_input_partial,
                                    uint32_t sources) {
  EinsumOptions o;
  o.partial = partial;
  o.merge = merge;
  o.ones = ones;
  o.divisible = divisible;
  o.keep_partial = keep_input_partial ? KeepPartial::kAll : KeepPartial::kNone;
  o.sources = sources;
  return o;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// An empty axis list: the reduce edit then reduces every dim (`reduce: {x: all}`).
inline const std::vector<int64_t>& every_dim() {
  static const std::vector<int64_t> none;
  return none;
}

// An optional tensor not given: None from Python, or Paddle's empty spec (shape [], mapping []).
// A str attribute limited to a few words (YAML `choices:`).
inline void check_choice(const std::string& op, const char* attr, const std::string& value,
                         std::initializer_list<const char*> words) {
  std::string list;
  for (const char* w : words) {
    if (value == w) return;
    list += (list.empty() ? "" : ", ") + std::string(w);
  }
  throw ValueError(op + ": attribute '" + attr + "' = \"" + value + "\" is not one of " + list);
}

inline bool is_absent(const DistMetaTensor& t) { return t.absent() || (t.rank() == 0 && t.attr.rank() == 0); }

// The size of `t`'s dim that an axis attribute names (negative counts from the end): unbind's
// number of outputs.
inline int64_t dim_size_from_attr(const std::string& op, const char* attr, int64_t axis, const DistMetaTensor& t) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  if (axis < -rank || axis >= rank)
    throw ValueError(op + ": attribute '" + attr + "' = " + std::to_string(axis) + " is out of range for a tensor of rank " +
                     std::to_string(rank));
  const int64_t n = t.shape[axis < 0 ? axis + rank : axis];
  if (n < 0) throw ValueError(op + ": attribute '" + attr + "' names a dim of unknown size");
  return n;
}

// The sizes a list attribute gives the outputs along t's dim `axis` (split's sections): they add
// up to that dim; one entry may be -1 (the rest). A dim of unknown size is not checked.
inline void check_section_sizes(const std::string& op, const char* attr, const std::vector<int64_t>& sizes,
                                const char* axis_attr, int64_t axis, const DistMetaTensor& t) {
  const int64_t rank = static_cast<int64_t>(t.rank());
  if (axis < -rank || axis >= rank) return;  // the rule reports a bad axis itself
  const int64_t dim = t.shape[axis < 0 ? axis + rank : axis];
  int64_t sum = 0, inferred = 0;
  for (int64_t v : sizes) {
    if (v == -1) ++inferred;
    else if (v < 0)
      throw ValueError(op + ": attribute '" + attr + "' has size " + std::to_string(v) + "; sizes are >= 0, or -1 once");
    else sum += v;
  }
  if (inferred > 1) throw ValueError(op + ": attribute '" + attr + "' has -1 more than once");
  if (dim < 0) return;
  if (inferred ? sum > dim : sum != dim)
    throw ValueError(op + ": attribute '" + attr + "' adds up to " + std::to_string(sum) + (inferred ? " (and a -1)" : "") +
                     ", but dim " + std::to_string(axis) + " ('" + axis_attr + "') of the input has size " +
                     std::to_string(dim));
}

inline ReduceType reduce_type_from_attr(const std::string& op, const char* attr, int64_t value) {
  if (value < 0 || value >= kNumReduceTypes)
    throw ValueError(op + ": attribute '" + attr + "' = " + std::to_string(value) +
                     " is not a reduce type (0 sum, 1 max, 2 min, 3 prod, 4 avg, 5 any, 6 all)");
  return static_cast<ReduceType>(value);
}

}  // namespace spmd
