// The hot loop of building a propagation graph from a spmdkit.ir program (from_ir._Builder.ops):
// an op with a factor table whose results are first seen there, unannotated. Python runs the
// same steps for every other op (compiler-API ops, the first op of each kind, annotated results);
// this loop takes the common case, op after op, in one call, and stops at the first op it cannot
// take so that Python handles that one and calls again. It only reads the IR objects and appends
// to the builder's and the graph's lists: the same entries the Python path appends, in order.
#include <pybind11/pybind11.h>

#include "python_objects.h"

namespace py = pybind11;
using namespace pyobj;

namespace {

struct Names {
  py::object name = py::str("name"), operands = py::str("operands"), results = py::str("results"),
             type = py::str("type"), shape = py::str("shape"),
             sharding = py::str("sharding"), unnamed = py::str("");
};

// Takes ops[start:] while each is a plain factor-table op (see above); returns the index of the
// first op it did not take (len(ops) when it took them all).
//   builder: (tables, value_ids, values) of from_ir._Builder: signature number -> (table id, why),
//            id(ir value) -> graph value id, graph value id -> ir value
//   graph:   the graph's per-value lists (names, shapes, meshes) and per-op lists (names, tables,
//            operands, results, flags), its table id -> (parts, pass-through-like), and the mesh
//            id of an unannotated value
//   general: op names the loop leaves to Python; pass_through: names that move with elementwise
//            ops; numbers: each op's signature number (ir.signatures.OpSignatures.sign), in order
py::ssize_t build_rule_ops(py::list ops, py::ssize_t start, py::object skip, py::tuple builder, py::tuple graph,
                           py::int_ default_mesh, py::object general, py::object pass_through, py::list numbers) {
  // never destroyed: the strings outlive the interpreter, whose exit a static destructor would follow
  static const Names& n = *new Names();
  PyObject* tables = builder[0].ptr();
  PyObject* value_ids = builder[1].ptr();
  PyObject* values = builder[2].ptr();
  PyObject* value_names = graph[0].ptr();
  PyObject* shapes = graph[1].ptr();
  PyObject* value_meshes = graph[2].ptr();
  PyObject* op_names = graph[3].ptr();
  PyObject* op_tables = graph[4].ptr();
  PyObject* op_operands = graph[5].ptr();
  PyObject* op_results = graph[6].ptr();
  PyObject* op_flags = graph[7].ptr();
  PyObject* table_info = graph[8].ptr();
  for (PyObject* list : {values, value_names, shapes, value_meshes, op_names, op_tables, op_operands, op_results,
                         op_flags})
    if (!PyList_Check(list)) throw py::type_error("build_rule_ops: the builder's and graph's fields must be lists");
  if (!PyDict_Check(tables) || !PyDict_Check(value_ids) || !PyDict_Check(table_info))
    throw py::type_error("build_rule_ops: tables, value ids and table info must be dicts");
  auto append = [](PyObject* list, PyObject* item) {
    if (PyList_Append(list, item) < 0) throw py::error_already_set();
  };

  const py::ssize_t count = PyList_GET_SIZE(ops.ptr());
  if (PyList_GET_SIZE(numbers.ptr()) != count) throw py::value_error("build_rule_ops: one signature number per op");
  for (py::ssize_t i = start; i < count; ++i) {
    PyObject* op = PyList_GET_ITEM(ops.ptr(), i);
    if (op == skip.ptr()) return i;
    py::object name = attr(op, n.name.ptr());
    const int is_general = PySequence_Contains(general.ptr(), name.ptr());
    if (is_general != 0) {
      if (is_general < 0) throw py::error_already_set();
      return i;
    }
    py::object operands = attr(op, n.operands.ptr()), results = attr(op, n.results.ptr());
    if (!PyList_Check(operands.ptr()) || !PyList_Check(results.ptr())) return i;
    const py::ssize_t n_in = PyList_GET_SIZE(operands.ptr()), n_out = PyList_GET_SIZE(results.ptr());

    // the table of the op's signature: none yet, or attributes that cannot be keyed (number -1,
    // a table of its own) -> Python makes it
    PyObject* hit = PyDict_GetItemWithError(tables, PyList_GET_ITEM(numbers.ptr(), i));  // borrowed
    if (!hit) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return i;
    }
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) < 1 || PyTuple_GET_ITEM(hit, 0) == Py_None) return i;
    PyObject* table = PyTuple_GET_ITEM(hit, 0);

    // operands already in the graph; results new, unannotated, unnamed
    py::tuple operand_ids(n_in);
    for (py::ssize_t k = 0; k < n_in; ++k) {
      PyObject* vid = PyDict_GetItemWithError(value_ids, id_of(PyList_GET_ITEM(operands.ptr(), k)).ptr());
      if (!vid) {
        if (PyErr_Occurred()) throw py::error_already_set();
        return i;
      }
      Py_INCREF(vid);
      PyTuple_SET_ITEM(operand_ids.ptr(), k, vid);
    }
    for (py::ssize_t k = 0; k < n_out; ++k) {
      PyObject* v = PyList_GET_ITEM(results.ptr(), k);
      if (!attr(v, n.sharding.ptr()).is_none()) return i;
      const int named = PyObject_IsTrue(attr(v, n.name.ptr()).ptr());
      if (named != 0) {
        if (named < 0) throw py::error_already_set();
        return i;
      }
      const int seen = PyDict_Contains(value_ids, id_of(v).ptr());
      if (seen != 0) {
        if (seen < 0) throw py::error_already_set();
        return i;
      }
    }
    py::ssize_t vid = PyList_GET_SIZE(shapes);
    if (PyList_GET_SIZE(values) != vid) return i;  // Python pads its value list

    PyObject* info = PyDict_GetItemWithError(table_info, table);
    if (!info) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return i;
    }
    const int layout = PySequence_Contains(pass_through.ptr(), name.ptr());
    if (layout < 0) throw py::error_already_set();
    const int elementwise = PyObject_IsTrue(PyTuple_GetItem(info, 1));
    if (elementwise < 0) throw py::error_already_set();

    py::tuple result_ids(n_out);
    for (py::ssize_t k = 0; k < n_out; ++k, ++vid) {
      PyObject* v = PyList_GET_ITEM(results.ptr(), k);
      py::object id = py::int_(vid);
      append(value_names, n.unnamed.ptr());  // the engine and Graph.value_name call it v<id>
      py::object shape = attr(attr(v, n.type.ptr()).ptr(), n.shape.ptr());
      py::object dims = py::reinterpret_steal<py::object>(PySequence_Tuple(shape.ptr()));  // its own tuple
      if (!dims) throw py::error_already_set();
      append(shapes, dims.ptr());
      append(value_meshes, default_mesh.ptr());
      if (PyDict_SetItem(value_ids, id_of(v).ptr(), id.ptr()) < 0) throw py::error_already_set();
      append(values, v);
      result_ids[k] = id;
    }
    append(op_names, name.ptr());
    append(op_tables, table);
    append(op_operands, operand_ids.ptr());
    append(op_results, result_ids.ptr());
    append(op_flags, py::int_((layout || elementwise ? 1 : 0) | 3 << 1).ptr());
  }
  return count;
}

}  // namespace

void spmdkit_bind_graph_build(py::module_& m) {
  m.def("build_rule_ops", &build_rule_ops, py::arg("ops"), py::arg("start"), py::arg("skip"), py::arg("builder"),
        py::arg("graph"), py::arg("default_mesh"), py::arg("general"), py::arg("pass_through"), py::arg("numbers"),
        "Takes a block's plain factor-table ops from `start` into the graph (from_ir._Builder.ops); returns the "
        "index of the first op it left to Python.");
}
