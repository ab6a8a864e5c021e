// The factor engine, step 1: resolve the notation against the bound tensors (factors, their
// sizes, the attribute edits) and check that the tensors agree on every factor's size.
#include "einsum_engine.h"

#include <cstring>
#include <limits>

#include "errors.h"

namespace spmd {

// A '*' or '@' pattern stands for the call's equation: operand `list_pos` (0 for a lone tensor)
// or the result. Any other pattern is itself.
const Pattern& EinsumCall::placeholder(const Pattern& p, int list_pos, bool is_input, int arg) const {
  if (p.size() != 1 || (p[0].kind != NotationItem::kOperands && p[0].kind != NotationItem::kResult)) return p;
  if (!eq_text_) throw ValueError(rule_.op + ": " + arg_name(is_input, arg) + " takes its pattern from an equation, but none was given");
  if (p[0].kind == NotationItem::kResult) return eq_.result;
  const std::size_t i = list_pos >= 0 ? static_cast<std::size_t>(list_pos) : eq_positional_ ? static_cast<std::size_t>(arg) : 0;
  if (i >= eq_.operands.size())
    throw ValueError(rule_.op + ": attribute '" + eq_attr_ + "' = \"" + *eq_text_ + "\" has " +
                     std::to_string(eq_.operands.size()) + " operands, but " + arg_name(is_input, arg) + " holds more tensors");
  return eq_.operands[i];
}

const Pattern& EinsumCall::input_pattern(std::size_t k) const {
  return placeholder(rule_.notation.inputs[in_[k].pattern], in_[k].list_pos, true, in_[k].pattern);
}

const Pattern& EinsumCall::output_pattern(std::size_t k) const {
  return placeholder(rule_.notation.outputs[out_[k].pattern], out_[k].list_pos, false, out_[k].pattern);
}

int EinsumCall::new_factor() {
  factors_.push_back(Factor());
  return static_cast<int>(factors_.size()) - 1;
}

int EinsumCall::factor_of(char letter) {
  int8_t& id = letter_factor_[letter - 'a'];
  if (id < 0) {
    id = static_cast<int8_t>(new_factor());
    factors_[id].letter = letter;
  }
  return id;
}

int64_t EinsumCall::group_len(char group) const {
  for (const Group& g : groups_)
    if (g.name == group) return g.len;
  return -1;
}

int EinsumCall::group_factor(char group, int64_t pos) {
  for (Group& g : groups_)
    if (g.name == group) {
      if (g.first < 0) {
        g.first = static_cast<int8_t>(factors_.size());
        for (int64_t k = 0; k < g.len; ++k) new_factor();
      }
      return g.first + static_cast<int>(pos);
    }
  throw ValueError(rule_.op + ": group " + std::string(1, group) + " has no length");
}

int64_t EinsumCall::norm_axis(int64_t axis, std::size_t rank, const char* attr, int arg) const {
  const int64_t r = static_cast<int64_t>(rank);
  const int64_t lim = std::max<int64_t>(r, 1);  // a 0-D tensor accepts axis 0 / -1, as numpy's keepdims ops do
  if (axis < -lim || axis >= lim)
    throw ValueError(rule_.op + ": attribute '" + attr + "' = " + std::to_string(axis) + " is out of range for " +
                     arg_name(true, arg) + " of rank " + std::to_string(r));
  return axis < 0 ? axis + lim : axis;
}

void EinsumCall::resolve_inputs() {
  if (eq_text_) {  // every operand of the equation is bound to one tensor
    for (std::size_t j = 0; j < in_args_.size(); ++j) {
      const Pattern& p = rule_.notation.inputs[j];
      if (p.size() != 1 || p[0].kind != NotationItem::kOperands || !in_args_[j].bound || eq_positional_) continue;
      if (in_args_[j].count != eq_.operands.size())
        throw ValueError(rule_.op + ": attribute '" + eq_attr_ + "' = \"" + *eq_text_ + "\" has " +
                         std::to_string(eq_.operands.size()) + " operands, but " + arg_name(true, static_cast<int>(j)) +
                         " holds " + std::to_string(in_args_[j].count) + " tensors");
    }
  }
  // Pass 1: how many dims the variable item (ellipsis or unsized group) of each input takes.
  SmallVec<int64_t, kMaxTensors> var_len;
  SmallVec<bool, kMaxTensors> opt_present;
  for (std::size_t k = 0; k < in_.size(); ++k) {
    var_len.push_back(0);
    opt_present.push_back(false);
    if (!in_[k].t) continue;
    int fixed = 0, optional = 0;
    char variable = 0;
    for (const NotationItem& it : input_pattern(k)) {
      if (it.kind == NotationItem::kLetter) (it.optional ? optional : fixed)++;
      else if (it.kind == NotationItem::kOne || it.kind == NotationItem::kFlatGroup) fixed++;
      else if (it.kind == NotationItem::kGroup && group_len(it.name) >= 0) fixed += static_cast<int>(group_len(it.name));
      else if (it.kind == NotationItem::kRest) variable = '_';
      else variable = it.kind == NotationItem::kEllipsis ? '.' : it.name;
    }
    const int64_t rank = static_cast<int64_t>(in_[k].t->rank());
    if (variable) {
      if (rank < fixed)
        throw ValueError(where(true, static_cast<int>(k)) + " has rank " + std::to_string(rank) + ", but needs at least " +
                         std::to_string(fixed) + " dims");
      opt_present[k] = rank >= fixed + optional;
      var_len[k] = rank - fixed - (opt_present[k] ? optional : 0);
      if (variable == '.') ellipsis_len_ = std::max(ellipsis_len_, var_len[k]);
      else if (variable == '_') {}  // this tensor's own dims, never split
      else if (group_len(variable) < 0) groups_.push_back({variable, var_len[k], -1});
      else if (group_len(variable) != var_len[k])
        throw ValueError(where(true, static_cast<int>(k)) + " has rank " + std::to_string(rank) +
                         ", which does not fit its pattern");
    } else {
      opt_present[k] = optional > 0 && rank == fixed + optional;
      if (rank != fixed && !opt_present[k] && !given_flat(true, k, static_cast<std::size_t>(fixed)))
        throw ValueError(where(true, static_cast<int>(k)) + " has rank " + std::to_string(rank) + ", but must have rank " +
                         std::to_string(fixed) + (optional ? " or " + std::to_string(fixed + optional) : ""));
    }
  }
  if (ellipsis_len_ > 0) {
    ellipsis_first_ = static_cast<int8_t>(factors_.size());
    for (int64_t k = 0; k < ellipsis_len_; ++k) factors_[new_factor()].batch = true;
  }
  // Pass 2: one slot per dim.
  in_slots_.resize(in_.size());
  for (std::size_t k = 0; k < in_.size(); ++k) {
    in_slots_[k].clear();
    if (!in_[k].t) continue;
    Slots& s = in_slots_[k];
    for (const NotationItem& it : input_pattern(k)) {
      Slot slot;
      switch (it.kind) {
        case NotationItem::kLetter:
          if (it.optional && !opt_present[k]) continue;
          slot.n = 1;
          slot.f[0] = static_cast<uint8_t>(factor_of(it.name));
          s.push_back(slot);
          break;
        case NotationItem::kOne:
          s.push_back(slot);
          break;
        case NotationItem::kEllipsis:
          for (int64_t e = ellipsis_len_ - var_len[k]; e < ellipsis_len_; ++e) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(ellipsis_first_ + e);
            s.push_back(slot);
          }
          break;
        case NotationItem::kGroup:
          for (int64_t e = 0; e < group_len(it.name); ++e) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(group_factor(it.name, e));
            s.push_back(slot);
          }
          break;
        case NotationItem::kFlatGroup:
          for (int64_t e = 0; e < group_len(it.name); ++e) slot.f[slot.n++] = static_cast<uint8_t>(group_factor(it.name, e));
          flat_slots_ |= slot.n > 1;
          s.push_back(slot);
          break;
        case NotationItem::kRest:
          for (int64_t e = 0; e < var_len[k]; ++e) s.push_back(slot);
          break;
        case NotationItem::kOperands:
        case NotationItem::kResult:
          throw ValueError(rule_.op + ": '*' and '@' must be a whole pattern");
      }
    }
    if (given_flat(true, k, s.size())) flatten_slots(s);
  }
}

