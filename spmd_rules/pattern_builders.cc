#include "pattern_builders.h"

#include "errors.h"

namespace spmd {

namespace {
const std::string kBuiltPatterns = "(patterns built from the attributes)";  // for messages
}

EinsumCall& EinsumCall::patterns(const Equation& eq, const char* attr) {
  eq_ = eq;
  eq_text_ = &kBuiltPatterns;
  eq_attr_ = attr;
  eq_positional_ = true;
  return *this;
}

void PatternPlan::apply(EinsumCall& call, const char* attr) const {
  call.patterns(eq, attr);
  for (int c = 0; c < 26; ++c)
    if (whole >> c & 1u) call.replicate_letter(static_cast<char>('a' + c));
  if (!resized.empty()) call.whole_axes(0, resized, /*empty_all=*/false, attr);
  call.born_sizes(born);
}

namespace {

// Hands out letters a, b, c... and builds patterns from them.
struct Letters {
  const std::string& op;
  PatternPlan& plan;
  int next = 0;
  char fresh() {
    if (next == 26) throw ValueError(op + ": the tensors have more than 26 distinct dims");
    return static_cast<char>('a' + next++);
  }
  static void letter(Pattern& p, char c) { p.push_back({NotationItem::kLetter, c, false}); }
  static void one(Pattern& p) { p.push_back({NotationItem::kOne, 0, false}); }
  void never_split(char c) { plan.whole |= 1u << (c - 'a'); }
  Pattern& operand(std::size_t i) {
    while (plan.eq.operands.size() <= i) plan.eq.operands.push_back(Pattern());
    return plan.eq.operands[i];
  }
};

[[noreturn]] void bad(const std::string& op, const char* attr, const std::string& why) {
  throw ValueError(op + ": attribute '" + attr + "' " + why);
}

// Checks that `dims` names distinct dims of a tensor of `rank` (no negative counting: StableHLO's
// dimension numbers are absolute) and returns a bit per dim.
uint32_t dim_set(const std::string& op, const char* attr, const std::vector<int64_t>& dims, std::size_t rank,
                 const char* tensor) {
  if (rank > kMaxRank) bad(op, attr, std::string("indexes ") + tensor + " of rank " + std::to_string(rank) + ", more than " +
                                         std::to_string(kMaxRank));
  uint32_t set = 0;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank))
      bad(op, attr, "names dim " + std::to_string(d) + ", out of range for " + tensor + " of rank " + std::to_string(rank));
    if (set >> d & 1u) bad(op, attr, "names dim " + std::to_string(d) + " twice");
    set |= 1u << d;
  }
  return set;
}

void same_length(const std::string& op, const char* a, const std::vector<int64_t>& x, const char* b,
                 const std::vector<int64_t>& y) {
  if (x.size() != y.size())
    throw ValueError(op + ": attributes '" + a + "' and '" + b + "' have " + std::to_string(x.size()) + " and " +
                     std::to_string(y.size()) + " entries; they must pair up");
}

int64_t find(const std::vector<int64_t>& v, int64_t x) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] == x) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

