// The conflict-resolution hierarchy as nested loops (Shardy's user-priority -> op-priority ->
// aggressive -> basic): for each user priority p (ascending), for each op-priority step, run
// basic propagation to a fixed point and then aggressive propagation to a fixed point, over a
// worklist that re-queues the ops around every value that changed. Sharding groups copy a
// member's new sharding to every other member.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "graph.h"
#include "projection.h"

namespace spmd::prop {

struct Options {
  bool aggressive = true;     // after basic, resolve conflicts (otherwise basic only)
  bool op_priority = true;    // pass-through ops first
  bool user_priority = true;  // p0 annotations everywhere before p1, ...
};

struct Stats {
  int64_t op_visits = 0;  // rule applications
  int64_t updates = 0;    // value shardings changed
  int rounds = 0;         // fixed points reached (priority x step x strategy)
};

// Shardy's op-priority schedule: the direction each kind of factor of `op` propagates in, in
// step 0 (pass-through ops, not into values with several uses), 1 (pass-through ops), 2 (and
// every op's pass-through factors), 3 (every op, a broadcast only backward) or kLastStep (every op).
inline constexpr int kLastStep = 4;
FactorDirs op_priority_dirs(const Op& op, int step);

class Propagator {
 public:
  // `previous`: the provenance of an earlier run on `g` (empty for the first).
  explicit Propagator(Graph& g, std::vector<Provenance> previous = {});
  Stats run(const Options& options);
  const std::vector<Provenance>& provenance() const { return provenance_; }
  std::vector<Provenance> take_provenance() { return std::move(provenance_); }

 private:
  void unify_groups();
  bool any_axes(int o) const;
  void fixed_point(bool aggressive, int threshold, int priority, int step);
  void on_change(int v, int op, Level level, int priority, int step);

  Graph& g_;
  Projection projection_;     // one op's, reused by every rule application
  std::vector<int> changed_;  // the values one rule application changed
  // The hot per-round scans read these compact arrays, not the ops and shardings (which lie
  // scattered on the heap: on a 100k-op program every such read was a cache miss).
  std::vector<int> adj_start_, adj_;  // CSR: the ops around each value
  std::vector<int> op_start_, op_values_;  // CSR: each op's tensor values (operands, then results)
  std::vector<uint8_t> has_axes_;     // per value: some dim holds axes (they only grow during a run)
  std::vector<int> user_values_;      // the values with a user-annotated dim or a priority, ascending
  std::vector<int> group_of_;         // per value: its sharding group or -1
  std::vector<Provenance> provenance_;
  std::vector<int> queue_;
  std::vector<uint8_t> queued_;
  std::vector<FactorDirs> dirs_;      // per op, in the current op-priority step
  // Skipping work across rounds: an op needs no visit in a round if, for the same strategy, it
  // was last visited with the same direction and priority and no value around it changed since.
  struct Visit {
    uint64_t stamp = 0;
    int64_t key = -1;
  };
  std::vector<Visit> visits_[2];      // per strategy (basic, aggressive), per op
  std::vector<uint64_t> changed_at_;  // per value: the clock of its last change
  uint64_t clock_ = 0;
  bool needs_visit(int o, bool aggressive, int64_t key) const;
  Stats stats_;
};

}  // namespace spmd::prop
