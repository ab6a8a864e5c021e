#include "notation.h"

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
    } else if (c == '*') {
      p.push_back({NotationItem::kRest, 0, false});
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
  n.inputs = parse_list(op, text, 0, arrow);
  n.outputs = parse_list(op, text, arrow + 2, text.size());
  return n;
}

}  // namespace spmd