void EinsumCall::apply_input_edits() {
  for (const Edit& e : edits_) {
    if (e.kind == Edit::kReplicateLetter) {
      if (e.letter >= 'a' && e.letter <= 'z') {
        if (letter_factor_[e.letter - 'a'] >= 0) factors_[letter_factor_[e.letter - 'a']].need_replication = true;
      } else {
        for (int64_t k = 0; k < std::max<int64_t>(group_len(e.letter), 0); ++k)
          factors_[group_factor(e.letter, k)].need_replication = true;
      }
      continue;
    }
    if (e.kind == Edit::kWhole) {
      const ArgRange& r = in_args_[e.arg];
      for (int k = r.first; k < r.first + r.count; ++k)
        if (in_[k].t) mark_whole(e, k);
      continue;
    }
    if (e.kind != Edit::kTranspose && e.kind != Edit::kReplicateAxes) continue;
    const ArgRange& r = in_args_[e.arg];
    for (int k = r.first; k < r.first + r.count; ++k) {
      if (!in_[k].t) continue;
      Slots& s = in_slots_[k];
      if (e.kind == Edit::kTranspose) {
        if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
        continue;
      }
      auto mark = [&](int64_t a) {
        if (s.empty()) {
          norm_axis(a, 0, e.attr, e.arg);  // range check only: a 0-D tensor has nothing to gather
          return;
        }
        const Slot& slot = s[norm_axis(a, s.size(), e.attr, e.arg)];
        for (int f = 0; f < slot.n; ++f) factors_[slot.f[f]].need_replication = true;
      };
      if (e.axes) for (int64_t a : *e.axes) mark(a);
      else mark(e.axis);
    }
  }
}