void dot_general_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs,
                          const std::vector<int64_t>& lhs_contracting, const std::vector<int64_t>& rhs_contracting,
                          const std::vector<int64_t>& lhs_batching, const std::vector<int64_t>& rhs_batching) {
  same_length(op, "lhs_contracting_dimensions", lhs_contracting, "rhs_contracting_dimensions", rhs_contracting);
  same_length(op, "lhs_batching_dimensions", lhs_batching, "rhs_batching_dimensions", rhs_batching);
  const uint32_t lc = dim_set(op, "lhs_contracting_dimensions", lhs_contracting, lhs.rank(), "lhs");
  const uint32_t rc = dim_set(op, "rhs_contracting_dimensions", rhs_contracting, rhs.rank(), "rhs");
  const uint32_t lb = dim_set(op, "lhs_batching_dimensions", lhs_batching, lhs.rank(), "lhs");
  const uint32_t rb = dim_set(op, "rhs_batching_dimensions", rhs_batching, rhs.rank(), "rhs");
  if (lc & lb) bad(op, "lhs_batching_dimensions", "shares a dim with 'lhs_contracting_dimensions'");
  if (rc & rb) bad(op, "rhs_batching_dimensions", "shares a dim with 'rhs_contracting_dimensions'");
  Letters L{op, plan};
  L.operand(1);  // both operands have a pattern, rank 0 included
  char lhs_letter[kMaxRank], rhs_letter[kMaxRank];
  Pattern result;
  for (std::size_t i = 0; i < lhs_batching.size(); ++i) {  // batch dims lead the result, in order
    const char c = L.fresh();
    lhs_letter[lhs_batching[i]] = rhs_letter[rhs_batching[i]] = c;
    Letters::letter(result, c);
  }
  for (std::size_t i = 0; i < lhs_contracting.size(); ++i)
    lhs_letter[lhs_contracting[i]] = rhs_letter[rhs_contracting[i]] = L.fresh();
  for (std::size_t d = 0; d < lhs.rank(); ++d)
    if (!((lb | lc) >> d & 1u)) Letters::letter(result, lhs_letter[d] = L.fresh());
  for (std::size_t d = 0; d < rhs.rank(); ++d)
    if (!((rb | rc) >> d & 1u)) Letters::letter(result, rhs_letter[d] = L.fresh());
  for (std::size_t d = 0; d < lhs.rank(); ++d) Letters::letter(L.operand(0), lhs_letter[d]);
  for (std::size_t d = 0; d < rhs.rank(); ++d) Letters::letter(L.operand(1), rhs_letter[d]);
  plan.eq.result = result;
}

void ragged_dot_general_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs,
                                 const DistMetaTensor& rhs, const DistMetaTensor& group_sizes,
                                 const std::vector<int64_t>& lhs_contracting, const std::vector<int64_t>& rhs_contracting,
                                 const std::vector<int64_t>& lhs_batching, const std::vector<int64_t>& rhs_batching,
                                 const std::vector<int64_t>& lhs_ragged_dimensions,
                                 const std::vector<int64_t>& rhs_group_dimensions) {
  // dot_general's letters; the lhs dim cut into groups (by position) is whole, and so is the
  // group count g. group_sizes is [g] or [lhs prefix dims..., g] (jax's _ragged_dot_prefix_dims):
  // its prefix dims take their lhs dims' letters, so they split alike.
  if (lhs_ragged_dimensions.size() != 1)
    bad(op, "lhs_ragged_dimensions", "must name exactly one dim, got " + std::to_string(lhs_ragged_dimensions.size()));
  if (group_sizes.rank() < 1) throw ValueError(op + ": group_sizes must have rank >= 1, got rank 0");
  const int64_t ragged = lhs_ragged_dimensions[0];
  dim_set(op, "lhs_ragged_dimensions", lhs_ragged_dimensions, lhs.rank(), "lhs");
  const uint32_t lc = dim_set(op, "lhs_contracting_dimensions", lhs_contracting, lhs.rank(), "lhs");
  const uint32_t lb = dim_set(op, "lhs_batching_dimensions", lhs_batching, lhs.rank(), "lhs");
  dim_set(op, "rhs_group_dimensions", rhs_group_dimensions, rhs.rank(), "rhs");
  dim_set(op, "rhs_contracting_dimensions", rhs_contracting, rhs.rank(), "rhs");  // on rhs as given, before
  dim_set(op, "rhs_batching_dimensions", rhs_batching, rhs.rank(), "rhs");        // the group dim is taken out
  const bool contracting = lc >> ragged & 1u, batch = lb >> ragged & 1u, noncontracting = !contracting && !batch;
  if (noncontracting != (rhs_group_dimensions.size() == 1))
    bad(op, "rhs_group_dimensions", noncontracting ? "must name one dim when the lhs ragged dim is not contracted or batch"
                                                   : "must be empty when the lhs ragged dim is contracted or batch");
  // rhs without its group dim is a dot_general's rhs: build that, then put the group dim back
  std::vector<int64_t> rc = rhs_contracting, rb = rhs_batching;
  if (noncontracting) {
    const int64_t g = rhs_group_dimensions[0];
    if (find(rc, g) >= 0 || find(rb, g) >= 0) bad(op, "rhs_group_dimensions", "names a contracted or batch dim");
    for (int64_t& d : rc) d -= d > g;
    for (int64_t& d : rb) d -= d > g;
  }
  DistMetaTensor rhs_less = rhs;  // the builder reads ranks only
  if (noncontracting) rhs_less.shape.erase(static_cast<std::size_t>(rhs_group_dimensions[0]));
  dot_general_patterns(plan, op, lhs, rhs_less, lhs_contracting, rc, lhs_batching, rb);
  Letters L{op, plan};
  for (const Pattern* p : {&plan.eq.operands[0], &plan.eq.operands[1], &plan.eq.result})
    for (const auto& it : *p) L.next = std::max(L.next, it.name - 'a' + 1);
  const Pattern& lp = plan.eq.operands[0];
  L.never_split(lp[static_cast<std::size_t>(ragged)].name);
  const char g = L.fresh();
  L.never_split(g);
  if (noncontracting) plan.eq.operands[1].insert(static_cast<std::size_t>(rhs_group_dimensions[0]), {NotationItem::kLetter, g, false});
  if (contracting) plan.eq.result.insert(0, {NotationItem::kLetter, g, false});
  // group_sizes' prefix (jax's _ragged_dot_prefix_dims): the batch dims, then the dims of the
  // ragged one's kind before it (free dims in lhs order, contracted ones in the attribute's)
  std::vector<int64_t> prefix;
  if (batch) {
    prefix.assign(lhs_batching.begin(), lhs_batching.begin() + find(lhs_batching, ragged));
  } else {
    prefix = lhs_batching;
    if (contracting) {
      for (int64_t d : lhs_contracting) {
        if (d == ragged) break;
        prefix.push_back(d);
      }
    } else {
      for (int64_t d = 0; d < ragged; ++d)
        if (!((lc | lb) >> d & 1u)) prefix.push_back(d);
    }
  }
  Pattern& gs = L.operand(2);
  if (group_sizes.rank() == 1) {
    Letters::letter(gs, g);
  } else {
    if (group_sizes.rank() != prefix.size() + 1)
      throw ValueError(op + ": group_sizes of rank " + std::to_string(group_sizes.rank()) +
                       (prefix.empty() ? std::string(" must have rank 1 (the groups)")
                                       : " must have rank 1 or " + std::to_string(prefix.size() + 1) +
                                             " (the lhs dims before the ragged one, then the groups)"));
    for (int64_t d : prefix) Letters::letter(gs, lp[static_cast<std::size_t>(d)].name);
    Letters::letter(gs, g);
  }
}

