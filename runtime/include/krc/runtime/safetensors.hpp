#pragma once
// The safetensors container, independent of what the tensors mean (weights_file.hpp gives
// them krc's meaning). Layout: 8-byte little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {string: string}},
// then the data section, row-major little-endian, the tensors tiling it exactly.
#include <cstdint>
#include <functional>
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

// The largest header krc reads or writes (the safetensors reference implementation's limit):
// a header is parsed whole, so its length is checked before a byte of it is read.
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// One tensor as the header declares it, validated (dtype, shape, offsets, byte size).
struct TensorEntry {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // data_offsets
};

struct SafetensorsHeader {
  std::map<std::string, TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
  std::uint64_t header_bytes = 0;  // N
  std::uint64_t data_bytes = 0;    // the data section, which the tensors tile exactly
};

// Tensors are stored in name order; the header is padded with spaces so that the data
// section starts at a multiple of 8. Throws std::invalid_argument when a tensor's byte size
// disagrees with its shape.
std::string write_safetensors(const TensorFile& file);

// Validates the whole container before returning anything: header length, JSON syntax and
// UTF-8, duplicate keys, every entry's members and types, dtype, shape, offsets (in range,
// no overlap, no hole: sorted by offset the tensors tile the data section exactly), byte
// sizes and the metadata map. Problems are InputError(file, place, problem) with place
// "header", "header byte N", "tensor 'name'" or "__metadata__". A header longer than
// kMaxHeaderBytes or nested deeper than kMaxJsonDepth is refused before it is parsed.
TensorFile parse_safetensors(std::string_view bytes, const std::string& file);
// The header text (N bytes) of a file whose data section has data_bytes bytes (nullopt: as
// many as the tensors need, for a stream whose length is unknown).
SafetensorsHeader parse_safetensors_header(std::string_view text,
                                           std::optional<std::uint64_t> data_bytes,
                                           const std::string& file);
// Reads the file ("-": standard input) in order: the length, the header (validated), then
// `before_data` (a caller's budget check, from the header alone), then the tensors one by one.
// A file's size is never trusted: the header length is checked against kMaxHeaderBytes and the
// file size first, and a stream is read in chunks, so a forged length costs nothing.
TensorFile read_safetensors(const std::string& path,
                            const std::function<void(const SafetensorsHeader&)>& before_data = {});

// Conversions for the dtypes krc uses (host byte order must be little-endian, checked at
// compile time). The readers throw std::invalid_argument on a dtype mismatch.
Tensor make_f32_tensor(std::vector<std::int64_t> shape, std::span<const float> values);
Tensor make_i32_tensor(std::vector<std::int64_t> shape, std::span<const std::int32_t> values);
std::vector<float> f32_values(const Tensor& tensor);
std::vector<std::int32_t> i32_values(const Tensor& tensor);

}  // namespace krc
