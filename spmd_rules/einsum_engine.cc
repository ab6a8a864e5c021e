// The factor engine: the rule, binding tensors and recording attribute edits, and the two
// directions. The steps live in einsum_resolve.cc (notation -> factors), einsum_merge.cc (merge
// the proposed splits) and einsum_build.cc (layouts and partial state); einsum_flatten.cc holds
// flattened (1-D statistics) slots.
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
