#include "weights/weights_tensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "krc/automata/input_error.hpp"
#include "krc/automata/memory_budget.hpp"

namespace krc::weights {

// ---------------------------------------------------------------- writing

void add_matrix(Entries& e, const SparseMatrix& m, std::int64_t block, std::int64_t rows,
                std::int64_t cols) {
  std::vector<std::pair<std::int64_t, float>> items;
  for (int r = 0; r < m.outerSize(); ++r)
    for (SparseMatrix::InnerIterator it(m, r); it; ++it)
      items.emplace_back((block * rows + it.row()) * cols + it.col(), it.value());
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, value] : items) e.add(index, value);
}

Entries sparse_entries(const SparseMatrix& m) {
  Entries e{{m.rows(), m.cols()}, {}, {}};
  add_matrix(e, m, 0, m.rows(), m.cols());
  return e;
}

Entries vector_entries(const Eigen::VectorXf& v) {
  Entries e{{v.size()}, {}, {}};
  for (Eigen::Index i = 0; i < v.size(); ++i) e.add(i, v[i]);
  return e;
}

bool stored_sparse(const Entries& e, const WriteOptions& options) {
  const std::int64_t numel = e.numel(), nnz = static_cast<std::int64_t>(e.flat.size());
  const std::int64_t rank = static_cast<std::int64_t>(e.shape.size());
  for (auto d : e.shape)
    if (d > std::numeric_limits<std::int32_t>::max()) return false;  // I32 indices
  return options.storage == WriteOptions::Storage::Sparse ||
         (options.storage == WriteOptions::Storage::Auto && numel > 4096 &&
          nnz * (4 + 4 * rank) < 4 * numel);
}

std::uint64_t stored_bytes(const Entries& e, bool sparse) {
  if (!sparse) return saturating_mul(static_cast<std::uint64_t>(e.numel()), 4);
  return static_cast<std::uint64_t>(e.flat.size()) * (4 + 4 * e.shape.size());
}

void store(TensorFile& file, json& sparse, const std::string& name, const Entries& e,
           bool as_sparse) {
  for (float v : e.values)
    if (!std::isfinite(v))
      throw std::invalid_argument("tensor '" + name + "' holds a value that is not finite");
  const std::int64_t numel = e.numel(), nnz = static_cast<std::int64_t>(e.flat.size());
  const std::int64_t rank = static_cast<std::int64_t>(e.shape.size());
  if (!as_sparse) {
    std::vector<float> dense(static_cast<std::size_t>(numel), 0.0f);
    for (std::size_t i = 0; i < e.flat.size(); ++i) dense[e.flat[i]] = e.values[i];
    file.tensors[name] = make_f32_tensor(e.shape, dense);
    return;
  }
  std::vector<std::int32_t> indices(static_cast<std::size_t>(nnz * rank));
  for (std::int64_t k = 0; k < nnz; ++k) {
    std::int64_t rest = e.flat[k];
    for (std::int64_t axis = rank - 1; axis >= 0; --axis) {
      indices[k * rank + axis] = static_cast<std::int32_t>(rest % e.shape[axis]);
      rest /= e.shape[axis];
    }
  }
  file.tensors[name + ".indices"] = make_i32_tensor({nnz, rank}, indices);
  file.tensors[name + ".values"] = make_f32_tensor({nnz}, e.values);
  sparse[name] = e.shape;
}

std::optional<std::string> tensor_size_problem(const std::vector<std::int64_t>& shape) {
  std::int64_t numel = 1;
  for (auto dim : shape)
    if (__builtin_mul_overflow(numel, dim, &numel) || numel > kMaxElements)
      return "shape " + shape_text(shape) + " exceeds krc's limit of " +
             std::to_string(kMaxElements) + " elements";
  return std::nullopt;
}

// ---------------------------------------------------------------- reading

Entries TensorReader::take(const std::string& name, const std::vector<std::int64_t>& shape) {
  if (auto problem = tensor_size_problem(shape)) fail(name, *problem);
  Entries e = sparse_.contains(name) ? take_sparse(name, shape) : take_dense(name, shape);
  for (float v : e.values)
    if (!std::isfinite(v))
      fail(name, "holds a value that is not finite (" + std::to_string(v) + ")");
  return e;
}

void TensorReader::check_all_taken() const {
  for (const auto& [name, t] : tensors_.tensors)
    if (!taken_.count(name)) fail(name, "is not part of the network the config describes");
  for (const auto& [name, shape] : sparse_.items())
    if (!taken_sparse_.count(name))
      m_.fail("sparse", json::json_pointer() / name, "names a tensor the network does not have");
}

void TensorReader::fail(const std::string& name, const std::string& problem) const {
  throw InputError(m_.file(), tensor_place(name), problem);
}

const Tensor& TensorReader::find(const std::string& name, DType dtype) {
  auto it = tensors_.tensors.find(name);
  if (it == tensors_.tensors.end()) fail(name, "is missing");
  if (it->second.dtype != dtype)
    fail(name, std::string("must be ") + to_string(dtype) + ", not " + to_string(it->second.dtype));
  taken_.insert(name);
  return it->second;
}

