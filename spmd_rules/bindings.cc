// pybind11 module spmdkit._core: the data types and the rule registry, with Paddle 3.3.1's
// Python API (ProcessMesh, TensorDistAttr, DistTensorSpec, get_phi_spmd_rule). Arguments are
// checked against each rule's signature here, so a wrong call raises instead of crashing.
#include <algorithm>
#include <optional>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "errors.h"
#include "factor_table_bindings.h"
#include "registry.h"

namespace py = pybind11;
using namespace spmd;

namespace {

// ---- ProcessMesh from nested Python lists --------------------------------------------------
void flatten_mesh(const py::handle& obj, std::size_t depth, std::vector<int64_t>* shape, std::vector<int64_t>* ids) {
  if (py::isinstance<py::int_>(obj)) {
    if (depth != shape->size()) throw ValueError("ProcessMesh: the nested lists are ragged");
    ids->push_back(obj.cast<int64_t>());
    return;
  }
  if (!py::isinstance<py::sequence>(obj) && !py::hasattr(obj, "tolist"))
    throw TypeError("ProcessMesh: mesh must be nested lists of ints");
  py::sequence seq = py::hasattr(obj, "tolist") ? py::sequence(obj.attr("tolist")()) : py::reinterpret_borrow<py::sequence>(obj);
  if (py::isinstance<py::int_>(seq)) return flatten_mesh(seq, depth, shape, ids);
  const int64_t n = static_cast<int64_t>(py::len(seq));
  if (depth == shape->size()) {
    if (!ids->empty()) throw ValueError("ProcessMesh: the nested lists are ragged");
    shape->push_back(n);
  } else if (depth > shape->size() || (*shape)[depth] != n) {
    throw ValueError("ProcessMesh: the nested lists are ragged");
  }
  for (const auto& item : seq) flatten_mesh(item, depth + 1, shape, ids);
}

std::shared_ptr<ProcessMesh> make_mesh(const py::object& mesh, const py::object& dim_names) {
  std::vector<int64_t> shape, ids;
  flatten_mesh(mesh, 0, &shape, &ids);
  std::vector<std::string> names;
  if (!dim_names.is_none()) names = dim_names.cast<std::vector<std::string>>();
  return std::make_shared<ProcessMesh>(std::move(shape), std::move(ids), std::move(names));
}

// A mesh dim named by index or by name (Paddle's get_dim_size takes either).
int mesh_dim_index(const ProcessMesh& mesh, const py::object& dim) {
  if (py::isinstance<py::str>(dim)) {
    const auto name = dim.cast<std::string>();
    const auto& names = mesh.dim_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    throw ValueError("ProcessMesh: no mesh dim named '" + name + "'");
  }
  const auto i = dim.cast<int64_t>();
  if (i < -mesh.ndim() || i >= mesh.ndim())
    throw ValueError("ProcessMesh: mesh dim " + std::to_string(i) + " out of range for a " + std::to_string(mesh.ndim()) + "-D mesh");
  return static_cast<int>(i < 0 ? i + mesh.ndim() : i);
}

py::list nested_ids(const ProcessMesh& mesh, std::size_t depth, std::size_t* next) {
  py::list out;
  for (int64_t i = 0; i < mesh.shape()[depth]; ++i) {
    if (depth + 1 == mesh.shape().size()) out.append(mesh.process_ids()[(*next)++]);
    else out.append(nested_ids(mesh, depth + 1, next));
  }
  return out;
}

// A spec built from a TensorDistAttr whose dims_mapping was never set (Paddle's tests build
// output specs that way) is replicated: an empty mapping on a tensor of rank > 0 means "not
// annotated", not "rank 0".
TensorDistAttr annotated_or_replicated(const TensorDistAttr& attr, std::size_t rank) {
  if (attr.rank() != 0 || rank == 0) return attr;
  TensorDistAttr a = attr;
  a.set_dims_mapping(std::vector<int64_t>(rank, -1));
  return a;
}

// ---- argument parsing ----------------------------------------------------------------------
// "matmul.infer_forward", formatted only when an error needs it.
struct CallSite {
  const std::string* name;
  const char* which;
  std::string str() const { return *name + "." + which; }
};
inline std::string operator+(const CallSite& c, const std::string& s) { return c.str() + s; }
inline std::string operator+(const CallSite& c, const char* s) { return c.str() + s; }
std::string type_name(const py::handle& h) { return py::str(py::type::handle_of(h).attr("__name__")); }

[[noreturn]] void bad_arg(const CallSite& where, const Param& p, std::size_t pos, const py::handle& got) {
  throw TypeError(where + ": argument " + std::to_string(pos) + " '" + p.name + "' must be " + arg_kind_name(p.kind) +
                  ", got " + type_name(got));
}

const DistMetaTensor* as_tensor(const py::handle& h) {
  py::detail::make_caster<DistMetaTensor> caster;  // one type lookup, no copy
  if (!caster.load(h, false)) return nullptr;
  return &py::detail::cast_op<const DistMetaTensor&>(caster);
}

int64_t as_int(const CallSite& where, const Param& p, std::size_t pos, const py::handle& h, bool int32) {
  if (!py::isinstance<py::int_>(h) || py::isinstance<py::bool_>(h)) {
    if (py::hasattr(h, "__index__") && !py::isinstance<py::bool_>(h) && !py::isinstance<py::float_>(h)) {
      return as_int(where, p, pos, py::int_(h.attr("__index__")()), int32);
    }
    bad_arg(where, p, pos, h);
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow || (int32 && (v < INT32_MIN || v > INT32_MAX)))
    throw ValueError(where + ": argument " + std::to_string(pos) + " '" + p.name + "' = " +
                     std::string(py::str(h)) + " is out of range for " + (int32 ? "int32" : "int64"));
  return v;
}

void parse_one(const CallSite& where, const Param& p, std::size_t pos, const py::handle& h, Arg* a) {
  switch (p.kind) {
    case ArgKind::kTensor:
      if (!(a->tensor = as_tensor(h))) {
        // Paddle's binding reads a one-element list where one tensor is due (its pad test passes [x]).
        if ((py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) && py::len(h) == 1)
          a->tensor = as_tensor(py::reinterpret_borrow<py::sequence>(h)[0]);
        if (!a->tensor) bad_arg(where, p, pos, h);
      }
      return;
    case ArgKind::kOptionalTensor:
      if (h.is_none()) a->tensor = &absent_tensor();
      else if (!(a->tensor = as_tensor(h))) bad_arg(where, p, pos, h);
      // Paddle's conventions for an absent optional tensor: a spec of shape [] and mapping [],
      // or one whose dist attr was never given a mesh (its tests pass DistTensorSpec([0], TensorDistAttr())).
      else if ((a->tensor->rank() == 0 && a->tensor->attr.rank() == 0) || !a->tensor->attr.mesh())
        a->tensor = &absent_tensor();
      return;
    case ArgKind::kOutputTensor:  // a 0-D output is real; the engines read Paddle's empty spec
      if (h.is_none()) a->tensor = &absent_tensor();
      else if (!(a->tensor = as_tensor(h))) bad_arg(where, p, pos, h);
      return;
    case ArgKind::kTensorList: {
      if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h)) bad_arg(where, p, pos, h);
      for (const auto& item : py::reinterpret_borrow<py::sequence>(h)) {
        const DistMetaTensor* t = item.is_none() ? &absent_tensor() : as_tensor(item);
        if (!t)
          throw TypeError(where + ": argument " + std::to_string(pos) + " '" + p.name +
                          "' must hold only DistTensorSpec, got " + type_name(item));
        a->tensors.push_back(t);
      }
      return;
    }
    case ArgKind::kBool:
      if (py::isinstance<py::bool_>(h)) a->b = h.ptr() == Py_True;
      else if (py::isinstance<py::int_>(h)) a->b = as_int(where, p, pos, h, false) != 0;  // Paddle accepts 0/1
      else bad_arg(where, p, pos, h);
      return;
    case ArgKind::kInt:
    case ArgKind::kInt64:
      a->i = as_int(where, p, pos, h, p.kind == ArgKind::kInt);
      return;
    case ArgKind::kFloat:
      if (py::isinstance<py::float_>(h) || (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)))
        a->f = h.cast<double>();
      else bad_arg(where, p, pos, h);
      return;
    case ArgKind::kStr:
      if (!py::isinstance<py::str>(h)) bad_arg(where, p, pos, h);
      a->s = h.cast<std::string>();
      return;
    case ArgKind::kDType: {
      // A string ("int64") or a framework dtype object (paddle.int64 prints as "paddle.int64").
      std::string s = py::str(h);
      auto dot = s.rfind('.');
      a->s = dot == std::string::npos ? s : s.substr(dot + 1);
      return;
    }
    case ArgKind::kIntList:
    case ArgKind::kInt64List:
    case ArgKind::kBoolList:
    case ArgKind::kFloatList: {
      if (!py::isinstance<py::list>(h) && !py::isinstance<py::tuple>(h)) {
        if (py::isinstance<py::int_>(h) && p.kind != ArgKind::kFloatList && p.kind != ArgKind::kBoolList) {
          a->ints.push_back(as_int(where, p, pos, h, p.kind == ArgKind::kIntList));  // a lone int is a 1-list
          return;
        }
        bad_arg(where, p, pos, h);
      }
      Param elem{p.name, p.kind == ArgKind::kFloatList ? ArgKind::kFloat
                         : p.kind == ArgKind::kBoolList ? ArgKind::kBool
                         : p.kind == ArgKind::kIntList  ? ArgKind::kInt
                                                        : ArgKind::kInt64};
      for (const auto& item : py::reinterpret_borrow<py::sequence>(h)) {
        // A list of int tuples is read flat, row by row: a jaxpr's padding ((low, high), ...).
        if ((p.kind == ArgKind::kIntList || p.kind == ArgKind::kInt64List) &&
            (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item))) {
          for (const auto& sub : py::reinterpret_borrow<py::sequence>(item)) {
            if (!py::isinstance<py::int_>(sub) || py::isinstance<py::bool_>(sub))
              throw TypeError(where + ": argument " + std::to_string(pos) + " '" + p.name + "' must be " +
                              arg_kind_name(p.kind) + " (or a list of int tuples), but holds " + type_name(sub));
            a->ints.push_back(as_int(where, elem, pos, sub, p.kind == ArgKind::kIntList));
          }
          continue;
        }
        Arg e;
        try {
          parse_one(where, elem, pos, item, &e);
        } catch (const TypeError&) {
          throw TypeError(where + ": argument " + std::to_string(pos) + " '" + p.name + "' must be " +
                          arg_kind_name(p.kind) + ", but holds " + type_name(item));
        }
        if (p.kind == ArgKind::kFloatList) a->floats.push_back(e.f);
        else if (p.kind == ArgKind::kBoolList) a->ints.push_back(e.b);
        else a->ints.push_back(e.i);
      }
      return;
    }
  }
}

