// SpmdRule.factors() for einsum rules: the notation resolved against the tensors and the
// attribute edits exactly as forward() resolves it, read out as Shardy's OpShardingRule. Kept
// apart from the inference (it allocates; inference does not).
#include <algorithm>

#include "einsum_engine.h"
#include "errors.h"

namespace spmd {

FactorTable EinsumCall::factor_table() {
  resolve_inputs();
  apply_input_edits();
  for (std::size_t k = 0; k < in_.size(); ++k) check_sizes(true, static_cast<int>(k));
  prepare_outputs();
  resolve_outputs();
  for (std::size_t k = 0; k < out_.size(); ++k)
    if (out_[k].t) check_sizes(false, static_cast<int>(k));

  // Per engine factor: its size in the first operand / result that has it, and whether a list
  // argument (concatenate's operands) has it: a resized factor takes the result's size there.
  const std::size_t nf = factors_.size();
  // A resized factor of a list argument (concatenate's dim) has, in the result, the sum of its
  // sizes over the list: that is its size (Shardy's).
  std::vector<int64_t> in_size(nf, -1), out_size(nf, -1), list_sum(nf, 0);
  std::vector<bool> in_list(nf, false);
  std::vector<int> list_arg(nf, -1);
  auto scan = [&](const SmallVec<Slots, kMaxTensors>& slots, const SmallVec<Bound, kMaxTensors>& bound, bool is_input) {
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const DistMetaTensor* t = bound[k].t;
      for (std::size_t d = 0; d < slots[k].size(); ++d) {
        const Slot& s = slots[k][d];
        if (s.n != 1) continue;
        const int64_t size = t && d < t->rank() ? t->shape[d] : -1;
        auto& first = is_input ? in_size[s.f[0]] : out_size[s.f[0]];
        if (first < 0 && !(size == 1 && s.one && factors_[s.f[0]].size > 1)) first = size;
        if (is_input && bound[k].list_pos >= 0) {
          const int f = s.f[0];
          in_list[f] = true;
          if (list_arg[f] < 0) list_arg[f] = bound[k].pattern;
          if (list_arg[f] == bound[k].pattern && size >= 0) list_sum[f] += size;
        }
      }
    }
  };
  scan(in_slots_, in_, true);
  scan(out_slots_, out_, false);
  std::vector<bool> whole_after_merge(nf, false);  // replicate_after_merge: claims, then is whole
  for (const Edit& e : edits_)
    if (e.kind == Edit::kUnsplitIf && e.letter == e.axis && e.letter >= 'a' && letter_factor_[e.letter - 'a'] >= 0)
      whole_after_merge[letter_factor_[e.letter - 'a']] = true;

  FactorTable table;
  std::vector<int> id(nf, -1);
  auto table_id = [&](int f) {
    if (id[f] >= 0) return id[f];
    const Factor& fac = factors_[f];
    int64_t size = fac.size;
    if (fac.any_size) size = out_size[f] >= 0 && (in_list[f] || in_size[f] < 0) ? out_size[f] : in_list[f] ? list_sum[f] : in_size[f];
    // a builder that sizes a resized dim's result (reduce_window: the number of windows) gives
    // the factor that size, as Shardy does
    if (fac.any_size && fac.letter && born_sizes_ && born_sizes_[fac.letter - 'a'] >= 0) size = born_sizes_[fac.letter - 'a'];
    if (size < 0) size = in_size[f] >= 0 ? in_size[f] : out_size[f];
    if (size < 0 && fac.letter && born_sizes_) size = born_sizes_[fac.letter - 'a'];
    FactorTable::Kind kind = FactorTable::Kind::kPassThrough;
    if (fac.any_size) kind = FactorTable::Kind::kPermutation;
    else if (fac.need_replication || whole_after_merge[f]) kind = FactorTable::Kind::kNeedReplication;
    else if (!fac.in_output) kind = FactorTable::Kind::kReduction;
    id[f] = table.add(size, kind);
    return id[f];
  };
  // A letter whose size differs between tensors (mismatch: replicate) is no one factor: a factor
  // has one size (Shardy's). It becomes one need-replication factor per distinct size, each
  // tensor's dim taking the one of its own size. A dim of unknown size (a forward call's output)
  // has the size of that dim of an input with the same pattern (take_along_axis's out is shaped
  // as its index, its grad's x_grad as x), else the size the letter has first.
  auto same_pattern_size = [&](const Slots& slots, std::size_t d) -> int64_t {
    auto same = [](const Slot& a, const Slot& b) { return a.n == b.n && std::equal(a.f, a.f + a.n, b.f); };
    for (std::size_t k = in_slots_.size(); k-- > 0;) {
      const DistMetaTensor* t = in_[k].t;
      if (!t || in_slots_[k].size() != slots.size() || d >= t->rank()) continue;
      bool equal = true;
      for (std::size_t e = 0; e < slots.size() && equal; ++e) equal = same(in_slots_[k][e], slots[e]);
      if (equal && t->shape[d] >= 0) return t->shape[d];
    }
    return -1;
  };
  std::vector<std::pair<int64_t, int>> mismatch_ids;  // (engine factor * 2^32 + size, table id)
  auto mismatch_id = [&](int f, int64_t size) {
    if (size < 0) size = factors_[f].size;
    const int64_t key = (static_cast<int64_t>(f) << 32) | (size & 0xffffffff);
    for (const auto& [k, i] : mismatch_ids)
      if (k == key) return i;
    const int i = table.add(size, FactorTable::Kind::kNeedReplication);
    mismatch_ids.emplace_back(key, i);
    return i;
  };
  auto emit = [&](const SmallVec<Slots, kMaxTensors>& slots, const SmallVec<Bound, kMaxTensors>& bound, bool absent_ok,
                  std::vector<FactorTable::TensorFactors>& to) {
    for (std::size_t k = 0; k < slots.size(); ++k) {
      FactorTable::TensorFactors dims;
      const DistMetaTensor* t = bound[k].t;
      if (t || absent_ok)
        for (std::size_t d = 0; d < slots[k].size(); ++d) {
          const Slot& s = slots[k][d];
          FactorTable::DimFactors ids;
          // A dim no factor covers (never split) or a size-1 dim that broadcasts gets a factor of
          // its own of size 1, as Shardy's builder gives every uncovered dim.
          const bool broadcast = s.n == 1 && s.one && factors_[s.f[0]].size > 1;
          if (s.n == 0 || broadcast) ids.push_back(table.add(1));
          else if (s.n == 1 && factors_[s.f[0]].mismatch)
            ids.push_back(mismatch_id(s.f[0], t && d < t->rank() && t->shape[d] >= 0 ? t->shape[d]
                                                                                    : same_pattern_size(slots[k], d)));
          else
            for (int f = 0; f < s.n; ++f) ids.push_back(table_id(s.f[f]));
          dims.push_back(std::move(ids));
        }
      to.push_back(std::move(dims));
    }
  };
  emit(in_slots_, in_, false, table.operands);
  SmallVec<Slots, kMaxTensors> outs;  // absent outputs (like an absent input, a workspace) have no dims
  for (std::size_t k = 0; k < out_slots_.size(); ++k) outs.push_back(out_absent_[k] ? Slots() : out_slots_[k]);
  emit(outs, out_, true, table.results);
  return table;
}

}  // namespace spmd
