// The einsum-like notation of a rule, parsed once per op (never on the hot path).
// Grammar and meaning: docs/spec_language.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "spmd_limits.h"
#include "small_vector.h"

namespace spmd {

struct NotationItem {
  // kRest ('_') is the tensor's remaining dims, each its own and whole (generic rules).
  // kOperands ('*') and kResult ('@') stand for a whole pattern given at call time by an einsum
  // equation attribute (EinsumCall::equation): its operand patterns, one per tensor, or its result.
  enum Kind : uint8_t { kLetter, kEllipsis, kGroup, kFlatGroup, kOne, kRest, kOperands, kResult };
  Kind kind;
  char name;       // letter a-z, group A-Z; 0 for ellipsis and one
  bool optional;   // letter?
};

using Pattern = SmallVec<NotationItem, kMaxRank + 2>;

struct Notation {
  std::vector<Pattern> inputs;
  std::vector<Pattern> outputs;
  // Throws ValueError naming `op` on a malformed notation.
  static Notation parse(const std::string& op, const std::string& text);
};

// An einsum equation given at call time ("ij,jk->ik", "...ij,...jk", "ii->i"), parsed into
// fixed-size patterns (no heap on the good path). Labels a-z and A-Z are renamed to letters in
// order of first appearance; a label repeated within one operand or within the result (a
// diagonal) becomes a dim that is never split, in every operand and in the result (Paddle's
// rule); without "->" the result is
// numpy's: "..." if any operand has it, then the labels used once, in character order.
constexpr std::size_t kMaxOperands = 8;
struct Equation {
  SmallVec<Pattern, kMaxOperands> operands;
  Pattern result;
  bool outer = false;  // two operands, no shared or repeated label, no ellipsis, nothing summed
  // Throws ValueError naming `op` and the attribute on a malformed equation.
  void parse(const std::string& op, const char* attr, const std::string& text);
};

}  // namespace spmd
