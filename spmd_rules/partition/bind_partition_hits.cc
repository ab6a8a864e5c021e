// The hot loop of the partitioner (partition/partitioner.py, _Partitioner.walk): an op in a
// situation met before (pm.outcomes holds the layouts its rule gave then and the attributes
// localized for them), and a constant, which
// every device computes whole. Python stays the definition of every step (situation,
// partition_op, need, place); this loop takes those common cases, op after op, in one call, calling
// back into Python for what it does not repeat (a region's first decision, an annotation's first
// layout, a reshard), and stops at the first op it cannot take, before changing anything for it,
// so that Python partitions that op and calls again. Transformer layers repeat: most ops are hits.
#include <pybind11/pybind11.h>

#include "python_objects.h"

namespace py = pybind11;
using namespace pyobj;

namespace {

struct Names {
  PyObject *name = interned("name"), *operands = interned("operands"), *results = interned("results"),
           *regions = interned("regions"), *sharding = interned("sharding"), *type = interned("type"),
           *attrs = interned("attrs"), *shape = interned("shape"), *whole = interned("whole"), *op = interned("op"),
           *operand_layouts = interned("operand_layouts"), *result_layouts = interned("result_layouts");
};

// The annotation part of a value's situation (_Partitioner.situation): 0 for none, else the id of
// its annotated layout, from pm.annotations or, the first time, _Partitioner.annotation.
void annotation(PyObject* v, PyObject* annotations, PyObject* annotate, py::list& key) {
  static const Names& n = *new Names();
  py::object s = attr(v, n.sharding);
  if (s.is_none()) {
    key.append(py::int_(0));
    return;
  }
  py::object where = py::make_tuple(id_of(s.ptr()), id_of(attr(v, n.type).ptr()));
  PyObject* a = lookup(annotations, where.ptr());
  if (a && PyTuple_Check(a) && PyTuple_GET_SIZE(a) >= 3)
    key.append(py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(a, 2)));
  else
    key.append(steal(PyObject_CallOneArg(annotate, v)));
}

// place(): the results defined in `out_layouts`, the op's local step added; `known`: the op's
// localized attributes from the outcome it shares (the same dict), or nullptr to localize them here.
void place(PyObject* op, PyObject* name, PyObject* results, py::object in_list, py::object out_list,
           PyObject* versions, PyObject* steps, PyObject* localizers, PyObject* localize, PyObject* local_op,
           PyObject* pm, PyObject* known = nullptr) {
  static const Names& n = *new Names();
  const py::ssize_t n_out = PyList_GET_SIZE(results);
  for (py::ssize_t k = 0; k < n_out; ++k) {
    py::list produced(1);
    produced[0] = py::reinterpret_borrow<py::object>(PyList_GET_ITEM(out_list.ptr(), k));
    if (PyDict_SetItem(versions, id_of(PyList_GET_ITEM(results, k)).ptr(), produced.ptr()) < 0)
      throw py::error_already_set();
  }
  py::object attrs;
  if (known) {
    attrs = py::reinterpret_borrow<py::object>(known);
  } else if (contains(localizers, name)) {
    PyObject* args[] = {op, in_list.ptr(), out_list.ptr(), pm};
    attrs = steal(PyObject_Vectorcall(localize, args, 4, nullptr));
  } else {
    attrs = steal(PyDict_Copy(attr(op, n.attrs).ptr()));  // localize's own copy of an op it leaves alone
  }
  // LocalOp(op, attrs, operand_layouts, result_layouts): its slots, set here
  static const py::tuple& empty = *new py::tuple();
  auto* type = reinterpret_cast<PyTypeObject*>(local_op);
  py::object step = steal(type->tp_new(type, empty.ptr(), nullptr));
  set(step.ptr(), n.op, op);
  set(step.ptr(), n.attrs, attrs.ptr());
  set(step.ptr(), n.operand_layouts, in_list.ptr());
  set(step.ptr(), n.result_layouts, out_list.ptr());
  if (PyList_Append(steps, step.ptr()) < 0) throw py::error_already_set();
}