void dot_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs) {
  if (lhs.rank() < 1 || lhs.rank() > 2 || rhs.rank() < 1 || rhs.rank() > 2)
    throw ValueError(op + ": lhs and rhs must have rank 1 or 2, got " + std::to_string(lhs.rank()) + " and " +
                     std::to_string(rhs.rank()));
  dot_general_patterns(plan, op, lhs, rhs, {static_cast<int64_t>(lhs.rank()) - 1}, {0}, {}, {});
}

void broadcast_in_dim_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                               const std::vector<int64_t>& shape, const std::vector<int64_t>& broadcast_dimensions) {
  if (broadcast_dimensions.size() != operand.rank())
    bad(op, "broadcast_dimensions", "has " + std::to_string(broadcast_dimensions.size()) + " entries for operand of rank " +
                                        std::to_string(operand.rank()));
  if (shape.size() > kMaxRank) bad(op, "shape", "has more than " + std::to_string(kMaxRank) + " dims");
  dim_set(op, "broadcast_dimensions", broadcast_dimensions, shape.size(), "the result");
  Letters L{op, plan};
  char out_letter[kMaxRank];
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) bad(op, "shape", "has a negative size");
    out_letter[d] = L.fresh();
    Letters::letter(plan.eq.result, out_letter[d]);
    plan.born[out_letter[d] - 'a'] = shape[d];
  }
  Pattern& p = L.operand(0);
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    const int64_t to = broadcast_dimensions[d], size = operand.shape[d];
    if (size == shape[to]) Letters::letter(p, out_letter[to]);
    else if (size == 1) Letters::one(p);  // expanded in place: the result dim is born
    else
      throw ValueError(op + ": operand dim " + std::to_string(d) + " has size " + std::to_string(size) +
                       ", but result dim " + std::to_string(to) + " (broadcast_dimensions) has size " + std::to_string(shape[to]));
  }
}

