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

// The Python types of DistTensorSpec and SpmdRule, set when the module is made: an argument of
// exactly that type is read straight from its instance (no registry lookup per argument).
PyTypeObject* spec_type = nullptr;
PyTypeObject* rule_type = nullptr;

template <typename T>
T* instance_value(PyObject* obj) {
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  return static_cast<T*>(inst->simple_layout ? inst->simple_value_holder[0] : inst->get_value_and_holder().value_ptr());
}

const DistMetaTensor* as_tensor(const py::handle& h) {
  if (Py_TYPE(h.ptr()) == spec_type) return instance_value<DistMetaTensor>(h.ptr());
  py::detail::make_caster<DistMetaTensor> caster;  // a subclass: one type lookup, no copy
  if (!caster.load(h, false)) return nullptr;
  return &py::detail::cast_op<const DistMetaTensor&>(caster);
}

int64_t as_int(const CallSite& where, const Param& p, std::size_t pos, const py::handle& h, bool int32) {
  if (!PyLong_CheckExact(h.ptr()) && (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))) {
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

// The arguments of a vectorcall: `nargs` positional ones, then one per name in `kwnames`.
ArgPack parse_args(const CallSite& where, const Signature& sig, PyObject* const* args, std::size_t nargs,
                   PyObject* kwnames) {
  const auto& params = sig.params;
  if (nargs > params.size())
    throw TypeError(where + " takes at most " + std::to_string(params.size()) + " arguments (" + sig.describe() +
                    "), got " + std::to_string(nargs));
  ArgPack pack(params.size());
  for (std::size_t i = 0; i < nargs; ++i) parse_one(where, params[i], i, args[i], &pack[i]);
  const std::size_t nkw = kwnames ? static_cast<std::size_t>(PyTuple_GET_SIZE(kwnames)) : 0;
  uint64_t given = 0;  // a bit per parameter named by a keyword (signatures have < 64)
  for (std::size_t k = 0; k < nkw; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    const char* text = PyUnicode_AsUTF8(name);
    std::size_t i = nargs;
    while (i < params.size() && params[i].name != text) ++i;
    if (i == params.size()) {
      for (std::size_t j = 0; j < nargs; ++j)
        if (params[j].name == text)
          throw TypeError(where + " got multiple values for argument '" + std::string(text) + "'");
      throw TypeError(where + " got an unexpected keyword argument '" + std::string(text) + "'");
    }
    parse_one(where, params[i], i, args[nargs + k], &pack[i]);
    given |= uint64_t{1} << (i & 63);
  }
  for (std::size_t i = nargs; i < params.size(); ++i) {
    if (given >> (i & 63) & 1u) continue;
    const Param& p = params[i];
    if (p.kind == ArgKind::kOptionalTensor || p.kind == ArgKind::kOutputTensor) {
      pack[i].tensor = &absent_tensor();
    } else if (p.has_default) {
      pack[i] = p.default_value;
    } else {
      throw TypeError(where + " is missing argument " + std::to_string(i) + " '" + p.name + "' (signature: " +
                      sig.describe() + ")");
    }
  }
  return pack;
}

// ---- results -------------------------------------------------------------------------------
// A new Python TensorDistAttr owning `a` (moved): pybind11's own steps for a new instance (its
// type's allocation, the value and its holder), without the per-call type lookup and the search
// for an existing instance of that address that py::cast does.
const py::detail::type_info* attr_type = nullptr;  // set when the module is made

PyObject* new_attr(TensorDistAttr&& a) {
  PyTypeObject* type = attr_type->type;
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) throw py::error_already_set();
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  // TensorDistAttr's layout is pybind11's simple one (one type, a unique_ptr holder), which
  // allocate_layout would choose after looking the type up again
  inst->simple_layout = true;
  inst->simple_value_holder[0] = nullptr;
  inst->simple_holder_constructed = false;
  inst->simple_instance_registered = false;
  auto* value = new TensorDistAttr(std::move(a));
  inst->simple_value_holder[0] = value;
  inst->owned = true;
  // Not entered in pybind11's map of C++ addresses to instances: that map lets a C++ pointer be
  // cast back to its Python object, and nothing hands out this value's address (the attribute's
  // getters return copies). Its flag says so, and both deallocs skip the removal.
  new (&inst->simple_value_holder[1]) std::unique_ptr<TensorDistAttr>(value);
  inst->simple_holder_constructed = true;
  return obj;
}