Entries TensorReader::take_dense(const std::string& name, const std::vector<std::int64_t>& shape) {
  const Tensor& t = find(name, DType::F32);
  if (t.shape != shape)
    fail(name, "has shape " + shape_text(t.shape) + ", the config says " + shape_text(shape));
  Entries e{shape, {}, {}};
  const auto values = f32_values(t);
  for (std::size_t i = 0; i < values.size(); ++i) e.add(static_cast<std::int64_t>(i), values[i]);
  return e;
}

Entries TensorReader::take_sparse(const std::string& name, const std::vector<std::int64_t>& shape) {
  taken_sparse_.insert(name);
  if (tensors_.tensors.count(name)) fail(name, "is stored both dense and sparse");
  const json& declared = sparse_[name];
  if (declared != json(shape))
    m_.fail("sparse", json::json_pointer() / name,
            "dense shape " + declared.dump() + " disagrees with the config's " + shape_text(shape));
  const Tensor& indices = find(name + ".indices", DType::I32);
  const Tensor& values = find(name + ".values", DType::F32);
  const std::int64_t rank = static_cast<std::int64_t>(shape.size());
  if (values.shape.size() != 1) fail(name + ".values", "must be a vector [nnz]");
  const std::int64_t nnz = values.shape[0];
  if (indices.shape != std::vector<std::int64_t>{nnz, rank})
    fail(name + ".indices", "has shape " + shape_text(indices.shape) + ", expected " +
                                shape_text({nnz, rank}) + " (nnz, rank)");
  const auto index = i32_values(indices);
  const auto value = f32_values(values);
  Entries e{shape, {}, {}};
  std::int64_t previous = -1;
  for (std::int64_t k = 0; k < nnz; ++k) {
    std::int64_t flat = 0;
    for (std::int64_t axis = 0; axis < rank; ++axis) {
      const std::int32_t i = index[k * rank + axis];
      if (i < 0 || i >= shape[axis])
        fail(name + ".indices", "entry " + std::to_string(k) + " has index " + std::to_string(i) +
                                    " on axis " + std::to_string(axis) + ", outside [0, " +
                                    std::to_string(shape[axis]) + ")");
      flat = flat * shape[axis] + i;  // < numel, which the dimension limits keep in range
    }
    if (flat <= previous)
      fail(name + ".indices",
           "entry " + std::to_string(k) +
               " is not after the previous one (indices must be sorted and distinct)");
    previous = flat;
    e.flat.push_back(flat);
    e.values.push_back(value[k]);
  }
  return e;
}

SparseMatrix block_matrix(const Entries& e, std::int64_t begin, std::int64_t rows,
                          std::int64_t cols, std::int64_t keep_rows, std::int64_t keep_cols,
                          const std::string& name, const std::string& file) {
  const std::int64_t end = begin + rows * cols;
  std::vector<Eigen::Triplet<float, int>> triplets;
  auto first = std::lower_bound(e.flat.begin(), e.flat.end(), begin);
  for (auto it = first; it != e.flat.end() && *it < end; ++it) {
    const std::int64_t r = (*it - begin) / cols, c = (*it - begin) % cols;
    if (r >= keep_rows || c >= keep_cols)
      throw InputError(file, tensor_place(name),
                       "has a nonzero at [" + std::to_string(r) + ", " + std::to_string(c) +
                           "] of a head, outside the head's declared width");
    triplets.emplace_back(static_cast<int>(r), static_cast<int>(c), e.values[it - e.flat.begin()]);
  }
  SparseMatrix m(static_cast<int>(keep_rows), static_cast<int>(keep_cols));
  m.setFromTriplets(triplets.begin(), triplets.end());
  return m;
}

SparseMatrix head_matrix(const Entries& e, std::int64_t h, std::int64_t keep_rows,
                         std::int64_t keep_cols, const std::string& name, const std::string& file) {
  const std::int64_t rows = e.shape[1], cols = e.shape[2];
  return block_matrix(e, h * rows * cols, rows, cols, keep_rows, keep_cols, name, file);
}

SparseMatrix to_sparse(const Entries& e, const std::string& name, const std::string& file) {
  return block_matrix(e, 0, e.shape[0], e.shape[1], e.shape[0], e.shape[1], name, file);
}

RowMatrix to_dense(const Entries& e) {
  RowMatrix m = RowMatrix::Zero(e.shape[0], e.shape[1]);
  for (std::size_t i = 0; i < e.flat.size(); ++i) m.data()[e.flat[i]] = e.values[i];
  return m;
}

Eigen::VectorXf to_vector(const Entries& e) {
  Eigen::VectorXf v = Eigen::VectorXf::Zero(e.shape[0]);
  for (std::size_t i = 0; i < e.flat.size(); ++i) v[e.flat[i]] = e.values[i];
  return v;
}

}  // namespace krc::weights