// gather and scatter share one structure: the "slices" tensor (gather's result, scatter's
// updates) has offset dims (a window of an operand dim) and batch dims (an index of the
// indices, and of the operand where both are batching dims). Offset dims whose window is the
// whole operand dim share its letter; otherwise the operand dim is indexed into and never split,
// and the slices dim is a letter of its own. Collapsed dims and the index vector dim are never split.
namespace {
struct GatherLetters {
  Pattern operand, indices, slices;
  uint32_t slices_only_whole = 0;  // bits of slices-only letters of sliced windows
};

void gather_scatter_letters(Letters& L, const std::string& op, const DistMetaTensor& operand, const DistMetaTensor& indices,
                            std::size_t slices_rank, const std::vector<int64_t>& offset_dims,
                            const std::vector<int64_t>& collapsed, const std::vector<int64_t>& window_sizes,
                            const std::vector<int64_t>& operand_batching, const std::vector<int64_t>& indices_batching,
                            int64_t index_vector_dim, const char* offset_attr, const char* collapsed_attr,
                            const char* operand_batching_attr, const char* indices_batching_attr, GatherLetters& g,
                            int64_t* born) {
  const std::size_t orank = operand.rank(), irank = indices.rank();
  const int64_t ivd = index_vector_dim < 0 ? static_cast<int64_t>(irank) - 1 : index_vector_dim;
  if (ivd < 0 || ivd > static_cast<int64_t>(irank))
    bad(op, "index_vector_dim", "= " + std::to_string(index_vector_dim) + " is out of range for indices of rank " +
                                    std::to_string(irank));
  const uint32_t off = dim_set(op, offset_attr, offset_dims, slices_rank, "the slices");
  const uint32_t col = dim_set(op, collapsed_attr, collapsed, orank, "operand");
  const uint32_t ob = dim_set(op, operand_batching_attr, operand_batching, orank, "operand");
  dim_set(op, indices_batching_attr, indices_batching, irank, "indices");
  same_length(op, operand_batching_attr, operand_batching, indices_batching_attr, indices_batching);
  if (col & ob) bad(op, collapsed_attr, "shares a dim with '" + std::string(operand_batching_attr) + "'");
  if (find(indices_batching, ivd) >= 0) bad(op, indices_batching_attr, "names the index vector dim");
  const std::size_t window_dims = orank - __builtin_popcount(col | ob);
  if (offset_dims.size() != window_dims)
    bad(op, offset_attr, "has " + std::to_string(offset_dims.size()) + " entries, but operand has " +
                             std::to_string(window_dims) + " dims that are neither collapsed nor batching");
  const std::size_t batch_dims = irank - (ivd < static_cast<int64_t>(irank) ? 1 : 0);
  if (slices_rank != offset_dims.size() + batch_dims)
    throw ValueError(op + ": the slices have rank " + std::to_string(slices_rank) + ", but the dimension numbers give " +
                     std::to_string(offset_dims.size() + batch_dims));
  char op_letter[kMaxRank], idx_letter[kMaxRank + 1], sl_letter[kMaxRank];
  for (std::size_t d = 0; d < orank; ++d) op_letter[d] = 0;
  for (std::size_t d = 0; d <= irank; ++d) idx_letter[d] = 0;
  std::size_t operand_dim = 0, batch_pos = 0;
  for (std::size_t d = 0; d < slices_rank; ++d) {
    if (off >> d & 1u) {
      while ((col | ob) >> operand_dim & 1u) ++operand_dim;
      const int64_t window = window_sizes[operand_dim];
      if (window == operand.shape[operand_dim]) {
        op_letter[operand_dim] = sl_letter[d] = L.fresh();
      } else {
        op_letter[operand_dim] = L.fresh();
        L.never_split(op_letter[operand_dim]);
        sl_letter[d] = L.fresh();
        g.slices_only_whole |= 1u << (sl_letter[d] - 'a');
        born[sl_letter[d] - 'a'] = window;
      }
      ++operand_dim;
    } else {
      const int64_t idx_dim = static_cast<int64_t>(batch_pos) < ivd ? batch_pos : batch_pos + 1;
      sl_letter[d] = idx_letter[idx_dim] = L.fresh();
      const int64_t b = find(indices_batching, idx_dim);
      if (b >= 0) op_letter[operand_batching[b]] = sl_letter[d];
      ++batch_pos;
    }
  }
  for (int64_t c : collapsed) {
    op_letter[c] = L.fresh();
    L.never_split(op_letter[c]);
  }
  for (std::size_t d = 0; d < orank; ++d) Letters::letter(g.operand, op_letter[d]);
  for (std::size_t d = 0; d < irank; ++d)
    if (static_cast<int64_t>(d) == ivd) Letters::one(g.indices);
    else Letters::letter(g.indices, idx_letter[d]);
  for (std::size_t d = 0; d < slices_rank; ++d) Letters::letter(g.slices, sl_letter[d]);
}
}  // namespace

