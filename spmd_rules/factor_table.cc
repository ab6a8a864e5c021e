#include "factor_table.h"

namespace spmd {
namespace {

std::string factor_name(int id) {
  if (id < 18) return std::string(1, static_cast<char>('i' + id));
  return "z_" + std::to_string(id - 17);
}

void print_tensors(std::string& s, const std::vector<FactorTable::TensorFactors>& tensors) {
  s += '(';
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    if (t) s += ", ";
    s += '[';
    for (std::size_t d = 0; d < tensors[t].size(); ++d) {
      if (d) s += ", ";
      for (int f : tensors[t][d]) s += factor_name(f);
    }
    s += ']';
  }
  s += ')';
}

void print_kind(std::string& s, const FactorTable& t, const char* label, bool (*pick)(const FactorTable&, int)) {
  std::string names;
  for (int f = 0; f < t.num_factors(); ++f)
    if (pick(t, f)) names += (names.empty() ? "" : ", ") + factor_name(f);
  if (!names.empty()) s += std::string(" ") + label + "={" + names + "}";
}

}  // namespace

std::string FactorTable::to_string() const {
  std::string s;
  print_tensors(s, operands);
  s += "->";
  print_tensors(s, results);
  s += " {";
  for (int f = 0; f < num_factors(); ++f) s += (f ? ", " : "") + factor_name(f) + "=" + std::to_string(sizes[f]);
  s += '}';
  print_kind(s, *this, "reduction", [](const FactorTable& t, int f) { return t.kinds[f] == Kind::kReduction; });
  print_kind(s, *this, "need_replication", [](const FactorTable& t, int f) { return t.kinds[f] == Kind::kNeedReplication; });
  print_kind(s, *this, "permutation", [](const FactorTable& t, int f) { return t.kinds[f] == Kind::kPermutation; });
  print_kind(s, *this, "blocked_propagation", [](const FactorTable& t, int f) { return static_cast<bool>(t.blocked[f]); });
  return s;
}

}  // namespace spmd
