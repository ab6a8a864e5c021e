#include "einsum_engine.h"

#include <cstring>

#include "errors.h"

namespace spmd {

static std::vector<std::string> strip_list_marks(std::vector<std::string> names, std::vector<bool>* is_list) {
  for (std::string& n : names) {
    bool list = n.size() > 2 && n.compare(n.size() - 2, 2, "[]") == 0;
    if (list) n.resize(n.size() - 2);
    is_list->push_back(list);
  }
  return names;
}

EinsumRule::EinsumRule(std::string op_name, const std::string& text, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, EinsumOptions opts)
    : op(std::move(op_name)),
      input_names(strip_list_marks(std::move(inputs), &input_is_list)),
      output_names(strip_list_marks(std::move(outputs), &output_is_list)),
      notation(Notation::parse(op, text)),
      options(opts) {
  if (notation.inputs.size() != input_names.size() || notation.outputs.size() != output_names.size())
    throw ValueError(op + ": notation \"" + text + "\" does not match the number of inputs/outputs");
}

EinsumCall::EinsumCall(const EinsumRule& rule) : rule_(rule) {
  std::memset(letter_factor_, -1, sizeof(letter_factor_));
  in_args_.resize(rule.input_names.size());
  out_args_.resize(rule.output_names.size());
  out_count_.resize(rule.output_names.size(), -1);
}

std::string EinsumCall::arg_name(bool is_input, int arg) const {
  return std::string(is_input ? "input '" : "output '") + (is_input ? rule_.input_names : rule_.output_names)[arg] + "'";
}

std::string EinsumCall::where(bool is_input, int k) const {
  const Bound& b = (is_input ? in_ : out_)[k];
  std::string s = rule_.op + ": " + (is_input ? "input '" : "output '") +
                  (is_input ? rule_.input_names : rule_.output_names)[b.pattern];
  if (b.list_pos >= 0) s += "[" + std::to_string(b.list_pos) + "]";
  return s + "'";
}

// What is wrong with a bound tensor, "" if nothing (formatted only on the error path).
static std::string tensor_problem(const DistMetaTensor& t) {
  if (t.attr.rank() != t.rank())
    return ": dims_mapping has " + std::to_string(t.attr.rank()) + " entries but the shape has rank " +
           std::to_string(t.rank());
  std::string p = t.attr.problem();
  if (!p.empty()) return (p.compare(0, 4, "has ") == 0 ? " " : ": ") + p;
  for (std::size_t d = 0; d < t.rank(); ++d)
    if (t.shape[d] < 0 && t.shape[d] != -1) return ": dim " + std::to_string(d) + " has size " + std::to_string(t.shape[d]);
  return std::string();
}

void EinsumCall::bind(bool is_input, int arg, const DistMetaTensor* t, int list_pos) {
  auto& bound = is_input ? in_ : out_;
  auto& range = (is_input ? in_args_ : out_args_)[arg];
  if (!range.bound) {
    range.bound = true;
    range.first = static_cast<uint8_t>(bound.size());
    range.list = list_pos >= 0 || (is_input ? rule_.input_is_list : rule_.output_is_list)[arg];
  }
  if (t && t->absent()) t = nullptr;  // an absent optional tensor takes no part
  bound.push_back({t, static_cast<uint8_t>(arg), static_cast<int16_t>(list_pos)});
  ++range.count;
  if (!t) return;
  const int k = static_cast<int>(bound.size()) - 1;
  std::string problem = tensor_problem(*t);
  if (!problem.empty()) throw ValueError(where(is_input, k) + problem);
  if (!mesh_) mesh_ = t->attr.mesh();
  else if (mesh_ != t->attr.mesh() && !(*mesh_ == *t->attr.mesh()))
    throw ValueError(where(is_input, k) + " is on a different process mesh than the other tensors");
}

EinsumCall& EinsumCall::input(int i, const DistMetaTensor& t) {
  bind(true, i, &t, -1);
  return *this;
}

EinsumCall& EinsumCall::input(int i, const std::vector<const DistMetaTensor*>& list) {
  if (list.empty()) {
    in_args_[i].bound = in_args_[i].list = true;
    in_args_[i].first = static_cast<uint8_t>(in_.size());
  }
  for (std::size_t k = 0; k < list.size(); ++k) bind(true, i, list[k], static_cast<int>(k));
  return *this;
}

EinsumCall& EinsumCall::output(int i, const DistMetaTensor& t) {
  bind(false, i, &t, -1);
  return *this;
}

EinsumCall& EinsumCall::output(int i, const std::vector<const DistMetaTensor*>& list) {
  if (list.empty()) {
    out_args_[i].bound = out_args_[i].list = true;
    out_args_[i].first = static_cast<uint8_t>(out_.size());
  }
  for (std::size_t k = 0; k < list.size(); ++k) bind(false, i, list[k], static_cast<int>(k));
  return *this;
}

EinsumCall& EinsumCall::output_count(int i, int64_t n, const char* attr) {
  if (n < 0 || n >= static_cast<int64_t>(kMaxTensors))
    throw ValueError(rule_.op + ": attribute '" + attr + "' asks for " + std::to_string(n) + " outputs");
  out_count_[i] = n;
  return *this;
}

EinsumCall& EinsumCall::group_length(char group, int64_t length) {
  groups_.push_back({group, length, -1});
  return *this;
}

EinsumCall& EinsumCall::transpose(int input, bool swap) {
  if (swap) edits_.push_back({Edit::kTranspose, input, nullptr, 0, true, ReduceType::kSum, 0, nullptr, false});
  return *this;
}

EinsumCall& EinsumCall::replicate(int input, const std::vector<int64_t>& axes, const char* attr) {
  edits_.push_back({Edit::kReplicateAxes, input, &axes, 0, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::replicate(int input, int64_t axis, const char* attr) {
  edits_.push_back({Edit::kReplicateAxes, input, nullptr, axis, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::replicate_letter(char letter) {
  edits_.push_back({Edit::kReplicateLetter, -1, nullptr, 0, false, ReduceType::kSum, letter, nullptr, false});
  return *this;
}

EinsumCall& EinsumCall::reduce(int input, const std::vector<int64_t>& axes, bool keep_dim, ReduceType type,
                               const char* attr, bool whole) {
  edits_.push_back({Edit::kReduce, input, &axes, 0, keep_dim, type, 0, attr, whole});
  return *this;
}

EinsumCall& EinsumCall::reduce(int input, int64_t axis, bool keep_dim, ReduceType type, const char* attr, bool whole) {
  edits_.push_back({Edit::kReduce, input, nullptr, axis, keep_dim, type, 0, attr, whole});
  return *this;
}

EinsumCall& EinsumCall::permute(int input, const std::vector<int64_t>& perm, const char* attr) {
  edits_.push_back({Edit::kPermute, input, &perm, 0, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::insert_dim(int input, int64_t axis, const char* attr) {
  edits_.push_back({Edit::kInsert, input, nullptr, axis, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::equation(const std::string& text, const char* attr) {
  eq_.parse(rule_.op, attr, text);
  eq_text_ = &text;
  eq_attr_ = attr;
  return *this;
}

EinsumCall& EinsumCall::like(int output, int input) {
  edits_.push_back({Edit::kLike, output, nullptr, input, false, ReduceType::kSum, 0, nullptr, false});
  return *this;
}

EinsumCall& EinsumCall::depends(int output, uint32_t inputs) {
  edits_.push_back({Edit::kDepends, output, nullptr, static_cast<int64_t>(inputs), false, ReduceType::kSum, 0, nullptr,
                    false});
  return *this;
}

EinsumCall& EinsumCall::workspace(int output) {
  edits_.push_back({Edit::kWorkspace, output, nullptr, 0, false, ReduceType::kSum, 0, nullptr, false});
  return *this;
}

EinsumCall& EinsumCall::accumulate(int input, int output) {
  edits_.push_back({Edit::kAccumulate, input, nullptr, output, false, ReduceType::kSum, 0, nullptr, false});
  return *this;
}

// A '*' or '@' pattern stands for the call's equation: operand `list_pos` (0 for a lone tensor)
// or the result. Any other pattern is itself.
const Pattern& EinsumCall::placeholder(const Pattern& p, int list_pos, bool is_input, int arg) const {
  if (p.size() != 1 || (p[0].kind != NotationItem::kOperands && p[0].kind != NotationItem::kResult)) return p;
  if (!eq_text_) throw ValueError(rule_.op + ": " + arg_name(is_input, arg) + " takes its pattern from an equation, but none was given");
  if (p[0].kind == NotationItem::kResult) return eq_.result;
  const std::size_t i = list_pos < 0 ? 0 : static_cast<std::size_t>(list_pos);
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
      if (p.size() != 1 || p[0].kind != NotationItem::kOperands || !in_args_[j].bound) continue;
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
      else if (group_len(variable) < 0) groups_.push_back({variable, var_len[k], -1});
      else if (group_len(variable) != var_len[k])
        throw ValueError(where(true, static_cast<int>(k)) + " has rank " + std::to_string(rank) +
                         ", which does not fit its pattern");
    } else {
      opt_present[k] = optional > 0 && rank == fixed + optional;
      if (rank != fixed && !opt_present[k])
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
          s.push_back(slot);
          break;
        case NotationItem::kOperands:
        case NotationItem::kResult:
          throw ValueError(rule_.op + ": '*' and '@' must be a whole pattern");
      }
    }
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

void EinsumCall::check_sizes(bool is_input, int k) {
  const DistMetaTensor* t = (is_input ? in_ : out_)[k].t;
  Slots& s = (is_input ? in_slots_ : out_slots_)[k];
  if (!t) return;
  if (t->rank() != s.size())
    throw ValueError(where(is_input, k) + " has rank " + std::to_string(t->rank()) + ", but the rule gives it rank " +
                     std::to_string(s.size()));
  for (std::size_t d = 0; d < s.size(); ++d) {
    Slot& slot = s[d];
    const int64_t size = t->shape[d];
    if (size == 1) slot.one = true;
    if (slot.n != 1) continue;
    Factor& f = factors_[slot.f[0]];
    const bool batch = ellipsis_first_ >= 0 && slot.f[0] >= ellipsis_first_ && slot.f[0] < ellipsis_first_ + ellipsis_len_;
    if (size < 0) continue;                // unknown (dynamic) size: nothing to check
    if (size == 1 && batch) {              // broadcasts against any size
      if (f.size < 0) f.size = 1;
      continue;
    }
    if (f.size < 0 || (batch && f.size == 1)) f.size = size;
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
    if (e.kind != Edit::kReduce && e.kind != Edit::kPermute && e.kind != Edit::kInsert) continue;
    const ArgRange& src_range = in_args_[e.arg];
    if (src_range.count == 0 || !in_[src_range.first].t) continue;
    const Slots& src = in_slots_[src_range.first];
    Slots dst;
    if (e.kind == Edit::kPermute) {
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
        if (e.axes->empty()) reduced = (1u << src.size()) - 1;
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
        for (int f = 0; f < src[d].n; ++f) {
          Factor& fac = factors_[src[d].f[f]];
          if (e.whole) fac.need_replication = true;
          fac.has_reduce = true;
          fac.reduce = e.type;
        }
        if (e.flag) dst.push_back(Slot());  // keep_dim: a size-1 dim
      }
    }
    const ArgRange& r0 = out_args_[0];
    for (int k = r0.first; k < r0.first + r0.count; ++k) {
      out_slots_[k] = dst;
      for (Slot& slot : out_slots_[k]) slot.one = false;
      out_overridden_[k] = true;
    }
  }
  for (std::size_t k = 0; k < out_.size(); ++k) {
    if (out_overridden_[k]) continue;
    Slots& s = out_slots_[k];
    for (const NotationItem& it : output_pattern(k)) {
      Slot slot;
      switch (it.kind) {
        case NotationItem::kLetter: {
          int8_t id = letter_factor_[it.name - 'a'];
          if (id < 0) {
            if (it.optional) continue;  // absent from every input: absent here too
            id = static_cast<int8_t>(factor_of(it.name));  // a new dim: born whole on every rank
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
          s.push_back(slot);
          break;
        case NotationItem::kOperands:
        case NotationItem::kResult:
          throw ValueError(rule_.op + ": '*' and '@' must be a whole pattern");
      }
    }
  }
  for (const Slots& s : out_slots_)
    for (const Slot& slot : s)
      for (int f = 0; f < slot.n; ++f) factors_[slot.f[f]].in_output = true;
}

int64_t EinsumCall::shards(const MeshDims& m) const {
  int64_t n = 1;
  for (int8_t d : m) n *= mesh_->dim_size(d);
  return n;
}

void EinsumCall::pop_until_divisible(Factor& f) const {
  if (f.size < 0) return;  // unknown size: nothing to check
  while (!f.mesh.empty() && shards(f.mesh) > 1 && f.size % shards(f.mesh) != 0) f.mesh.pop_back();
}

// Paddle's 1-D view of a co-shard: the mesh dim of largest size, the first on a tie.
int8_t EinsumCall::view_1d(const MeshDims& m) const {
  int8_t best = m[0];
  for (int8_t d : m)
    if (mesh_->dim_size(d) > mesh_->dim_size(best)) best = d;
  return best;
}

// Every split the source tensors propose, in source order (tensor by tensor, dim by dim).
void EinsumCall::collect(bool from_outputs) {
  const auto& bound = from_outputs ? out_ : in_;
  const auto& slots = from_outputs ? out_slots_ : in_slots_;
  int8_t seen = 0;
  // Paddle's einsum outer product: the first input with a split dim is the only one proposing.
  int only = -1;
  if (!from_outputs && rule_.options.outer_first_split && eq_text_ && eq_.outer)
    for (std::size_t k = 0; k < bound.size() && only < 0; ++k)
      if (bound[k].t)
        for (const MeshDims& m : bound[k].t->attr.dims())
          if (!m.empty()) only = static_cast<int>(k);
  const bool claim = rule_.options.replicated_claim || (from_outputs && rule_.options.reverse_replicated_claim);
  // Source order: bound order, or in reverse the outputs reverse_sources names, in its order.
  SmallVec<uint8_t, kMaxTensors> order;
  if (from_outputs && rule_.options.reverse_sources[0]) {
    for (uint8_t a : rule_.options.reverse_sources) {
      if (!a || a > out_args_.size()) break;
      const ArgRange& r = out_args_[a - 1];
      for (int k = r.first; k < r.first + r.count; ++k) order.push_back(static_cast<uint8_t>(k));
    }
  } else {
    for (std::size_t k = 0; k < bound.size(); ++k) order.push_back(static_cast<uint8_t>(k));
  }
  for (uint8_t k : order) {
    const DistMetaTensor* t = bound[k].t;
    if (!t || (!from_outputs && !((rule_.options.sources >> bound[k].pattern) & 1u))) continue;
    if (only >= 0 && static_cast<int>(k) != only) continue;
    for (std::size_t d = 0; d < slots[k].size(); ++d) {
      const Slot& slot = slots[k][d];
      if (slot.n == 0) continue;
      int f = slot.f[0];
      if (slot.one && rule_.options.ones == Ones::kBroadcast) {
        if (one_factor_ < 0) {
          one_factor_ = static_cast<int8_t>(new_factor());
          factors_[one_factor_].in_output = true;  // never contracted: it leaves nothing partial
        }
        f = one_factor_;
      }
      if (factors_[f].seen < 0) factors_[f].seen = seen++;
      // A dim forced whole claims nothing (unless the rule merges first and replicates after).
      if (factors_[f].need_replication && !claim) continue;
      if (!t->attr.dim(d).empty())
        proposals_.push_back({static_cast<uint8_t>(f), static_cast<uint8_t>(k), t->attr.dim(d)});
    }
  }
}

void EinsumCall::merge_legacy() {
  // Claims of mesh dims, in the order factors took them; the first claim of a mesh dim keeps it.
  SmallVec<int8_t, kMaxFactors> claim_order;
  for (const Proposal& p : proposals_) {
    Factor& f = factors_[p.factor];
    if (!f.mesh.empty()) continue;  // already split: a different proposal loses (Paddle raises here)
    f.mesh.push_back(view_1d(p.mesh));
    claim_order.push_back(static_cast<int8_t>(p.factor));
  }
  uint32_t used = 0;
  for (int8_t k : claim_order) {
    Factor& f = factors_[k];
    if (used & (1u << f.mesh[0])) f.mesh.clear();
    else used |= 1u << f.mesh[0];
  }
}

// A factor's proposals, longest and most sharded first (stable), joined without repeats.
void EinsumCall::join_proposals(Factor& f, int k) const {
  SmallVec<uint8_t, 2 * kMaxTensors> idx;
  for (std::size_t p = 0; p < proposals_.size(); ++p)
    if (proposals_[p].factor == k) idx.push_back(static_cast<uint8_t>(p));
  std::stable_sort(idx.begin(), idx.end(), [&](uint8_t a, uint8_t b) {
    const MeshDims& x = proposals_[a].mesh;
    const MeshDims& y = proposals_[b].mesh;
    if (x.size() != y.size()) return x.size() > y.size();
    return shards(x) > shards(y);
  });
  for (uint8_t p : idx)
    for (int8_t d : proposals_[p].mesh)
      if (!f.mesh.contains(d)) f.mesh.push_back(d);
}

void EinsumCall::merge_coshard() {
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    Factor& f = factors_[k];
    join_proposals(f, static_cast<int>(k));
    if (rule_.options.divisible) pop_until_divisible(f);
  }
  // A mesh dim wanted by several factors goes to the largest; on a tie, the first seen.
  for (int m = 0; m < mesh_->ndim(); ++m) {
    int win = -1;
    for (std::size_t k = 0; k < factors_.size(); ++k) {
      const Factor& f = factors_[k];
      if (!f.mesh.contains(static_cast<int8_t>(m))) continue;
      if (win < 0 || f.size > factors_[win].size ||
          (f.size == factors_[win].size && f.seen < factors_[win].seen))
        win = static_cast<int>(k);
    }
    for (std::size_t k = 0; k < factors_.size(); ++k) {
      if (static_cast<int>(k) == win) continue;
      MeshDims& md = factors_[k].mesh;
      for (std::size_t j = 0; j < md.size(); ++j)
        if (md[j] == m) {
          md.erase(j);
          break;
        }
    }
  }
}

void EinsumCall::merge_matmul() {
  // Batch dims: follow the operand with the most co-split dims, then the most shards, then the
  // most batch dims; add the other operand's mesh dims that are still free.
  int follow = -1, max_co = -1, max_nb = -1;
  int64_t max_sh = -1;
  for (std::size_t k = 0; k < in_.size() && k < 2; ++k) {
    if (!in_[k].t) continue;
    int co = 0, nb = 0;
    MeshDims used;
    for (std::size_t d = 0; d < in_slots_[k].size(); ++d) {
      if (!factors_[in_slots_[k][d].f[0]].batch || in_slots_[k][d].n == 0) continue;
      ++nb;
      const MeshDims& m = in_[k].t->attr.dim(d);
      co += m.size() > 1;
      for (int8_t x : m)
        if (!used.contains(x)) used.push_back(x);
    }
    const int64_t sh = shards(used);
    if (co > max_co || sh > max_sh || (sh == max_sh && nb > max_nb)) {
      max_co = co, max_sh = sh, max_nb = nb, follow = static_cast<int>(k);
    }
  }
  uint32_t used = 0;
  // The followed operand's batch splits as they are; then, dim by dim, the other operand's free
  // mesh dims, trimmed until the dim divides (a trimmed mesh dim is free again).
  auto batch_dim = [&](int k, int64_t e) -> const MeshDims* {
    if (k < 0 || !in_[k].t) return nullptr;
    for (std::size_t d = 0; d < in_slots_[k].size(); ++d) {
      const Slot& slot = in_slots_[k][d];
      if (slot.n && slot.f[0] == ellipsis_first_ + e) return &in_[k].t->attr.dim(d);
    }
    return nullptr;
  };
  const int other = follow == 0 ? 1 : 0;
  for (int64_t e = 0; e < ellipsis_len_ && follow >= 0; ++e)
    if (const MeshDims* m = batch_dim(follow, e))
      for (int8_t x : *m) {
        factors_[ellipsis_first_ + e].mesh.push_back(x);
        used |= 1u << x;
      }
  SmallVec<int8_t, kMaxFactors> batch;
  for (int64_t e = 0; e < ellipsis_len_; ++e) {
    Factor& f = factors_[ellipsis_first_ + e];
    if (const MeshDims* m = follow >= 0 && static_cast<std::size_t>(other) < in_.size() ? batch_dim(other, e) : nullptr)
      for (int8_t x : *m)
        if (!(used & (1u << x))) {
          f.mesh.push_back(x);
          used |= 1u << x;
        }
    const MeshDims before = f.mesh;
    pop_until_divisible(f);
    for (std::size_t j = f.mesh.size(); j < before.size(); ++j) used &= ~(1u << before[j]);
    batch.push_back(static_cast<int8_t>(ellipsis_first_ + e));
  }
  std::stable_sort(batch.begin(), batch.end(), [&](int8_t a, int8_t b) { return factors_[a].size > factors_[b].size; });
  used = 0;
  auto keep_free = [&](Factor& f) {
    MeshDims kept;
    for (int8_t m : f.mesh)
      if (!(used & (1u << m))) kept.push_back(m);
    for (int8_t m : kept) used |= 1u << m;
    f.mesh = kept;
  };
  for (int8_t k : batch) keep_free(factors_[k]);
  // m, n, k: proposals joined as in the co-shard merge; m and n (larger first) beat k.
  const int m = letter_factor_['m' - 'a'], n = letter_factor_['n' - 'a'], kk = letter_factor_['k' - 'a'];
  SmallVec<int, 3> order;
  if (m >= 0) order.push_back(m);
  if (n >= 0) order.push_back(n);
  if (m >= 0 && n >= 0 && factors_[n].size > factors_[m].size) std::swap(order[0], order[1]);
  if (kk >= 0) order.push_back(kk);
  for (int k : order) {
    join_proposals(factors_[k], k);
    keep_free(factors_[k]);
  }
  if (kk >= 0) pop_until_divisible(factors_[kk]);
}

void EinsumCall::merge(bool from_outputs) {
  collect(from_outputs);
  Merge policy = rule_.options.merge;
  if (policy == Merge::kMatmul && from_outputs) policy = Merge::kCoShard;  // reverse: one source
  switch (policy) {
    case Merge::kLegacy: merge_legacy(); break;
    case Merge::kCoShard: merge_coshard(); break;
    case Merge::kMatmul: merge_matmul(); break;
  }
  if (rule_.options.no_partial_letters) {
    bool partial = false;
    for (const Factor& f : factors_) partial |= !f.in_output && !f.mesh.empty() && !f.need_replication;
    if (partial)
      for (Factor& f : factors_)
        if (!f.in_output || (f.letter && (rule_.options.no_partial_letters >> (f.letter - 'a') & 1u))) f.mesh.clear();
  }
  for (Factor& f : factors_) {
    if (f.need_replication || (f.size == 1 && rule_.options.ones != Ones::kKeep)) f.mesh.clear();
    // An average of uneven shards is not the average: such a split must divide evenly.
    if (f.has_reduce && f.reduce == ReduceType::kAvg && !f.in_output) pop_until_divisible(f);
  }
  if (rule_.options.partial == ReduceType::kAvg)
    for (Factor& f : factors_)
      if (!f.in_output) pop_until_divisible(f);
}

TensorDistAttr EinsumCall::layout(const Slots& slots, const DistMetaTensor* t) const {
  TensorDistAttr a(t ? t->attr.mesh() : mesh_, slots.size());
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const Slot& slot = slots[d];
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    a.set_dim(d, factors_[slot.f[0]].mesh);
  }
  return a;
}

// Does output `out` lack factor `factor`: no dim of it that could carry the factor's split?
bool EinsumCall::lacks(std::size_t out, int factor) const {
  for (const Slot& slot : out_slots_[out]) {
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    for (int i = 0; i < slot.n; ++i)
      if (slot.f[i] == factor) return false;
  }
  return true;
}

// The mesh dims output `out` is partial over (forward): those of the split factors it lacks,
// among the factors of the inputs it depends on (per_output_partial, depends), or of the factors
// in no output.
uint8_t EinsumCall::output_partial(std::size_t out, ReduceType* types) const {
  uint32_t inputs = ~0u;
  for (const Edit& e : edits_)
    if (e.kind == Edit::kDepends && e.arg == out_[out].pattern) inputs = static_cast<uint32_t>(e.axis);
  const bool per_output = rule_.options.per_output_partial || inputs != ~0u;
  uint8_t mask = 0;
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    const Factor& f = factors_[k];
    if (f.mesh.empty()) continue;
    bool contracted = !per_output && !f.in_output;
    if (per_output && lacks(out, static_cast<int>(k))) {
      for (std::size_t i = 0; i < in_.size() && !contracted; ++i) {
        if (!in_[i].t || !(inputs >> in_[i].pattern & 1u)) continue;
        for (const Slot& slot : in_slots_[i])
          for (int j = 0; j < slot.n; ++j) contracted |= slot.f[j] == k;
      }
    }
    if (!contracted) continue;
    for (int8_t m : f.mesh) {
      mask |= static_cast<uint8_t>(1u << m);
      types[m] = f.has_reduce ? f.reduce : rule_.options.partial;
    }
  }
  return mask;
}

SpmdInfo EinsumCall::build(bool forward) {
  SpmdInfo info;
  info.inputs.reserve(in_args_.size());
  info.outputs.reserve(out_args_.size());
  // Layout-only ops (keep_input_partial) carry a pending reduction through, inputs to outputs.
  uint8_t carried_mask = 0;
  ReduceType carried_type[kMaxMeshDims] = {};
  auto input_attr = [&](int k) {
    if (!in_[k].t) return TensorDistAttr();
    TensorDistAttr a = layout(in_slots_[k], in_[k].t);
    if (forward && rule_.options.keep_input_partial) {
      uint32_t split = 0;
      for (const MeshDims& m : a.dims())
        for (int8_t d : m) split |= 1u << d;
      for (int64_t m : in_[k].t->attr.partial_dims())
        if (!(split & (1u << m))) {
          a.set_partial(static_cast<int>(m), in_[k].t->attr.partial_type(static_cast<int>(m)));
          carried_mask |= static_cast<uint8_t>(1u << m);
          carried_type[m] = in_[k].t->attr.partial_type(static_cast<int>(m));
        }
    }
    return a;
  };
  // An input added into an output takes that output's pending partial status.
  auto accumulated = [&](int arg, TensorDistAttr& a) {
    if (!forward || !a.mesh()) return;
    for (const Edit& e : edits_) {
      if (e.kind != Edit::kAccumulate || e.arg != arg || out_args_[e.axis].count == 0) continue;
      ReduceType types[kMaxMeshDims] = {};
      const uint8_t mask = output_partial(out_args_[e.axis].first, types);
      for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
        if (mask >> m & 1u) a.set_partial(m, types[m]);
    }
  };
  for (std::size_t j = 0; j < in_args_.size(); ++j) {
    const ArgRange& r = in_args_[j];
    if (rule_.options.unreturned >> j & 1u) continue;
    if (!r.list) {
      info.inputs.emplace_back(r.count ? input_attr(r.first) : TensorDistAttr());
      accumulated(static_cast<int>(j), std::get<TensorDistAttr>(info.inputs.back()));
      continue;
    }
    std::vector<TensorDistAttr> list;
    for (int k = r.first; k < r.first + r.count; ++k) list.push_back(input_attr(k));
    info.inputs.emplace_back(std::move(list));
  }
  uint8_t partial_mask = 0;
  ReduceType partial_type[kMaxMeshDims] = {};
  if (forward) {
    for (const Factor& f : factors_) {
      if (f.in_output || f.mesh.empty()) continue;
      for (int8_t m : f.mesh) {
        partial_mask |= static_cast<uint8_t>(1u << m);
        partial_type[m] = f.has_reduce ? f.reduce : rule_.options.partial;
      }
    }
  }
  bool has_depends = false;
  for (const Edit& e : edits_) has_depends |= e.kind == Edit::kDepends;
  auto output_attr = [&](int k) {
    if (out_absent_[k]) return TensorDistAttr(mesh_, 0);
    TensorDistAttr a = layout(out_slots_[k], out_[k].t);
    uint8_t mask = partial_mask;
    ReduceType types[kMaxMeshDims] = {};
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) types[m] = partial_type[m];
    if (forward && (rule_.options.per_output_partial || has_depends)) mask = output_partial(static_cast<std::size_t>(k), types);
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) {
      if (mask & (1u << m)) a.set_partial(m, types[m]);
      else if (carried_mask & (1u << m)) a.set_partial(m, carried_type[m]);
    }
    return a;
  };
  for (const ArgRange& r : out_args_) {
    if (!r.list) {
      info.outputs.emplace_back(output_attr(r.first));
      continue;
    }
    std::vector<TensorDistAttr> list;
    for (int k = r.first; k < r.first + r.count; ++k) list.push_back(output_attr(k));
    info.outputs.emplace_back(std::move(list));
  }
  return info;
}

SpmdInfo EinsumCall::forward() {
  if (!mesh_) throw ValueError(rule_.op + ": no input tensor was given");
  resolve_inputs();
  apply_input_edits();
  for (std::size_t k = 0; k < in_.size(); ++k) check_sizes(true, static_cast<int>(k));
  prepare_outputs();
  resolve_outputs();
  merge(false);
  return build(true);
}

SpmdInfo EinsumCall::reverse() {
  if (!mesh_) throw ValueError(rule_.op + ": no tensor was given");
  resolve_inputs();
  apply_input_edits();
  for (std::size_t k = 0; k < in_.size(); ++k) check_sizes(true, static_cast<int>(k));
  prepare_outputs();
  resolve_outputs();
  for (std::size_t k = 0; k < out_.size(); ++k) check_sizes(false, static_cast<int>(k));
  merge(true);
  return build(false);
}

}  // namespace spmd
