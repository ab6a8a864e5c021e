// Small helpers for the loops that walk Python objects from C++ (the import's, the graph build's and
// the partitioner's hot loops, spmd_rules/*/bind_*.cc): each returns owned references as
// py::object and turns a Python error into py::error_already_set, so that a loop reads as the
// Python it stands for.
#pragma once

#include <pybind11/pybind11.h>

namespace pyobj {

namespace py = pybind11;

// An interned str, for attribute names looked up on every op (made once, never freed: the strings
// outlive the interpreter, whose exit a static destructor would follow).
inline PyObject* interned(const char* text) { return PyUnicode_InternFromString(text); }

// A new reference as an object, or the Python error raised.
inline py::object steal(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

// o.name
inline py::object attr(PyObject* o, PyObject* name) { return steal(PyObject_GetAttr(o, name)); }

// o.name = value
inline void set(PyObject* o, PyObject* name, PyObject* value) {
  if (PyObject_SetAttr(o, name, value) < 0) throw py::error_already_set();
}

// id(o)
inline py::object id_of(PyObject* o) { return steal(PyLong_FromVoidPtr(o)); }

// dict[key] borrowed, or nullptr when absent
inline PyObject* lookup(PyObject* dict, PyObject* key) {
  PyObject* hit = PyDict_GetItemWithError(dict, key);
  if (!hit && PyErr_Occurred()) throw py::error_already_set();
  return hit;
}

// item in container
inline bool contains(PyObject* container, PyObject* item) {
  const int in = PySequence_Contains(container, item);
  if (in < 0) throw py::error_already_set();
  return in;
}

}  // namespace pyobj
