// Pattern builders of the windowed ops (reduce_window): each dim of the operand maps to the same
// dim of the result; a dim with a real window (size > 1, a stride, padding, base dilation) is
// resized: whole, and free to differ in size. Shapes and attributes only; docs/spec_language.md.
#include <string>
#include <utility>

#include "errors.h"
#include "pattern_builders.h"

namespace spmd {

namespace {

[[noreturn]] void bad_attr(const std::string& op, const char* attr, const std::string& why) {
  throw ValueError(op + ": attribute '" + attr + "' " + why);
}

// The attribute's entry for dim d; an empty list means `fallback` for every dim.
int64_t entry(const std::string& op, const char* attr, const std::vector<int64_t>& v, std::size_t per_dim,
              std::size_t rank, std::size_t d, std::size_t k, int64_t fallback) {
  if (v.empty()) return fallback;
  if (v.size() != per_dim * rank)
    bad_attr(op, attr, "has " + std::to_string(v.size()) + " entries for operand of rank " + std::to_string(rank) +
                           (per_dim == 2 ? " (a (low, high) pair per dim)" : ""));
  return v[per_dim * d + k];
}

}  // namespace

void window_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                     const std::vector<int64_t>& window_dimensions, const std::vector<int64_t>& window_strides,
                     const std::vector<int64_t>& base_dilations, const std::vector<int64_t>& window_dilations,
                     const std::vector<int64_t>& padding) {
  const std::size_t r = operand.rank();
  if (r > kMaxRank) throw ValueError(op + ": operand has more than " + std::to_string(kMaxRank) + " dims");
  if (window_dimensions.size() != r)
    bad_attr(op, "window_dimensions", "has " + std::to_string(window_dimensions.size()) +
                                          " entries for operand of rank " + std::to_string(r));
  while (plan.eq.operands.empty()) plan.eq.operands.push_back(Pattern());
  Pattern& p = plan.eq.operands[0];
  for (std::size_t d = 0; d < r; ++d) {
    const int64_t w = window_dimensions[d];
    const int64_t s = entry(op, "window_strides", window_strides, 1, r, d, 0, 1);
    const int64_t bd = entry(op, "base_dilations", base_dilations, 1, r, d, 0, 1);
    const int64_t wd = entry(op, "window_dilations", window_dilations, 1, r, d, 0, 1);
    const int64_t lo = entry(op, "padding", padding, 2, r, d, 0, 0), hi = entry(op, "padding", padding, 2, r, d, 1, 0);
    if (w < 1) bad_attr(op, "window_dimensions", "has " + std::to_string(w) + " at dim " + std::to_string(d) + " (must be >= 1)");
    if (s < 1 || bd < 1 || wd < 1)
      throw ValueError(op + ": strides and dilations must be >= 1 (dim " + std::to_string(d) + ")");
    const int64_t n = operand.shape[d];
    const int64_t padded = (n > 0 ? (n - 1) * bd + 1 : 0) + lo + hi, span = (w - 1) * wd + 1;
    if (n >= 0 && padded < span)
      throw ValueError(op + ": dim " + std::to_string(d) + " of size " + std::to_string(n) + " padded to " +
                       std::to_string(padded) + " is smaller than its window of span " + std::to_string(span));
    const char c = static_cast<char>('a' + d);
    p.push_back({NotationItem::kLetter, c, false});
    plan.eq.result.push_back({NotationItem::kLetter, c, false});
    // a window reads neighbours, a stride or padding shifts positions, base dilation spreads
    // them: a rank's shard alone gives none of these right. Whole and resized: a permutation
    // factor, as Shardy's (which ignores base dilation)
    if (w > 1 || s > 1 || lo || hi || (bd > 1 && n > 1)) {
      plan.resized.push_back(static_cast<int64_t>(d));
      if (n >= 0) plan.born[c - 'a'] = (padded - span) / s + 1;  // the result's size: its window count
    }
  }
}

void reduce_window_patterns(PatternPlan& plan, const std::string& op, const std::vector<const DistMetaTensor*>& operands,
                            const std::vector<int64_t>& window_dimensions, const std::vector<int64_t>& window_strides,
                            const std::vector<int64_t>& base_dilations, const std::vector<int64_t>& window_dilations,
                            const std::vector<int64_t>& padding) {
  if (operands.empty() || operands[0] == nullptr) throw ValueError(op + ": needs at least one operand");
  window_patterns(plan, op, *operands[0], window_dimensions, window_strides, base_dilations, window_dilations, padding);
  // a list argument reads one pattern per tensor: every operand has the first one's
  while (plan.eq.operands.size() < operands.size()) plan.eq.operands.push_back(plan.eq.operands[0]);
}