// Its counterpart: TensorDistAttr's tp_dealloc. An instance in the layout new_attr writes (no
// weak references, no kept-alive patients) is taken apart directly; any other goes to pybind11's
// own dealloc, which would look the type up again to find the same holder.
destructor pybind_attr_dealloc = nullptr;

void attr_dealloc(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  PyTypeObject* type = Py_TYPE(self);
  if (type != attr_type->type || !inst->simple_layout || !inst->simple_holder_constructed || inst->weakrefs ||
      inst->has_patients) {
    pybind_attr_dealloc(self);
    return;
  }
  void* value = inst->simple_value_holder[0];
  if (inst->simple_instance_registered && !py::detail::deregister_instance(inst, value, attr_type))
    py::pybind11_fail("TensorDistAttr dealloc: the instance was not registered");
  reinterpret_cast<std::unique_ptr<TensorDistAttr>*>(&inst->simple_value_holder[1])->~unique_ptr();
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* to_python(ArgDistAttr&& a) {
  if (auto* t = std::get_if<TensorDistAttr>(&a)) return new_attr(std::move(*t));
  auto& list = std::get<std::vector<TensorDistAttr>>(a);
  py::list out(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) PyList_SET_ITEM(out.ptr(), i, new_attr(std::move(list[i])));
  return out.release().ptr();
}

py::tuple to_python(SpmdInfo&& info) {
  py::list ins(info.inputs.size()), outs(info.outputs.size());
  for (std::size_t i = 0; i < info.inputs.size(); ++i) PyList_SET_ITEM(ins.ptr(), i, to_python(std::move(info.inputs[i])));
  for (std::size_t i = 0; i < info.outputs.size(); ++i) PyList_SET_ITEM(outs.ptr(), i, to_python(std::move(info.outputs[i])));
  PyObject* pair = PyTuple_New(2);
  if (!pair) throw py::error_already_set();
  PyTuple_SET_ITEM(pair, 0, ins.release().ptr());
  PyTuple_SET_ITEM(pair, 1, outs.release().ptr());
  return py::reinterpret_steal<py::tuple>(pair);
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
    if (count > kInline) storage_.reserve(count - kInline);
    tensor_params = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!is_tensor_kind(sig.params[i].kind)) continue;
      const bool input = tensor_params++ < entry.num_inputs;
      auto fix = [&](const DistMetaTensor* t) -> const DistMetaTensor* {
        if (t->absent()) return t;
        if (input && reverse) return keep(t->shape, TensorDistAttr(mesh, t->rank()));
        if (!input && !t->attr.mesh()) {
          TensorDistAttr a = annotated_or_replicated(t->attr, t->rank());
          a.set_mesh(mesh);
          return keep(t->shape, std::move(a));
        }
        return t;
      };
      Arg& a = pack[i];
      if (a.tensor) a.tensor = fix(a.tensor);
      for (auto& t : a.tensors) t = fix(t);
    }
  }

  ~ReadAsPaddleDoes() {
    for (std::size_t i = 0; i < n_inline_; ++i) reinterpret_cast<DistMetaTensor*>(inline_[i])->~DistMetaTensor();
  }
  ReadAsPaddleDoes(const ReadAsPaddleDoes&) = delete;
  ReadAsPaddleDoes& operator=(const ReadAsPaddleDoes&) = delete;

 private:
  template <typename F>
  static void for_each(const Arg& a, F&& f) {
    if (a.tensor) f(a.tensor);
    for (const DistMetaTensor* t : a.tensors) f(t);
  }
  // The first few replacements live here (no allocation for the common calls), the rest in storage_.
  const DistMetaTensor* keep(const Shape& shape, TensorDistAttr&& attr) {
    if (n_inline_ < kInline) return new (inline_[n_inline_++]) DistMetaTensor(shape, std::move(attr));
    storage_.emplace_back(shape, std::move(attr));
    return &storage_.back();
  }
  static constexpr std::size_t kInline = 4;
  alignas(DistMetaTensor) unsigned char inline_[kInline][sizeof(DistMetaTensor)];
  std::size_t n_inline_ = 0;
  std::vector<DistMetaTensor> storage_;
};

