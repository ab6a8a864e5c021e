// pybind11 surface of the propagation engine: spmdkit._core.PropagationGraph, a builder the
// Python package (spmdkit.propagation) wraps. Plain tuples and lists cross the boundary.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <limits>
#include <map>

#include "errors.h"
#include "projection.h"
#include "propagator.h"

namespace py = pybind11;
using namespace spmd;
using namespace spmd::prop;

namespace {

using AxisTuple = std::tuple<int, int64_t, int64_t>;                    // (axis, pre, size)
using DimTuple = std::tuple<std::vector<AxisTuple>, bool, int, bool>;  // (axes, closed, priority, user)

AxisList to_axes(const std::vector<AxisTuple>& in) {
  AxisList out;
  for (const auto& [axis, pre, size] : in) {
    if (pre < 1 || size < 1 || pre > INT32_MAX || size > INT32_MAX)
      throw ValueError("axis " + std::to_string(axis) + ": sub-axis (" + std::to_string(pre) + ")" + std::to_string(size) +
                       " is out of range");
    if (out.size() == kMaxAxes) throw ValueError("a dim may hold at most " + std::to_string(kMaxAxes) + " axes");
    out.push_back({axis, static_cast<int32_t>(pre), static_cast<int32_t>(size)});
  }
  return out;
}

std::vector<AxisTuple> from_axes(const AxisList& in) {
  std::vector<AxisTuple> out;
  for (const AxisRef& a : in) out.emplace_back(a.axis, a.pre, a.size);
  return out;
}

FactorTable::Kind to_kind(const std::string& s) {
  if (s == "pass_through") return FactorTable::Kind::kPassThrough;
  if (s == "reduction") return FactorTable::Kind::kReduction;
  if (s == "need_replication") return FactorTable::Kind::kNeedReplication;
  if (s == "permutation") return FactorTable::Kind::kPermutation;
  throw ValueError("factor kind '" + s + "' is not one of pass_through, reduction, need_replication, permutation");
}

const char* level_name(Level l) {
  switch (l) {
    case Level::kUser: return "user";
    case Level::kBasic: return "basic";
    case Level::kAggressive: return "aggressive";
    case Level::kGroup: return "group";
    default: return "none";
  }
}

// Readers for the batch calls (add_values, add_ops): a program's values and ops cross as lists
// of int lists, one per value or op; pybind11's generic list casters cost about as much as the
// propagation itself on a 100k-op program, so these read the Python lists directly.
class FastSeq {
 public:
  FastSeq(py::handle obj, const char* what) : what_(what) {
    seq_ = PySequence_Fast(obj.ptr(), "");
    if (!seq_) {
      PyErr_Clear();
      throw TypeError(std::string(what) + " must be a list");
    }
  }
  ~FastSeq() { Py_DECREF(seq_); }
  FastSeq(const FastSeq&) = delete;
  FastSeq& operator=(const FastSeq&) = delete;
  std::size_t size() const { return static_cast<std::size_t>(PySequence_Fast_GET_SIZE(seq_)); }
  PyObject* operator[](std::size_t i) const { return PySequence_Fast_GET_ITEM(seq_, static_cast<Py_ssize_t>(i)); }
  int64_t int_at(std::size_t i) const {
    PyObject* o = (*this)[i];
    if (!PyLong_Check(o)) throw TypeError(std::string(what_) + ": entry " + std::to_string(i) + " is not an int");
    const long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw ValueError(std::string(what_) + ": entry " + std::to_string(i) + " does not fit in 64 bits");
    }
    return v;
  }
  template <typename Int>
  std::vector<Int> ints() const {
    std::vector<Int> out(size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const int64_t v = int_at(i);
      if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max())
        throw ValueError(std::string(what_) + ": entry " + std::to_string(i) + " is out of range");
      out[i] = static_cast<Int>(v);
    }
    return out;
  }
  std::string str_at(std::size_t i) const {
    PyObject* o = (*this)[i];
    Py_ssize_t n = 0;
    const char* c = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &n) : nullptr;
    if (!c) {
      PyErr_Clear();
      throw TypeError(std::string(what_) + ": entry " + std::to_string(i) + " is not a str");
    }
    return std::string(c, static_cast<std::size_t>(n));
  }

 private:
  PyObject* seq_;
  const char* what_;
};

