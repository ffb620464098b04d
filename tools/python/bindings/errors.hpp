#pragma once
// krc's errors as Python exceptions (krc/errors.py defines the classes): InputError keeps the
// file, the place and the problem; LimitError the Python option that lifts the limit.
#include <string>

#include "krc/automata/input_error.hpp"

namespace krc::python {

// A limit whose option the binding knows by its Python name (decompose(max_images=...)).
class OptionLimitError : public LimitError {
 public:
  OptionLimitError(const std::string& message, std::string option)
      : LimitError(message), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

}  // namespace krc::python
