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
  enum Kind : uint8_t { kLetter, kEllipsis, kGroup, kFlatGroup, kOne, kRest };  // kRest: '*'
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

}  // namespace spmd