void gather_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand, const DistMetaTensor& indices,
                     const std::vector<int64_t>& offset_dims, const std::vector<int64_t>& collapsed_slice_dims,
                     const std::vector<int64_t>& start_index_map, const std::vector<int64_t>& slice_sizes,
                     const std::vector<int64_t>& operand_batching_dims,
                     const std::vector<int64_t>& start_indices_batching_dims, int64_t index_vector_dim) {
  if (slice_sizes.size() != operand.rank())
    bad(op, "slice_sizes", "has " + std::to_string(slice_sizes.size()) + " entries for operand of rank " +
                               std::to_string(operand.rank()));
  dim_set(op, "start_index_map", start_index_map, operand.rank(), "operand");
  for (int64_t c : collapsed_slice_dims)
    if (c >= 0 && c < static_cast<int64_t>(slice_sizes.size()) && slice_sizes[c] != 1)
      bad(op, "collapsed_slice_dims", "names dim " + std::to_string(c) + ", whose slice size is not 1");
  const int64_t ivd = index_vector_dim < 0 ? static_cast<int64_t>(indices.rank()) - 1 : index_vector_dim;
  const std::size_t batch_dims = indices.rank() - (ivd >= 0 && ivd < static_cast<int64_t>(indices.rank()) ? 1 : 0);
  Letters L{op, plan};
  GatherLetters g;
  gather_scatter_letters(L, op, operand, indices, offset_dims.size() + batch_dims, offset_dims, collapsed_slice_dims,
                         slice_sizes, operand_batching_dims, start_indices_batching_dims, index_vector_dim, "offset_dims",
                         "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims", g, plan.born);
  L.operand(0) = g.operand;
  L.operand(1) = g.indices;
  plan.eq.result = g.slices;
}

void scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand, const DistMetaTensor& indices,
                      const DistMetaTensor& updates, const std::vector<int64_t>& update_window_dims,
                      const std::vector<int64_t>& inserted_window_dims,
                      const std::vector<int64_t>& scatter_dims_to_operand_dims,
                      const std::vector<int64_t>& input_batching_dims,
                      const std::vector<int64_t>& scatter_indices_batching_dims, int64_t index_vector_dim) {
  dim_set(op, "scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, operand.rank(), "operand");
  // The window of each operand dim: the size of the updates dim it maps to (1 for inserted and
  // batching dims, which have none).
  std::vector<int64_t> window(operand.rank(), 1);
  const uint32_t skip = dim_set(op, "inserted_window_dims", inserted_window_dims, operand.rank(), "operand") |
                        dim_set(op, "input_batching_dims", input_batching_dims, operand.rank(), "operand");
  dim_set(op, "update_window_dims", update_window_dims, updates.rank(), "updates");
  std::size_t operand_dim = 0;
  for (std::size_t d = 0; d < updates.rank(); ++d) {
    if (find(update_window_dims, static_cast<int64_t>(d)) < 0) continue;
    while (operand_dim < operand.rank() && (skip >> operand_dim & 1u)) ++operand_dim;
    if (operand_dim < operand.rank()) window[operand_dim++] = updates.shape[d];
  }
  Letters L{op, plan};
  GatherLetters g;
  gather_scatter_letters(L, op, operand, indices, updates.rank(), update_window_dims, inserted_window_dims, window,
                         input_batching_dims, scatter_indices_batching_dims, index_vector_dim, "update_window_dims",
                         "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims", g, plan.born);
  plan.whole |= g.slices_only_whole;  // an update window smaller than its operand dim lands anywhere in it
  L.operand(0) = g.operand;
  L.operand(1) = g.indices;
  L.operand(2) = g.slices;
  plan.eq.result = g.operand;
}

// A scatter whose combiner is not a sum (set, mul): an update dim that indexes (in no operand
// dim) is never split, since ranks writing their own updates into their own copies of the operand
// leave no partial state that one reduction could merge.
void scatter_overwrite_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                const DistMetaTensor& indices, const DistMetaTensor& updates,
                                const std::vector<int64_t>& update_window_dims,
                                const std::vector<int64_t>& inserted_window_dims,
                                const std::vector<int64_t>& scatter_dims_to_operand_dims,
                                const std::vector<int64_t>& input_batching_dims,
                                const std::vector<int64_t>& scatter_indices_batching_dims, int64_t index_vector_dim) {
  scatter_patterns(plan, op, operand, indices, updates, update_window_dims, inserted_window_dims,
                   scatter_dims_to_operand_dims, input_batching_dims, scatter_indices_batching_dims, index_vector_dim);
  uint32_t in_operand = 0;
  for (const NotationItem& item : plan.eq.operands[0])
    if (item.kind == NotationItem::kLetter) in_operand |= 1u << (item.name - 'a');
  for (const NotationItem& item : plan.eq.operands[2])
    if (item.kind == NotationItem::kLetter && !(in_operand >> (item.name - 'a') & 1u))
      plan.whole |= 1u << (item.name - 'a');
}

void dynamic_slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                            const std::vector<int64_t>& slice_sizes) {
  if (slice_sizes.size() != operand.rank())
    bad(op, "slice_sizes", "has " + std::to_string(slice_sizes.size()) + " entries for operand of rank " +
                               std::to_string(operand.rank()));
  Letters L{op, plan};
  Pattern& p = L.operand(0);
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.shape[d])
      bad(op, "slice_sizes", "asks for " + std::to_string(slice_sizes[d]) + " of operand dim " + std::to_string(d) +
                                 " of size " + std::to_string(operand.shape[d]));
    if (slice_sizes[d] == operand.shape[d]) {
      const char c = L.fresh();
      Letters::letter(p, c);
      Letters::letter(plan.eq.result, c);
    } else {  // a window at a position known only at run time: whole on both sides
      Letters::one(p);
      Letters::one(plan.eq.result);
    }
  }
}

void dynamic_update_slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                   const DistMetaTensor& update) {
  if (update.rank() != operand.rank())
    throw ValueError(op + ": update has rank " + std::to_string(update.rank()) + ", operand has rank " +
                     std::to_string(operand.rank()));
  Letters L{op, plan};
  Pattern& p = L.operand(0);
  Pattern& u = L.operand(1);
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (update.shape[d] > operand.shape[d])
      throw ValueError(op + ": update dim " + std::to_string(d) + " has size " + std::to_string(update.shape[d]) +
                       ", larger than operand's " + std::to_string(operand.shape[d]));
    const char c = L.fresh();
    Letters::letter(p, c);
    if (update.shape[d] == operand.shape[d]) {
      Letters::letter(u, c);
    } else {  // the update lands at a position known only at run time
      L.never_split(c);
      Letters::one(u);
    }
  }
  plan.eq.result = p;
}

