#include "notation.h"

#include <cstring>

#include "errors.h"

namespace spmd {

static Pattern parse_pattern(const std::string& op, const std::string& text, std::size_t begin, std::size_t end) {
  Pattern p;
  for (std::size_t i = begin; i < end; ++i) {
    char c = text[i];
    if (c == ' ') continue;
    if (c >= 'a' && c <= 'z') {
      bool opt = i + 1 < end && text[i + 1] == '?';
      p.push_back({NotationItem::kLetter, c, opt});
      if (opt) ++i;
    } else if (c >= 'A' && c <= 'Z') {
      p.push_back({NotationItem::kGroup, c, false});
    } else if (c == '(' && i + 2 < end && text[i + 1] >= 'A' && text[i + 1] <= 'Z' && text[i + 2] == ')') {
      p.push_back({NotationItem::kFlatGroup, text[i + 1], false});
      i += 2;
    } else if (c == '.' && text.compare(i, 3, "...") == 0 && i + 3 <= end) {
      p.push_back({NotationItem::kEllipsis, 0, false});
      i += 2;
    } else if (c == '1') {
      p.push_back({NotationItem::kOne, 0, false});
    } else if (c == '_') {
      p.push_back({NotationItem::kRest, 0, false});
    } else if (c == '*' || c == '@') {
      p.push_back({c == '*' ? NotationItem::kOperands : NotationItem::kResult, 0, false});
    } else {
      throw ValueError(op + ": bad character '" + std::string(1, c) + "' in notation \"" + text + "\"");
    }
  }
  return p;
}

static std::vector<Pattern> parse_list(const std::string& op, const std::string& text, std::size_t begin,
                                       std::size_t end) {
  std::vector<Pattern> out;
  std::size_t start = begin;
  for (std::size_t i = begin; i <= end; ++i)
    if (i == end || text[i] == ',') {
      out.push_back(parse_pattern(op, text, start, i));
      start = i + 1;
    }
  return out;
}

Notation Notation::parse(const std::string& op, const std::string& text) {
  std::size_t arrow = text.find("->");
  if (arrow == std::string::npos) throw ValueError(op + ": notation \"" + text + "\" has no '->'");
  Notation n;
  if (text.find_first_not_of(' ') != arrow) n.inputs = parse_list(op, text, 0, arrow);  // "-> ...": no inputs
  n.outputs = parse_list(op, text, arrow + 2, text.size());
  return n;
}

namespace {

// 0-25 for a-z, 26-51 for A-Z, -1 for anything else.
int label_index(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

[[noreturn]] void bad_equation(const std::string& op, const char* attr, const std::string& text, const std::string& why) {
  throw ValueError(op + ": attribute '" + attr + "' = \"" + text + "\": " + why);
}

}  // namespace

void Equation::parse(const std::string& op, const char* attr, const std::string& text) {
  operands.clear();
  result.clear();
  outer = false;
  const std::size_t arrow = text.find("->");
  const std::size_t lhs_end = arrow == std::string::npos ? text.size() : arrow;
  if (arrow != std::string::npos && text.find("->", arrow + 2) != std::string::npos)
    bad_equation(op, attr, text, "more than one '->'");
  // Pass 1: label counts per operand (diagonals) and in total, and the operand boundaries.
  uint64_t diag = 0, seen = 0;
  uint8_t total[52] = {};
  int8_t letter[52];
  std::memset(letter, -1, sizeof(letter));
  int next_letter = 0;
  bool any_ellipsis = false;
  auto scan = [&](std::size_t begin, std::size_t end, bool is_result) {
    uint8_t count[52] = {};
    bool ellipsis = false;
    for (std::size_t i = begin; i < end; ++i) {
      const char c = text[i];
      if (c == ' ') continue;
      if (c == '.') {
        if (text.compare(i, 3, "...") != 0 || i + 3 > end) bad_equation(op, attr, text, "a '.' that is not part of '...'");
        if (ellipsis) bad_equation(op, attr, text, "two '...' in one operand");
        ellipsis = true;
        i += 2;
        continue;
      }
      const int l = label_index(c);
      if (l < 0) bad_equation(op, attr, text, std::string("bad character '") + c + "'");
      if (is_result) {
        // Twice in the result: the values land on a diagonal of the result (Paddle's einsum
        // accepts "ij->ii"), so that dim is never split, as an operand's diagonal.
        if (count[l]) diag |= uint64_t{1} << l;
        if (!(seen >> l & 1u)) bad_equation(op, attr, text, std::string("label '") + c + "' of the result is in no operand");
      } else {
        if (count[l]) diag |= uint64_t{1} << l;
        if (!(seen >> l & 1u)) {
          if (next_letter == 26) bad_equation(op, attr, text, "more than 26 distinct labels");
          letter[l] = static_cast<int8_t>(next_letter++);
          seen |= uint64_t{1} << l;
        }
        ++total[l];
      }
      ++count[l];
    }
    if (!is_result) any_ellipsis |= ellipsis;
  };
  std::size_t n_operands = 0;
  for (std::size_t begin = 0;;) {
    std::size_t comma = text.find(',', begin);
    const std::size_t end = comma == std::string::npos || comma > lhs_end ? lhs_end : comma;
    if (++n_operands > kMaxOperands)
      bad_equation(op, attr, text, "more than " + std::to_string(kMaxOperands) + " operands");
    scan(begin, end, false);
    if (end == lhs_end) break;
    begin = end + 1;
  }
  if (arrow != std::string::npos) scan(arrow + 2, text.size(), true);
  // Pass 2: the patterns.
  auto item = [&](char c) -> NotationItem {
    const int l = label_index(c);
    if (diag >> l & 1u) return {NotationItem::kOne, 0, false};
    return {NotationItem::kLetter, static_cast<char>('a' + letter[l]), false};
  };
  auto build = [&](std::size_t begin, std::size_t end, Pattern* p) {
    for (std::size_t i = begin; i < end; ++i) {
      const char c = text[i];
      if (c == ' ') continue;
      if (c == '.') {
        if (p->size() >= Pattern::capacity()) bad_equation(op, attr, text, "an operand with too many dims");
        p->push_back({NotationItem::kEllipsis, 0, false});
        i += 2;
        continue;
      }
      if (p->size() >= Pattern::capacity()) bad_equation(op, attr, text, "an operand with too many dims");
      p->push_back(item(c));
    }
  };
  for (std::size_t begin = 0;;) {
    std::size_t comma = text.find(',', begin);
    const std::size_t end = comma == std::string::npos || comma > lhs_end ? lhs_end : comma;
    operands.push_back(Pattern());
    build(begin, end, &operands.back());
    if (end == lhs_end) break;
    begin = end + 1;
  }
  if (arrow != std::string::npos) {
    build(arrow + 2, text.size(), &result);
  } else {  // numpy's implicit result: "..." first, then the labels used once, in character order
    if (any_ellipsis) result.push_back({NotationItem::kEllipsis, 0, false});
    for (char c : {'A', 'a'})
      for (int k = 0; k < 26; ++k) {
        const int l = label_index(static_cast<char>(c + k));
        if (total[l] == 1 && !(diag >> l & 1u)) result.push_back(item(static_cast<char>(c + k)));
      }
  }
  // Paddle's outer product: two operands sharing no label, no diagonal, no ellipsis, and a result
  // that keeps every label.
  if (operands.size() == 2 && !any_ellipsis && !diag) {
    std::size_t labels = 0, kept = 0;
    bool once = true;
    for (int l = 0; l < 52; ++l) {
      if (!total[l]) continue;
      ++labels;
      once &= total[l] == 1;
    }
    for (const NotationItem& it : result) kept += it.kind == NotationItem::kLetter;
    outer = once && kept == labels && result.size() == kept;
  }
}

}  // namespace spmd
