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
#include "factor_table.h"
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
  kAlign,    // Paddle's AlignDimsSharding (concat, stack): mesh dim by mesh dim, a placement all
             // sources agree on is kept; a disputed mesh dim goes to the cheapest free dim
};
// What a size-1 dim of a tensor does.
enum class Ones : uint8_t {
  kClear,      // proposes like any dim, but is itself never split
  kKeep,       // is an ordinary dim (its split is kept)
  kBroadcast,  // all size-1 dims share one anonymous factor that claims mesh dims but is never split
};

// Which inputs keep a pending reduction (their partial state) instead of being reduced first;
// the outputs then carry it. Only mesh dims no split of the input uses can stay partial.
enum class KeepPartial : uint8_t {
  kNone,   // every input is reduced first (most ops: they cannot run on addends)
  kAll,    // every input stays partial: ops that only move elements (transpose, concat)
  kJoint,  // all stay partial if all share one SUM/AVG state, else none (add_n: a sum of them)
  kFirst,  // one operand stays partial, SUM/AVG only, if no split needs its mesh dims (multiply)
};

struct EinsumOptions {
  ReduceType partial = ReduceType::kSum;  // reduce type of contracted factors
  Merge merge = Merge::kCoShard;
  Ones ones = Ones::kClear;
  bool divisible = true;                  // co-shard merge: drop trailing mesh dims until the size divides
  KeepPartial keep_partial = KeepPartial::kNone;
  uint32_t sources = ~0u;                 // inputs whose splits are proposed (a bit per input argument)
  bool reverse_replicated_claim = false;  // reverse: a dim forced whole still claims its mesh dim
                                          // (Paddle's layer_norm reverse merges before replicating)
  bool flat_list_outputs = false;         // a list output comes back one entry per tensor, not as one
  bool flat_list_inputs = false;          // nested list (Paddle's split; its generic rules: both)
  uint8_t source_count = 0;               // > 0: the source inputs in this order (4 bits each in
  uint32_t source_order = 0;              // source_order, first in the low bits), for first-wins merges
  bool absent_replicated = false;         // an absent optional input comes back replicated (with its
                                          // pattern's rank), not as an empty layout (Paddle's roi_align)
  // Forward, when not empty: per output argument, a bit per input argument it is computed from.
  // Each output is then partial over the split factors of those inputs that it lacks (a grad:
  // x_grad sums over what only y_grad keeps), not only over factors that are in no output.
  std::vector<uint32_t> depends;
  bool conflict_first = false;            // co-shard merge: a mesh dim wanted by several factors stays
                                          // with the first seen, not the largest (Paddle's index_select)
  bool mismatch_replicated = false;       // a factor whose sizes differ between tensors is never split;
                                          // its splits claim mesh dims as one anonymous factor (Paddle's
                                          // '1' axes, put_along_axis) instead of raising
  bool per_output_partial = false;        // each output is partial over the split factors it lacks
                                          // (grads: `depends` with every input, conflicts not narrowed)
  // The options below are off by default; docs/spec_language.md names their YAML keys.
  bool replicated_claim = false;          // both directions: a dim forced whole still claims its mesh
                                          // dim before it is made whole (merge, then replicate)
  uint32_t no_partial_letters = 0;        // the outputs may not be partial: when a contracted factor
                                          // stays split, it and these letters (bit 0 = 'a') are made
                                          // whole instead
  bool outer_first_split = false;         // an outer product (EinsumCall::equation): only the first
                                          // input that is split proposes
  uint32_t unreturned = 0;                // inputs (a bit per argument) the signature takes but the
                                          // rule neither binds nor returns
  uint8_t reverse_sources[8] = {};        // reverse: the outputs that propose, in this order (output
                                          // argument + 1; 0 ends the list; empty: every output)
  // Tensors (a bit per input / output argument) that may be given with one dim where their
  // pattern has several: read as the flattening of those dims (Paddle's kernels hold layer_norm's
  // mean as [prod(leading dims)]); see einsum_flatten.cc.
  uint32_t flat_inputs = 0, flat_outputs = 0;
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
  uint32_t input_letters = 0;  // a bit per letter a-z that some input pattern names
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
  // An empty `axes` list reduces every dim, or none with `empty_all` false (slice's decrease_axis).
  // With `squeeze`, the dims it names must have size 1 (slice's decrease_axis), unless the op
  // resizes them (whole_axes): a dim of another size raises.
  EinsumCall& reduce(int input, const std::vector<int64_t>& axes, bool keep_dim, ReduceType type,
                     const char* attr, bool whole = false, bool empty_all = true, bool squeeze = false);
  EinsumCall& reduce(int input, int64_t axis, bool keep_dim, ReduceType type, const char* attr, bool whole = false);
  // The output is `input` with a new, never split dim at `axis` (stack).
  EinsumCall& insert_dim(int input, int64_t axis, const char* attr);
  EinsumCall& permute(int input, const std::vector<int64_t>& perm, const char* attr);
  // Dims of `input` the op moves elements along or resizes (roll, slice, pad, tile): whole on
  // every rank in every tensor that has them, and free to differ in size between tensors.
  // By an axis attribute (an empty list names no dim, or every dim with `empty_all`):
  EinsumCall& whole_axes(int input, const std::vector<int64_t>& axes, bool empty_all, const char* attr);
  EinsumCall& whole_axes(int input, int64_t axis, const char* attr);
  // By per-dim values: `per_dim` entries per dim, a dim is whole where one differs from `keep`.
  // The list covers every dim (in order), or with `align_end` the last dims (missing leading
  // entries are `keep`); with `lead`, entries before the first dim give the first output new
  // leading dims, born whole (tile's repeat_times longer than the rank). With `keep_size` an
  // entry equal to the dim's size keeps it too (expand's shape: -1 or the size itself).
  EinsumCall& whole_values(int input, const std::vector<int64_t>& values, int64_t keep, int per_dim, bool align_end,
                           bool lead, const char* attr, bool keep_size = false);
  // Output `output` has input `input`'s shape: the dims `input` broadcasts (the leading dims it
  // lacks, its size-1 dims where the factor is larger) are summed over (a grad's reduction).
  EinsumCall& unbroadcast(int output, int input);
  // After the merge: when factor `trigger` ends up split, factor `letter` is made whole (Paddle's
  // moe_combine never splits the hidden dim together with k).
  EinsumCall& unsplit_if_split(char letter, char trigger);
  // The notation's '*' and '@' patterns come from this einsum equation (an attribute): '*' gives
  // a list argument one operand pattern per tensor, '@' is the result pattern.
  EinsumCall& equation(const std::string& text, const char* attr);
  // Output `output` has the resolved pattern of input `input` (rank, size-1 dims and all; list
  // arguments element by element): a grad has its operand's shape. Like an absent optional
  // input, it is absent too (an empty layout).
  EinsumCall& like(int output, int input);
  // Output `output` is a scratch buffer of no defined shape (Paddle's reserve_space): it gets an
  // empty layout, never partial.
  EinsumCall& workspace(int output);
  // Input `input` is added into output `output`: it takes the output's pending partial status
  // (each rank adds its addend), as a bias added to a partial product must.
  EinsumCall& accumulate(int input, int output);

