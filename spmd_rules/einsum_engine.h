// The factor engine: one generic inference for every einsum-like rule, in both directions.
//
// A rule's notation labels each tensor dim with a factor (einsum letter). A call resolves the
// notation against the tensors' ranks, applies the attribute edits (transpose, replicate,
// reduce, permute), merges the splits the source tensors propose for each factor (inputs going
// forward, outputs going in reverse), and writes every tensor's layout from the merged factors.
// Factors that vanish from the outputs are contracted: when split, the outputs are partial.
//
// Conflict policy (docs/conflict_policy.md): for one factor the first source tensor that splits
// it wins; a mesh dim claimed by two factors stays with the factor that claimed it first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dist_meta_tensor.h"
#include "notation.h"
#include "spmd_info.h"

namespace spmd {

// How the splits that source tensors propose for the same factors are merged
// (docs/conflict_policy.md). Each reproduces one of Paddle 3.3.1's two generations of rules.
enum class Merge : uint8_t {
  kCoShard,  // all proposals for a factor are joined into one co-shard list (longest, most
             // shards first); a mesh dim wanted by two factors goes to the larger one
  kLegacy,   // one mesh dim per tensor dim (the largest of a co-shard); the first proposal wins,
             // and a mesh dim wanted by two factors goes to the one that claimed it first
  kMatmul,   // batch dims follow the more sharded operand; then m and n (larger first), then k
};
// What a size-1 dim of a tensor does.
enum class Ones : uint8_t {
  kClear,      // proposes like any dim, but is itself never split
  kKeep,       // is an ordinary dim (its split is kept)
  kBroadcast,  // all size-1 dims share one anonymous factor that claims mesh dims but is never split
};

struct EinsumOptions {
  ReduceType partial = ReduceType::kSum;  // reduce type of contracted factors
  Merge merge = Merge::kCoShard;
  Ones ones = Ones::kClear;
  bool divisible = true;                  // co-shard merge: drop trailing mesh dims until the size divides
  bool keep_input_partial = false;        // inputs (and so outputs) stay partial: linear, layout-only ops
  uint32_t sources = ~0u;                 // inputs whose splits are proposed (a bit per input argument)
  bool reverse_replicated_claim = false;  // reverse: a dim forced whole still claims its mesh dim
                                          // (Paddle's layer_norm reverse merges before replicating)
  // The options below are off by default; docs/spec_language.md names their YAML keys.
  bool replicated_claim = false;          // both directions: a dim forced whole still claims its mesh
                                          // dim before it is made whole (merge, then replicate)
  bool per_output_partial = false;        // each output is partial over the split factors of the
                                          // inputs that it lacks (grads), not only over factors in
                                          // no output
  uint32_t no_partial_letters = 0;        // the outputs may not be partial: when a contracted factor
                                          // stays split, it and these letters (bit 0 = 'a') are made
                                          // whole instead
  bool outer_first_split = false;         // an outer product (EinsumCall::equation): only the first
                                          // input that is split proposes
  uint32_t unreturned = 0;                // inputs (a bit per argument) the signature takes but the
                                          // rule neither binds nor returns
  uint8_t reverse_sources[8] = {};        // reverse: the outputs that propose, in this order (output
                                          // argument + 1; 0 ends the list; empty: every output)
};

struct EinsumRule {
  // Names ending in "[]" are list arguments: every element follows the same pattern.
  EinsumRule(std::string op, const std::string& notation, std::vector<std::string> inputs,
             std::vector<std::string> outputs, EinsumOptions options = {});
  std::string op;
  std::vector<bool> input_is_list, output_is_list;  // declared first: the name lists fill them
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  Notation notation;
  EinsumOptions options;
};

// One tensor dim of the resolved notation.
struct Slot {
  uint8_t n = 0;               // factors: 0 = a size-1 dim that is never split; >1 = flattened group
  uint8_t f[kMaxRank] = {};    // factor ids; only f[0] may carry a split
  bool one = false;            // a size-1 dim of its tensor
};
using Slots = SmallVec<Slot, kMaxRank>;

class EinsumCall {
 public:
  explicit EinsumCall(const EinsumRule& rule);

  // Bind argument i (a notation pattern) to a tensor, or to a list of tensors sharing the pattern.
  EinsumCall& input(int i, const DistMetaTensor& t);
  EinsumCall& input(int i, const std::vector<const DistMetaTensor*>& list);
  EinsumCall& output(int i, const DistMetaTensor& t);
  EinsumCall& output(int i, const std::vector<const DistMetaTensor*>& list);
  // Forward: how many tensors a list output has (split's num).
  EinsumCall& output_count(int i, int64_t n, const char* attr);