ArgPack parse_args(const CallSite& where, const Signature& sig, const py::args& args, const py::kwargs* kwargs) {
  const auto& params = sig.params;
  if (args.size() > params.size())
    throw TypeError(where + " takes at most " + std::to_string(params.size()) + " arguments (" + sig.describe() +
                    "), got " + std::to_string(args.size()));
  ArgPack pack(params.size());
  std::size_t given = 0;
  for (std::size_t i = 0; i < args.size(); ++i, ++given) parse_one(where, params[i], i, args[i], &pack[i]);
  std::size_t used_kwargs = 0;
  for (std::size_t i = args.size(); i < params.size(); ++i) {
    const Param& p = params[i];
    if (kwargs && kwargs->contains(p.name.c_str())) {
      parse_one(where, p, i, (*kwargs)[p.name.c_str()], &pack[i]);
      ++used_kwargs;
    } else if (p.kind == ArgKind::kOptionalTensor || p.kind == ArgKind::kOutputTensor) {
      pack[i].tensor = &absent_tensor();
    } else if (p.has_default) {
      pack[i] = p.default_value;
    } else {
      throw TypeError(where + " is missing argument " + std::to_string(i) + " '" + p.name + "' (signature: " +
                      sig.describe() + ")");
    }
  }
  if (kwargs && used_kwargs != kwargs->size())
    for (const auto& kv : *kwargs) {
      std::string k = py::str(kv.first);
      bool known = false;
      for (std::size_t i = args.size(); i < params.size(); ++i) known |= params[i].name == k;
      if (!known) throw TypeError(where + " got an unexpected keyword argument '" + k + "'");
    }
  return pack;
}

