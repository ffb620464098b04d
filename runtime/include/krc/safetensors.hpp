#pragma once
// The safetensors container, independent of what the tensors mean (weights_file.hpp gives
// them krc's meaning). Layout: 8-byte little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {string: string}},
// then the data section, row-major little-endian, the tensors tiling it exactly.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace krc {

enum class DType {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64
};

const char* to_string(DType dtype);
std::optional<DType> dtype_from_string(std::string_view name);
std::size_t dtype_size(DType dtype);  // bytes per element

struct Tensor {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::string data;  // raw bytes, little-endian, row-major: element_count() * dtype_size(dtype)

  std::int64_t element_count() const;  // product of shape (1 for a scalar)
  bool operator==(const Tensor&) const = default;
};

struct TensorFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
  bool operator==(const TensorFile&) const = default;
};

// Tensors are stored in name order; the header is padded with spaces so that the data
// section starts at a multiple of 8. Throws std::invalid_argument when a tensor's byte size
// disagrees with its shape.
std::string write_safetensors(const TensorFile& file);

// Validates the whole container before returning anything: header length, JSON syntax and
// UTF-8, duplicate keys, every entry's members and types, dtype, shape, offsets (in range,
// no overlap, no hole: sorted by offset the tensors tile the data section exactly), byte
// sizes and the metadata map. Problems are InputError(file, place, problem) with place
// "header", "header byte N", "tensor 'name'" or "__metadata__".
TensorFile parse_safetensors(std::string_view bytes, const std::string& file);
TensorFile read_safetensors(const std::string& path);

// Conversions for the dtypes krc uses (host byte order must be little-endian, checked at
// compile time). The readers throw std::invalid_argument on a dtype mismatch.
Tensor make_f32_tensor(std::vector<std::int64_t> shape, std::span<const float> values);
Tensor make_i32_tensor(std::vector<std::int64_t> shape, std::span<const std::int32_t> values);
std::vector<float> f32_values(const Tensor& tensor);
std::vector<std::int32_t> i32_values(const Tensor& tensor);

}  // namespace krc