void EinsumCall::mark_whole(const Edit& e, int k) {
  const Slots& s = in_slots_[k];
  const int64_t rank = static_cast<int64_t>(s.size());
  auto mark = [&](int64_t d) {
    const Slot& slot = s[d];
    for (int f = 0; f < slot.n; ++f) {
      factors_[slot.f[f]].need_replication = true;
      factors_[slot.f[f]].any_size = true;
    }
  };
  auto mark_axis = [&](int64_t a) {
    if (s.empty()) norm_axis(a, 0, e.attr, e.arg);  // range check only
    else mark(norm_axis(a, s.size(), e.attr, e.arg));
  };
  if (!e.values) {
    if (!e.axes) mark_axis(e.axis);
    else if (e.axes->empty() && e.empty_all) for (int64_t d = 0; d < rank; ++d) mark(d);
    else for (int64_t a : *e.axes) mark_axis(a);
    return;
  }
  const std::vector<int64_t>& v = *e.axes;
  const int64_t n = static_cast<int64_t>(v.size()), per = e.per_dim;
  const int64_t dims = n / per;
  if (n % per != 0 || (!e.align_end && dims != rank) || (e.align_end && dims > rank && !e.lead))
    throw ValueError(rule_.op + ": attribute '" + e.attr + "' has " + std::to_string(n) + " entries for " +
                     arg_name(true, e.arg) + " of rank " + std::to_string(rank) +
                     (e.align_end ? ", at most " + std::to_string(per * rank)
                                  : ", it needs " + std::to_string(per * rank)));
  const int64_t first = e.align_end ? rank - dims : 0;  // the dim of the first entry group (< 0: lead dims)
  for (int64_t g = 0; g < dims; ++g) {
    const int64_t d = first + g;
    if (d < 0) continue;
    for (int64_t j = 0; j < per; ++j)
      if (v[g * per + j] != e.keep && !(e.keep_size && v[g * per + j] == in_[k].t->shape[d])) {
        mark(d);
        break;
      }
  }
}

void EinsumCall::check_sizes(bool is_input, int k) {
  const DistMetaTensor* t = (is_input ? in_ : out_)[k].t;
  Slots& s = (is_input ? in_slots_ : out_slots_)[k];
  if (!t) return;
  // (An element of a list output is always a tensor: a list has no holes.)
  if (!is_input && t->rank() == 0 && t->attr.rank() == 0 && !s.empty() && out_[k].list_pos < 0) {
    out_[k].t = nullptr;  // Paddle's empty spec for an output it does not give: absent
    return;
  }
  if (t->rank() != s.size())
    throw ValueError(where(is_input, k) + " has rank " + std::to_string(t->rank()) + ", but the rule gives it rank " +
                     std::to_string(s.size()));
  for (std::size_t d = 0; d < s.size(); ++d) {
    Slot& slot = s[d];
    const int64_t size = t->shape[d];
    if (size == 1) slot.one = true;
    if (slot.n != 1) continue;
    Factor& f = factors_[slot.f[0]];
    if (f.any_size) continue;  // resized by the op: each tensor has its own size
    // A size-1 dim broadcasts against any size: a batch dim, or any label of an einsum equation
    // (numpy's and Paddle's einsum broadcast size-1 dims of a label).
    const bool broadcasts =
        (ellipsis_first_ >= 0 && slot.f[0] >= ellipsis_first_ && slot.f[0] < ellipsis_first_ + ellipsis_len_) || eq_text_;
    if (size < 0) continue;                // unknown (dynamic) size: nothing to check
    if (size == 1 && broadcasts) {
      if (f.size < 0) f.size = 1;
      continue;
    }
    if (f.size < 0 || (broadcasts && f.size == 1)) f.size = size;
    else if (f.size != size && rule_.options.mismatch_replicated) f.mismatch = true;
    else if (f.size != size)
      throw ValueError(where(is_input, k) + ": dim " + std::to_string(d) + " has size " + std::to_string(size) +
                       ", but the same factor has size " + std::to_string(f.size) + " elsewhere");
  }
}

