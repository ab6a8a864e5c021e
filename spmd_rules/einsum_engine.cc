#include "einsum_engine.h"

#include <cstring>
#include <limits>

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
  for (const Pattern& p : notation.inputs)
    for (const NotationItem& it : p)
      if (it.kind == NotationItem::kLetter) input_letters |= 1u << (it.name - 'a');
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
                               const char* attr, bool whole, bool empty_all, bool squeeze) {
  edits_.push_back({Edit::kReduce, input, &axes, 0, keep_dim, type, 0, attr, whole});
  edits_.back().empty_all = empty_all;
  edits_.back().squeeze = squeeze;
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

EinsumCall& EinsumCall::unsplit_if_split(char letter, char trigger) {
  edits_.push_back({Edit::kUnsplitIf, -1, nullptr, trigger, false, ReduceType::kSum, letter, nullptr, false});
  return *this;
}

EinsumCall& EinsumCall::insert_dim(int input, int64_t axis, const char* attr) {
  edits_.push_back({Edit::kInsert, input, nullptr, axis, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::whole_axes(int input, const std::vector<int64_t>& axes, bool empty_all, const char* attr) {
  edits_.push_back({Edit::kWhole, input, &axes, 0, false, ReduceType::kSum, 0, attr, false});
  edits_.back().empty_all = empty_all;
  return *this;
}

EinsumCall& EinsumCall::whole_axes(int input, int64_t axis, const char* attr) {
  edits_.push_back({Edit::kWhole, input, nullptr, axis, false, ReduceType::kSum, 0, attr, false});
  return *this;
}

EinsumCall& EinsumCall::whole_values(int input, const std::vector<int64_t>& values, int64_t keep, int per_dim,
                                     bool align_end, bool lead, const char* attr, bool keep_size) {
  edits_.push_back({Edit::kWhole, input, &values, 0, false, ReduceType::kSum, 0, attr, false});
  Edit& e = edits_.back();
  e.values = true;
  e.keep = keep;
  e.per_dim = static_cast<uint8_t>(per_dim < 1 ? 1 : per_dim);
  e.align_end = align_end;
  e.lead = lead;
  e.keep_size = keep_size;
  return *this;
}

EinsumCall& EinsumCall::unbroadcast(int output, int input) {
  edits_.push_back({Edit::kUnbroadcast, input, nullptr, output, false, ReduceType::kSum, 0, nullptr, false});
  return *this;
}

// How many new leading output dims a whole_values edit with `lead` gives an input of `rank`.
int64_t EinsumCall::whole_lead(const Edit& e, std::size_t rank) const {
  if (!e.values || !e.align_end || !e.lead) return 0;
  const int64_t dims = static_cast<int64_t>(e.axes->size() / e.per_dim);
  return std::max<int64_t>(dims - static_cast<int64_t>(rank), 0);
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
  // Source order: the tensors in bound order, or the arguments the rule lists in its order
  // (source_order going forward, reverse_sources in reverse), list elements in theirs.
  SmallVec<uint8_t, kMaxTensors> order;
  auto add_arg = [&](const ArgRange& r) {
    for (int k = r.first; k < r.first + r.count; ++k) order.push_back(static_cast<uint8_t>(k));
  };
  if (from_outputs && rule_.options.reverse_sources[0]) {
    for (uint8_t a : rule_.options.reverse_sources) {
      if (!a || a > out_args_.size()) break;
      add_arg(out_args_[a - 1]);
    }
  } else if (!from_outputs && rule_.options.source_count) {
    for (int i = 0; i < rule_.options.source_count; ++i) {
      const int arg = static_cast<int>((rule_.options.source_order >> (4 * i)) & 15u);
      if (arg < static_cast<int>(in_args_.size())) add_arg(in_args_[arg]);
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
      if ((slot.one && rule_.options.ones == Ones::kBroadcast) || factors_[f].mismatch) {
        if (one_factor_ < 0) {
          one_factor_ = static_cast<int8_t>(new_factor());
          factors_[one_factor_].in_output = true;  // never contracted: it leaves nothing partial
        }
        f = one_factor_;
      }
      if (factors_[f].seen < 0) factors_[f].seen = seen++;
      // A dim forced whole claims nothing (unless the rule merges first and replicates after).
      if (factors_[f].need_replication && !claim) continue;
      // A dim the op creates (an output letter in no input pattern) is born whole: in reverse, a
      // given output's split of it is one no input layout produces, so it proposes nothing.
      if (factors_[f].born) continue;
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
  if (narrow_conflicts_) {
    // Only factors that meet in some tensor compete for a mesh dim (see build_meets).
    uint64_t kept[kMaxMeshDims] = {};
    for (int8_t k : claim_order) {
      Factor& f = factors_[k];
      if (kept[f.mesh[0]] & meets_[k]) f.mesh.clear();
      else kept[f.mesh[0]] |= uint64_t{1} << k;
    }
    return;
  }
  uint32_t used = 0;
  for (int8_t k : claim_order) {
    Factor& f = factors_[k];
    if (used & (1u << f.mesh[0])) f.mesh.clear();
    else used |= 1u << f.mesh[0];
  }
}

// With `depends`, two factors compete for a mesh dim only if some tensor holds both: an input,
// or an output together with the factors it sums over (a split contracted factor makes the
// output partial on that mesh dim, which its own splits cannot use). Without `depends` every
// output sums over every input, and every pair competes.
void EinsumCall::build_meets() {
  const auto& depends = rule_.options.depends;
  narrow_conflicts_ = !depends.empty();
  if (!narrow_conflicts_) return;
  std::memset(meets_, 0, sizeof(meets_));
  uint64_t in_mask[kMaxTensors] = {};
  auto add = [&](uint64_t m) {
    for (std::size_t f = 0; f < factors_.size(); ++f)
      if (m >> f & 1u) meets_[f] |= m;
  };
  auto mask_of = [](const Slots& slots) {
    uint64_t m = 0;
    for (const Slot& slot : slots)
      for (int f = 0; f < slot.n; ++f) m |= uint64_t{1} << slot.f[f];
    return m;
  };
  for (std::size_t k = 0; k < in_.size(); ++k) {
    if (!in_[k].t) continue;
    in_mask[k] = mask_of(in_slots_[k]);
    add(in_mask[k]);
  }
  for (std::size_t k = 0; k < out_.size(); ++k) {
    const uint32_t from = out_[k].pattern < depends.size() ? depends[out_[k].pattern] : ~0u;
    uint64_t m = mask_of(out_slots_[k]);
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (from >> in_[i].pattern & 1u) m |= in_mask[i];
    add(m);
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
  if (narrow_conflicts_) {
    // Only factors that meet in some tensor compete: in that order, each keeps the mesh dim
    // unless a factor it meets kept it already.
    for (int m = 0; m < mesh_->ndim(); ++m) {
      SmallVec<int8_t, kMaxFactors> want;
      for (std::size_t k = 0; k < factors_.size(); ++k)
        if (factors_[k].mesh.contains(static_cast<int8_t>(m))) want.push_back(static_cast<int8_t>(k));
      std::stable_sort(want.begin(), want.end(), [&](int8_t a, int8_t b) {
        const Factor& x = factors_[a];
        const Factor& y = factors_[b];
        return x.size != y.size ? x.size > y.size : x.seen < y.seen;
      });
      uint64_t kept = 0;
      for (int8_t k : want) {
        if (!(kept & meets_[k])) {
          kept |= uint64_t{1} << k;
          continue;
        }
        MeshDims& md = factors_[k].mesh;
        for (std::size_t j = 0; j < md.size(); ++j)
          if (md[j] == m) {
            md.erase(j);
            break;
          }
      }
    }
    return;
  }
  for (int m = 0; m < mesh_->ndim(); ++m) {
    int win = -1;
    for (std::size_t k = 0; k < factors_.size(); ++k) {
      const Factor& f = factors_[k];
      if (!f.mesh.contains(static_cast<int8_t>(m))) continue;
      if (win < 0 || (rule_.options.conflict_first ? f.seen < factors_[win].seen
                                                   : f.size > factors_[win].size ||
                                                         (f.size == factors_[win].size && f.seen < factors_[win].seen)))
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

// Paddle's AlignDimsSharding (concat, stack), mesh dim by mesh dim. A mesh dim that every source
// tensor places the same way stays: a split of a dim of the notation (not of a dim the rule keeps
// whole, like concat's axis), or a SUM/AVG partial. A disputed mesh dim goes to the free dim of
// least cost: the elements the sources that do not split it yet would hold per rank (their
// current local size times the mesh dim), the first dim on a tie; a dim smaller than the mesh dim
// cannot take it. Several mesh dims left on one dim keep the last (Paddle's 1-D placements).
void EinsumCall::merge_align(bool from_outputs) {
  const auto& bound = from_outputs ? out_ : in_;
  const auto& slots = from_outputs ? out_slots_ : in_slots_;
  SmallVec<uint8_t, kMaxTensors> src;
  for (std::size_t k = 0; k < bound.size(); ++k)
    if (bound[k].t && (from_outputs || ((rule_.options.sources >> bound[k].pattern) & 1u)))
      src.push_back(static_cast<uint8_t>(k));
  if (src.empty()) return;
  // How source k places mesh dim m: -1 replicated, the dim's factor (< 128), 128 + the dim for a
  // dim without one, 256 + reduce type for a partial.
  auto code = [&](int k, int m) -> int {
    const DistMetaTensor* t = bound[k].t;
    for (std::size_t d = 0; d < t->rank(); ++d)
      if (t->attr.dim(d).contains(static_cast<int8_t>(m))) {
        const Slot& sl = slots[k][d];
        return sl.n ? sl.f[0] : 128 + static_cast<int>(d);
      }
    if (t->attr.is_partial_on(m)) return 256 + static_cast<int>(t->attr.partial_type(m));
    return -1;
  };
  auto disputed = [&](int m) {
    const int c0 = code(src[0], m);
    for (std::size_t i = 1; i < src.size(); ++i)
      if (code(src[i], m) != c0) return true;
    return false;
  };
  SmallVec<int8_t, kMaxRank> align;  // the dims that may take a mesh dim, in the first source's order
  for (const Slot& sl : slots[src[0]])
    if (sl.n && !factors_[sl.f[0]].need_replication && !align.contains(static_cast<int8_t>(sl.f[0])))
      align.push_back(static_cast<int8_t>(sl.f[0]));
  uint64_t taken = 0;  // factors holding a mesh dim
  int8_t owner[kMaxMeshDims];
  std::memset(owner, -1, sizeof(owner));
  align_partial_mask_ = 0;
  const int nm = mesh_->ndim();
  for (int m = 0; m < nm; ++m) {
    if (disputed(m)) continue;
    const int c = code(src[0], m);
    if (c >= 0 && c < 128 && align.contains(static_cast<int8_t>(c))) {
      taken |= uint64_t{1} << c;
      owner[m] = static_cast<int8_t>(c);
    } else if (c >= 256) {
      const ReduceType t = static_cast<ReduceType>(c - 256);
      if (t == ReduceType::kSum || t == ReduceType::kAvg) {
        align_partial_mask_ |= static_cast<uint8_t>(1u << m);
        align_partial_type_[m] = t;
      }
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (int m = 0; m < nm; ++m) {
    if (!disputed(m)) continue;
    int best = -1;
    double best_cost = inf;
    for (int8_t f : align) {
      if ((taken >> f) & 1u) continue;
      double cost = 0.0;
      for (uint8_t k : src) {
        const DistMetaTensor* t = bound[k].t;
        std::size_t d = 0;
        while (d < slots[k].size() && !(slots[k][d].n && slots[k][d].f[0] == f)) ++d;
        if (d == slots[k].size()) continue;
        if (t->shape[d] < mesh_->dim_size(m)) {
          cost = inf;
          break;
        }
        if (!t->attr.dim(d).empty()) continue;  // already split: no new data to move
        int64_t local = 1;
        for (std::size_t j = 0; j < t->rank(); ++j) {
          int64_t n = t->shape[j];
          int8_t last = -1;  // Paddle divides by the highest mesh dim of a co-split dim only
          for (int8_t md : t->attr.dim(j)) last = std::max(last, md);
          if (last >= 0) n = (n + mesh_->dim_size(last) - 1) / mesh_->dim_size(last);
          local *= n;
        }
        if (local == 0) continue;
        cost += static_cast<double>(local) * static_cast<double>(mesh_->dim_size(m));
      }
      if (cost < best_cost) {
        best_cost = cost;
        best = f;
      }
    }
    if (best >= 0) {
      taken |= uint64_t{1} << best;
      owner[m] = static_cast<int8_t>(best);
    }
  }
  for (int m = 0; m < nm; ++m)
    if (owner[m] >= 0) {
      MeshDims& md = factors_[owner[m]].mesh;
      md.clear();
      md.push_back(static_cast<int8_t>(m));
    }
}

void EinsumCall::merge(bool from_outputs) {
  if (rule_.options.merge == Merge::kAlign) {
    merge_align(from_outputs);
    for (Factor& f : factors_)
      if (f.need_replication) f.mesh.clear();
    return;
  }
  collect(from_outputs);
  build_meets();
  Merge policy = rule_.options.merge;
  if (policy == Merge::kMatmul && from_outputs) policy = Merge::kCoShard;  // reverse: one source
  switch (policy) {
    case Merge::kLegacy: merge_legacy(); break;
    case Merge::kCoShard: merge_coshard(); break;
    case Merge::kMatmul: merge_matmul(); break;
    case Merge::kAlign: break;  // handled above
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
  for (const Edit& e : edits_) {
    if (e.kind != Edit::kUnsplitIf) continue;
    const int8_t a = letter_factor_[e.letter - 'a'], b = letter_factor_[static_cast<char>(e.axis) - 'a'];
    if (a >= 0 && b >= 0 && !factors_[b].mesh.empty()) factors_[a].mesh.clear();
  }
  whole_flat_tails();
}

TensorDistAttr EinsumCall::layout(const Slots& slots, const DistMetaTensor* t) const {
  TensorDistAttr a(t ? t->attr.mesh() : mesh_, slots.size());
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const Slot& slot = slots[d];
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    if (slot.one && slot.n == 1 && factors_[slot.f[0]].size > 1) continue;  // it broadcasts: whole
    a.set_dim(d, factors_[slot.f[0]].mesh);
  }
  return a;
}

// Partial states a sum of the inputs carries: SUM, or AVG (a mean of means is the mean).
static bool additive_partial(const TensorDistAttr& a) {
  for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
    if (a.is_partial_on(m) && a.partial_type(m) != ReduceType::kSum && a.partial_type(m) != ReduceType::kAvg)
      return false;
  return true;
}

// Forward: the inputs (a bit per bound tensor) that keep their pending reductions, which the
// outputs then carry (KeepPartial).
uint64_t EinsumCall::partial_keepers() const {
  const KeepPartial policy = rule_.options.keep_partial;
  uint64_t all = 0;
  for (std::size_t k = 0; k < in_.size(); ++k)
    if (in_[k].t) all |= uint64_t{1} << k;
  switch (policy) {
    case KeepPartial::kNone:
      return 0;
    case KeepPartial::kAll:
      return all;
    case KeepPartial::kJoint: {  // add_n: only if every input has the same SUM/AVG partial state
      const DistMetaTensor* first = nullptr;
      for (const Bound& b : in_) {
        if (!b.t) continue;
        const TensorDistAttr& a = b.t->attr;
        if (!a.is_partial() || !additive_partial(a)) return 0;
        if (!first) first = b.t;
        if (a.partial_mask() != first->attr.partial_mask()) return 0;
        for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
          if (a.is_partial_on(m) && a.partial_type(m) != first->attr.partial_type(m)) return 0;
      }
      return all;
    }
    case KeepPartial::kFirst: {
      // Multilinear ops: (sum_i x_i) * y = sum_i (x_i * y), so one operand may stay partial: as
      // Paddle 3.3.1's multiply, the partial input of highest rank (the first on a tie), if no
      // split of any tensor uses its mesh dims (else all of it reduces).
      int keeper = -1;
      for (std::size_t k = 0; k < in_.size(); ++k)
        if (in_[k].t && in_[k].t->attr.is_partial() && (keeper < 0 || in_[k].t->rank() > in_[keeper].t->rank()))
          keeper = static_cast<int>(k);
      if (keeper < 0 || !additive_partial(in_[keeper].t->attr)) return 0;
      uint32_t split = 0;
      for (const Factor& f : factors_)
        for (int8_t m : f.mesh) split |= 1u << m;
      return (in_[keeper].t->attr.partial_mask() & split) ? 0 : uint64_t{1} << keeper;
    }
  }
  return 0;
}

// Does output `out` lack factor `factor`: no dim of it that could carry the factor's split?
bool EinsumCall::lacks(std::size_t out, int factor) const {
  for (const Slot& slot : out_slots_[out]) {
    if (slot.n == 0 || (slot.one && rule_.options.ones != Ones::kKeep)) continue;
    if (slot.one && slot.n == 1 && factors_[slot.f[0]].size > 1) continue;  // a broadcast dim sums over it
    for (int i = 0; i < slot.n; ++i)
      if (slot.f[i] == factor) return false;
  }
  return true;
}

// The mesh dims output `out` is partial over (forward): those of the split factors it lacks,
// among the factors of the inputs it depends on (per_output_partial, depends), or of the factors
// in no output.
uint8_t EinsumCall::output_partial(std::size_t out, ReduceType* types) const {
  const auto& depends = rule_.options.depends;
  const uint32_t inputs = out_[out].pattern < depends.size() ? depends[out_[out].pattern] : ~0u;
  // An output `depends` does not list (~0u) follows the global rule: partial over the factors
  // in no output (a kernel that reduces internally, as c_softmax's loss).
  const bool per_output = rule_.options.per_output_partial || inputs != ~0u;
  uint8_t mask = 0;
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    const Factor& f = factors_[k];
    if (f.mesh.empty() || static_cast<int>(k) == one_factor_) continue;  // the anonymous factor splits nothing
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
  // Inputs that keep a pending reduction hand it through to the outputs.
  uint8_t carried_mask = 0;
  ReduceType carried_type[kMaxMeshDims] = {};
  const bool align = rule_.options.merge == Merge::kAlign;
  const uint64_t keepers = forward ? partial_keepers() : 0;
  auto input_attr = [&](int k) {
    if (!in_[k].t) {
      if (!rule_.options.absent_replicated) return TensorDistAttr();
      // As Paddle's roi_align: an absent optional input comes back replicated, with the rank
      // its pattern gives when that is fixed.
      std::size_t rank = 0;
      for (const NotationItem& it : rule_.notation.inputs[in_[k].pattern]) {
        if (it.kind == NotationItem::kEllipsis || it.kind == NotationItem::kRest ||
            (it.kind == NotationItem::kGroup && group_len(it.name) < 0)) {
          rank = 0;
          break;
        }
        rank += it.kind == NotationItem::kGroup ? static_cast<std::size_t>(group_len(it.name))
                                                : (it.kind == NotationItem::kLetter && it.optional) ? 0 : 1;
      }
      return TensorDistAttr(mesh_, rank);
    }
    TensorDistAttr a = layout(in_slots_[k], in_[k].t);
    if (align)
      for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
        if ((align_partial_mask_ >> m) & 1u) a.set_partial(m, align_partial_type_[m]);
    if ((keepers >> k) & 1u) {
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
    if (rule_.options.flat_list_inputs) {
      for (int k = r.first; k < r.first + r.count; ++k) info.inputs.emplace_back(input_attr(k));
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
  const bool per_output = forward && (rule_.options.per_output_partial || !rule_.options.depends.empty());
  auto output_attr = [&](int k) {
    if (out_absent_[k]) return TensorDistAttr(mesh_, 0);
    TensorDistAttr a = layout(out_slots_[k], out_[k].t);
    uint8_t mask = partial_mask;
    ReduceType types[kMaxMeshDims] = {};
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) types[m] = partial_type[m];
    if (per_output) mask = output_partial(static_cast<std::size_t>(k), types);
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m) {
      if (mask & (1u << m)) a.set_partial(m, types[m]);
      else if (carried_mask & (1u << m)) a.set_partial(m, carried_type[m]);
      else if (align && ((align_partial_mask_ >> m) & 1u)) a.set_partial(m, align_partial_type_[m]);
    }
    return a;
  };
  for (const ArgRange& r : out_args_) {
    if (r.list && rule_.options.flat_list_outputs) {  // one entry per tensor, as Paddle's split
      for (int k = r.first; k < r.first + r.count; ++k) info.outputs.emplace_back(output_attr(k));
      continue;
    }
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
  for (std::size_t k = 0; k < out_.size(); ++k)  // outputs given to a forward call (generic rules)
    if (out_[k].t) check_sizes(false, static_cast<int>(k));
  merge(false);
  return build(true);
}

SpmdInfo EinsumCall::reverse() {
  if (!mesh_) throw ValueError(rule_.op + ": no tensor was given");
  resolve_inputs();
  apply_input_edits();
  for (std::size_t k = 0; k < in_.size(); ++k) check_sizes(true, static_cast<int>(k));
  for (std::size_t j = 0; j < out_args_.size(); ++j)  // a list output must have the count the attributes give
    if (out_count_[j] >= 0 && out_args_[j].bound && out_args_[j].count != out_count_[j])
      throw ValueError(rule_.op + ": " + arg_name(false, static_cast<int>(j)) + " holds " + std::to_string(out_args_[j].count) +
                       " tensors, but the attributes ask for " + std::to_string(out_count_[j]));
  prepare_outputs();
  resolve_outputs();
  for (std::size_t k = 0; k < out_.size(); ++k) check_sizes(false, static_cast<int>(k));
  merge(true);
  return build(false);
}

}  // namespace spmd
