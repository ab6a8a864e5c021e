#include "factor_propagation.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace spmd::prop {
namespace {

using Kind = FactorTable::Kind;

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
      // A list that ends in a sub-axis of the other's axis is a prefix of it: keep the longer.
      if (k + 1 == c.axes.size() && c.axes[k].is_prefix_of(s.axes[k]) && !frozen) {
        c.axes = s.axes;
        c.src = t;
        continue;
      }
      if (k + 1 == s.axes.size() && s.axes[k].is_prefix_of(c.axes[k])) continue;
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
  int64_t left = factor_size;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    if (left % axes[k].size == 0) {
      left /= axes[k].size;
      continue;
    }
    const int64_t g = std::gcd(left, axes[k].size);  // keep the major part that still divides
    axes.resize(g > 1 ? k + 1 : k);
    if (g > 1) axes[k].size = g;
    return;
  }
}

// Cuts `axes` at the first axis that clashes with `used`, keeping the clashing axis's major
// part that does not ("a" against "a":(4)2 keeps "a":(1)4). Returns true if it cut. A cut
// axis must still be checked against every other user: the part kept clear of one ("a":(1)2
// clear of "a":(2)2) may clash with another (a full "a"), so callers finish position k over
// all users before they stop.
bool cut_at(AxisList& axes, std::size_t k, const AxisList& used) {
  if (k >= axes.size()) return false;  // already cut away at k by an earlier user
  int32_t keep = axes[k].size;
  for (const AxisRef& u : used) keep = std::min(keep, axes[k].free_prefix_before(u));
  if (keep == axes[k].size) return false;
  axes.resize(keep > 1 ? k + 1 : k);
  if (keep > 1) axes[k].size = keep;
  return true;
}


// Cuts `axes` (from position `from`) where tensor t already uses an axis for another factor or
// reserves it.
void truncate_in_tensor(const Projection& p, int t, int f, AxisList& axes, std::size_t from) {
  for (std::size_t k = from ? from - 1 : 0; k < axes.size(); ++k) {  // from - 1: the last axis may widen
    bool cut = cut_at(axes, k, p.reserved[t]);
    for (int g = 0; g < p.num_factors; ++g)
      if (g != f) cut = cut_at(axes, k, p.at(t, g).axes) || cut;
    if (cut) return;
  }
}

bool can_grow(const Projection& p, int t, int f) {
  const FactorSlot& s = p.at(t, f);
  const bool pass_through = p.table->kinds[f] == Kind::kPassThrough;
  return s.present && !s.closed && (p.updatable[t] >> (pass_through ? 0 : 1) & 1);
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
    if (c.size() == s.axes.size() && can_grow(p, t, f)) {
      c = cand;
      truncate_in_tensor(p, t, f, c, s.axes.size());
    }
    if (c.size() > best.size()) best = std::move(c);
  }
  return any_result ? best : cand;
}

bool grow(FactorSlot& s, const AxisList& target, std::size_t len, int origin) {
  if (len < s.axes.size() || len == 0) return false;
  for (std::size_t k = 0; k < s.axes.size(); ++k) {
    if (s.axes[k] == target[k]) continue;
    // the minor-most axis may widen into a sub-axis that starts with it ("a":(1)2 -> "a":(1)4)
    if (k + 1 != s.axes.size() || !s.axes[k].is_prefix_of(target[k])) return false;
  }
  if (len == s.axes.size() && s.axes.back() == target[len - 1]) return false;
  s.axes = target;
  s.axes.resize(len);
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
    // Basic propagation gives every tensor the same axes, so a tensor that cannot grow (a closed
    // dim) caps them at what it has.
    for (int t = 0; t < p.num_tensors; ++t)
      if (p.at(t, f).present && p.at(t, f).closed) c.axes = common_prefix(c.axes, p.at(t, f).axes);
    if (c.axes.empty()) continue;
    truncate_divisible(c.axes, table.sizes[f], p.must_divide[f]);
    // Cut at the first axis another factor uses, or a receiving tensor reserves.
    for (std::size_t k = 0; k < c.axes.size(); ++k) {
      bool cut = false;  // every tensor and factor is checked at k, also after a cut (see cut_at)
      for (int t = 0; t < p.num_tensors; ++t) {
        for (int g2 = 0; g2 < p.num_factors; ++g2)
          if (g2 != f) cut = cut_at(c.axes, k, p.at(t, g2).axes) || cut;
        // position k is new to the tensor, or its last axis widened into a larger sub-axis
        if (can_grow(p, t, f) && p.at(t, f).axes.size() <= k + 1) cut = cut_at(c.axes, k, p.reserved[t]) || cut;
      }
      if (cut) break;
    }
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
  std::vector<Candidate>& cands = p.candidates;  // scratch kept in the projection: no allocation per call
  std::vector<int>& order = p.order;
  if (cands.size() < static_cast<std::size_t>(p.num_factors)) cands.resize(p.num_factors);
  order.clear();
  for (int f = 0; f < p.num_factors; ++f) {
    if (!propagatable(table, f)) continue;
    cands[f] = compatible(p, f);
    truncate_divisible(cands[f].axes, table.sizes[f], p.must_divide[f]);
    if (!cands[f].axes.empty()) order.push_back(f);
  }
  // An elementwise op (every tensor has the same dims and factors): Shardy takes the most
  // sharded candidate first (the tensors are all the same size, so size cannot choose). A
  // data-flow edge is not an elementwise op to Shardy: its candidates go by source order.
  const bool elementwise = op.elementwise;
  auto sharded = [&](int f) {
    int64_t n = 1;
    for (const AxisRef& a : cands[f].axes) n *= a.size;
    return n;
  };
  auto key = [&](int f) {
    const int src_value = p.values[cands[f].src];
    return std::make_tuple(table.kinds[f] != Kind::kPassThrough, -g.num_elements(src_value),
                           elementwise ? -sharded(f) : int64_t{0}, cands[f].src, f);
  };
  if (order.size() > 1) {  // each key once (the source's size reads its shape), then sort
    auto& keyed = p.order_keys;
    keyed.clear();
    for (int f : order) keyed.push_back(key(f));  // the key ends with f itself
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t i = 0; i < keyed.size(); ++i) order[i] = std::get<4>(keyed[i]);
  }
  for (int f : order) {
    const Candidate& c = cands[f];
    const int origin = p.at(c.src, f).origin;
    for (int t = 0; t < p.num_tensors; ++t) {
      if (!can_grow(p, t, f)) continue;
      AxisList target = op.is_result(t) ? c.axes : sideways_limit(op, p, f, c.axes);
      FactorSlot& s = p.at(t, f);
      truncate_in_tensor(p, t, f, target, s.axes.size());
      grow(s, target, target.size(), origin);
    }
  }
}

}  // namespace spmd::prop
