// The signature of an IR op (spmdkit.ir.core.op_signature): its name, its operand and result
// types, its attributes as a key. Ops of one signature share a factor table (the propagation
// graph's build) and every answer a rule gives about them (the partitioner's memos); every op of a
// block is numbered here in one call (ir.signatures.OpSignatures, which propagation hands on to
// the partition). The Python definition stays the reference: an attribute value other than a list
// or tuple of atoms is keyed by ir.core.frozen_attr.
#include <pybind11/pybind11.h>

#include "python_objects.h"

namespace py = pybind11;
using namespace pyobj;

namespace spmdkit_signature {

namespace {

bool is_atom(PyObject* v) {
  return PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None;
}

// A list or tuple of atoms, and lists or tuples of those to any depth, as nested tuples (what
// frozen_attr makes of them); false when it holds anything else, for Python's frozen_attr.
bool frozen_lists(PyObject* v, py::object& out) {
  if (is_atom(v)) {
    out = py::reinterpret_borrow<py::object>(v);
    return true;
  }
  if (!PyList_CheckExact(v) && !PyTuple_CheckExact(v)) return false;
  const py::ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  bool atoms = true;
  for (py::ssize_t i = 0; i < n && atoms; ++i) atoms = is_atom(items[i]);
  if (atoms) {
    out = PyTuple_CheckExact(v) ? py::reinterpret_borrow<py::object>(v)
                                : py::reinterpret_steal<py::object>(PyList_AsTuple(v));
    if (!out) throw py::error_already_set();
    return true;
  }
  py::tuple t(n);  // nested lists (a dot's dimension numbers, a pad's pairs)
  for (py::ssize_t i = 0; i < n; ++i) {
    py::object item;
    if (!frozen_lists(items[i], item)) return false;
    t[i] = item;
  }
  out = std::move(t);
  return true;
}

// frozen_attr(value): lists, tuples and atoms here; anything else is Python's frozen_attr (dicts,
// arrays, objects)
py::object frozen(PyObject* v, PyObject* frozen_attr) {
  py::object out;
  if (frozen_lists(v, out)) return out;
  PyObject* r = PyObject_CallOneArg(frozen_attr, v);
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

// The attributes' part of the signature (ir.core.attrs_key) of a non-empty dict.
py::object attrs_key(PyObject* attrs, PyObject* frozen_attr) {
  const py::ssize_t n = PyDict_GET_SIZE(attrs);
  py::tuple out(n);
  PyObject *key, *value;
  py::ssize_t pos = 0, i = 0;
  while (PyDict_Next(attrs, &pos, &key, &value)) {
    out[i++] = py::make_tuple(py::reinterpret_borrow<py::object>(key), frozen(value, frozen_attr));
  }
  return std::move(out);
}

}  // namespace

py::object op_signature(PyObject* name, PyObject* operands, PyObject* results, PyObject* attrs,
                        PyObject* frozen_attr) {
  static PyObject* s_type = interned("type");
  if (!PyDict_Check(attrs)) throw py::type_error("op attrs must be a dict");
  py::tuple types[2];
  PyObject* values[2] = {operands, results};
  for (int side = 0; side < 2; ++side) {
    py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(values[side], "operands must be a list"));
    if (!seq) throw py::error_already_set();
    const py::ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    types[side] = py::tuple(n);
    for (py::ssize_t k = 0; k < n; ++k) types[side][k] = attr(items[k], s_type);
  }
  py::object part = PyDict_GET_SIZE(attrs) ? attrs_key(attrs, frozen_attr) : py::object(py::tuple());
  return py::make_tuple(py::reinterpret_borrow<py::object>(name), types[0], types[1], part);
}

py::object op_signature(PyObject* op, PyObject* frozen_attr) {
  static PyObject* s_name = interned("name");
  static PyObject* s_operands = interned("operands");
  static PyObject* s_results = interned("results");
  static PyObject* s_attrs = interned("attrs");
  py::object name = attr(op, s_name), operands = attr(op, s_operands), results = attr(op, s_results),
             attrs = attr(op, s_attrs);
  return op_signature(name.ptr(), operands.ptr(), results.ptr(), attrs.ptr(), frozen_attr);
}

}  // namespace spmdkit_signature

namespace {

// The number of each op's signature in `numbers` (signature -> number, new ones added as
// len(numbers)); -1 for an op whose attributes cannot be keyed (op_signature's TypeError). With
// `by_op` (id(op) -> number): an op already there keeps its number, and each new one is added.
py::list signature_numbers(py::list ops, py::dict numbers, py::object frozen_attr, py::object by_op) {
  const py::ssize_t n = PyList_GET_SIZE(ops.ptr());
  const bool memo = !by_op.is_none();
  if (memo && !PyDict_Check(by_op.ptr())) throw py::type_error("signature_numbers: by_op must be a dict");
  py::list out(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    PyObject* op = PyList_GET_ITEM(ops.ptr(), i);
    py::object op_id;
    if (memo) {
      op_id = py::reinterpret_steal<py::object>(PyLong_FromVoidPtr(op));
      PyObject* known = PyDict_GetItemWithError(by_op.ptr(), op_id.ptr());
      if (known) {
        out[i] = py::reinterpret_borrow<py::object>(known);
        continue;
      }
      if (PyErr_Occurred()) throw py::error_already_set();
    }
    long number = -1;
    try {
      py::object key = spmdkit_signature::op_signature(op, frozen_attr.ptr());
      PyObject* hit = PyDict_GetItemWithError(numbers.ptr(), key.ptr());
      if (hit) {
        number = PyLong_AsLong(hit);
      } else if (!PyErr_Occurred()) {
        number = static_cast<long>(PyDict_GET_SIZE(numbers.ptr()));
        py::int_ value(number);
        if (PyDict_SetItem(numbers.ptr(), key.ptr(), value.ptr()) < 0) throw py::error_already_set();
      } else {
        throw py::error_already_set();
      }
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      number = -1;  // an attribute that cannot be keyed
    }
    out[i] = py::int_(number);
    if (memo && PyDict_SetItem(by_op.ptr(), op_id.ptr(), out[i].ptr()) < 0) throw py::error_already_set();
  }
  return out;
}

}  // namespace

void spmdkit_bind_op_signature(py::module_& m) {
  m.def("op_signature", [](py::object op, py::object frozen_attr) {
          return spmdkit_signature::op_signature(op.ptr(), frozen_attr.ptr());
        }, py::arg("op"), py::arg("frozen_attr"),
        "spmdkit.ir.core.op_signature(op), made in C++ (frozen_attr: ir.core.frozen_attr, for values "
        "other than atoms and lists or tuples of them).");
  m.def("signature_numbers", &signature_numbers, py::arg("ops"), py::arg("numbers"), py::arg("frozen_attr"),
        py::arg("by_op") = py::none(),
        "The number of each op's signature in `numbers` (signature -> number; new ones added as "
        "len(numbers)); -1 where an attribute cannot be keyed. by_op: id(op) -> number, read and filled.");
}