void EinsumCall::prepare_outputs() {
  // Forward calls bind no outputs: make one unbound entry per output (or per list element).
  for (std::size_t j = 0; j < out_args_.size(); ++j) {
    ArgRange& r = out_args_[j];
    if (r.bound) continue;
    r.bound = true;
    r.list = rule_.output_is_list[j];
    r.first = static_cast<uint8_t>(out_.size());
    int64_t count = out_count_[j];
    if (r.list && count < 0) {
      const Pattern& p = rule_.notation.outputs[j];
      if (eq_text_ && p.size() == 1 && p[0].kind == NotationItem::kOperands)
        count = static_cast<int64_t>(eq_.operands.size());
      for (const Edit& e : edits_)
        if (e.kind == Edit::kLike && e.arg == static_cast<int>(j)) count = in_args_[e.axis].count;
    }
    const int64_t n = r.list ? std::max<int64_t>(count, 0) : 1;
    for (int64_t k = 0; k < n; ++k) out_.push_back({nullptr, static_cast<uint8_t>(j), static_cast<int16_t>(r.list ? k : -1)});
    r.count = static_cast<uint8_t>(n);
  }
}

void EinsumCall::resolve_outputs() {
  out_slots_.resize(out_.size());
  out_overridden_.resize(out_.size(), false);
  out_absent_.resize(out_.size(), false);
  for (std::size_t k = 0; k < out_.size(); ++k) {
    out_slots_[k].clear();
    out_overridden_[k] = false;
    out_absent_[k] = false;
  }
  // Outputs shaped like an input (grads): its slots, size-1 dims included; list element by element.
  for (const Edit& e : edits_) {
    if (e.kind == Edit::kWorkspace)
      for (int k = 0; k < out_args_[e.arg].count; ++k) {
        out_absent_[out_args_[e.arg].first + k] = true;
        out_overridden_[out_args_[e.arg].first + k] = true;
      }
    if (e.kind != Edit::kLike) continue;
    const ArgRange& in = in_args_[e.axis];
    const ArgRange& out = out_args_[e.arg];
    for (int k = 0; k < out.count; ++k) {
      const int o = out.first + k;
      if (k < in.count && in_[in.first + k].t) out_slots_[o] = in_slots_[in.first + k];
      else out_absent_[o] = true;
      out_overridden_[o] = true;
    }
  }
  // Edits that define the first output from an input's pattern.
  for (const Edit& e : edits_) {
    if (e.kind != Edit::kReduce && e.kind != Edit::kPermute && e.kind != Edit::kInsert && e.kind != Edit::kWhole &&
        e.kind != Edit::kUnbroadcast)
      continue;
    const ArgRange& src_range = in_args_[e.arg];
    if (src_range.count == 0 || !in_[src_range.first].t) continue;
    const Slots& src = in_slots_[src_range.first];
    int target = 0;  // the output the edit defines
    Slots dst;
    if (e.kind == Edit::kWhole) {
      const int64_t lead = whole_lead(e, src.size());
      if (lead == 0) continue;  // the output pattern says it already
      for (int64_t k = 0; k < lead; ++k) dst.push_back(Slot());
      for (const Slot& slot : src) dst.push_back(slot);
    } else if (e.kind == Edit::kUnbroadcast) {
      target = static_cast<int>(e.axis);
      for (const Slot& slot : src) {
        const bool broadcast = slot.one && slot.n == 1 && factors_[slot.f[0]].size != 1;
        dst.push_back(broadcast ? Slot() : slot);
      }
    } else if (e.kind == Edit::kPermute) {
      if (e.axes->size() != src.size())
        throw ValueError(rule_.op + ": attribute '" + e.attr + "' has " + std::to_string(e.axes->size()) + " entries for " +
                         arg_name(true, e.arg) + " of rank " + std::to_string(src.size()));
      uint32_t seen = 0;
      for (int64_t a : *e.axes) {
        const int64_t d = norm_axis(a, src.size(), e.attr, e.arg);
        if (seen & (1u << d))
          throw ValueError(rule_.op + ": attribute '" + e.attr + "' names dim " + std::to_string(d) + " twice");
        seen |= 1u << d;
        dst.push_back(src[d]);
      }
    } else if (e.kind == Edit::kInsert) {
      const int64_t r = static_cast<int64_t>(src.size()) + 1;
      if (e.axis < -r || e.axis >= r)
        throw ValueError(rule_.op + ": attribute '" + e.attr + "' = " + std::to_string(e.axis) +
                         " is out of range for an output of rank " + std::to_string(r));
      dst = src;
      dst.insert(static_cast<std::size_t>(e.axis < 0 ? e.axis + r : e.axis), Slot());
    } else {
      uint32_t reduced = 0;
      if (e.axes) {
        if (e.axes->empty() && e.empty_all) reduced = (1u << src.size()) - 1;
        for (int64_t a : *e.axes)
          if (!src.empty()) reduced |= 1u << norm_axis(a, src.size(), e.attr, e.arg);
          else norm_axis(a, 0, e.attr, e.arg);
      } else if (!src.empty()) {
        reduced = 1u << norm_axis(e.axis, src.size(), e.attr, e.arg);
      } else {
        norm_axis(e.axis, 0, e.attr, e.arg);
      }
      for (std::size_t d = 0; d < src.size(); ++d) {
        if (!(reduced & (1u << d))) {
          dst.push_back(src[d]);
          continue;
        }
        const int64_t size = in_[src_range.first].t->shape[d];
        if (e.squeeze && size != 1 && src[d].n == 1 && !factors_[src[d].f[0]].any_size)
          throw ValueError(rule_.op + ": attribute '" + e.attr + "' names dim " + std::to_string(d) + " of " +
                           arg_name(true, e.arg) + ", of size " + std::to_string(size) +
                           ", which the op leaves as it is; only a dim of size 1 can be removed");
        for (int f = 0; f < src[d].n; ++f) {
          Factor& fac = factors_[src[d].f[f]];
          if (e.whole) fac.need_replication = true;
          fac.has_reduce = true;
          fac.reduce = e.type;
        }
        if (e.flag) dst.push_back(Slot());  // keep_dim: a size-1 dim
      }
    }
    const ArgRange& r0 = out_args_[target];
    for (int k = r0.first; k < r0.first + r0.count; ++k) {
      out_slots_[k] = dst;
      for (Slot& slot : out_slots_[k]) slot.one = false;
      out_overridden_[k] = true;
    }
  }
  for (std::size_t k = 0; k < out_.size(); ++k) {
    if (out_overridden_[k]) continue;
    Slots& s = out_slots_[k];
    int rest_at = -1;  // where a '_' item goes: as many whole dims as the given output has left
    for (const NotationItem& it : output_pattern(k)) {
      Slot slot;
      switch (it.kind) {
        case NotationItem::kRest:
          rest_at = static_cast<int>(s.size());
          break;
        case NotationItem::kLetter: {
          int8_t id = letter_factor_[it.name - 'a'];
          if (id < 0) {
            if (it.optional) continue;  // absent from every input: absent here too
            id = static_cast<int8_t>(factor_of(it.name));  // a new dim: born whole on every rank
            factors_[id].born = !((rule_.input_letters >> (it.name - 'a')) & 1u);
          }
          slot.n = 1;
          slot.f[0] = static_cast<uint8_t>(id);
          s.push_back(slot);
          break;
        }
        case NotationItem::kOne:
          s.push_back(slot);
          break;
        case NotationItem::kEllipsis:
          for (int64_t e = 0; e < ellipsis_len_; ++e) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(ellipsis_first_ + e);
            s.push_back(slot);
          }
          break;
        case NotationItem::kGroup:
          for (int64_t e = 0; e < std::max<int64_t>(group_len(it.name), 0); ++e) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(group_factor(it.name, e));
            s.push_back(slot);
          }
          break;
        case NotationItem::kFlatGroup:
          for (int64_t e = 0; e < std::max<int64_t>(group_len(it.name), 0); ++e)
            slot.f[slot.n++] = static_cast<uint8_t>(group_factor(it.name, e));
          flat_slots_ |= slot.n > 1;
          s.push_back(slot);
          break;
        case NotationItem::kOperands:
        case NotationItem::kResult:
          throw ValueError(rule_.op + ": '*' and '@' must be a whole pattern");
      }
    }
    if (rest_at >= 0 && out_[k].t && out_[k].t->rank() > s.size()) {
      const std::size_t n = out_[k].t->rank() - s.size();
      for (std::size_t e = 0; e < n; ++e) s.insert(static_cast<std::size_t>(rest_at), Slot());
    }
    if (given_flat(false, k, s.size())) flatten_slots(s);
  }
  for (const Slots& s : out_slots_)
    for (const Slot& slot : s)
      for (int f = 0; f < slot.n; ++f) factors_[slot.f[f]].in_output = true;
}

}  // namespace spmd
