#include "propagator.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "errors.h"
#include "factor_propagation.h"
#include "projection.h"

namespace spmd::prop {
namespace {

// A factor only the results carry: the op creates dims (a broadcast; Shardy goes by the op, so a
// created dim of size 1 counts too).
bool creates_dims(const FactorTable& t) {
  std::vector<bool> in_operand(t.num_factors(), false), in_result(t.num_factors(), false);
  for (const auto& tensor : t.operands)
    for (const auto& dim : tensor)
      for (int f : dim) in_operand[f] = true;
  for (const auto& tensor : t.results)
    for (const auto& dim : tensor)
      for (int f : dim) in_result[f] = true;
  for (int f = 0; f < t.num_factors(); ++f)
    if (in_result[f] && !in_operand[f]) return true;
  return false;
}

bool same_dims_everywhere(const FactorTable& t) {
  if (t.operands.empty()) return false;
  for (const auto& tensor : t.results)
    if (tensor != t.operands.front()) return false;
  for (const auto& tensor : t.operands)
    if (tensor != t.operands.front()) return false;
  return true;
}

int find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

bool has_dim_axes(const TensorSharding& s) {
  for (const DimSharding& d : s.dims)
    if (!d.axes.empty()) return true;
  return false;
}

bool Propagator::any_axes(int o) const {
  for (int k = op_start_[o]; k < op_start_[o + 1]; ++k)
    if (has_axes_[op_values_[k]]) return true;
  return false;
}

FactorDirs op_priority_dirs(const Op& op, int step) {
  // 0: pass-through ops, but not into a value with several uses (Shardy defers those: forward
  // when a result has several uses, backward when an operand has); 1: pass-through ops, both
  // ways; 2: also every op's pass-through factors (a broadcast's only backward: it would spread a
  // sharding over the dims it creates); 3: every op, a broadcast still only backward (Shardy's
  // "anything but broadcast forward"); 4: everything.
  if (step == 0) {
    Direction d = op.pass_through ? kBoth : kNone;
    if (op.forward_early) d = kForward;  // Shardy moves dynamic slices forward from its first step
    if (op.multi_use_results) d = static_cast<Direction>(d & ~kForward);
    if (op.multi_use_operands) d = static_cast<Direction>(d & ~kBackward);
    d = static_cast<Direction>(d & op.allowed);
    return factor_dirs(d, d);
  }
  --step;
  Direction whole_op = step >= 2 || op.pass_through ? kBoth : kNone;
  if (step == 2 && op.broadcast_like && !op.pass_through) whole_op = kBackward;
  if (op.forward_early && step < 2) whole_op = kForward;
  Direction pass_through = whole_op;
  if (step >= 1 && !op.pass_through) pass_through = op.broadcast_like ? kBackward : kBoth;
  if (step >= 3) pass_through = kBoth;
  return factor_dirs(static_cast<Direction>(pass_through & op.allowed), static_cast<Direction>(whole_op & op.allowed));
}

Propagator::Propagator(Graph& g, std::vector<Provenance> previous) : g_(g) {
  g_.validate();
  const int nv = g_.num_values();
  const int no = static_cast<int>(g_.ops.size());
  adj_start_.assign(nv + 1, 0);
  std::vector<int8_t> table_creates_dims(g_.tables.size(), -1);  // per table, worked out once
  std::vector<int8_t> table_elementwise(g_.tables.size(), -1);
  op_start_.assign(no + 1, 0);
  op_values_.clear();
  op_values_.reserve(3 * static_cast<std::size_t>(no));
  std::vector<int> uses(nv, 0);  // per value, as MLIR counts them (an op reading a value twice uses it twice)
  for (int o = 0; o < no; ++o) {
    Op& op = g_.ops[o];
    int8_t& creates = table_creates_dims[op.table];
    if (creates < 0) creates = creates_dims(g_.tables[op.table]);
    op.broadcast_like = creates;
    int8_t& same = table_elementwise[op.table];
    if (same < 0) same = same_dims_everywhere(g_.tables[op.table]);
    op.elementwise = same && op.name != "data_flow_edge";
    for (int i = 0; i < op.num_tensors(); ++i) op_values_.push_back(op.tensor_value(i));
    op_start_[o + 1] = static_cast<int>(op_values_.size());
    // (a dynamic_update_slice is not: the live Shardy in jaxlib 0.10.2 moves it with the other ops)
    op.forward_early = !op.pass_through && (op.name == "stablehlo.dynamic_slice" || op.name == "jax.dynamic_slice");
    for (int v : op.operands) ++uses[v];
  }
  // The later passes read the compact lists, not the ops' own (scattered) vectors.
  for (int o = 0; o < no; ++o) {
    Op& op = g_.ops[o];
    const int* vals = op_values_.data() + op_start_[o];
    const int n_operands = static_cast<int>(op.operands.size()), n = op_start_[o + 1] - op_start_[o];
    op.multi_use_operands = std::any_of(vals, vals + n_operands, [&](int v) { return uses[v] > 1; });
    op.multi_use_results = std::any_of(vals + n_operands, vals + n, [&](int v) { return uses[v] > 1; });
  }
  for (int v : op_values_) ++adj_start_[v + 1];
  for (int v = 0; v < nv; ++v) adj_start_[v + 1] += adj_start_[v];
  adj_.resize(adj_start_[nv]);
  std::vector<int> fill(adj_start_.begin(), adj_start_.end() - 1);
  for (int o = 0; o < no; ++o)
    for (int k = op_start_[o]; k < op_start_[o + 1]; ++k) adj_[fill[op_values_[k]]++] = o;

  // An earlier run's provenance stays: a value this run leaves alone keeps its reason.
  provenance_ = std::move(previous);
  provenance_.resize(nv);
  // One pass over every value's sharding (they fill memory on a large program): the user dims'
  // origins and provenance, which values hold axes, and which carry annotations (user_values_).
  has_axes_.resize(nv);
  user_values_.clear();
  auto annotated = [](const TensorSharding& s) {
    return std::any_of(s.dims.begin(), s.dims.end(), [](const DimSharding& d) { return d.user || d.priority != kNoPriority; });
  };
  for (int v = 0; v < nv; ++v) {
    TensorSharding& s = g_.shardings[v];
    has_axes_[v] = has_dim_axes(s);
    if (annotated(s)) user_values_.push_back(v);
    for (DimSharding& d : s.dims)
      if (d.user) {
        if (d.origin == kNoOrigin) d.origin = v;
        Provenance& pv = provenance_[v];
        if (pv.level != Level::kUnset && pv.level != Level::kUser) continue;
        pv.level = Level::kUser;
        if (d.priority != kNoPriority)  // the round its annotation applies in
          pv.user_priority = pv.user_priority < 0 ? d.priority : std::min(pv.user_priority, d.priority);
      }
  }
  queued_.assign(no, 0);
  visits_[0].assign(no, Visit{});
  visits_[1].assign(no, Visit{});
  changed_at_.assign(nv, 0);
  unify_groups();
  if (!g_.groups.empty()) {  // unifying changed the members' shardings
    for (const auto& members : g_.groups)
      for (int v : members) {
        has_axes_[v] = has_dim_axes(g_.shardings[v]);
        if (annotated(g_.shardings[v])) user_values_.push_back(v);
      }
    std::sort(user_values_.begin(), user_values_.end());
    user_values_.erase(std::unique(user_values_.begin(), user_values_.end()), user_values_.end());
  }
}

// Groups that share a value merge; then every member starts from one sharding: per dim the
// longest axes all members agree with, closed (and user-marked) if any member's dim is.
void Propagator::unify_groups() {
  const int nv = g_.num_values();
  std::vector<int> parent(g_.groups.size());
  for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  std::vector<int> owner(nv, -1);
  for (std::size_t gi = 0; gi < g_.groups.size(); ++gi)
    for (int v : g_.groups[gi]) {
      if (owner[v] >= 0) parent[find(parent, static_cast<int>(gi))] = find(parent, owner[v]);
      owner[v] = static_cast<int>(gi);
    }
  std::vector<std::vector<int>> merged(g_.groups.size());
  group_of_.assign(nv, -1);
  for (int v = 0; v < nv; ++v)
    if (owner[v] >= 0) merged[find(parent, owner[v])].push_back(v);
  std::vector<std::vector<int>> groups;
  for (auto& members : merged)
    if (members.size() > 1) groups.push_back(std::move(members));
  g_.groups = std::move(groups);

  for (std::size_t gi = 0; gi < g_.groups.size(); ++gi) {
    const auto& members = g_.groups[gi];
    for (int v : members) group_of_[v] = static_cast<int>(gi);
    TensorSharding u = g_.shardings[members[0]];
    for (int v : members) {
      const TensorSharding& s = g_.shardings[v];
      if (s.mesh >= 0 && u.mesh >= 0 && s.mesh != u.mesh)
        throw ValueError("sharding group " + std::to_string(gi) + ": values " + std::to_string(members[0]) + " and " +
                         std::to_string(v) + " are on different meshes");
      if (u.mesh < 0) u.mesh = s.mesh;
      for (std::size_t d = 0; d < s.dims.size(); ++d) {
        DimSharding& ud = u.dims[d];
        const DimSharding& sd = s.dims[d];
        AxisList c = common_prefix(ud.axes, sd.axes);
        if (c.size() != std::min(ud.axes.size(), sd.axes.size()) || (ud.closed && sd.axes.size() > ud.axes.size()) ||
            (sd.closed && ud.axes.size() > sd.axes.size()))
          throw ValueError("sharding group " + std::to_string(gi) + ": value " + std::to_string(v) + " dim " + std::to_string(d) + " is " +
                           g_.sharding_to_string(v) + ", which conflicts with the rest of the group");
        if (sd.axes.size() > ud.axes.size()) {
          ud.axes = sd.axes;
          ud.origin = sd.origin;
        }
        ud.closed = ud.closed || sd.closed;
        // the smaller priority wins; two unmarked dims stay unmarked (not an explicit p0)
        if (sd.user && ud.user && ud.priority == kNoPriority && sd.priority == kNoPriority) ud.priority = kNoPriority;
        else if (sd.user) ud.priority = ud.user ? std::min(effective_priority(ud), effective_priority(sd)) : sd.priority;
        ud.user = ud.user || sd.user;
      }
      for (const AxisRef& a : s.replicated)
        if (!uses_overlapping(u.replicated, a)) u.replicated.push_back(a);
    }
    for (int v : members) g_.shardings[v] = u;
    for (int v : members) g_.validate_sharding(v);  // the merged sharding must still use each axis once
  }
}

bool Propagator::needs_visit(int o, bool aggressive, int64_t key) const {
  const Visit& last = visits_[aggressive][o];
  if (last.key != key) return true;
  for (int k = op_start_[o]; k < op_start_[o + 1]; ++k)
    if (changed_at_[op_values_[k]] > last.stamp) return true;
  return false;
}

void Propagator::on_change(int v, int op, Level level, int priority, int step) {
  ++stats_.updates;
  changed_at_[v] = ++clock_;
  has_axes_[v] = has_dim_axes(g_.shardings[v]);
  provenance_[v] = Provenance{op, level, priority, step, -1};
  auto enqueue_around = [&](int value) {
    for (int k = adj_start_[value]; k < adj_start_[value + 1]; ++k) {
      const int o = adj_[k];
      if (!queued_[o] && dirs_[o] != 0) {
        queued_[o] = 1;
        queue_.push_back(o);
      }
    }
  };
  enqueue_around(v);
  const int gi = group_of_[v];
  if (gi < 0) return;
  for (int w : g_.groups[gi]) {
    if (w == v) continue;
    TensorSharding& ws = g_.shardings[w];
    const TensorSharding& vs = g_.shardings[v];
    bool changed = ws.mesh != vs.mesh;
    ws.mesh = vs.mesh;
    for (std::size_t d = 0; d < ws.dims.size(); ++d)
      if (ws.dims[d].axes != vs.dims[d].axes) {
        ws.dims[d].axes = vs.dims[d].axes;
        ws.dims[d].origin = vs.dims[d].origin;
        changed = true;
      }
    if (!changed) continue;
    ++stats_.updates;
    changed_at_[w] = ++clock_;
    has_axes_[w] = has_dim_axes(ws);
    provenance_[w] = Provenance{op, Level::kGroup, priority, step, gi};
    enqueue_around(w);
  }
}

void Propagator::fixed_point(bool aggressive, int threshold, int priority, int step) {
  ++stats_.rounds;
  queue_.clear();
  const int64_t round_key = static_cast<int64_t>(threshold) << 4;
  for (int o = 0; o < static_cast<int>(g_.ops.size()); ++o)
    if (dirs_[o] != 0 && needs_visit(o, aggressive, round_key | dirs_[o])) {
      queued_[o] = 1;
      queue_.push_back(o);
    }
  Projection& p = projection_;
  std::vector<int>& changed = changed_;
  const Level level = aggressive ? Level::kAggressive : Level::kBasic;
  std::size_t head = 0;
  while (head < queue_.size()) {
    const int o = queue_[head++];
    queued_[o] = 0;
    if (head > 4096 && head * 2 > queue_.size()) {  // keep the queue compact
      queue_.erase(queue_.begin(), queue_.begin() + head);
      head = 0;
    }
    if (!any_axes(o)) continue;  // nothing to propagate yet (most ops in early rounds)
    const Op& op = g_.ops[o];
    ++stats_.op_visits;
    if (!project(g_, op, threshold, dirs_[o], p, op_values_.data() + op_start_[o])) continue;
    if (aggressive) propagate_aggressive(g_, op, p);
    else propagate_basic(g_, op, p);
    changed.clear();
    write_back(g_, op, p, changed);
    for (int v : changed) on_change(v, o, level, priority, step);
    visits_[aggressive][o] = Visit{clock_, round_key | dirs_[o]};
  }
}

Stats Propagator::run(const Options& options) {
  std::vector<int> priorities;
  if (options.user_priority) {
    for (int v : user_values_)
      for (const DimSharding& d : g_.shardings[v].dims)
        if (d.user) priorities.push_back(effective_priority(d));
    std::sort(priorities.begin(), priorities.end());
    priorities.erase(std::unique(priorities.begin(), priorities.end()), priorities.end());
  }
  if (priorities.empty()) priorities.push_back(INT_MAX);
  const int first_step = options.op_priority ? 0 : kLastStep;
  dirs_.assign(g_.ops.size(), 0);
  for (int p : priorities) {
    const int threshold = options.user_priority ? p : INT_MAX;
    for (int step = first_step; step <= kLastStep; ++step) {
      for (std::size_t o = 0; o < g_.ops.size(); ++o) dirs_[o] = op_priority_dirs(g_.ops[o], step);
      const int shown = p == INT_MAX ? -1 : p;
      fixed_point(false, threshold, shown, step);
      if (options.aggressive) fixed_point(true, threshold, shown, step);
    }
  }
  // Like Shardy, a priority is dropped once its round applied it: the result carries none, so
  // propagating it again sees every annotation at once (and finds nothing left to do).
  if (options.user_priority)
    for (int v : user_values_)  // (only these have a priority)
      for (DimSharding& d : g_.shardings[v].dims) d.priority = kNoPriority;
  return stats_;
}

}  // namespace spmd::prop