struct PyGraph {
  Graph g;
  std::vector<Provenance> provenance;
  Stats stats;

  int check_value(int v) const {
    if (v < 0 || v >= g.num_values()) throw ValueError("no value with id " + std::to_string(v));
    return v;
  }
  TensorSharding make_sharding(int mesh, const std::vector<DimTuple>& dims, const std::vector<AxisTuple>& replicated) {
    TensorSharding s;
    s.mesh = mesh;
    for (const auto& [axes, closed, priority, user] : dims) {
      DimSharding d;
      d.axes = to_axes(axes);
      d.closed = closed;
      d.priority = priority;
      d.user = user;
      s.dims.push_back(std::move(d));
    }
    s.replicated = to_axes(replicated);
    return s;
  }
};

}  // namespace

void spmdkit_bind_propagation(py::module_& m) {
  py::class_<PyGraph>(m, "PropagationGraph")
      .def(py::init<>())
      .def("add_mesh",
           [](PyGraph& self, const std::string& name, const std::vector<std::string>& names, const std::vector<int64_t>& sizes) {
             if (names.size() != sizes.size()) throw ValueError("mesh '" + name + "': axis names and sizes differ in length");
             self.g.meshes.push_back({name, names, sizes});
             return static_cast<int>(self.g.meshes.size()) - 1;
           })
      .def("add_table",
           [](PyGraph& self, std::vector<FactorTable::TensorFactors> operands, std::vector<FactorTable::TensorFactors> results,
              std::vector<int64_t> sizes, const std::vector<std::string>& kinds, const std::vector<bool>& blocked) {
             FactorTable t;
             t.operands = std::move(operands);
             t.results = std::move(results);
             t.sizes = std::move(sizes);
             if (kinds.size() != t.sizes.size() || blocked.size() != t.sizes.size())
               throw ValueError("factor table: kinds and blocked need one entry per factor");
             for (const auto& k : kinds) t.kinds.push_back(to_kind(k));
             t.blocked = blocked;
             self.g.tables.push_back(std::move(t));
             return static_cast<int>(self.g.tables.size()) - 1;
           })
      .def("table_string", [](const PyGraph& self, int t) { return self.g.tables.at(t).to_string(); })
      .def("add_value",
           [](PyGraph& self, const std::string& name, const std::vector<int64_t>& shape, int mesh, const std::vector<DimTuple>& dims,
              const std::vector<AxisTuple>& replicated) {
             self.g.names.push_back(name);
             self.g.shapes.push_back(shape);
             TensorSharding s = self.make_sharding(mesh, dims, replicated);
             if (s.dims.empty()) s.dims.resize(shape.size());
             self.g.shardings.push_back(std::move(s));
             return self.g.num_values() - 1;
           })
      .def("set_sharding",
           [](PyGraph& self, int v, int mesh, const std::vector<DimTuple>& dims, const std::vector<AxisTuple>& replicated) {
             self.g.shardings[self.check_value(v)] = self.make_sharding(mesh, dims, replicated);
           })
      .def("add_op",
           [](PyGraph& self, const std::string& name, int table, std::vector<int> operands, std::vector<int> results, bool pass_through,
              int allowed, uint64_t manual_axes, uint64_t inner_tensors) {
             if (allowed < 0 || allowed > 3) throw ValueError("op '" + name + "': allowed direction must be 0..3");
             Op op;
             op.name = name;
             op.table = table;
             op.operands = std::move(operands);
             op.results = std::move(results);
             op.pass_through = pass_through;
             op.allowed = static_cast<Direction>(allowed);
             op.manual_axes = manual_axes;
             op.inner_tensors = inner_tensors;
             self.g.ops.push_back(std::move(op));
             return static_cast<int>(self.g.ops.size()) - 1;
           })
      // Batch forms of add_value / add_op: one call per program instead of one per value or op.
      .def("add_values",
           [](PyGraph& self, py::handle names_in, py::handle shapes_in, py::handle meshes_in) {
             // An empty name: an unnamed value, which the engine calls v<id>.
             const FastSeq names(names_in, "add_values names"), shapes(shapes_in, "add_values shapes"),
                 meshes(meshes_in, "add_values meshes");
             const std::size_t n = shapes.size();
             if (names.size() != n || meshes.size() != n) throw ValueError("add_values: names, shapes and meshes differ in length");
             const int first = self.g.num_values();
             self.g.names.reserve(first + n);
             self.g.shapes.reserve(first + n);
             self.g.shardings.reserve(first + n);
             auto roll_back = [&] {  // a bad entry adds nothing
               self.g.names.resize(first);
               self.g.shapes.resize(first);
               self.g.shardings.resize(first);
             };
             try {
               for (std::size_t i = 0; i < n; ++i) {
                 std::string name = names.str_at(i);
                 if (name.empty()) name = "v" + std::to_string(first + i);
                 std::vector<int64_t> shape = FastSeq(shapes[i], "add_values shape").ints<int64_t>();
                 const int64_t mesh = meshes.int_at(i);
                 if (mesh < INT_MIN || mesh > INT_MAX) throw ValueError("add_values: mesh id " + std::to_string(mesh) + " is out of range");
                 TensorSharding s;
                 s.mesh = static_cast<int>(mesh);
                 s.dims.resize(shape.size());
                 self.g.names.push_back(std::move(name));
                 self.g.shapes.push_back(std::move(shape));
                 self.g.shardings.push_back(std::move(s));
               }
             } catch (...) {
               roll_back();
               throw;
             }
             return first;
           })
      .def("add_ops",
           [](PyGraph& self, py::handle names_in, py::handle tables_in, py::handle operands_in, py::handle results_in,
              py::handle flags_in) {
             // flags per op: bit 0 pass-through, bits 1-2 the allowed direction (0..3)
             const FastSeq names(names_in, "add_ops names"), tables(tables_in, "add_ops tables"),
                 operands(operands_in, "add_ops operands"), results(results_in, "add_ops results"), flags(flags_in, "add_ops flags");
             const std::size_t n = names.size();
             if (tables.size() != n || operands.size() != n || results.size() != n || flags.size() != n)
               throw ValueError("add_ops: names, tables, operands, results and flags differ in length");
             const std::vector<int> table_ids = tables.ints<int>(), flag_bits = flags.ints<int>();
             const std::size_t first = self.g.ops.size();
             self.g.ops.reserve(first + n);
             try {
               for (std::size_t i = 0; i < n; ++i) {
                 Op op;
                 op.name = names.str_at(i);
                 op.table = table_ids[i];
                 op.operands = FastSeq(operands[i], "add_ops operands").ints<int>();
                 op.results = FastSeq(results[i], "add_ops results").ints<int>();
                 op.pass_through = flag_bits[i] & 1;
                 op.allowed = static_cast<Direction>((flag_bits[i] >> 1) & 3);
                 self.g.ops.push_back(std::move(op));
               }
             } catch (...) {
               self.g.ops.resize(first);  // a bad entry adds nothing
               throw;
             }
             self.g.check_new_ops();
           })
      .def("export_shardings",
           [](const PyGraph& self) {
             // Every value's sharding at once, deduplicated: (per value the index of its sharding
             // in `distinct`, -1 for a value on no mesh; distinct shardings as (mesh, dims,
             // replicated, has_axes) with dims (axes, closed, priority) and axes (axis, pre, size)).
             std::map<std::vector<int64_t>, int> seen;
             std::vector<int> ids(self.g.num_values(), -1);
             py::list distinct;
             std::vector<int64_t> key;
             for (int v = 0; v < self.g.num_values(); ++v) {
               const TensorSharding& s = self.g.shardings[v];
               if (s.mesh < 0) continue;
               key.clear();
               key.push_back(s.mesh);
               for (const DimSharding& d : s.dims) {
                 key.push_back(static_cast<int64_t>(d.axes.size()) << 32 | (d.closed ? 1 : 0));
                 key.push_back(d.priority);
                 for (const AxisRef& a : d.axes) key.insert(key.end(), {a.axis, a.pre, a.size});
               }
               key.push_back(-2);
               for (const AxisRef& a : s.replicated) key.insert(key.end(), {a.axis, a.pre, a.size});
               auto [it, fresh] = seen.emplace(key, static_cast<int>(seen.size()));
               ids[v] = it->second;
               if (!fresh) continue;
               py::list dims;
               bool has_axes = false;
               for (const DimSharding& d : s.dims) {
                 has_axes = has_axes || !d.axes.empty();
                 dims.append(py::make_tuple(from_axes(d.axes), d.closed, d.priority));
               }
               distinct.append(py::make_tuple(s.mesh, dims, from_axes(s.replicated), has_axes));
             }
             return py::make_tuple(ids, distinct);
           })
      .def("add_group", [](PyGraph& self, const std::vector<int>& values) { self.g.groups.push_back(values); })
      .def("validate", [](const PyGraph& self) { self.g.validate(); })
      .def(
          "propagate",
          [](PyGraph& self, bool aggressive, bool op_priority, bool user_priority) {
            Stats st;
            {
              py::gil_scoped_release release;
              Propagator prop(self.g, self.provenance);
              st = prop.run({aggressive, op_priority, user_priority});
              self.provenance = prop.take_provenance();
            }
            self.stats = st;
            return py::dict(py::arg("op_visits") = st.op_visits, py::arg("updates") = st.updates, py::arg("rounds") = st.rounds);
          },
          py::arg("aggressive") = true, py::arg("op_priority") = true, py::arg("user_priority") = true)
      .def("num_values", [](const PyGraph& self) { return self.g.num_values(); })
      .def("num_ops", [](const PyGraph& self) { return self.g.ops.size(); })
      .def("sharding",
           [](const PyGraph& self, int v) {
             const TensorSharding& s = self.g.shardings[self.check_value(v)];
             py::list dims;
             for (const DimSharding& d : s.dims)
               dims.append(py::make_tuple(from_axes(d.axes), d.closed, d.priority, d.user, d.origin));
             return py::make_tuple(s.mesh, dims, from_axes(s.replicated));
           })
      .def("sharding_string", [](const PyGraph& self, int v) { return self.g.sharding_to_string(self.check_value(v)); })
      .def("op_projection",
           [](const PyGraph& self, int o) -> py::tuple {
             // The op's tensors projected onto its factors, as the engine sees them now: per
             // tensor, per factor, the axes (or None where the tensor lacks the factor).
             if (o < 0 || o >= static_cast<int>(self.g.ops.size())) throw ValueError("no op with id " + std::to_string(o));
             Projection p;
             if (!project(self.g, self.g.ops[o], INT_MAX, kAllBoth, p)) return py::make_tuple(-1, py::list());
             py::list tensors;
             for (int t = 0; t < p.num_tensors; ++t) {
               py::list factors;
               for (int f = 0; f < p.num_factors; ++f) {
                 const FactorSlot& s = p.at(t, f);
                 if (s.present) factors.append(from_axes(s.axes));
                 else factors.append(py::none());
               }
               tensors.append(factors);
             }
             return py::make_tuple(static_cast<int>(p.mesh), py::list(tensors));
           })
      .def("provenance", [](const PyGraph& self, int v) {
        self.check_value(v);
        Provenance p = v < static_cast<int>(self.provenance.size()) ? self.provenance[v] : Provenance{};
        return py::dict(py::arg("op") = p.op, py::arg("level") = level_name(p.level), py::arg("user_priority") = p.user_priority,
                        py::arg("op_priority_step") = p.op_priority_step, py::arg("group") = p.group);
      });
}
