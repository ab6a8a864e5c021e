// The sharding of one value as propagation sees it (Shardy's TensorShardingAttr in compact form):
// per dim an axis list major->minor (whole axes or sub-axes), open or closed, a user priority, and
// the annotation it came from; plus explicitly replicated axes. Axes are indices into a mesh.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "small_vector.h"

namespace spmd::prop {

// A whole mesh axis (pre = 1, size = the axis size) or Shardy's sub-axis "name":(pre)size: the
// size-`size` slice of the axis that starts after `pre` devices' worth of it.
struct AxisRef {
  int32_t axis = 0;
  int32_t pre = 1;
  int32_t size = 1;
  bool operator==(const AxisRef& o) const { return axis == o.axis && pre == o.pre && size == o.size; }
  bool operator!=(const AxisRef& o) const { return !(*this == o); }
  // Two refs of one axis can be used together only if one lies wholly after the other in the
  // same decomposition of the axis: "x":(1)2 with "x":(2)2, not "x":(1)2 with "x":(3)2 on x=6.
  bool overlaps(const AxisRef& o) const {
    if (axis != o.axis) return false;
    const bool before = pre * size <= o.pre && o.pre % (pre * size) == 0;
    const bool after = o.pre * o.size <= pre && pre % (o.pre * o.size) == 0;
    return !before && !after;
  }
  // The largest major part of `this` that can be used together with `o` (size 1: none).
  int32_t free_prefix_before(const AxisRef& o) const {
    if (!overlaps(o)) return size;
    if (o.pre > pre && o.pre % pre == 0 && size % (o.pre / pre) == 0) return o.pre / pre;
    return 1;
  }
  // `this` is the major part of `o` (same start, smaller or equal size): "x":(1)2 of "x".
  bool is_prefix_of(const AxisRef& o) const { return axis == o.axis && pre == o.pre && size <= o.size && o.size % size == 0; }
};
// Inline storage: propagation builds and copies these lists on every rule application. A dim
// (or a factor) may hold at most kMaxAxes axis pieces; more is a ValueError.
inline constexpr std::size_t kMaxAxes = 16;
using AxisList = SmallVec<AxisRef, kMaxAxes>;

// An axis list as a value's sharding stores it: two axes in place (most dims hold 0-2; a dim is
// then 48 bytes), more (up to kMaxAxes) on the heap. Every value of a program holds one per dim;
// an AxisList (kMaxAxes inline, 216-byte dims) there made a 100k-op program's shardings ~90 MB,
// and each rule application a string of cache misses.
class StoredAxes {
 public:
  static constexpr std::size_t kInline = 2;
  StoredAxes() {}
  StoredAxes(const AxisList& l) { assign(l.begin(), l.size()); }  // NOLINT: an AxisList converts
  StoredAxes(const StoredAxes& o) { assign(o.begin(), o.size_); }
  StoredAxes(StoredAxes&& o) noexcept { take(o); }
  StoredAxes& operator=(const StoredAxes& o) {
    if (this != &o) assign(o.begin(), o.size_);
    return *this;
  }
  StoredAxes& operator=(StoredAxes&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  StoredAxes& operator=(const AxisList& l) {
    assign(l.begin(), l.size());
    return *this;
  }
  ~StoredAxes() { release(); }
  operator AxisList() const { return AxisList(begin(), end()); }  // NOLINT: for the AxisList algorithms

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const AxisRef& operator[](std::size_t i) const { return begin()[i]; }
  const AxisRef& back() const { return begin()[size_ - 1]; }
  const AxisRef* begin() const { return heap_ ? u_.heap : std::launder(reinterpret_cast<const AxisRef*>(u_.inline_)); }
  const AxisRef* end() const { return begin() + size_; }
  void push_back(const AxisRef& a) {
    AxisList l = *this;
    l.push_back(a);  // the kMaxAxes limit
    assign(l.begin(), l.size());
  }
  void clear() { assign(nullptr, 0); }

  friend bool operator==(const StoredAxes& a, const StoredAxes& b) { return same(a, b.begin(), b.size()); }
  friend bool operator==(const StoredAxes& a, const AxisList& b) { return same(a, b.begin(), b.size()); }
  friend bool operator==(const AxisList& a, const StoredAxes& b) { return same(b, a.begin(), a.size()); }
  friend bool operator!=(const StoredAxes& a, const StoredAxes& b) { return !(a == b); }
  friend bool operator!=(const StoredAxes& a, const AxisList& b) { return !(a == b); }
  friend bool operator!=(const AxisList& a, const StoredAxes& b) { return !(a == b); }

 private:
  static bool same(const StoredAxes& a, const AxisRef* b, std::size_t n) {
    return a.size_ == n && std::equal(a.begin(), a.end(), b);
  }
  AxisRef* data() { return heap_ ? u_.heap : std::launder(reinterpret_cast<AxisRef*>(u_.inline_)); }
  void assign(const AxisRef* src, std::size_t n) {
    if (n > kMaxAxes) throw std::length_error("spmdkit: more than " + std::to_string(kMaxAxes) + " axes");
    if (n > kInline && !heap_) {
      u_.heap = static_cast<AxisRef*>(::operator new(kMaxAxes * sizeof(AxisRef)));
      heap_ = true;
    } else if (n <= kInline && heap_) {
      AxisList keep(src, src + n);  // src may be our own heap
      release();
      return assign(keep.begin(), keep.size());
    }
    if (n) std::memmove(static_cast<void*>(data()), src, n * sizeof(AxisRef));
    size_ = static_cast<uint8_t>(n);
  }
  void release() {
    if (heap_) ::operator delete(u_.heap);
    heap_ = false;
    size_ = 0;
  }
  void take(StoredAxes& o) {
    std::memcpy(static_cast<void*>(&u_), &o.u_, sizeof(u_));
    size_ = o.size_;
    heap_ = o.heap_;
    o.heap_ = false;
    o.size_ = 0;
  }
  // the count first: reading an empty list (most replicated lists) touches only its first bytes
  uint8_t size_ = 0;
  bool heap_ = false;
  union Storage {
    alignas(AxisRef) unsigned char inline_[kInline * sizeof(AxisRef)];
    AxisRef* heap;
  } u_;
};
static_assert(std::is_trivially_copyable<AxisRef>::value, "StoredAxes copies AxisRefs as bytes");

inline constexpr int kNoPriority = -1;  // a dim the user did not give a priority: p0
inline constexpr int kNoOrigin = -1;

struct DimSharding {
  StoredAxes axes;
  bool closed = false;
  bool user = false;           // set by a user annotation (never overridden by propagation)
  int priority = kNoPriority;  // only meaningful on user-annotated dims
  int origin = kNoOrigin;      // the value whose annotation these axes came from
};

struct TensorSharding {
  int mesh = -1;  // -1: not yet on a mesh (adopts the mesh of the op that first shards it)
  std::vector<DimSharding> dims;
  StoredAxes replicated;  // explicitly replicated: never used by propagation
};
// A rule application reads mesh, dims and the replicated count of each tensor: one cache line.
static_assert(offsetof(TensorSharding, replicated) + 2 <= 64, "TensorSharding's hot fields fit one cache line");

struct Mesh {
  std::string name;
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
};

// Appends `a` to `list`, merging it with the previous ref when both are consecutive pieces of
// the same axis ("x":(1)2 then "x":(2)2 -> "x":(1)4, the whole axis when it covers it).
void append_merged(AxisList& list, const AxisRef& a, int64_t axis_size);
int64_t product(const AxisList& list);
bool uses_overlapping(const AxisList& list, const AxisRef& a);
std::string axis_to_string(const Mesh& mesh, const AxisRef& a);

}  // namespace spmd::prop
