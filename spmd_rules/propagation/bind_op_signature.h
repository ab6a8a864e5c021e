// The signature of an IR op (spmdkit.ir.core.op_signature), made in C++: bind_op_signature.cc.
#pragma once
#include <pybind11/pybind11.h>

namespace spmdkit_signature {

// (name, operand types, result types, attributes key) of a spmdkit.ir Op; frozen_attr is
// ir.core.frozen_attr, called for attribute values other than atoms and lists/tuples of atoms.
pybind11::object op_signature(PyObject* op, PyObject* frozen_attr);

// The attributes' part of the signature (ir.core.attrs_key) of a non-empty dict.
pybind11::object attrs_key(PyObject* attrs, PyObject* frozen_attr);

}  // namespace spmdkit_signature