void slice_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                    const std::vector<int64_t>& start_indices, const std::vector<int64_t>& limit_indices,
                    const std::vector<int64_t>& strides) {
  const std::size_t r = operand.rank();
  if (start_indices.size() != r) bad(op, "start_indices", "has " + std::to_string(start_indices.size()) + " entries for operand of rank " + std::to_string(r));
  if (limit_indices.size() != r) bad(op, "limit_indices", "has " + std::to_string(limit_indices.size()) + " entries for operand of rank " + std::to_string(r));
  if (!strides.empty() && strides.size() != r) bad(op, "strides", "has " + std::to_string(strides.size()) + " entries for operand of rank " + std::to_string(r));
  Letters L{op, plan};
  L.operand(0);
  for (std::size_t d = 0; d < r; ++d) {
    const int64_t stride = strides.empty() ? 1 : strides[d];
    if (start_indices[d] < 0 || limit_indices[d] < start_indices[d] || limit_indices[d] > operand.shape[d] || stride < 1)
      throw ValueError(op + ": dim " + std::to_string(d) + " of size " + std::to_string(operand.shape[d]) +
                       " cannot be sliced [" + std::to_string(start_indices[d]) + ":" + std::to_string(limit_indices[d]) +
                       ":" + std::to_string(stride) + "]");
    const char c = L.fresh();
    Letters::letter(L.operand(0), c);
    Letters::letter(plan.eq.result, c);
    // Resized when the slice is not the whole dim (a stride over a size-1 dim changes nothing).
    if ((limit_indices[d] - start_indices[d] + stride - 1) / stride != operand.shape[d]) plan.resized.push_back(static_cast<int64_t>(d));
  }
}

void pad_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                  const std::vector<int64_t>& edge_padding_low, const std::vector<int64_t>& edge_padding_high,
                  const std::vector<int64_t>& interior_padding) {
  const std::size_t r = operand.rank();
  for (auto [name, v] : {std::pair<const char*, const std::vector<int64_t>*>{"edge_padding_low", &edge_padding_low},
                         {"edge_padding_high", &edge_padding_high}, {"interior_padding", &interior_padding}})
    if (v->size() != r) bad(op, name, "has " + std::to_string(v->size()) + " entries for operand of rank " + std::to_string(r));
  Letters L{op, plan};
  L.operand(1);  // the operand's pattern, and the padding value's (rank 0)
  for (std::size_t d = 0; d < r; ++d) {
    if (interior_padding[d] < 0) bad(op, "interior_padding", "is negative");
    const char c = L.fresh();
    Letters::letter(L.operand(0), c);
    Letters::letter(plan.eq.result, c);
    // Resized, or shifted (low = -high), unless padding adds nothing (interior padding of a size-1 dim).
    if (edge_padding_low[d] || edge_padding_high[d] || (interior_padding[d] && operand.shape[d] > 1))
      plan.resized.push_back(static_cast<int64_t>(d));
  }
}

void padding_config_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                             const std::vector<int64_t>& padding_config) {
  if (padding_config.size() != 3 * operand.rank())
    bad(op, "padding_config", "has " + std::to_string(padding_config.size()) + " entries; operand of rank " +
                                  std::to_string(operand.rank()) + " needs (low, high, interior) per dim: " +
                                  std::to_string(3 * operand.rank()));
  std::vector<int64_t> lo, hi, in;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    lo.push_back(padding_config[3 * d]);
    hi.push_back(padding_config[3 * d + 1]);
    in.push_back(padding_config[3 * d + 2]);
  }
  pad_patterns(plan, op, operand, lo, hi, in);
}

void created_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& out, const std::vector<int64_t>& shape) {
  if (!out.absent() && std::vector<int64_t>(out.shape.begin(), out.shape.end()) != shape)
    bad(op, "shape", "does not match the shape of out (rank " + std::to_string(out.rank()) + ")");
  if (shape.size() > kMaxRank) bad(op, "shape", "has more than " + std::to_string(kMaxRank) + " dims");
  Letters L{op, plan};
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const char c = L.fresh();
    Letters::letter(plan.eq.result, c);
    plan.born[c - 'a'] = shape[d];
  }
}

void iota_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& out, const std::vector<int64_t>& shape,
                   int64_t dimension) {
  if (dimension < 0 || dimension >= static_cast<int64_t>(shape.size()))
    bad(op, "dimension", "= " + std::to_string(dimension) + " is out of range for a result of rank " + std::to_string(shape.size()));
  created_patterns(plan, op, out, shape);
}

}  // namespace spmd
