#include "einsum_engine.h"

#include <cstring>

#include "errors.h"

namespace spmd {

EinsumRule::EinsumRule(std::string op_name, const std::string& text, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, EinsumOptions opts)
    : op(std::move(op_name)),
      input_names(std::move(inputs)),
      output_names(std::move(outputs)),
      notation(Notation::parse(op, text)),
      options(opts) {
  if (notation.inputs.size() != input_names.size() || notation.outputs.size() != output_names.size())
    throw ValueError(op + ": notation \"" + text + "\" does not match the number of inputs/outputs");
}

EinsumCall::EinsumCall(const EinsumRule& rule) : rule_(rule) {
  std::memset(letter_factor_, -1, sizeof(letter_factor_));
  in_.resize(rule.input_names.size(), nullptr);
  out_.resize(rule.output_names.size(), nullptr);
}

std::string EinsumCall::where(bool is_input, int i) const {
  return rule_.op + ": " + (is_input ? "input '" + rule_.input_names[i] : "output '" + rule_.output_names[i]) + "'";
}

static void check_tensor(const DistMetaTensor& t, const std::string& what) {
  if (t.attr.rank() != t.rank())
    throw ValueError(what + ": dims_mapping has " + std::to_string(t.attr.rank()) + " entries but the shape has rank " +
                     std::to_string(t.rank()));
  t.attr.validate(what);
  for (std::size_t d = 0; d < t.rank(); ++d)
    if (t.shape[d] < 0 && t.shape[d] != -1)
      throw ValueError(what + ": dim " + std::to_string(d) + " has size " + std::to_string(t.shape[d]));
}

EinsumCall& EinsumCall::input(int i, const DistMetaTensor& t) {
  if (t.absent()) return *this;  // absent optional input: left out of the inference
  check_tensor(t, where(true, i));
  if (!mesh_) mesh_ = t.attr.mesh();
  else if (mesh_ != t.attr.mesh() && !(*mesh_ == *t.attr.mesh()))
    throw ValueError(where(true, i) + " is on a different process mesh than the other tensors");
  in_[i] = &t;
  return *this;
}

EinsumCall& EinsumCall::output(int i, const DistMetaTensor& t) {
  if (t.absent()) return *this;
  check_tensor(t, where(false, i));
  if (!mesh_) mesh_ = t.attr.mesh();
  else if (mesh_ != t.attr.mesh() && !(*mesh_ == *t.attr.mesh()))
    throw ValueError(where(false, i) + " is on a different process mesh than the other tensors");
  out_[i] = &t;
  return *this;
}

EinsumCall& EinsumCall::group_length(char group, int64_t length) {
  groups_.push_back({group, length, -1});
  return *this;
}

EinsumCall& EinsumCall::transpose(int input, bool swap) {
  if (swap) edits_.push_back({Edit::kTranspose, input, nullptr, 0, true, ReduceType::kSum, 0, nullptr});
  return *this;
}

EinsumCall& EinsumCall::replicate(int input, const std::vector<int64_t>& axes, const char* attr) {
  edits_.push_back({Edit::kReplicateAxes, input, &axes, 0, false, ReduceType::kSum, 0, attr});
  return *this;
}

EinsumCall& EinsumCall::replicate(int input, int64_t axis, const char* attr) {
  edits_.push_back({Edit::kReplicateAxes, input, nullptr, axis, false, ReduceType::kSum, 0, attr});
  return *this;
}

EinsumCall& EinsumCall::replicate_letter(char letter) {
  edits_.push_back({Edit::kReplicateLetter, -1, nullptr, 0, false, ReduceType::kSum, letter, nullptr});
  return *this;
}

EinsumCall& EinsumCall::reduce(int input, const std::vector<int64_t>& axes, bool keep_dim, ReduceType type,
                               const char* attr) {
  edits_.push_back({Edit::kReduce, input, &axes, 0, keep_dim, type, 0, attr});
  return *this;
}

EinsumCall& EinsumCall::permute(int input, const std::vector<int64_t>& perm, const char* attr) {
  edits_.push_back({Edit::kPermute, input, &perm, 0, false, ReduceType::kSum, 0, attr});
  return *this;
}

int EinsumCall::new_factor() {
  factors_.push_back(Factor());
  return static_cast<int>(factors_.size()) - 1;
}

int EinsumCall::factor_of(char letter) {
  int8_t& id = letter_factor_[letter - 'a'];
  if (id < 0) id = static_cast<int8_t>(new_factor());
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

int64_t EinsumCall::norm_axis(int64_t axis, std::size_t rank, const char* attr, int tensor) const {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r || (r == 0 && axis != 0 && axis != -1))
    throw ValueError(rule_.op + ": attribute '" + attr + "' = " + std::to_string(axis) + " is out of range for " +
                     where(true, tensor).substr(rule_.op.size() + 2) + " of rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

// Items of a pattern whose length is fixed, and the optional letters.
struct PatternCounts {
  int fixed = 0, optional = 0;
  char variable = 0;  // '.' for the ellipsis, a group letter, or 0
};

void EinsumCall::resolve_inputs() {
  const auto& pats = rule_.notation.inputs;
  // Pass 1: how many dims the variable item (ellipsis or unsized group) of each input takes.
  SmallVec<int64_t, kMaxTensors> var_len;
  SmallVec<bool, kMaxTensors> opt_present;
  for (std::size_t i = 0; i < pats.size(); ++i) {
    var_len.push_back(0);
    opt_present.push_back(false);
    if (!in_[i]) continue;
    PatternCounts c;
    for (const NotationItem& it : pats[i]) {
      if (it.kind == NotationItem::kLetter) (it.optional ? c.optional : c.fixed)++;
      else if (it.kind == NotationItem::kOne || it.kind == NotationItem::kFlatGroup) c.fixed++;
      else if (it.kind == NotationItem::kGroup && group_len(it.name) >= 0) c.fixed += static_cast<int>(group_len(it.name));
      else c.variable = it.kind == NotationItem::kEllipsis ? '.' : it.name;
    }
    int64_t rank = static_cast<int64_t>(in_[i]->rank());
    if (c.variable) {
      if (rank < c.fixed)
        throw ValueError(where(true, i) + " has rank " + std::to_string(rank) + ", but needs at least " +
                         std::to_string(c.fixed) + " dims");
      opt_present[i] = rank >= c.fixed + c.optional;
      var_len[i] = rank - c.fixed - (opt_present[i] ? c.optional : 0);
      if (c.variable == '.') ellipsis_len_ = std::max(ellipsis_len_, var_len[i]);
      else if (group_len(c.variable) < 0) groups_.push_back({c.variable, var_len[i], -1});
      else if (group_len(c.variable) != var_len[i])
        throw ValueError(where(true, i) + " has rank " + std::to_string(rank) + ", which does not fit its pattern");
    } else {
      opt_present[i] = rank == c.fixed + c.optional;
      if (rank != c.fixed && !opt_present[i])
        throw ValueError(where(true, i) + " has rank " + std::to_string(rank) + ", but must have rank " +
                         std::to_string(c.fixed) + (c.optional ? " or " + std::to_string(c.fixed + c.optional) : ""));
    }
  }
  if (ellipsis_len_ > 0) {
    ellipsis_first_ = static_cast<int8_t>(factors_.size());
    for (int64_t k = 0; k < ellipsis_len_; ++k) new_factor();
  }
  // Pass 2: one slot per dim.
  in_slots_.resize(pats.size());
  for (std::size_t i = 0; i < pats.size(); ++i) {
    if (!in_[i]) continue;
    Slots& s = in_slots_[i];
    for (const NotationItem& it : pats[i]) {
      Slot slot;
      switch (it.kind) {
        case NotationItem::kLetter:
          if (it.optional && !opt_present[i]) continue;
          slot.n = 1;
          slot.f[0] = static_cast<uint8_t>(factor_of(it.name));
          s.push_back(slot);
          break;
        case NotationItem::kOne:
          s.push_back(slot);
          break;
        case NotationItem::kEllipsis:
          for (int64_t k = ellipsis_len_ - var_len[i]; k < ellipsis_len_; ++k) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(ellipsis_first_ + k);
            s.push_back(slot);
          }
          break;
        case NotationItem::kGroup:
          for (int64_t k = 0; k < group_len(it.name); ++k) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(group_factor(it.name, k));
            s.push_back(slot);
          }
          break;
        case NotationItem::kFlatGroup: {
          int64_t len = group_len(it.name);
          for (int64_t k = 0; k < len; ++k) slot.f[slot.n++] = static_cast<uint8_t>(group_factor(it.name, k));
          s.push_back(slot);
          break;
        }
      }
    }
  }
}

void EinsumCall::apply_input_edits() {
  for (const Edit& e : edits_) {
    if (e.kind == Edit::kTranspose && in_[e.tensor]) {
      Slots& s = in_slots_[e.tensor];
      if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
    } else if (e.kind == Edit::kReplicateAxes && in_[e.tensor]) {
      const Slots& s = in_slots_[e.tensor];
      auto mark = [&](int64_t a) {
        const Slot& slot = s[norm_axis(a, s.size(), e.attr, e.tensor)];
        for (int k = 0; k < slot.n; ++k) factors_[slot.f[k]].need_replication = true;
      };
      if (e.axes) for (int64_t a : *e.axes) mark(a);
      else if (!s.empty() || (e.axis != 0 && e.axis != -1)) mark(e.axis);
    } else if (e.kind == Edit::kReplicateLetter) {
      if (e.letter >= 'a' && e.letter <= 'z') {
        if (letter_factor_[e.letter - 'a'] >= 0) factors_[letter_factor_[e.letter - 'a']].need_replication = true;
      } else {
        for (int64_t k = 0; k < std::max<int64_t>(group_len(e.letter), 0); ++k)
          factors_[group_factor(e.letter, k)].need_replication = true;
      }
    }
  }
}

void EinsumCall::check_sizes(bool is_input, int i) {
  const DistMetaTensor* t = is_input ? in_[i] : out_[i];
  Slots& s = is_input ? in_slots_[i] : out_slots_[i];
  if (!t) return;
  if (t->rank() != s.size())
    throw ValueError(where(is_input, i) + " has rank " + std::to_string(t->rank()) + ", but the rule gives it rank " +
                     std::to_string(s.size()));
  for (std::size_t d = 0; d < s.size(); ++d) {
    Slot& slot = s[d];
    if (slot.n != 1) continue;
    Factor& f = factors_[slot.f[0]];
    const bool batch = ellipsis_first_ >= 0 && slot.f[0] >= ellipsis_first_ && slot.f[0] < ellipsis_first_ + ellipsis_len_;
    const int64_t size = t->shape[d];
    if (size == 1) slot.broadcast = true;  // a size-1 dim is never split
    if (size < 0) continue;                // unknown (dynamic) size: nothing to check
    if (size == 1 && batch) {              // broadcasts against any size
      if (f.size < 0) f.size = 1;
      continue;
    }
    if (f.size < 0 || (batch && f.size == 1)) f.size = size;
    else if (f.size != size)
      throw ValueError(where(is_input, i) + ": dim " + std::to_string(d) + " has size " + std::to_string(size) +
                       ", but the same factor has size " + std::to_string(f.size) + " elsewhere");
  }
}

void EinsumCall::resolve_outputs() {
  const auto& pats = rule_.notation.outputs;
  out_slots_.resize(pats.size());
  out_overridden_.resize(pats.size(), false);
  for (const Edit& e : edits_) {
    if ((e.kind != Edit::kReduce && e.kind != Edit::kPermute) || !in_[e.tensor]) continue;
    const Slots& src = in_slots_[e.tensor];
    Slots& dst = out_slots_[0];
    out_overridden_[0] = true;
    if (e.kind == Edit::kPermute) {
      if (e.axes->size() != src.size())
        throw ValueError(rule_.op + ": attribute '" + e.attr + "' has " + std::to_string(e.axes->size()) +
                         " entries for " + where(true, e.tensor).substr(rule_.op.size() + 2) + " of rank " +
                         std::to_string(src.size()));
      uint32_t seen = 0;
      for (int64_t a : *e.axes) {
        int64_t k = norm_axis(a, src.size(), e.attr, e.tensor);
        if (seen & (1u << k))
          throw ValueError(rule_.op + ": attribute '" + e.attr + "' names dim " + std::to_string(k) + " twice");
        seen |= 1u << k;
        dst.push_back(src[k]);
      }
    } else {
      uint32_t reduced = 0;
      if (e.axes->empty()) reduced = (1u << src.size()) - 1;
      for (int64_t a : *e.axes) reduced |= 1u << norm_axis(a, src.size(), e.attr, e.tensor);
      for (std::size_t d = 0; d < src.size(); ++d) {
        if (!(reduced & (1u << d))) {
          dst.push_back(src[d]);
          continue;
        }
        for (int k = 0; k < src[d].n; ++k) {
          factors_[src[d].f[k]].has_reduce = true;
          factors_[src[d].f[k]].reduce = e.type;
        }
        if (e.flag) dst.push_back(Slot());  // keep_dim: a size-1 dim
      }
    }
  }
  for (std::size_t o = 0; o < pats.size(); ++o) {
    if (out_overridden_[o]) continue;
    Slots& s = out_slots_[o];
    for (const NotationItem& it : pats[o]) {
      Slot slot;
      switch (it.kind) {
        case NotationItem::kLetter: {
          int8_t id = letter_factor_[it.name - 'a'];
          if (id < 0) {
            if (it.optional) continue;  // absent from every input: absent here too
            throw ValueError(rule_.op + ": output letter '" + std::string(1, it.name) + "' is in no input");
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
          for (int64_t k = 0; k < ellipsis_len_; ++k) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(ellipsis_first_ + k);
            s.push_back(slot);
          }
          break;
        case NotationItem::kGroup:
          for (int64_t k = 0; k < std::max<int64_t>(group_len(it.name), 0); ++k) {
            slot.n = 1;
            slot.f[0] = static_cast<uint8_t>(group_factor(it.name, k));
            s.push_back(slot);
          }
          break;
        case NotationItem::kFlatGroup:
          for (int64_t k = 0; k < std::max<int64_t>(group_len(it.name), 0); ++k)
            slot.f[slot.n++] = static_cast<uint8_t>(group_factor(it.name, k));
          s.push_back(slot);
          break;
      }
    }
  }
  for (const Slots& s : out_slots_)
    for (const Slot& slot : s)
      for (int k = 0; k < slot.n; ++k) factors_[slot.f[k]].in_output = true;
}

void EinsumCall::merge(bool from_outputs) {
  int8_t order = 0;
  auto propose = [&](const DistMetaTensor* t, const Slots& slots) {
    if (!t) return;
    for (std::size_t d = 0; d < slots.size(); ++d) {
      const Slot& slot = slots[d];
      const MeshDims& m = t->attr.dim(d);
      if (slot.n == 0 || slot.broadcast || m.empty()) continue;
      Factor& f = factors_[slot.f[0]];
      if (f.mesh.empty()) {
        f.mesh = m;
        f.order = order++;
      }
      // A different split of an already split factor loses: first source wins.
    }
  };
  if (from_outputs)
    for (std::size_t o = 0; o < out_.size(); ++o) propose(out_[o], out_slots_[o]);
  else
    for (std::size_t i = 0; i < in_.size(); ++i) propose(in_[i], in_slots_[i]);

  // Settle each factor, then hand every mesh dim to the factor that claimed it first.
  SmallVec<int8_t, kMaxFactors> by_order;
  by_order.resize(order, -1);
  for (std::size_t k = 0; k < factors_.size(); ++k) {
    Factor& f = factors_[k];
    if (f.mesh.empty()) continue;
    if (f.need_replication || f.size == 1) {
      f.mesh.clear();
      continue;
    }
    if (rule_.options.divisible && f.size > 0) {
      int64_t ways = 1;
      for (int8_t m : f.mesh) ways *= mesh_->dim_size(m);
      if (f.size % ways != 0) {
        f.mesh.clear();
        continue;
      }
    }
    by_order[f.order] = static_cast<int8_t>(k);
  }
  uint32_t used = 0;
  for (int8_t k : by_order) {
    if (k < 0) continue;
    MeshDims kept;
    for (int8_t m : factors_[k].mesh)
      if (!(used & (1u << m))) kept.push_back(m);
    for (int8_t m : kept) used |= 1u << m;
    factors_[k].mesh = kept;
  }
}

TensorDistAttr EinsumCall::layout(const Slots& slots, const DistMetaTensor* t) const {
  TensorDistAttr a(t ? t->attr.mesh() : mesh_, slots.size());
  for (std::size_t d = 0; d < slots.size(); ++d) {
    const Slot& slot = slots[d];
    if (slot.n == 0 || slot.broadcast) continue;
    a.set_dim(d, factors_[slot.f[0]].mesh);
  }
  return a;
}

SpmdInfo EinsumCall::build(bool forward) {
  SpmdInfo info;
  info.inputs.reserve(in_.size());
  info.outputs.reserve(out_.size());
  for (std::size_t i = 0; i < in_.size(); ++i) {
    if (!in_[i]) {
      info.inputs.emplace_back(TensorDistAttr());
      continue;
    }
    TensorDistAttr a = layout(in_slots_[i], in_[i]);
    if (rule_.options.keep_input_partial)
      for (int m : in_[i]->attr.partial_dims())
        if (!(a.partial_mask() & (1u << m))) a.set_partial(m, in_[i]->attr.partial_type(m));
    info.inputs.emplace_back(std::move(a));
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
  for (std::size_t o = 0; o < out_slots_.size(); ++o) {
    TensorDistAttr a = layout(out_slots_[o], out_[o]);
    for (int m = 0; m < static_cast<int>(kMaxMeshDims); ++m)
      if (partial_mask & (1u << m)) a.set_partial(m, partial_type[m]);
    info.outputs.emplace_back(std::move(a));
  }
  return info;
}

SpmdInfo EinsumCall::forward() {
  if (!mesh_) throw ValueError(rule_.op + ": no input tensor was given");
  resolve_inputs();
  apply_input_edits();
  for (std::size_t i = 0; i < in_.size(); ++i) check_sizes(true, static_cast<int>(i));
  resolve_outputs();
  merge(false);
  return build(true);
}

SpmdInfo EinsumCall::reverse() {
  if (!mesh_) throw ValueError(rule_.op + ": no tensor was given");
  resolve_inputs();
  apply_input_edits();
  for (std::size_t i = 0; i < in_.size(); ++i) check_sizes(true, static_cast<int>(i));
  resolve_outputs();
  for (std::size_t o = 0; o < out_.size(); ++o) check_sizes(false, static_cast<int>(o));
  merge(true);
  return build(false);
}

}  // namespace spmd
