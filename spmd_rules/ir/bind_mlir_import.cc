// The hot loop of reading a parsed MLIR module into spmdkit.ir (ir/mlir_import.py, _Importer.block):
// one call per block walks its ops through jaxlib's MLIR bindings and makes the IR's Op and Value
// objects. Python stays the one definition of an op's import (_Importer.op): this loop takes the
// common case only, an op whose name, operand values, result types and attributes the importer
// has already seen (its caches hold them converted), and hands every other op to Python whole.
// It checks everything before it changes anything, so Python's path starts from the same state.
// The cost of an import is then MLIR's binding calls, not the interpreter around them.
#include <pybind11/pybind11.h>

#include "python_objects.h"

namespace py = pybind11;
using namespace pyobj;

namespace {

struct Names {
  PyObject *operation = interned("operation"), *name = interned("name"), *operands = interned("operands"),
           *results = interned("results"), *type = interned("type"), *attributes = interned("attributes"),
           *items = interned("items"), *regions = interned("regions"), *location = interned("location"),
           *attrs = interned("attrs"), *attr_types = interned("attr_types"), *parent = interned("parent"),
           *location_slot = interned("_location"), *sharding = interned("sharding"),
           *sdy_sharding = interned("sdy.sharding"), *owner = interned("owner"), *index = interned("index");
};

// The identity of an MLIR value: its C API pointer (from the `_CAPIPtr` capsule every binding
// object carries), as an int. The importer keys its values by it rather than by the binding
// objects, so that each of those is freed once read instead of kept for the whole import.
py::object value_key(PyObject* v) {
  static PyObject* capsule_name = interned("_CAPIPtr");
  py::object capsule = attr(v, capsule_name);
  void* ptr = PyCapsule_GetPointer(capsule.ptr(), PyCapsule_GetName(capsule.ptr()));
  if (!ptr) throw py::error_already_set();
  return steal(PyLong_FromVoidPtr(ptr));
}

// A cached attribute value, its lists copied (an op may change its own): mlir_import._fresh.
py::object fresh(PyObject* value) {
  if (!PyList_CheckExact(value)) return py::reinterpret_borrow<py::object>(value);
  const py::ssize_t n = PyList_GET_SIZE(value);
  py::object out = steal(PyList_New(n));
  for (py::ssize_t i = 0; i < n; ++i) PyList_SET_ITEM(out.ptr(), i, fresh(PyList_GET_ITEM(value, i)).release().ptr());
  return out;
}

// What the loop read of one op, before it makes anything.
struct Read {
  py::list operands;                 // IR values
  std::vector<py::object> results;   // (MLIR result's value_key, IR type) pairs, flattened
  py::object attrs = py::dict();     // key -> value, in the op's order
  py::object attr_types = py::dict();
  PyObject* shardings = nullptr;     // borrowed: the cached per-result shardings
  bool has_regions = false;
};

// Reads `operation` through the caches; false: the op is not the common case (Python imports it).
bool read_op(PyObject* operation, PyObject* name, py::tuple state, Read& r) {
  static const Names& n = *new Names();
  PyObject* values = state[0].ptr();
  PyObject* types = state[2].ptr();
  PyObject* cache = state[3].ptr();
  PyObject* regionless = state[4].ptr();
  PyObject* registered = state[5].ptr();
  PyObject* pins = state[8].ptr();
  PyObject* exact_key = state[9].ptr();

  py::object it = steal(PyObject_GetIter(attr(operation, n.operands).ptr()));
  while (PyObject* v = PyIter_Next(it.ptr())) {
    py::object held = steal(v);
    PyObject* value = lookup(values, value_key(v).ptr());
    if (!value) return false;  // defined elsewhere: Python reports it
    r.operands.append(py::reinterpret_borrow<py::object>(value));
  }
  if (PyErr_Occurred()) throw py::error_already_set();

  it = steal(PyObject_GetIter(attr(operation, n.results).ptr()));
  while (PyObject* res = PyIter_Next(it.ptr())) {
    py::object held = steal(res);
    PyObject* type = lookup(types, attr(res, n.type).ptr());
    if (!type) return false;  // a type not seen yet: Python converts and checks it
    r.results.push_back(value_key(res));
    r.results.push_back(py::reinterpret_borrow<py::object>(type));
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  const py::ssize_t n_results = static_cast<py::ssize_t>(r.results.size() / 2);

  py::object attributes = attr(operation, n.attributes);
  const py::ssize_t n_attrs = PyObject_Size(attributes.ptr());
  if (n_attrs < 0) throw py::error_already_set();
  if (n_attrs) {
    py::object items = steal(PyObject_CallMethodNoArgs(attributes.ptr(), n.items));
    py::object seq = steal(PySequence_Fast(items.ptr(), "attributes.items() must be a sequence"));
    const py::ssize_t count = PySequence_Fast_GET_SIZE(seq.ptr());
    PyObject** pairs = PySequence_Fast_ITEMS(seq.ptr());
    for (py::ssize_t i = 0; i < count; ++i) {
      PyObject* pair = pairs[i];
      if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) return false;
      PyObject* key = PyTuple_GET_ITEM(pair, 0);
      const int exact = PyObject_RichCompareBool(key, exact_key, Py_EQ);
      if (exact < 0) throw py::error_already_set();
      if (exact) return false;  // the printer's exact shardings: Python reads them
      PyObject* cached = lookup(cache, pair);  // keyed (key, ir.Attribute), as Python keys it
      if (!cached || !PyTuple_Check(cached)) return false;
      const int is_sharding = PyObject_RichCompareBool(key, n.sdy_sharding, Py_EQ);
      if (is_sharding < 0) throw py::error_already_set();
      if (is_sharding) {
        PyObject* shardings = PyTuple_GET_ITEM(cached, 0);
        if (!n_results || !PyList_Check(shardings) || PyList_GET_SIZE(shardings) != n_results) return false;
        r.shardings = shardings;
        continue;
      }
      if (PyTuple_GET_SIZE(cached) != 3) return false;
      PyObject* value = PyTuple_GET_ITEM(cached, 0);
      PyObject* pin = PyTuple_GET_ITEM(cached, 1);
      const int is_list = PyObject_IsTrue(PyTuple_GET_ITEM(cached, 2));
      if (is_list < 0) throw py::error_already_set();
      py::object copy = is_list ? fresh(value) : py::reinterpret_borrow<py::object>(value);
      if (PyDict_SetItem(r.attrs.ptr(), key, copy.ptr()) < 0) throw py::error_already_set();
      if (pin != Py_None) {  // pinned unless the op's default pin is the same (attributes.default_pin)
        py::object where = py::make_tuple(py::reinterpret_borrow<py::object>(name),
                                          py::reinterpret_borrow<py::object>(key));
        PyObject* default_pin = lookup(pins, where.ptr());
        const int same = default_pin ? PyObject_RichCompareBool(pin, default_pin, Py_EQ) : 0;
        if (same < 0) throw py::error_already_set();
        if (!same && PyDict_SetItem(r.attr_types.ptr(), key, pin) < 0) throw py::error_already_set();
      }
    }
  }

  const int known_regionless = PySet_Contains(regionless, name);
  if (known_regionless < 0) throw py::error_already_set();
  if (!known_regionless) {
    const py::ssize_t n_regions = PyObject_Size(attr(operation, n.regions).ptr());
    if (n_regions < 0) throw py::error_already_set();
    r.has_regions = n_regions > 0;  // their blocks: Python makes them (and calls back here for their ops)
    PyObject* fixed = lookup(registered, name);  // a registered op's definition fixes the count
    if (!n_regions && fixed && PyObject_IsTrue(fixed) == 1 && PySet_Add(regionless, name) < 0)
      throw py::error_already_set();
  }
  return true;
}

// Imports the MLIR ops of `operations` (an ir.Block's operations) into `block` (an ir Block): each
// op appended to block.ops with its parent set. Returns the last MLIR operation (None when none),
// whose successors Python checks.
//   state: (values, names, types, attribute cache, regionless, registered, Op, Value, the pins of
//           attributes.OP_ATTR_PINS, the exact-sharding key, _Importer.op, _Importer.regions): the
//           importer's own dicts, read and filled here as Python reads and fills them
py::object import_block_ops(py::object operations, py::object block, py::list ops, py::tuple state) {
  static const Names& n = *new Names();
  if (state.size() != 12) throw py::type_error("import_block_ops: state must be a 12-tuple");
  PyObject* values = state[0].ptr();
  PyObject* names = state[1].ptr();
  PyObject* op_class = state[6].ptr();
  PyObject* value_class = state[7].ptr();
  PyObject* fallback = state[10].ptr();
  PyObject* regions = state[11].ptr();
  for (int k : {0, 1, 2, 3, 5, 8})
    if (!PyDict_Check(state[k].ptr())) throw py::type_error("import_block_ops: the importer's caches must be dicts");
  if (!PySet_Check(state[4].ptr())) throw py::type_error("import_block_ops: regionless must be a set");
  if (!PyType_Check(op_class)) throw py::type_error("import_block_ops: Op must be a class");
  if (!PyType_Check(value_class)) throw py::type_error("import_block_ops: Value must be a class");
  auto* op_type = reinterpret_cast<PyTypeObject*>(op_class);
  auto* value_type = reinterpret_cast<PyTypeObject*>(value_class);
  static const py::tuple& empty = *new py::tuple();

  py::object last = py::none();
  py::object it = steal(PyObject_GetIter(operations.ptr()));
  while (PyObject* view = PyIter_Next(it.ptr())) {
    py::object held = steal(view);
    py::object operation = attr(view, n.operation);
    last = operation;
    py::object op;
    PyObject* name = lookup(names, attr(operation.ptr(), n.name).ptr());
    Read r;
    if (name && read_op(operation.ptr(), name, state, r)) {
      op = steal(op_type->tp_new(op_type, empty.ptr(), nullptr));  // Op's fields, set in its __init__'s order
      set(op.ptr(), n.name, name);
      set(op.ptr(), n.operands, r.operands.ptr());
      py::list results;
      set(op.ptr(), n.results, results.ptr());
      set(op.ptr(), n.attrs, r.attrs.ptr());
      set(op.ptr(), n.regions, py::list().ptr());
      set(op.ptr(), n.attr_types, r.attr_types.ptr());
      set(op.ptr(), n.parent, block.ptr());
      set(op.ptr(), n.location_slot, attr(operation.ptr(), n.location).ptr());  // read into text when asked
      for (size_t k = 0; k < r.results.size(); k += 2) {  // Value(type, op, index): its slots, set here
        py::object v = steal(value_type->tp_new(value_type, empty.ptr(), nullptr));
        set(v.ptr(), n.type, r.results[k + 1].ptr());
        set(v.ptr(), n.sharding, r.shardings ? PyList_GET_ITEM(r.shardings, k / 2) : Py_None);
        set(v.ptr(), n.owner, op.ptr());
        set(v.ptr(), n.index, py::int_(k / 2).ptr());
        set(v.ptr(), n.name, Py_None);
        if (PyDict_SetItem(values, r.results[k].ptr(), v.ptr()) < 0) throw py::error_already_set();
        results.append(v);
      }
      if (r.has_regions) steal(PyObject_CallFunctionObjArgs(regions, op.ptr(), operation.ptr(), nullptr));
    } else {
      op = steal(PyObject_CallOneArg(fallback, operation.ptr()));
      set(op.ptr(), n.parent, block.ptr());
    }
    ops.append(op);
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  return last;
}

}  // namespace

void spmdkit_bind_mlir_import(py::module_& m) {
  m.def("mlir_value_key", [](py::object v) { return value_key(v.ptr()); }, py::arg("value"),
        "An MLIR value's identity (its C API pointer) as an int: the key of ir.mlir_import's value table.");
  m.def("import_block_ops", &import_block_ops, py::arg("operations"), py::arg("block"), py::arg("ops"),
        py::arg("state"),
        "Imports an MLIR block's ops into an IR block (ir.mlir_import._Importer.block); returns the last MLIR op.");
}
