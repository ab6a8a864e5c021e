// Pattern builders of the windowed ops (reduce_window): each dim of the operand maps to the same
// dim of the result; a dim with a real window (size > 1, a stride, padding, base dilation) is
// resized: whole, and free to differ in size. Shapes and attributes only; docs/spec_language.md.
#include <string>

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

}  // namespace spmd
