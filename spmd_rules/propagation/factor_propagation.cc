#include "factor_propagation.h"

#include <algorithm>
#include <tuple>

namespace spmd::prop {
namespace {

using Kind = FactorTable::Kind;

struct Candidate {
  AxisList axes;
  int src = -1;  // the tensor whose axes these are
};

bool propagatable(const FactorTable& t, int f) { return t.kinds[f] != Kind::kNeedReplication && !t.blocked[f]; }

// The axes every tensor holding factor f agrees with (shorter lists are prefixes of it); after
// a disagreement the list can only shrink.
Candidate compatible(const Projection& p, int f) {
  Candidate c;
  bool frozen = false;
  for (int t = 0; t < p.num_tensors; ++t) {
    const FactorSlot& s = p.at(t, f);
    if (!s.present || s.axes.empty()) continue;
    if (c.src < 0) {
      c.axes = s.axes;
      c.src = t;
      continue;
    }
    const std::size_t n = std::min(c.axes.size(), s.axes.size());
    std::size_t k = 0;
    while (k < n && c.axes[k] == s.axes[k]) ++k;
    if (k < n) {
      if (s.axes[k].is_prefix_of(c.axes[k])) c.axes[k] = s.axes[k];
      if (c.axes[k].is_prefix_of(s.axes[k])) ++k;
      c.axes.resize(k);
      frozen = true;
    } else if (s.axes.size() > c.axes.size() && !frozen) {
      c.axes = s.axes;
      c.src = t;
    }
  }
  return c;
}

// Cuts `axes` where the product stops dividing the factor size (only a factor that is minor-most
// in every tensor may be split unevenly: the padding then sits at the end of the dim).
void truncate_divisible(AxisList& axes, int64_t factor_size, bool must_divide) {
  if (!must_divide) return;
  int64_t prod = 1;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    prod *= axes[k].size;
    if (factor_size % prod != 0) {
      axes.resize(k);
      return;
    }
  }
}

bool used_in_tensor_by_other(const Projection& p, int t, int f, const AxisRef& a) {
  if (uses_overlapping(p.reserved[t], a)) return true;
  for (int g = 0; g < p.num_factors; ++g)
    if (g != f && uses_overlapping(p.at(t, g).axes, a)) return true;
  return false;
}

bool used_in_op_by_other(const Projection& p, int f, const AxisRef& a) {
  for (int t = 0; t < p.num_tensors; ++t)
    for (int g = 0; g < p.num_factors; ++g)
      if (g != f && uses_overlapping(p.at(t, g).axes, a)) return true;
  return false;
}

bool can_grow(const Projection& p, int t, int f) {
  const FactorSlot& s = p.at(t, f);
  return s.present && !s.closed && p.updatable[t];
}

// What an operand may take of `cand` (sideways, from another operand): no more than some result
// holding the factor has or could still take (a closed result, or one that reserves an axis, stops
// it); all of `cand` when no result holds the factor.
AxisList sideways_limit(const Op& op, const Projection& p, int f, const AxisList& cand) {
  bool any_result = false;
  AxisList best;
  for (int t = static_cast<int>(op.operands.size()); t < p.num_tensors; ++t) {
    const FactorSlot& s = p.at(t, f);
    if (!s.present) continue;
    any_result = true;
    AxisList c = common_prefix(cand, s.axes);
    if (c.size() == s.axes.size() && can_grow(p, t, f))
      while (c.size() < cand.size() && !used_in_tensor_by_other(p, t, f, cand[c.size()])) c.push_back(cand[c.size()]);
    if (c.size() > best.size()) best = std::move(c);
  }
  return any_result ? best : cand;
}

bool grow(FactorSlot& s, const AxisList& target, std::size_t len, int origin) {
  if (len <= s.axes.size()) return false;
  for (std::size_t k = 0; k < s.axes.size(); ++k)
    if (s.axes[k] != target[k]) return false;  // not an extension (a sub-axis of a longer source)
  s.axes.assign(target.begin(), target.begin() + len);
  s.grew = true;
  s.origin = origin;
  return true;
}

}  // namespace

AxisList common_prefix(const AxisList& a, const AxisList& b) {
  AxisList out;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (a[k] == b[k]) {
      out.push_back(a[k]);
      continue;
    }
    if (a[k].is_prefix_of(b[k])) out.push_back(a[k]);
    else if (b[k].is_prefix_of(a[k])) out.push_back(b[k]);
    break;
  }
  return out;
}

void propagate_basic(const Graph& g, const Op& op, Projection& p) {
  const FactorTable& table = g.tables[op.table];
  for (int f = 0; f < p.num_factors; ++f) {
    if (!propagatable(table, f)) continue;
    Candidate c = compatible(p, f);
    if (c.axes.empty()) continue;
    truncate_divisible(c.axes, table.sizes[f], p.must_divide[f]);
    // Cut at the first axis another factor uses, or a receiving tensor reserves.
    std::size_t k = 0;
    for (; k < c.axes.size(); ++k) {
      if (used_in_op_by_other(p, f, c.axes[k])) break;
      bool reserved = false;
      for (int t = 0; t < p.num_tensors && !reserved; ++t)
        reserved = can_grow(p, t, f) && p.at(t, f).axes.size() <= k && uses_overlapping(p.reserved[t], c.axes[k]);
      if (reserved) break;
    }
    c.axes.resize(k);
    if (c.axes.empty()) continue;
    const int origin = p.at(c.src, f).origin;
    for (int t = 0; t < p.num_tensors; ++t) {
      if (!can_grow(p, t, f)) continue;
      if (op.is_result(t)) {
        grow(p.at(t, f), c.axes, c.axes.size(), origin);
      } else {
        const AxisList lim = sideways_limit(op, p, f, c.axes);
        grow(p.at(t, f), lim, lim.size(), origin);
      }
    }
  }
}

void propagate_aggressive(const Graph& g, const Op& op, Projection& p) {
  const FactorTable& table = g.tables[op.table];
  std::vector<Candidate> cands(p.num_factors);
  std::vector<int> order;
  for (int f = 0; f < p.num_factors; ++f) {
    if (!propagatable(table, f)) continue;
    cands[f] = compatible(p, f);
    truncate_divisible(cands[f].axes, table.sizes[f], p.must_divide[f]);
    if (!cands[f].axes.empty()) order.push_back(f);
  }
  auto key = [&](int f) {
    const int src_value = op.tensor_value(cands[f].src);
    return std::make_tuple(table.kinds[f] != Kind::kPassThrough, -g.num_elements(src_value), cands[f].src, f);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  for (int f : order) {
    const Candidate& c = cands[f];
    const int origin = p.at(c.src, f).origin;
    for (int t = 0; t < p.num_tensors; ++t) {
      if (!can_grow(p, t, f)) continue;
      const AxisList target = op.is_result(t) ? c.axes : sideways_limit(op, p, f, c.axes);
      FactorSlot& s = p.at(t, f);
      std::size_t len = s.axes.size();
      while (len < target.size() && !used_in_tensor_by_other(p, t, f, target[len])) ++len;
      grow(s, target, len, origin);
    }
  }
}

}  // namespace spmd::prop