py::tuple call(const PyRule& r, const RuleFunction& fn, const char* which, PyObject* const* args, std::size_t nargs,
               PyObject* kwnames) {
  const CallSite where{&r.name, which};
  if (!fn.fn) throw NotImplementedError(where.str() + ": rule '" + r.name + "' has no second function");
  ArgPack pack = parse_args(where, fn.signature, args, nargs, kwnames);
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
FactorTable factors(const PyRule& r, PyObject* const* args, std::size_t nargs, PyObject* kwnames) {
  const CallSite where{&r.name, "factors"};
  if (!r.entry->factors)
    throw ValueError(where.str() + ": rule '" + r.name + "' is hand-written C++ (" + r.entry->spec + ") and has no factor table");
  ArgPack pack = parse_args(where, r.entry->forward.signature, args, nargs, kwnames);
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

// ---- SpmdRule's call methods: plain vectorcall functions -----------------------------------
// pybind11's dispatcher would copy the arguments into a tuple (and a dict for keywords) and try
// overloads in turn; these read the caller's argument vector as it is.
const PyRule& rule_of(PyObject* self) {
  if (Py_TYPE(self) == rule_type) return *instance_value<PyRule>(self);
  return py::cast<const PyRule&>(py::handle(self));
}

template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();  // the module's translator: ValueError -> ValueError, ...
  }
  return nullptr;
}

PyObject* rule_infer_forward(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    const PyRule& r = rule_of(self);
    return call(r, r.entry->forward, "infer_forward", args, static_cast<std::size_t>(nargs), kwnames);
  });
}

PyObject* rule_infer_backward(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    const PyRule& r = rule_of(self);
    return call(r, r.entry->second, "infer_backward", args, static_cast<std::size_t>(nargs), kwnames);
  });
}

PyObject* rule_factors(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    return py::cast(factors(rule_of(self), args, static_cast<std::size_t>(nargs), kwnames));
  });
}

PyMethodDef rule_methods[] = {
    {"infer_forward", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(rule_infer_forward)),
     METH_FASTCALL | METH_KEYWORDS, "infer_forward(*inputs, *attrs) -> (input layouts, output layouts)"},
    {"infer_backward", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(rule_infer_backward)),
     METH_FASTCALL | METH_KEYWORDS,
     "infer_backward(*inputs, *outputs, *attrs) -> (input layouts, output layouts); a grad rule's arguments "
     "for a grad second function"},
    {"factors", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(rule_factors)),
     METH_FASTCALL | METH_KEYWORDS, "factors(*infer_forward's arguments) -> FactorTable"},
};

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
  { void spmdkit_bind_graph_build(py::module_&); spmdkit_bind_graph_build(m); }  // spmd_rules/propagation/
  { void spmdkit_bind_op_signature(py::module_&); spmdkit_bind_op_signature(m); }  // spmd_rules/propagation/
  { void spmdkit_bind_mlir_import(py::module_&); spmdkit_bind_mlir_import(m); }  // spmd_rules/ir/
  { void spmdkit_bind_partition_hits(py::module_&); spmdkit_bind_partition_hits(m); }  // spmd_rules/partition/
  { void spmdkit_bind_region_scan(py::module_&); spmdkit_bind_region_scan(m); }  // spmd_rules/partition/

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

  py::class_<PyRule> rule_class(m, "SpmdRule");
  rule_class
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
  for (PyMethodDef& def : rule_methods) {  // the call methods (see rule_infer_forward)
    py::object method = py::reinterpret_steal<py::object>(
        PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(rule_class.ptr()), &def));
    if (!method) throw py::error_already_set();
    rule_class.attr(def.ml_name) = method;
  }
  rule_type = reinterpret_cast<PyTypeObject*>(rule_class.ptr());
  attr_type = py::detail::get_type_info(typeid(TensorDistAttr));
  // new_attr writes pybind11's simple instance layout: check that this is the layout pybind11 uses
  if (!attr_type->simple_type || !attr_type->simple_ancestors ||
      attr_type->holder_size_in_ptrs * sizeof(void*) < sizeof(std::unique_ptr<TensorDistAttr>))
    throw std::runtime_error("TensorDistAttr: unexpected pybind11 instance layout");
  if (PyType_HasFeature(attr_type->type, Py_TPFLAGS_HAVE_GC))  // attr_dealloc does not untrack
    throw std::runtime_error("TensorDistAttr: unexpected GC-tracked instances");
  pybind_attr_dealloc = attr_type->type->tp_dealloc;
  attr_type->type->tp_dealloc = attr_dealloc;
  spec_type = reinterpret_cast<PyTypeObject*>(m.attr("DistTensorSpec").ptr());

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