// ---- results -------------------------------------------------------------------------------
py::object to_python(ArgDistAttr&& a) {
  if (auto* t = std::get_if<TensorDistAttr>(&a)) return py::cast(std::move(*t));
  auto& list = std::get<std::vector<TensorDistAttr>>(a);
  py::list out(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) out[i] = py::cast(std::move(list[i]));
  return std::move(out);
}

py::tuple to_python(SpmdInfo&& info) {
  py::list ins(info.inputs.size()), outs(info.outputs.size());
  for (std::size_t i = 0; i < info.inputs.size(); ++i) ins[i] = to_python(std::move(info.inputs[i]));
  for (std::size_t i = 0; i < info.outputs.size(); ++i) outs[i] = to_python(std::move(info.outputs[i]));
  return py::make_tuple(std::move(ins), std::move(outs));
}

// (name, kind, has_default) per parameter, for tools that build calls (the CLI, verify).
py::list params_of(const Signature& sig) {
  py::list out;
  for (const Param& p : sig.params) out.append(py::make_tuple(p.name, arg_kind_id(p.kind), p.has_default));
  return out;
}

struct PyRule {
  const RuleEntry* entry;
  std::string name;  // the name it was looked up by
};

// What a rule reads of the tensors it is handed, as Paddle's rules read them:
// - a reverse call reads only the inputs' shapes: each input is handed over replicated on the
//   outputs' mesh, so a mapping left stale by an earlier statement (another rank, a mesh dim
//   the mesh lacks) is not an error; the shapes are still checked against the outputs;
// - an output given without a mesh (Paddle's tests build output specs from TensorDistAttr())
//   is on the other tensors' mesh, replicated unless it has a mapping of its own.
// Tensors are replaced only where needed; `storage` owns the replacements for the call.
class ReadAsPaddleDoes {
 public:
  ReadAsPaddleDoes(const RuleEntry& entry, const Signature& sig, bool reverse, ArgPack& pack) {
    const std::size_t n = std::min(sig.params.size(), pack.size());
    std::size_t tensor_params = 0, count = 0;
    MeshPtr in_mesh, out_mesh;
    bool fix_inputs = false, fix_outputs = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!is_tensor_kind(sig.params[i].kind)) continue;
      const bool input = tensor_params++ < entry.num_inputs;
      for_each(pack[i], [&](const DistMetaTensor* t) {
        ++count;
        if (t->absent()) return;
        const MeshPtr& m = t->attr.mesh();
        if (input) {
          if (!in_mesh && m) in_mesh = m;
          fix_inputs |= reverse;
        } else {
          if (!out_mesh && m) out_mesh = m;
          fix_outputs |= !m;
        }
      });
    }
    if (!fix_inputs && !fix_outputs) return;
    const MeshPtr& mesh = reverse ? (out_mesh ? out_mesh : in_mesh) : (in_mesh ? in_mesh : out_mesh);
    if (!mesh) return;  // no tensor has a mesh: the rule says so
    storage_.reserve(count);
    tensor_params = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!is_tensor_kind(sig.params[i].kind)) continue;
      const bool input = tensor_params++ < entry.num_inputs;
      auto fix = [&](const DistMetaTensor* t) -> const DistMetaTensor* {
        if (t->absent()) return t;
        if (input && reverse) {
          storage_.emplace_back(t->shape, TensorDistAttr(mesh, t->rank()));
          return &storage_.back();
        }
        if (!input && !t->attr.mesh()) {
          TensorDistAttr a = annotated_or_replicated(t->attr, t->rank());
          a.set_mesh(mesh);
          storage_.emplace_back(t->shape, std::move(a));
          return &storage_.back();
        }
        return t;
      };
      Arg& a = pack[i];
      if (a.tensor) a.tensor = fix(a.tensor);
      for (auto& t : a.tensors) t = fix(t);
    }
  }

 private:
  template <typename F>
  static void for_each(const Arg& a, F&& f) {
    if (a.tensor) f(a.tensor);
    for (const DistMetaTensor* t : a.tensors) f(t);
  }
  std::vector<DistMetaTensor> storage_;
};