// select_and_gather_add(tangents, operand): both operand-shaped, the result windowed.
void window_pair_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& tangents,
                          const DistMetaTensor& operand, const std::vector<int64_t>& window_dimensions,
                          const std::vector<int64_t>& window_strides, const std::vector<int64_t>& base_dilations,
                          const std::vector<int64_t>& window_dilations, const std::vector<int64_t>& padding) {
  if (tangents.rank() != operand.rank())
    throw ValueError(op + ": tangents have rank " + std::to_string(tangents.rank()) + ", operand " +
                     std::to_string(operand.rank()));
  window_patterns(plan, op, operand, window_dimensions, window_strides, base_dilations, window_dilations, padding);
  plan.eq.operands.push_back(plan.eq.operands[0]);
}

// select_and_scatter_add(source, operand): source is windowed (the reduce_window's result), the
// result operand-shaped; a windowed dim is whole in all three (a permutation factor).
void window_scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& source,
                             const DistMetaTensor& operand, const std::vector<int64_t>& window_dimensions,
                             const std::vector<int64_t>& window_strides, const std::vector<int64_t>& padding) {
  if (source.rank() != operand.rank())
    throw ValueError(op + ": source has rank " + std::to_string(source.rank()) + ", operand " +
                     std::to_string(operand.rank()));
  window_patterns(plan, op, operand, window_dimensions, window_strides, {}, {}, padding);
  const Pattern full = plan.eq.operands[0];
  plan.eq.operands[0] = plan.eq.result;  // source: the windowed pattern
  plan.eq.operands.push_back(full);
  plan.eq.result = full;
  for (int64_t d : plan.resized) plan.born[d] = operand.shape[d];  // the result has the operand's sizes
}

// StableHLO's select_and_scatter lists the operand first: the same patterns, swapped.
void select_and_scatter_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& operand,
                                 const DistMetaTensor& source, const std::vector<int64_t>& window_dimensions,
                                 const std::vector<int64_t>& window_strides, const std::vector<int64_t>& padding) {
  window_scatter_patterns(plan, op, source, operand, window_dimensions, window_strides, padding);
  std::swap(plan.eq.operands[0], plan.eq.operands[1]);
}

}  // namespace spmd

namespace spmd {

namespace {

// A dims list (lhs_spec / rhs_spec / out_spec) must name each dim of its tensor once.
void check_spec(const std::string& op, const char* attr, const std::vector<int64_t>& spec, std::size_t rank) {
  if (spec.size() != rank || rank < 2)
    bad_attr(op, attr, "has " + std::to_string(spec.size()) + " entries for a tensor of rank " + std::to_string(rank) +
                           " (batch/feature, feature, then spatial dims)");
  uint32_t seen = 0;
  for (int64_t d : spec) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || (seen >> d & 1u))
      bad_attr(op, attr, "names dim " + std::to_string(d) + " out of range or twice");
    seen |= 1u << d;
  }
}

}  // namespace

