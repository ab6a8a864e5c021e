// The scan behind the partitioner's elementwise regions (partition/regions.py, Regions): one pass
// over a block, in order, that finds
//   - which ops are elementwise (pm.elementwise by signature number; Python decides a new one),
//     each joined to the region of every elementwise producer of a non-scalar operand;
//   - users: id(value) -> [(op, operand index)], for the values elementwise ops produce and the
//     values it starts with (the function's results);
//   - uses: id(value) -> how many operands read it, nested regions included.
//   - the ops partitioner.check_function must look at (with `calls` and `opaque`): those with
//     regions, those named in `calls`, those with a result of type `opaque`; it passes the rest.
// Regions.__init__ makes the regions of what this finds; the loop is in C++ because it visits
// every operand of every op of a step. The groups come back as lists of ops, in the order of each
// group's first op.
#include <pybind11/pybind11.h>

#include <unordered_map>
#include <vector>

#include "python_objects.h"

namespace py = pybind11;
using namespace pyobj;

namespace {

struct Names {
  PyObject *operands = interned("operands"), *results = interned("results"), *regions = interned("regions"),
           *type = interned("type"), *shape = interned("shape"), *name = interned("name");
};

int find(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

// ops: the block's ops; signatures: pm.signatures (id(op) -> number, every op signed);
// elementwise: pm.elementwise (number -> bool); is_elementwise(op): Python's test, for a signature
// not known yet (and ops without one); nested_uses(op, uses): counts the reads inside an op's
// regions; users: the dict to fill, holding already the values whose readers are wanted; calls,
// opaque: call op names and the opaque value type (None: no ops listed for the check).
// Returns (uses, groups, checked): the operand counts, each region's ops, the ops to check.
py::tuple scan_regions(py::list ops, py::dict signatures, py::dict elementwise, py::object is_elementwise,
                       py::object nested_uses, py::dict users, py::object calls, py::object opaque) {
  static const Names& n = *new Names();
  const bool listing = !calls.is_none();
  if (listing && !PyType_Check(opaque.ptr())) throw py::type_error("scan_regions: opaque must be a type");
  auto* opaque_type = listing ? reinterpret_cast<PyTypeObject*>(opaque.ptr()) : nullptr;
  py::list checked;
  py::dict uses;
  std::unordered_map<PyObject*, int> producer;  // an elementwise op's result -> the op's index in `members`
  std::vector<int> parent;
  std::vector<PyObject*> members;  // the elementwise ops, in order (borrowed: `ops` holds them)
  const py::ssize_t count = PyList_GET_SIZE(ops.ptr());
  for (py::ssize_t i = 0; i < count; ++i) {
    PyObject* op = PyList_GET_ITEM(ops.ptr(), i);
    PyObject* sig = lookup(signatures.ptr(), id_of(op).ptr());
    PyObject* known = sig ? lookup(elementwise.ptr(), sig) : nullptr;  // none under -1 (no signature)
    py::object asked;
    if (!known) {
      asked = steal(PyObject_CallOneArg(is_elementwise.ptr(), op));
      known = asked.ptr();
    }
    const int truth = PyObject_IsTrue(known);
    if (truth < 0) throw py::error_already_set();
    const bool is_ew = truth;
    int me = -1;
    if (is_ew) {
      me = static_cast<int>(members.size());
      members.push_back(op);
      parent.push_back(me);
    }
    py::object operands = attr(op, n.operands);
    py::object seq = steal(PySequence_Fast(operands.ptr(), "operands must be a list"));
    const py::ssize_t n_in = PySequence_Fast_GET_SIZE(seq.ptr());
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    for (py::ssize_t k = 0; k < n_in; ++k) {
      PyObject* v = items[k];
      py::object key = id_of(v);
      PyObject* had = lookup(uses.ptr(), key.ptr());
      py::int_ total(had ? PyLong_AsLong(had) + 1 : 1);
      if (PyDict_SetItem(uses.ptr(), key.ptr(), total.ptr()) < 0) throw py::error_already_set();
      PyObject* readers = lookup(users.ptr(), key.ptr());
      if (!readers) continue;
      py::object reader = py::make_tuple(py::reinterpret_borrow<py::object>(op), py::int_(k));
      if (PyList_Append(readers, reader.ptr()) < 0) throw py::error_already_set();
      if (!is_ew) continue;
      auto made = producer.find(v);
      if (made == producer.end()) continue;
      const py::ssize_t rank = PyObject_Size(attr(attr(v, n.type).ptr(), n.shape).ptr());
      if (rank < 0) throw py::error_already_set();
      if (rank > 0) parent[find(parent, me)] = find(parent, made->second);
    }
    const int nested = PyObject_IsTrue(attr(op, n.regions).ptr());
    if (nested < 0) throw py::error_already_set();
    if (nested) steal(PyObject_CallFunctionObjArgs(nested_uses.ptr(), op, uses.ptr(), nullptr));
    if (!is_ew && !listing) continue;
    py::object results = attr(op, n.results);
    py::object rs = steal(PySequence_Fast(results.ptr(), "results must be a list"));
    const py::ssize_t n_out = PySequence_Fast_GET_SIZE(rs.ptr());
    if (listing) {
      bool suspect = nested || contains(calls.ptr(), attr(op, n.name).ptr());
      for (py::ssize_t k = 0; k < n_out && !suspect; ++k)
        suspect = PyObject_TypeCheck(attr(PySequence_Fast_ITEMS(rs.ptr())[k], n.type).ptr(), opaque_type);
      if (suspect && PyList_Append(checked.ptr(), op) < 0) throw py::error_already_set();
    }
    if (is_ew) {
      for (py::ssize_t k = 0; k < n_out; ++k) {
        PyObject* r = PySequence_Fast_ITEMS(rs.ptr())[k];
        producer[r] = me;  // the ops list keeps its results alive: the pointer stays theirs
        py::object key = id_of(r);
        if (!lookup(users.ptr(), key.ptr())) {
          py::list none;
          if (PyDict_SetItem(users.ptr(), key.ptr(), none.ptr()) < 0) throw py::error_already_set();
        }
      }
    }
  }
  // each group's ops in order, groups in the order of their first op (as a dict of roots lists them)
  std::unordered_map<int, size_t> group_of;
  py::list groups;
  for (size_t m = 0; m < members.size(); ++m) {
    const int root = find(parent, static_cast<int>(m));
    auto [at, fresh] = group_of.try_emplace(root, PyList_GET_SIZE(groups.ptr()));
    if (fresh) groups.append(py::list());
    PyObject* group = PyList_GET_ITEM(groups.ptr(), static_cast<py::ssize_t>(at->second));
    if (PyList_Append(group, members[m]) < 0) throw py::error_already_set();
  }
  return py::make_tuple(uses, groups, checked);
}

}  // namespace

void spmdkit_bind_region_scan(py::module_& m) {
  m.def("scan_regions", &scan_regions, py::arg("ops"), py::arg("signatures"), py::arg("elementwise"),
        py::arg("is_elementwise"), py::arg("nested_uses"), py::arg("users"), py::arg("calls") = py::none(),
        py::arg("opaque") = py::none(),
        "The partitioner's scan of a block for elementwise regions (partition.regions.Regions): "
        "(uses, groups, ops to check), filling `users`.");
}