py::tuple call(const PyRule& r, const RuleFunction& fn, const char* which, const py::args& args,
               const py::kwargs* kwargs) {
  const CallSite where{&r.name, which};
  if (!fn.fn) throw NotImplementedError(where.str() + ": rule '" + r.name + "' has no second function");
  ArgPack pack = parse_args(where, fn.signature, args, kwargs);
  const bool reverse = &fn == &r.entry->second && r.entry->second_kind == SecondKind::kReverse;
  std::optional<ReadAsPaddleDoes> read;  // (a grad rule's arguments are another entry's inputs)
  if (reverse || &fn == &r.entry->forward) read.emplace(*r.entry, fn.signature, reverse, pack);
  // Rules name themselves by their spec entry; an alias call (add -> elementwise_binary) should
  // read as the name the user called. Only the error path pays for this.
  auto renamed = [&](const std::exception& e) {
    std::string msg = e.what();
    const std::string prefix = r.entry->name + ": ";
    if (r.name != r.entry->name && msg.compare(0, prefix.size(), prefix) == 0) msg = r.name + ": " + msg.substr(prefix.size());
    return msg;
  };
  try {
    return to_python(fn.fn(pack));
  } catch (const ValueError& e) {
    throw ValueError(renamed(e));
  } catch (const TypeError& e) {
    throw TypeError(renamed(e));
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(renamed(e));
  }
}

