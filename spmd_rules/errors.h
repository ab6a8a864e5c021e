// Error types that the bindings turn into Python exceptions of the same name.
// Every message names the op, the argument and the dim, so a user can find the mistake.
#pragma once
#include <stdexcept>
#include <string>

namespace spmd {

struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct KeyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotImplementedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace spmd
