#include "factor_table.h"

#include "errors.h"

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

namespace spmd {

int FactorTable::add(int64_t size, Kind kind) {
  sizes.push_back(size);
  kinds.push_back(kind);
  blocked.push_back(false);
  return num_factors() - 1;
}

FactorTable FactorTable::canonical() const {
  std::vector<int> renamed(sizes.size(), -1);
  FactorTable c;
  auto walk = [&](const std::vector<TensorFactors>& from, std::vector<TensorFactors>& to) {
    for (const TensorFactors& t : from) {
      TensorFactors dims;
      for (const DimFactors& d : t) {
        DimFactors ids;
        for (int f : d) {
          if (renamed[f] < 0) {
            renamed[f] = c.add(sizes[f], kinds[f]);
            c.blocked.back() = blocked[f];
          }
          ids.push_back(renamed[f]);
        }
        dims.push_back(std::move(ids));
      }
      to.push_back(std::move(dims));
    }
  };
  walk(operands, c.operands);
  walk(results, c.results);
  for (std::size_t f = 0; f < sizes.size(); ++f)  // factors no tensor uses keep their order at the end
    if (renamed[f] < 0) {
      renamed[f] = c.add(sizes[f], kinds[f]);
      c.blocked.back() = blocked[f];
    }
  return c;
}

namespace {
int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
}  // namespace

// Walks both shapes at once. `made_in` / `made_out` are the products of the factors given so far
// to each side; `goal_in` / `goal_out` the products of the dims opened so far. A side whose
// factors cover its open dims opens its next dim. While the two products are equal, the next
// factor is the gcd of what each side still needs (shared by both), or, if that is 1, each side
// takes what it needs alone. While they differ, the side that is behind catches up: by exactly
// the gap when that divides what it needs, else by what it needs over the gcd.
FactorTable reshape_factor_table(const std::string& op, const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  int64_t n_in = 1, n_out = 1;
  for (int64_t s : in) n_in *= s;
  for (int64_t s : out) n_out *= s;
  for (int64_t s : in)
    if (s < 0) throw ValueError(op + ": the factor table of a reshape needs known sizes");
  if (n_in != n_out)
    throw ValueError(op + ": reshape from " + std::to_string(n_in) + " to " + std::to_string(n_out) + " elements");
  if (n_in == 0) throw ValueError(op + ": a reshape of a tensor with no elements has no factor table (as Shardy)");
  FactorTable t;
  t.operands.assign(1, FactorTable::TensorFactors(in.size()));
  t.results.assign(1, FactorTable::TensorFactors(out.size()));
  FactorTable::TensorFactors& fin = t.operands[0];
  FactorTable::TensorFactors& fout = t.results[0];
  const std::size_t rin = in.size(), rout = out.size();
  std::size_t i = 0, o = 0;
  int64_t goal_in = 1, goal_out = 1, made_in = 1, made_out = 1;
  while (i < rin || o < rout) {
    if (i < rin && in[i] == 1) { fin[i++].push_back(t.add(1)); continue; }
    if (o < rout && out[o] == 1) { fout[o++].push_back(t.add(1)); continue; }
    if (i < rin && goal_in == made_in) goal_in *= in[i];
    if (o < rout && goal_out == made_out) goal_out *= out[o];
    int64_t need_in = goal_in / made_in, need_out = goal_out / made_out;
    const int64_t g = gcd64(need_in, need_out);
    auto catch_up = [g](int64_t need, int64_t behind, int64_t ahead) {
      if (ahead % behind == 0 && need % (ahead / behind) == 0) return ahead / behind;
      return need > g ? need / g : need;
    };
    if (made_in == made_out) {
      if (g > 1) {
        const int f = t.add(g);
        fin[i].push_back(f);
        fout[o].push_back(f);
        made_in *= g;
        made_out *= g;
      } else {
        fin[i].push_back(t.add(need_in));
        made_in *= need_in;
        fout[o].push_back(t.add(need_out));
        made_out *= need_out;
      }
    } else if (made_in < made_out) {
      need_in = catch_up(need_in, made_in, made_out);
      fin[i].push_back(t.add(need_in));
      made_in *= need_in;
    } else {
      need_out = catch_up(need_out, made_out, made_in);
      fout[o].push_back(t.add(need_out));
      made_out *= need_out;
    }
    if (i < rin && goal_in == made_in) ++i;
    if (o < rout && goal_out == made_out) ++o;
  }
  return t;
}

}  // namespace spmd
