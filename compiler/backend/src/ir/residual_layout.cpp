#include "ir/residual_layout.hpp"

namespace krc {

Subspace ResidualLayout::allocate(const std::string& name,
                                  const std::vector<std::string>& value_labels, Role role) {
  Subspace s;
  s.role = role;
  s.id = static_cast<int>(subspaces_.size());
  s.offset = width();
  s.name = name;
  if (value_labels.empty()) {
    labels_.push_back(name);
  } else {
    for (const auto& v : value_labels) labels_.push_back(name + ":" + v);
  }
  s.width = width() - s.offset;
  owner_.resize(labels_.size(), s.id);
  subspaces_.push_back(s);
  return s;
}

}  // namespace krc