void convolution_patterns(PatternPlan& plan, const std::string& op, const DistMetaTensor& lhs, const DistMetaTensor& rhs,
                          const std::vector<int64_t>& lhs_spec, const std::vector<int64_t>& rhs_spec,
                          const std::vector<int64_t>& out_spec, const std::vector<int64_t>& window_strides,
                          const std::vector<int64_t>& padding, const std::vector<int64_t>& lhs_dilation,
                          const std::vector<int64_t>& rhs_dilation, int64_t feature_group_count, int64_t batch_group_count) {
  const std::size_t r = lhs.rank();
  if (r > kMaxRank || rhs.rank() != r)
    throw ValueError(op + ": lhs has rank " + std::to_string(r) + ", rhs rank " + std::to_string(rhs.rank()) +
                     " (they must match, at most " + std::to_string(kMaxRank) + ")");
  check_spec(op, "lhs_spec", lhs_spec, r);
  check_spec(op, "rhs_spec", rhs_spec, r);
  check_spec(op, "out_spec", out_spec, r);
  if (feature_group_count < 1 || batch_group_count < 1 || (feature_group_count > 1 && batch_group_count > 1))
    throw ValueError(op + ": feature_group_count = " + std::to_string(feature_group_count) + " and batch_group_count = " +
                     std::to_string(batch_group_count) + " (each >= 1, at most one of them > 1)");
  const int64_t n = lhs.shape[lhs_spec[0]], c = lhs.shape[lhs_spec[1]];
  const int64_t o = rhs.shape[rhs_spec[0]], i = rhs.shape[rhs_spec[1]];
  if (c >= 0 && i >= 0 && c != i * feature_group_count)
    throw ValueError(op + ": lhs feature dim " + std::to_string(lhs_spec[1]) + " has size " + std::to_string(c) +
                     ", rhs input feature dim " + std::to_string(rhs_spec[1]) + " has " + std::to_string(i) +
                     " (must be lhs's / feature_group_count = " + std::to_string(feature_group_count) + ")");
  if (o >= 0 && o % (feature_group_count * batch_group_count) != 0)
    bad_attr(op, feature_group_count > 1 ? "feature_group_count" : "batch_group_count",
             "does not divide the rhs output feature dim of size " + std::to_string(o));
  if (n >= 0 && n % batch_group_count != 0)
    bad_attr(op, "batch_group_count", "does not divide the lhs batch dim of size " + std::to_string(n));

  while (plan.eq.operands.size() < 2) plan.eq.operands.push_back(Pattern());
  Pattern &x = plan.eq.operands[0], &w = plan.eq.operands[1], &y = plan.eq.result;
  x.resize(r), w.resize(r), y.resize(r);
  const NotationItem one{NotationItem::kOne, 0, false};
  auto letter = [](char ch) { return NotationItem{NotationItem::kLetter, ch, false}; };
  char next = 'a';
  // batch: passes through unless batch groups tie it to the output features
  const char b = next++;
  x[lhs_spec[0]] = letter(b);
  if (batch_group_count == 1) {
    y[out_spec[0]] = letter(b);
  } else {  // the result's batch is a group's: whole on both sides
    plan.whole |= 1u << (b - 'a');
    const char nb = next++;
    y[out_spec[0]] = letter(nb);
    plan.whole |= 1u << (nb - 'a');
    plan.born[nb - 'a'] = n >= 0 ? n / batch_group_count : -1;
  }
  // features: the input feature is contracted with the kernel's (a split leaves the result
  // partial sum), the kernel's output feature is the result's. Grouped convolutions pair each
  // group of features with its own: all feature dims whole.
  const bool grouped = feature_group_count > 1 || batch_group_count > 1;
  const char f = next++;
  x[lhs_spec[1]] = letter(f);
  if (feature_group_count == 1) {
    w[rhs_spec[1]] = letter(f);
  } else {
    plan.whole |= 1u << (f - 'a');
    const char fi = next++;
    w[rhs_spec[1]] = letter(fi);
    plan.whole |= 1u << (fi - 'a');
  }
  const char of = next++;
  w[rhs_spec[0]] = letter(of);
  y[out_spec[1]] = letter(of);
  if (grouped) plan.whole |= 1u << (of - 'a');
  // spatial dims: a window reads neighbours, so each input spatial dim is whole and resized to
  // the result's (a permutation factor of the window count); the kernel's are whole
  for (std::size_t s = 2; s < r; ++s) {
    const std::size_t k = s - 2, sp = r - 2;
    const int64_t size = lhs.shape[lhs_spec[s]], ksize = rhs.shape[rhs_spec[s]];
    const int64_t stride = entry(op, "window_strides", window_strides, 1, sp, k, 0, 1);
    const int64_t lo = entry(op, "padding", padding, 2, sp, k, 0, 0), hi = entry(op, "padding", padding, 2, sp, k, 1, 0);
    const int64_t ld = entry(op, "lhs_dilation", lhs_dilation, 1, sp, k, 0, 1);
    const int64_t rd = entry(op, "rhs_dilation", rhs_dilation, 1, sp, k, 0, 1);
    if (stride < 1 || ld < 1 || rd < 1)
      throw ValueError(op + ": strides and dilations must be >= 1 (spatial dim " + std::to_string(k) + ")");
    const int64_t padded = (size > 0 ? (size - 1) * ld + 1 : 0) + lo + hi, span = ksize > 0 ? (ksize - 1) * rd + 1 : 0;
    if (size >= 0 && ksize >= 0 && padded < span)
      throw ValueError(op + ": spatial dim " + std::to_string(k) + " of size " + std::to_string(size) + " padded to " +
                       std::to_string(padded) + " is smaller than the kernel's span " + std::to_string(span));
    w[rhs_spec[s]] = one;
    const int64_t windows = (size >= 0 && ksize >= 0) ? (padded - span) / stride + 1 : -1;
    if (size == 1 || windows == 1) {  // nothing to split on either side: a size-1 factor each
      x[lhs_spec[s]] = one;
      y[out_spec[s]] = one;
      continue;
    }
    const char sc = next++;
    x[lhs_spec[s]] = letter(sc);
    y[out_spec[s]] = letter(sc);
    plan.resized.push_back(lhs_spec[s]);
    plan.born[sc - 'a'] = windows;
  }
}

}  // namespace spmd