  // Attribute edits; recorded now, applied by forward()/reverse().
  EinsumCall& group_length(char group, int64_t length);
  EinsumCall& transpose(int input, bool swap_last_two);
  EinsumCall& replicate(int input, const std::vector<int64_t>& axes, const char* attr);
  EinsumCall& replicate(int input, int64_t axis, const char* attr);
  EinsumCall& replicate_letter(char letter_or_group);
  // The output is `input` without the `axes` dims. With `whole`, those dims must be whole on
  // every rank (argmax, cumsum...); otherwise a split one leaves the output partial of `type`.
  EinsumCall& reduce(int input, const std::vector<int64_t>& axes, bool keep_dim, ReduceType type,
                     const char* attr, bool whole = false);
  EinsumCall& reduce(int input, int64_t axis, bool keep_dim, ReduceType type, const char* attr, bool whole = false);
  // The output is `input` with a new, never split dim at `axis` (stack).
  EinsumCall& insert_dim(int input, int64_t axis, const char* attr);
  EinsumCall& permute(int input, const std::vector<int64_t>& perm, const char* attr);
  // The notation's '*' and '@' patterns come from this einsum equation (an attribute): '*' gives
  // a list argument one operand pattern per tensor, '@' is the result pattern.
  EinsumCall& equation(const std::string& text, const char* attr);
  // Output `output` has the resolved pattern of input `input` (rank, size-1 dims and all; list
  // arguments element by element): a grad has its operand's shape. Like an absent optional
  // input, it is absent too (an empty layout).
  EinsumCall& like(int output, int input);
  // Output `output` depends only on the inputs in `inputs` (a bit per argument): it is partial
  // only over the split factors of those inputs that it lacks (softmax beside a summed loss).
  EinsumCall& depends(int output, uint32_t inputs);
  // Output `output` is a scratch buffer of no defined shape (Paddle's reserve_space): it gets an
  // empty layout, never partial.
  EinsumCall& workspace(int output);
  // Input `input` is added into output `output`: it takes the output's pending partial status
  // (each rank adds its addend), as a bias added to a partial product must.
  EinsumCall& accumulate(int input, int output);

  SpmdInfo forward();
  SpmdInfo reverse();

 private:
  struct Factor {
    int64_t size = -1;
    MeshDims mesh;
    bool need_replication = false;
    bool in_output = false;
    bool has_reduce = false;
    ReduceType reduce = ReduceType::kSum;
    bool batch = false;   // an ellipsis dim
    char letter = 0;      // its notation letter, if any
    int8_t seen = -1;     // rank of its first appearance in a source tensor
  };
  struct Proposal {
    uint8_t factor;
    uint8_t tensor;       // source order: which source tensor proposed it
    MeshDims mesh;
  };
  struct Edit {
    enum Kind : uint8_t { kTranspose, kReplicateAxes, kReplicateLetter, kReduce, kPermute, kInsert, kLike,
                          kAccumulate, kWorkspace, kDepends } kind;
    int arg;
    const std::vector<int64_t>* axes;
    int64_t axis;
    bool flag;
    ReduceType type;
    char letter;
    const char* attr;
    bool whole;
  };
  // A bound tensor (list elements are bound one by one) and the pattern it follows.
  struct Bound {
    const DistMetaTensor* t;   // nullptr: absent (optional input, or a forward output)
    uint8_t pattern;
    int16_t list_pos;          // -1 unless an element of a list argument
  };
  struct ArgRange {
    uint8_t first = 0, count = 0;
    bool list = false, bound = false;
  };

  void bind(bool is_input, int arg, const DistMetaTensor* t, int list_pos);
  std::string where(bool is_input, int k) const;
  std::string arg_name(bool is_input, int arg) const;
  int new_factor();
  int factor_of(char letter);
  int group_factor(char group, int64_t pos);
  int64_t group_len(char group) const;
  void resolve_inputs();
  void resolve_outputs();
  void apply_input_edits();
  void apply_output_edits();
  void check_sizes(bool is_input, int i);
  void merge(bool from_outputs);
  void collect(bool from_outputs);
  void merge_legacy();
  void merge_coshard();
  void merge_matmul();
  void join_proposals(Factor& f, int k) const;
  int64_t shards(const MeshDims& m) const;
  void pop_until_divisible(Factor& f) const;
  int8_t view_1d(const MeshDims& m) const;
  TensorDistAttr layout(const Slots& slots, const DistMetaTensor* t) const;
  SpmdInfo build(bool forward);
  int64_t norm_axis(int64_t axis, std::size_t rank, const char* attr, int arg) const;
  void prepare_outputs();
  const Pattern& input_pattern(std::size_t k) const;
  const Pattern& output_pattern(std::size_t k) const;
  const Pattern& placeholder(const Pattern& p, int list_pos, bool is_input, int arg) const;
  bool lacks(std::size_t out, int factor) const;
  uint8_t output_partial(std::size_t out, ReduceType* types) const;

  const EinsumRule& rule_;
  SmallVec<Bound, kMaxTensors> in_, out_;
  SmallVec<ArgRange, kMaxTensors> in_args_, out_args_;
  SmallVec<Slots, kMaxTensors> in_slots_, out_slots_;
  SmallVec<bool, kMaxTensors> out_overridden_;
  SmallVec<bool, kMaxTensors> out_absent_;   // like an absent input
  SmallVec<int64_t, kMaxTensors> out_count_;
  SmallVec<Factor, kMaxFactors> factors_;
  int8_t letter_factor_[26];
  struct Group { char name; int64_t len; int8_t first; };
  SmallVec<Group, 8> groups_;
  int64_t ellipsis_len_ = 0;
  int8_t ellipsis_first_ = -1;
  SmallVec<Edit, 8> edits_;
  SmallVec<Proposal, 2 * kMaxTensors> proposals_;
  int8_t one_factor_ = -1;  // the anonymous factor of size-1 dims (Ones::kBroadcast)
  MeshPtr mesh_;
  const std::string* eq_text_ = nullptr;  // the equation given by equation(), parsed into eq_
  const char* eq_attr_ = nullptr;
  Equation eq_;
};

}  // namespace spmd
