#pragma once
// Internal header: the tensor half of krc's weights file. A tensor travels as its nonzero
// entries in row-major order (Entries), which the writer stores dense or sparse and the reader
// takes back out of either form, checking dtype, shape, indices and values.
#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "krc/runtime/network.hpp"
#include "krc/runtime/safetensors.hpp"
#include "krc/runtime/weights_file.hpp"
#include "weights/weights_metadata.hpp"

namespace krc::weights {

// The nonzero entries of a tensor, in row-major (flat index) order.
struct Entries {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> flat;
  std::vector<float> values;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  void add(std::int64_t index, float value) {
    // Bit patterns, not values: -0.0 is kept so that a round trip is bit-exact.
    if (std::bit_cast<std::uint32_t>(value) == 0) return;
    flat.push_back(index);
    values.push_back(value);
  }
};

// A sparse tensor's dense size is not bounded by the file; keep flat indices far from overflow.
constexpr std::int64_t kMaxElements = 1LL << 40;

inline std::string tensor_place(const std::string& name) { return "tensor '" + name + "'"; }

inline std::string shape_text(const std::vector<std::int64_t>& shape) { return json(shape).dump(); }

// ---------------------------------------------------------------- writing

// Places matrix m at block `block` of a [blocks, rows, cols] tensor (zero padded).
void add_matrix(Entries& e, const SparseMatrix& m, std::int64_t block, std::int64_t rows,
                std::int64_t cols);
Entries sparse_entries(const SparseMatrix& m);
template <typename Dense>
Entries dense_entries(const Dense& m, std::vector<std::int64_t> shape) {
  Entries e{std::move(shape), {}, {}};
  const Eigen::Index cols = m.cols();
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < cols; ++c) e.add(r * cols + c, m(r, c));
  return e;
}
Entries vector_entries(const Eigen::VectorXf& v);
// Whether `e` is stored sparse (options.storage; Auto: when that saves space), and the bytes
// its stored form takes: known before the dense form is built.
bool stored_sparse(const Entries& e, const WriteOptions& options);
std::uint64_t stored_bytes(const Entries& e, bool sparse);
// Stores `e` under `name`, dense or as name.indices and name.values (recorded in `sparse`).
// A value that is not finite, which the reader refuses, is a std::invalid_argument.
void store(TensorFile& file, json& sparse, const std::string& name, const Entries& e,
           bool as_sparse);
// The reader's limit on a tensor's dense size (kMaxElements), for the writer too.
std::optional<std::string> tensor_size_problem(const std::vector<std::int64_t>& shape);

// ---------------------------------------------------------------- reading

// Takes tensors out of the file by name, dense or sparse, checking dtype, shape and values,
// and remembers what was taken so that leftovers can be reported.
class TensorReader {
 public:
  // `sparse`: the checked "sparse" metadata (read_metadata).
  TensorReader(const TensorFile& tensors, const json& sparse, const MetadataReader& m)
      : tensors_(tensors), m_(m), sparse_(sparse) {}

  Entries take(const std::string& name, const std::vector<std::int64_t>& shape);
  // Everything in the file must belong to the network the config describes.
  void check_all_taken() const;

 private:
  [[noreturn]] void fail(const std::string& name, const std::string& problem) const;
  const Tensor& find(const std::string& name, DType dtype);
  Entries take_dense(const std::string& name, const std::vector<std::int64_t>& shape);
  Entries take_sparse(const std::string& name, const std::vector<std::int64_t>& shape);

  const TensorFile& tensors_;
  const MetadataReader& m_;
  const json& sparse_;
  std::set<std::string> taken_, taken_sparse_;
};

// Entries [begin, begin + rows*cols) of `e` as a rows x cols block, cut to keep_rows x
// keep_cols (a head inside its layer's zero-padded width); a nonzero in the cut-off padding
// is an error, since dropping it would change what the file means.
SparseMatrix block_matrix(const Entries& e, std::int64_t begin, std::int64_t rows,
                          std::int64_t cols, std::int64_t keep_rows, std::int64_t keep_cols,
                          const std::string& name, const std::string& file);
// Head h of a [heads, rows, cols] tensor.
SparseMatrix head_matrix(const Entries& e, std::int64_t h, std::int64_t keep_rows,
                         std::int64_t keep_cols, const std::string& name, const std::string& file);
SparseMatrix to_sparse(const Entries& e, const std::string& name, const std::string& file);
RowMatrix to_dense(const Entries& e);
Eigen::VectorXf to_vector(const Entries& e);

}  // namespace krc::weights