// SpmdRule.factors: the forward arguments in, the call's factor table out (off the inference path).
FactorTable factors(const PyRule& r, const py::args& args, const py::kwargs* kwargs) {
  const CallSite where{&r.name, "factors"};
  if (!r.entry->factors)
    throw ValueError(where.str() + ": rule '" + r.name + "' is hand-written C++ (" + r.entry->spec + ") and has no factor table");
  ArgPack pack = parse_args(where, r.entry->forward.signature, args, kwargs);
  ReadAsPaddleDoes read(*r.entry, r.entry->forward.signature, false, pack);
  try {
    return r.entry->factors(pack);
  } catch (const ValueError& e) {  // name the rule as it was called (an alias), as call() does
    std::string msg = e.what();
    const std::string prefix = r.entry->name + ": ";
    if (r.name != r.entry->name && msg.compare(0, prefix.size(), prefix) == 0) msg = r.name + ": " + msg.substr(prefix.size());
    throw ValueError(msg);
  }
}

// ---- TensorDistAttr helpers ----------------------------------------------------------------
void set_partial_dims(TensorDistAttr& a, const std::vector<int64_t>& dims, const std::string& type) {
  ReduceType t;
  if (!parse_reduce_type(type, &t))
    throw ValueError("unknown reduce type '" + type + "' (sum, max, min, prod, avg, any, all)");
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(kMaxMeshDims)) throw ValueError("partial mesh dim " + std::to_string(d) + " is out of range");
    a.set_partial(static_cast<int>(d), t);
  }
}

