#pragma once
// The residual stream as named subspaces, like Tracr's labelled bases: every dimension has a
// label saying what it holds ("token:a", "level 2 tile:{0,1}", "position bit 3").
#include <string>
#include <vector>

#include "krc/runtime/role.hpp"

namespace krc {

struct Subspace {
  int id = -1;
  int offset = 0;
  int width = 0;
  std::string name;
  Role role;
  int operator[](int i) const { return offset + i; }
};

class ResidualLayout {
 public:
  // A block of dimensions labelled "name:value_label" (or just "name" for a single
  // unlabelled dimension).
  Subspace allocate(const std::string& name, const std::vector<std::string>& value_labels,
                    Role role = {});
  Subspace allocate_scalar(const std::string& name, Role role = {}) {
    return allocate(name, {}, role);
  }

  int width() const { return static_cast<int>(labels_.size()); }
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<Subspace>& subspaces() const { return subspaces_; }
  // The subspace holding dimension `dim`.
  int subspace_of(int dim) const { return owner_.at(dim); }

 private:
  std::vector<std::string> labels_;
  std::vector<int> owner_;
  std::vector<Subspace> subspaces_;
};

}  // namespace krc
