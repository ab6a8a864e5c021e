// The signature of an IR op (spmdkit.ir.core.op_signature), made in C++: bind_op_signature.cc.
#pragma once
#include <pybind11/pybind11.h>

namespace spmdkit_signature {

// (name, operand types, result types, attributes key) of a spmdkit.ir Op; frozen_attr is
// ir.core.frozen_attr, called for attribute values other than atoms and lists/tuples of atoms.
pybind11::object op_signature(PyObject* op, PyObject* frozen_attr);

// The same from the op's fields already read: its name, its operand and result lists (of Values)
// and its attrs dict (a caller that has read them, as the graph build's loop has).
pybind11::object op_signature(PyObject* name, PyObject* operands, PyObject* results, PyObject* attrs,
                              PyObject* frozen_attr);

}  // namespace spmdkit_signature