py::object mesh_or_none(const TensorDistAttr& a) {
  if (!a.mesh()) return py::none();
  return py::cast(std::const_pointer_cast<ProcessMesh>(a.mesh()));
}

MeshPtr mesh_from(const py::object& m) {
  if (m.is_none()) return nullptr;
  if (py::isinstance<ProcessMesh>(m)) return m.cast<std::shared_ptr<ProcessMesh>>();
  return make_mesh(m, py::none());
}

std::vector<int64_t> shape_vec(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }
Shape shape_from(const std::vector<int64_t>& v) {
  if (v.size() > kMaxRank) throw ValueError("tensors of rank > " + std::to_string(kMaxRank) + " are not supported");
  return Shape(v.begin(), v.end());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "spmdkit C++ core: sharding inference rules generated from rules_yaml/";
  { void spmdkit_bind_propagation(py::module_&); spmdkit_bind_propagation(m); }  // spmd_rules/propagation/

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const KeyError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const std::length_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<ProcessMesh, std::shared_ptr<ProcessMesh>>(m, "ProcessMesh")
      .def(py::init(&make_mesh), py::arg("mesh"), py::arg("dim_names") = py::none())
      .def_property_readonly("shape", &ProcessMesh::shape)
      .def_property_readonly("process_ids", &ProcessMesh::process_ids)
      .def_property_readonly("dim_names", &ProcessMesh::dim_names)
      .def_property_readonly("ndim", &ProcessMesh::ndim)
      .def_property_readonly("size", &ProcessMesh::size)
      .def_property_readonly("mesh", [](const ProcessMesh& a) {
        std::size_t next = 0;
        return a.ndim() == 0 ? py::list() : nested_ids(a, 0, &next);
      })
      .def("get_dim_size", [](const ProcessMesh& a, const py::object& d) { return a.dim_size(mesh_dim_index(a, d)); },
           py::arg("dim"))
      .def("dim_size", [](const ProcessMesh& a, const py::object& d) { return a.dim_size(mesh_dim_index(a, d)); },
           py::arg("dim"))
      .def("contains", [](const ProcessMesh& a, int64_t pid) {
        const auto& ids = a.process_ids();
        return std::find(ids.begin(), ids.end(), pid) != ids.end();
      }, py::arg("process_id"))
      .def("empty", [](const ProcessMesh& a) { return a.size() == 0; })
      .def("__eq__", [](const ProcessMesh& a, const py::object& b) {
        return py::isinstance<ProcessMesh>(b) && a == b.cast<const ProcessMesh&>();
      })
      .def("__hash__", [](const ProcessMesh& a) { return py::hash(py::make_tuple(py::cast(a.shape()), py::cast(a.process_ids()))); })
      .def("__repr__", [](const ProcessMesh& a) { return "ProcessMesh" + a.to_string(); })
      .def(py::pickle(
          [](const ProcessMesh& a) { return py::make_tuple(a.shape(), a.process_ids(), a.dim_names()); },
          [](const py::tuple& t) {
            return std::make_shared<ProcessMesh>(t[0].cast<std::vector<int64_t>>(), t[1].cast<std::vector<int64_t>>(),
                                                 t[2].cast<std::vector<std::string>>());
          }));

  py::class_<TensorDistAttr>(m, "TensorDistAttr")
      .def(py::init<>())
      .def(py::init([](const py::object& mesh, const std::vector<int64_t>& dims_mapping) {
             TensorDistAttr a(mesh_from(mesh));
             a.set_dims_mapping(dims_mapping);
             return a;
           }),
           py::arg("process_mesh"), py::arg("dims_mapping"))
      .def_property("process_mesh", &mesh_or_none,
                    [](TensorDistAttr& a, const py::object& m) { a.set_mesh(mesh_from(m)); })
      .def_property("dims_mapping", &TensorDistAttr::dims_mapping, &TensorDistAttr::set_dims_mapping)
      .def_property("multi_dims_mapping", &TensorDistAttr::multi_dims_mapping, &TensorDistAttr::set_multi_dims_mapping)
      .def("_is_partial", &TensorDistAttr::is_partial)
      .def("_partial_dims", [](const TensorDistAttr& a) {
        py::set s;
        for (int64_t d : a.partial_dims()) s.add(d);
        return s;
      })
      .def("_set_partial_dims", &set_partial_dims, py::arg("dims"), py::arg("reduce_type") = "sum")
      .def("_clean_partial_status", [](TensorDistAttr& a) { a.clear_partial(); })
      .def("_clean_partial_dims", [](TensorDistAttr& a, const std::vector<int64_t>& dims) {
        for (int64_t d : dims)
          if (d >= 0 && d < static_cast<int64_t>(kMaxMeshDims)) a.clear_partial(static_cast<int>(d));
      })
      .def_property_readonly("partial_status", [](const TensorDistAttr& a) {
        py::dict d;
        for (int64_t m : a.partial_dims()) d[py::int_(m)] = reduce_type_name(a.partial_type(static_cast<int>(m)));
        return d;
      })
      .def("__eq__", [](const TensorDistAttr& a, const py::object& b) {
        return py::isinstance<TensorDistAttr>(b) && a == b.cast<const TensorDistAttr&>();
      })
      .def("__repr__", [](const TensorDistAttr& a) { return "TensorDistAttr" + a.to_string(); })
      .def("__str__", &TensorDistAttr::to_string)
      .def(py::pickle([](const TensorDistAttr& a) {
             return py::make_tuple(mesh_or_none(a), a.multi_dims_mapping(), py::cast(a.partial_dims()),
                                   [&] {
                                     std::vector<std::string> t;
                                     for (int64_t d : a.partial_dims()) t.push_back(reduce_type_name(a.partial_type(int(d))));
                                     return t;
                                   }());
           },
           [](const py::tuple& t) {
             TensorDistAttr a(mesh_from(t[0]));
             a.set_multi_dims_mapping(t[1].cast<std::vector<std::vector<int64_t>>>());
             auto dims = t[2].cast<std::vector<int64_t>>();
             auto types = t[3].cast<std::vector<std::string>>();
             for (std::size_t i = 0; i < dims.size(); ++i) set_partial_dims(a, {dims[i]}, types[i]);
             return a;
           }));

  py::class_<DistMetaTensor>(m, "DistTensorSpec")
      .def(py::init<>())
      .def(py::init([](const std::vector<int64_t>& shape, const TensorDistAttr& attr) {
             return DistMetaTensor(shape_from(shape), annotated_or_replicated(attr, shape.size()));
           }),
           py::arg("shape"), py::arg("dist_attr"))
      // Paddle's tests copy a spec and then change the copy (reverse tests start from a forward spec).
      .def(py::init([](const DistMetaTensor& other) { return other; }), py::arg("other"))
      .def("__copy__", [](const DistMetaTensor& t) { return t; })
      .def("__deepcopy__", [](const DistMetaTensor& t, const py::dict&) { return t; }, py::arg("memo"))
      .def_property("shape", [](const DistMetaTensor& t) { return shape_vec(t.shape); },
                    [](DistMetaTensor& t, const std::vector<int64_t>& s) { t.shape = shape_from(s); })
      .def_property("dims_mapping", [](const DistMetaTensor& t) { return t.attr.dims_mapping(); },
                    [](DistMetaTensor& t, const std::vector<int64_t>& m) { t.attr.set_dims_mapping(m); })
      .def("set_dims_mapping", [](DistMetaTensor& t, const std::vector<int64_t>& m) { t.attr.set_dims_mapping(m); })
      .def_property("process_mesh", [](const DistMetaTensor& t) { return mesh_or_none(t.attr); },
                    [](DistMetaTensor& t, const py::object& m) { t.attr.set_mesh(mesh_from(m)); })
      .def("set_process_mesh", [](DistMetaTensor& t, const py::object& m) { t.attr.set_mesh(mesh_from(m)); })
      .def_property("dist_attr", [](const DistMetaTensor& t) { return t.attr; },
                    [](DistMetaTensor& t, const TensorDistAttr& a) { t.attr = a; })
      .def("__repr__", [](const DistMetaTensor& t) {
        std::string s = "DistTensorSpec(shape=[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
        return s + "], dist_attr=" + t.attr.to_string() + ")";
      });

  bind_factor_table(m);

  py::class_<PyRule>(m, "SpmdRule")
      // Positional calls (Paddle's style) take the first overload and never build a kwargs dict.
      .def("infer_forward", [](const PyRule& r, const py::args& a) {
        return call(r, r.entry->forward, "infer_forward", a, nullptr);
      })
      .def("infer_forward", [](const PyRule& r, const py::args& a, const py::kwargs& k) {
        return call(r, r.entry->forward, "infer_forward", a, &k);
      })
      .def("infer_backward", [](const PyRule& r, const py::args& a) {
        return call(r, r.entry->second, "infer_backward", a, nullptr);
      })
      .def("infer_backward", [](const PyRule& r, const py::args& a, const py::kwargs& k) {
        return call(r, r.entry->second, "infer_backward", a, &k);
      })
      .def("factors", [](const PyRule& r, const py::args& a) { return factors(r, a, nullptr); })
      .def("factors", [](const PyRule& r, const py::args& a, const py::kwargs& k) { return factors(r, a, &k); })
      .def_property_readonly("name", [](const PyRule& r) { return r.name; })
      .def_property_readonly("op", [](const PyRule& r) { return r.entry->name; })
      .def_property_readonly("spec", [](const PyRule& r) { return r.entry->spec; })
      .def_property_readonly("handwritten", [](const PyRule& r) { return r.entry->handwritten; })
      .def_property_readonly("backward_kind", [](const PyRule& r) -> py::object {
        switch (r.entry->second_kind) {
          case SecondKind::kReverse: return py::str("reverse");
          case SecondKind::kGrad: return py::str("grad");
          default: return py::none();
        }
      })
      .def_property_readonly("grad_op", [](const PyRule& r) -> py::object {
        if (r.entry->grad_rule.empty()) return py::none();
        return py::str(r.entry->grad_rule);
      })
      .def_property_readonly("forward_params", [](const PyRule& r) { return params_of(r.entry->forward.signature); })
      .def_property_readonly("backward_params", [](const PyRule& r) { return params_of(r.entry->second.signature); })
      .def_property_readonly("forward_signature", [](const PyRule& r) { return r.entry->forward.signature.describe(); })
      .def_property_readonly("backward_signature", [](const PyRule& r) { return r.entry->second.signature.describe(); })
      .def("__repr__", [](const PyRule& r) { return "<SpmdRule " + r.name + " (" + r.entry->spec + ")>"; });

  m.def("get_phi_spmd_rule", [](const std::string& name) {
    const RuleEntry* e = Registry::instance().find(name);
    if (!e) throw KeyError("no SPMD rule is registered under the name '" + name + "'");
    return PyRule{e, name};
  });
  m.def("contains_spmd_rule", [](const std::string& name) { return Registry::instance().find(name) != nullptr; });
  m.def("list_spmd_rules", [] { return Registry::instance().names(); });
  m.def("rule_entries", [] {
    py::list out;
    for (const RuleEntry* e : Registry::instance().entries()) {
      py::dict d;
      d["name"] = e->name;
      d["aliases"] = e->aliases;
      d["spec"] = e->spec;
      d["handwritten"] = e->handwritten;
      d["backward_kind"] = e->second_kind == SecondKind::kReverse ? "reverse" : e->second_kind == SecondKind::kGrad ? "grad" : "none";
      d["grad_op"] = e->grad_rule;
      out.append(d);
    }
    return out;
  });
}