// Partitions ops[start:] while each is a hit or a constant (see above); returns the index of the
// first op it did not take (len(ops) when it took them all). Only for the outermost block (place()
// there marks no value as the block's own).
//   state: (pm.signatures, versions, pm.annotations, pm.outcomes, regions.region_of, uses, steps,
//           ops partition_op places by their own path, the source ops among them, terminators,
//           LINEAR_OPS, LOCALIZERS, localize, LocalOp, pm, pm.wholes, and the partitioner's
//           callbacks: annotation(value), whole(op) (Regions.whole), need(value, layout, reason);
//           and regions.decided (region -> whether it runs whole), read before asking whole(op)
py::ssize_t partition_hits(py::list ops, py::ssize_t start, py::tuple state) {
  static const Names& n = *new Names();
  static PyObject* iota = interned("jax.iota");
  if (state.size() != 20) throw py::type_error("partition_hits: state must be a 20-tuple");
  PyObject* signatures = state[0].ptr();
  PyObject* versions = state[1].ptr();
  PyObject* annotations = state[2].ptr();
  PyObject* outcomes = state[3].ptr();
  PyObject* region_of = state[4].ptr();
  PyObject* uses = state[5].ptr();
  PyObject* steps = state[6].ptr();
  PyObject* own_path = state[7].ptr();
  PyObject* sources = state[8].ptr();
  PyObject* terminators = state[9].ptr();
  PyObject* linear = state[10].ptr();
  PyObject* localizers = state[11].ptr();
  PyObject* localize = state[12].ptr();
  PyObject* local_op = state[13].ptr();
  PyObject* pm = state[14].ptr();
  PyObject* wholes = state[15].ptr();
  PyObject* annotate = state[16].ptr();
  PyObject* whole_of = state[17].ptr();
  PyObject* need = state[18].ptr();
  PyObject* decided = state[19].ptr();
  for (int k : {0, 1, 2, 3, 4, 5, 11, 15, 19})
    if (!PyDict_Check(state[k].ptr())) throw py::type_error("partition_hits: the partitioner's tables must be dicts");
  if (!PyList_Check(steps)) throw py::type_error("partition_hits: steps must be a list");
  if (!PyType_Check(local_op)) throw py::type_error("partition_hits: LocalOp must be a class");

  const py::ssize_t count = PyList_GET_SIZE(ops.ptr());
  for (py::ssize_t i = start; i < count; ++i) {
    PyObject* op = PyList_GET_ITEM(ops.ptr(), i);
    py::object name = attr(op, n.name);
    if (contains(terminators, name.ptr())) return i;
    py::object regions = attr(op, n.regions);
    const int has_regions = PyObject_IsTrue(regions.ptr());
    if (has_regions != 0) {
      if (has_regions < 0) throw py::error_already_set();
      return i;
    }
    py::object operands = attr(op, n.operands), results = attr(op, n.results);
    if (!PyList_Check(operands.ptr()) || !PyList_Check(results.ptr())) return i;
    const py::ssize_t n_in = PyList_GET_SIZE(operands.ptr()), n_out = PyList_GET_SIZE(results.ptr());

    const int is_iota = PyObject_RichCompareBool(name.ptr(), iota, Py_EQ);
    if (is_iota != 0) {  // placed in its annotated layout
      if (is_iota < 0) throw py::error_already_set();
      return i;
    }
    if (!n_in || contains(sources, name.ptr())) {  // a constant: computed whole on every device
      py::list out_list(n_out);
      for (py::ssize_t k = 0; k < n_out; ++k) {  // pm.whole(rank)
        const py::ssize_t rank = PyObject_Size(attr(attr(PyList_GET_ITEM(results.ptr(), k), n.type).ptr(), n.shape).ptr());
        if (rank < 0) throw py::error_already_set();
        py::int_ r(rank);
        PyObject* layout = lookup(wholes, r.ptr());
        out_list[k] = layout ? py::reinterpret_borrow<py::object>(layout)
                             : steal(PyObject_CallMethodOneArg(pm, n.whole, r.ptr()));
      }
      place(op, name.ptr(), results.ptr(), py::list(), out_list, versions, steps, localizers, localize, local_op, pm);
      continue;
    }
    if (contains(own_path, name.ptr())) return i;

    // the situation key, as _Partitioner.situation makes it
    py::object op_id = id_of(op);
    PyObject* sig = lookup(signatures, op_id.ptr());
    if (!sig) return i;
    const long number = PyLong_AsLong(sig);
    if (number == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (number < 0) return i;
    py::list key;
    key.append(py::reinterpret_borrow<py::object>(sig));
    std::vector<PyObject*> have_of(n_in);  // borrowed: versions holds them
    for (py::ssize_t k = 0; k < n_in; ++k) {
      PyObject* v = PyList_GET_ITEM(operands.ptr(), k);
      PyObject* have = lookup(versions, id_of(v).ptr());
      if (!have || !PyList_Check(have) || !PyList_GET_SIZE(have)) return i;
      have_of[k] = have;
      annotation(v, annotations, annotate, key);
      const py::ssize_t n_have = PyList_GET_SIZE(have);
      if (n_have == 1) {
        key.append(id_of(PyList_GET_ITEM(have, 0)));
      } else {
        py::tuple ids(n_have);
        for (py::ssize_t h = 0; h < n_have; ++h) ids[h] = id_of(PyList_GET_ITEM(have, h));
        key.append(ids);
      }
    }
    for (py::ssize_t k = 0; k < n_out; ++k) annotation(PyList_GET_ITEM(results.ptr(), k), annotations, annotate, key);
    bool whole = false;
    if (PyObject* region = lookup(region_of, op_id.ptr())) {  // decided once per region, at its first op
      PyObject* answer = lookup(decided, region);
      py::object asked = answer ? py::object() : steal(PyObject_CallOneArg(whole_of, op));  // Regions.whole
      const int truth = PyObject_IsTrue(answer ? answer : asked.ptr());
      if (truth < 0) throw py::error_already_set();
      whole = truth;
    }
    key.append(py::bool_(whole));
    bool shared = false;  // a linear op's operand that another op reads too
    if (contains(linear, name.ptr())) {
      PyObject* readers = lookup(uses, id_of(PyList_GET_ITEM(operands.ptr(), 0)).ptr());
      shared = !readers || PyLong_AsLong(readers) != 1;
      if (PyErr_Occurred()) throw py::error_already_set();
    }
    key.append(py::bool_(shared));
    py::object situation = steal(PyList_AsTuple(key.ptr()));

    PyObject* hit = lookup(outcomes, situation.ptr());
    if (!hit || !PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 3) return i;
    PyObject* in_layouts = PyTuple_GET_ITEM(hit, 0);
    PyObject* out_layouts = PyTuple_GET_ITEM(hit, 1);
    PyObject* attrs = PyTuple_GET_ITEM(hit, 2);
    if (!PyTuple_Check(in_layouts) || !PyTuple_Check(out_layouts) || !PyDict_Check(attrs) ||
        PyTuple_GET_SIZE(in_layouts) != n_in || PyTuple_GET_SIZE(out_layouts) != n_out)
      return i;
    // operands not available in the layouts the answer reads them in: resharded first
    for (py::ssize_t k = 0; k < n_in; ++k) {
      PyObject* layout = PyTuple_GET_ITEM(in_layouts, k);
      if (!contains(have_of[k], layout)) {
        py::object reason = steal(PyUnicode_FromFormat("op '%U'", name.ptr()));
        PyObject* args[] = {PyList_GET_ITEM(operands.ptr(), k), layout, reason.ptr()};
        steal(PyObject_Vectorcall(need, args, 3, nullptr));
      }
    }
    place(op, name.ptr(), results.ptr(), steal(PySequence_List(in_layouts)), steal(PySequence_List(out_layouts)),
          versions, steps, localizers, localize, local_op, pm, attrs);
  }
  return count;
}

}  // namespace

void spmdkit_bind_partition_hits(py::module_& m) {
  m.def("partition_hits", &partition_hits, py::arg("ops"), py::arg("start"), py::arg("state"),
        "Partitions a block's ops from `start` while each is in a situation met before "
        "(partition._Partitioner.walk); returns the index of the first op it left to Python.");
}