  SpmdInfo forward();
  SpmdInfo reverse();

  // Per-call patterns built from dimension-number attributes (pattern_builders.h): a lone input
  // whose notation is '*' takes operand pattern number <its argument index>, '@' the result.
  EinsumCall& patterns(const Equation& eq, const char* attr);
  // Sizes of result-only letters (26 entries, -1 unknown), for factor_table() only.
  EinsumCall& born_sizes(const int64_t* sizes) { born_sizes_ = sizes; return *this; }
  // The call's factor table (Shardy's OpShardingRule): the notation resolved against the
  // tensors and edits, no merge. For SpmdRule.factors(), never on the inference path
  // (factor_table_builder.cc).
  FactorTable factor_table();

 private:
  struct Factor {
    int64_t size = -1;
    MeshDims mesh;
    bool need_replication = false;
    bool in_output = false;
    bool has_reduce = false;
    ReduceType reduce = ReduceType::kSum;
    bool any_size = false;  // whole_axes/whole_values: its size may differ between tensors
    bool batch = false;   // an ellipsis dim
    char letter = 0;      // its notation letter, if any
    bool born = false;    // an output letter in no input pattern: a dim the op creates
    int8_t seen = -1;     // rank of its first appearance in a source tensor
    bool mismatch = false;  // its tensors disagree on its size (EinsumOptions::mismatch_replicated)
  };
  struct Proposal {
    uint8_t factor;
    uint8_t tensor;       // source order: which source tensor proposed it
    MeshDims mesh;
  };
  struct Edit {
    enum Kind : uint8_t {
      kTranspose, kReplicateAxes, kReplicateLetter, kReduce, kPermute, kInsert, kWhole, kUnbroadcast, kUnsplitIf,
      kLike, kAccumulate, kWorkspace
    } kind;
    int arg;
    const std::vector<int64_t>* axes;
    int64_t axis;
    bool flag;
    ReduceType type;
    char letter;
    const char* attr;
    bool whole;
    // kWhole: values mode (else axes mode), keep value, entries per dim, alignment, lead dims;
    // kReduce / kWhole axes: an empty list names every dim. kUnbroadcast: `axis` is the output.
    bool values = false;
    int64_t keep = 0;
    uint8_t per_dim = 1;
    bool align_end = false;
    bool lead = false;
    bool keep_size = false;
    bool empty_all = true;
    bool squeeze = false;  // kReduce: the dims must have size 1
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
  bool given_flat(bool is_input, std::size_t k, std::size_t pattern_rank) const;  // einsum_flatten.cc
  void flatten_slots(Slots& s);
  void whole_flat_tails();
  void mark_whole(const Edit& e, int k);
  void merge(bool from_outputs);
  void collect(bool from_outputs);
  void merge_legacy();
  void build_meets();
  void merge_coshard();
  void merge_matmul();
  void merge_align(bool from_outputs);
  int64_t whole_lead(const Edit& e, std::size_t rank) const;
  void join_proposals(Factor& f, int k) const;
  int64_t shards(const MeshDims& m) const;
  void pop_until_divisible(Factor& f) const;
  int8_t view_1d(const MeshDims& m) const;
  TensorDistAttr layout(const Slots& slots, const DistMetaTensor* t) const;
  SpmdInfo build(bool forward);
  int64_t norm_axis(int64_t axis, std::size_t rank, const char* attr, int arg) const;
  void prepare_outputs();
  uint64_t partial_keepers() const;
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
  SmallVec<Edit, 16> edits_;  // conv3d_grad forces 12 letters whole
  SmallVec<Proposal, 2 * kMaxTensors> proposals_;
  int8_t one_factor_ = -1;  // the anonymous factor of size-1 dims (Ones::kBroadcast)
  bool flat_slots_ = false; // some slot flattens several factors ((N), `flattened`)
  uint8_t align_partial_mask_ = 0;  // Merge::kAlign: partial mesh dims every source agrees on
  ReduceType align_partial_type_[kMaxMeshDims] = {};
  bool narrow_conflicts_ = false;  // `depends`: only factors that meet in a tensor compete
  uint64_t meets_[kMaxFactors];    // per factor, the factors it meets (set by build_meets)
  MeshPtr mesh_;
  const std::string* eq_text_ = nullptr;  // the equation given by equation(), parsed into eq_
  bool eq_positional_ = false;            // patterns(): lone '*' inputs take operand <argument index>
  const int64_t* born_sizes_ = nullptr;   // born_sizes()
  const char* eq_attr_ = nullptr;
  Equation eq_;
};

}  // namespace spmd
