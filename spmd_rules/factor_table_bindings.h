// Python binding of spmd::FactorTable (SpmdRule.factors returns one). Included by bindings.cc only.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "factor_table.h"

namespace spmd {

inline const char* factor_kind_name(FactorTable::Kind k) {
  switch (k) {
    case FactorTable::Kind::kReduction: return "reduction";
    case FactorTable::Kind::kNeedReplication: return "need_replication";
    case FactorTable::Kind::kPermutation: return "permutation";
    default: return "pass_through";
  }
}

inline void bind_factor_table(pybind11::module_& m) {
  namespace py = pybind11;
  auto ids_of = [](const FactorTable& t, FactorTable::Kind kind) {
    std::vector<int> out;
    for (int f = 0; f < t.num_factors(); ++f)
      if (t.kinds[f] == kind) out.push_back(f);
    return out;
  };
  py::class_<FactorTable>(m, "FactorTable",
                          "A rule's factor table for one call (Shardy's OpShardingRule): factor sizes and kinds, "
                          "and per tensor dim its factors, major to minor.")
      .def_readonly("sizes", &FactorTable::sizes)
      .def_property_readonly("kinds", [](const FactorTable& t) {
        std::vector<std::string> out;
        for (FactorTable::Kind k : t.kinds) out.push_back(factor_kind_name(k));
        return out;
      })
      .def_readonly("operands", &FactorTable::operands)
      .def_readonly("results", &FactorTable::results)
      .def_property_readonly("reduction", [ids_of](const FactorTable& t) { return ids_of(t, FactorTable::Kind::kReduction); })
      .def_property_readonly("need_replication",
                             [ids_of](const FactorTable& t) { return ids_of(t, FactorTable::Kind::kNeedReplication); })
      .def_property_readonly("permutation", [ids_of](const FactorTable& t) { return ids_of(t, FactorTable::Kind::kPermutation); })
      .def_property_readonly("blocked", [](const FactorTable& t) {
        std::vector<int> out;
        for (int f = 0; f < t.num_factors(); ++f)
          if (t.blocked[f]) out.push_back(f);
        return out;
      })
      .def_property_readonly("num_factors", &FactorTable::num_factors)
      .def("canonical", &FactorTable::canonical, "the table with factors renumbered in order of first use")
      .def("equivalent", &FactorTable::equivalent, py::arg("other"), "equal up to renumbering the factors")
      .def("__eq__", [](const FactorTable& a, const py::object& b) {
        return py::isinstance<FactorTable>(b) && a == b.cast<const FactorTable&>();
      })
      .def("__hash__", [](const FactorTable& t) { return py::hash(py::str(t.to_string())); })
      .def("__str__", &FactorTable::to_string)
      .def("__repr__", [](const FactorTable& t) { return "<FactorTable " + t.to_string() + ">"; });
}

}  // namespace spmd
