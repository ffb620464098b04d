#include "krc/runtime/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "krc/automata/bounded_read.hpp"
#include "krc/automata/input_error.hpp"
#include "krc/automata/json_depth.hpp"
#include "krc/automata/name_table.hpp"

namespace krc {

static_assert(std::endian::native == std::endian::little,
              "the safetensors data section is little-endian; krc copies it as host bytes");

using nlohmann::json;

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::BOOL, "BOOL", 1},       {DType::U8, "U8", 1},           {DType::I8, "I8", 1},
    {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E4M3, "F8_E4M3", 1}, {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},         {DType::F16, "F16", 2},         {DType::BF16, "BF16", 2},
    {DType::I32, "I32", 4},         {DType::U32, "U32", 4},         {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},         {DType::I64, "I64", 8},         {DType::U64, "U64", 8},
};
static_assert(std::size(kDTypes) == enum_count<DType>);

const DTypeInfo& info(DType dtype) {
  for (const auto& i : kDTypes)
    if (i.dtype == dtype) return i;
  throw std::invalid_argument("unknown dtype");
}

std::string tensor_place(const std::string& name) { return "tensor '" + name + "'"; }

// Product of the shape times the element size, or nullopt on overflow.
std::optional<std::uint64_t> byte_size(const std::vector<std::int64_t>& shape,
                                       std::size_t element) {
  std::uint64_t total = element;
  for (auto dim : shape) {
    if (dim < 0) return std::nullopt;
    if (__builtin_mul_overflow(total, static_cast<std::uint64_t>(dim), &total)) return std::nullopt;
  }
  return total;
}

// A non-negative JSON integer, or nullopt (negative, fractional, not a number).
std::optional<std::uint64_t> unsigned_value(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  return std::nullopt;
}

// nlohmann's message without its "[json.exception...] parse error at line 1, column N: " head.
std::string parse_problem(const json::parse_error& e) {
  std::string what = e.what();
  auto column = what.find("column ");
  if (column != std::string::npos) {
    auto colon = what.find(": ", column);
    if (colon != std::string::npos) return "not valid JSON: " + what.substr(colon + 2);
  }
  return "not valid JSON";
}

json parse_header(std::string_view text, const std::string& file) {
  if (auto deep = json_too_deep(text))
    throw InputError(file, "header byte " + std::to_string(*deep + 1), json_depth_problem());
  // Duplicate keys are legal JSON for nlohmann (the last wins) but make a file ambiguous.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto watch = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start)
      open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end && !open_objects.empty())
      open_objects.pop_back();
    else if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(text.begin(), text.end(), watch);
  } catch (const json::parse_error& e) {
    throw InputError(file, "header byte " + std::to_string(e.byte), parse_problem(e));
  }
  if (!duplicate.empty()) throw InputError(file, "header", "duplicate key \"" + duplicate + "\"");
  if (!header.is_object())
    throw InputError(file, "header",
                     std::string("must be a JSON object, not ") + header.type_name());
  return header;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file) {
  if (!value.is_object())
    throw InputError(file, "__metadata__",
                     std::string("must map strings to strings, not ") + value.type_name());
  std::map<std::string, std::string> metadata;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      throw InputError(file, "__metadata__",
                       "value of \"" + key + "\" must be a string, not " + v.type_name());
    metadata[key] = v.get<std::string>();
  }
  return metadata;
}

struct Entry : TensorEntry {
  std::string name;
};

Entry parse_entry(const std::string& name, const json& value, const std::string& file) {
  const std::string place = tensor_place(name);
  auto fail = [&](const std::string& problem) -> void { throw InputError(file, place, problem); };
  if (!value.is_object()) fail(std::string("must be an object, not ") + value.type_name());
  for (const auto& [key, v] : value.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      fail("unexpected member \"" + key + "\"");
  Entry entry;
  entry.name = name;

  auto dtype = value.find("dtype");
  if (dtype == value.end()) fail("missing \"dtype\"");
  if (!dtype->is_string()) fail("\"dtype\" must be a string");
  auto parsed_dtype = dtype_from_string(dtype->get<std::string>());
  if (!parsed_dtype) fail("unknown dtype \"" + dtype->get<std::string>() + "\"");
  entry.dtype = *parsed_dtype;

  auto shape = value.find("shape");
  if (shape == value.end()) fail("missing \"shape\"");
  if (!shape->is_array()) fail("\"shape\" must be a list of sizes");
  for (const auto& dim : *shape) {
    auto size = unsigned_value(dim);
    if (!size) fail("shape entry " + dim.dump() + " is not a non-negative integer");
    if (*size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("shape entry " + dim.dump() + " is too large");
    entry.shape.push_back(static_cast<std::int64_t>(*size));
  }

  auto offsets = value.find("data_offsets");
  if (offsets == value.end()) fail("missing \"data_offsets\"");
  if (!offsets->is_array() || offsets->size() != 2) fail("\"data_offsets\" must be [begin, end]");
  auto begin = unsigned_value((*offsets)[0]), end = unsigned_value((*offsets)[1]);
  if (!begin || !end) fail("\"data_offsets\" must be non-negative integers");
  entry.begin = *begin;
  entry.end = *end;
  if (entry.begin > entry.end)
    fail("data_offsets begin " + std::to_string(entry.begin) + " is after end " +
         std::to_string(entry.end));

  auto expected = byte_size(entry.shape, dtype_size(entry.dtype));
  if (!expected) fail("shape " + shape->dump() + " overflows the size of a file");
  if (*expected != entry.end - entry.begin)
    fail("shape " + shape->dump() + " of " + to_string(entry.dtype) + " needs " +
         std::to_string(*expected) + " bytes, but data_offsets span " +
         std::to_string(entry.end - entry.begin));
  return entry;
}

// Sorted by offset, the tensors must cover [0, data_size) without gap or overlap.
void check_tiling(std::vector<Entry>& entries, std::uint64_t data_size, const std::string& file) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  std::string previous;
  for (const auto& e : entries) {
    if (e.end > data_size)
      throw InputError(file, tensor_place(e.name),
                       "data_offsets end " + std::to_string(e.end) + " is past the data section (" +
                           std::to_string(data_size) + " bytes)");
    if (e.begin < covered)
      throw InputError(file, tensor_place(e.name),
                       "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                           "] overlap tensor '" + previous + "'");
    if (e.begin > covered)
      throw InputError(file, tensor_place(e.name),
                       "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                           ") of the data section belong to no tensor");
    covered = e.end;
    previous = e.name;
  }
  if (covered != data_size)
    throw InputError(file, "header",
                     "bytes [" + std::to_string(covered) + ", " + std::to_string(data_size) +
                         ") at the end of the data section belong to no tensor");
}

}  // namespace

const char* to_string(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_string(std::string_view name) {
  for (const auto& i : kDTypes)
    if (name == i.name) return i.dtype;
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) { return info(dtype).size; }

std::int64_t Tensor::element_count() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string write_safetensors(const TensorFile& file) {
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (name == "__metadata__")
      throw std::invalid_argument("a tensor may not be called __metadata__");
    auto size = byte_size(t.shape, dtype_size(t.dtype));
    if (!size || *size != t.data.size())
      throw std::invalid_argument("tensor '" + name + "': data size disagrees with its shape");
    header[name] = {{"dtype", to_string(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned

  std::string out(8, '\0');
  std::uint64_t length = text.size();
  std::memcpy(out.data(), &length, 8);
  out.reserve(8 + text.size() + offset);
  out += text;
  for (const auto& [name, t] : file.tensors) out += t.data;
  return out;
}

SafetensorsHeader parse_safetensors_header(std::string_view text,
                                           std::optional<std::uint64_t> data_bytes,
                                           const std::string& file) {
  json header = parse_header(text, file);
  SafetensorsHeader result;
  result.header_bytes = text.size();
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__")
      result.metadata = parse_metadata(value, file);
    else
      entries.push_back(parse_entry(name, value, file));
  }
  result.data_bytes = 0;
  for (const auto& e : entries) result.data_bytes = std::max(result.data_bytes, e.end);
  if (data_bytes) result.data_bytes = *data_bytes;
  check_tiling(entries, result.data_bytes, file);
  for (auto& e : entries) result.tensors.emplace(e.name, std::move(e));
  return result;
}

namespace {

// The 8-byte header length, checked against krc's limit and what follows it.
std::uint64_t header_length(const char* bytes, std::optional<std::uint64_t> rest,
                            const std::string& file) {
  std::uint64_t length;
  std::memcpy(&length, bytes, 8);
  if (length > kMaxHeaderBytes)
    throw InputError(file, "header",
                     "header length " + std::to_string(length) + " is larger than krc's limit of " +
                         std::to_string(kMaxHeaderBytes) + " bytes");
  if (rest && length > *rest)
    throw InputError(file, "header",
                     "header length " + std::to_string(length) +
                         " is larger than the rest of the file (" + std::to_string(*rest) +
                         " bytes)");
  return length;
}

[[noreturn]] void too_short(std::uint64_t size, const std::string& file) {
  throw InputError(
      file, "header",
      "the file has " + std::to_string(size) + " bytes, fewer than the 8-byte header length");
}

}  // namespace

TensorFile parse_safetensors(std::string_view bytes, const std::string& file) {
  if (bytes.size() < 8) too_short(bytes.size(), file);
  const std::uint64_t length = header_length(bytes.data(), bytes.size() - 8, file);
  const std::string_view data = bytes.substr(8 + length);
  SafetensorsHeader header = parse_safetensors_header(bytes.substr(8, length), data.size(), file);
  TensorFile result;
  result.metadata = std::move(header.metadata);
  for (auto& [name, e] : header.tensors)
    result.tensors.emplace(name, Tensor{e.dtype, std::move(e.shape),
                                        std::string(data.substr(e.begin, e.end - e.begin))});
  return result;
}

TensorFile read_safetensors(const std::string& path,
                            const std::function<void(const SafetensorsHeader&)>& before_data) {
  namespace fs = std::filesystem;
  const bool standard_input = path == "-";
  const std::string file = standard_input ? "<stdin>" : path;
  std::optional<std::uint64_t> size;  // known for regular files only
  std::ifstream opened;
  if (!standard_input) {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (!fs::exists(status)) throw InputError(path, "", "no such file");
    if (fs::is_directory(status)) throw InputError(path, "", "is a directory");
    if (fs::is_regular_file(status)) size = fs::file_size(path, ec);
    opened.open(path, std::ios::binary);
    if (!opened) throw InputError(path, "", "cannot open the file");
  }
  std::istream& in = standard_input ? std::cin : opened;
  std::string bytes;
  char length_bytes[8];
  in.read(length_bytes, 8);
  if (in.gcount() < 8) too_short(static_cast<std::uint64_t>(in.gcount()), file);
  const std::uint64_t length =
      header_length(length_bytes, size ? std::optional(*size - 8) : std::nullopt, file);
  std::string text;
  read_exactly(in, length, text, file, "header");
  // A stream's data section is as long as its header says; a byte after it is an error below.
  SafetensorsHeader header =
      parse_safetensors_header(text, size ? std::optional(*size - 8 - length) : std::nullopt, file);
  text.clear();
  text.shrink_to_fit();
  if (before_data) before_data(header);

  // Sorted by offset the tensors tile the data section, so they are read in that order.
  std::vector<const std::pair<const std::string, TensorEntry>*> order;
  for (const auto& entry : header.tensors) order.push_back(&entry);
  std::sort(order.begin(), order.end(),
            [](auto a, auto b) { return a->second.begin < b->second.begin; });
  TensorFile result;
  result.metadata = header.metadata;
  for (const auto* entry : order) {
    Tensor t{entry->second.dtype, entry->second.shape, {}};
    read_exactly(in, entry->second.end - entry->second.begin, t.data, file,
                 tensor_place(entry->first));
    result.tensors.emplace(entry->first, std::move(t));
  }
  if (!size && in.peek() != std::char_traits<char>::eof())
    throw InputError(file, "header", "bytes after the last tensor belong to no tensor");
  return result;
}

namespace {
template <typename T>
Tensor make_tensor(DType dtype, std::vector<std::int64_t> shape, std::span<const T> values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  if (t.element_count() != static_cast<std::int64_t>(values.size()))
    throw std::invalid_argument("tensor values disagree with the shape");
  t.data.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> values_of(const Tensor& t, DType dtype) {
  if (t.dtype != dtype || t.data.size() % sizeof(T) != 0)
    throw std::invalid_argument(std::string("expected a tensor of ") + to_string(dtype) +
                                ", found " + to_string(t.dtype));
  std::vector<T> values(t.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), t.data.data(), t.data.size());
  return values;
}
}  // namespace

Tensor make_f32_tensor(std::vector<std::int64_t> shape, std::span<const float> values) {
  return make_tensor(DType::F32, std::move(shape), values);
}
Tensor make_i32_tensor(std::vector<std::int64_t> shape, std::span<const std::int32_t> values) {
  return make_tensor(DType::I32, std::move(shape), values);
}
std::vector<float> f32_values(const Tensor& t) { return values_of<float>(t, DType::F32); }
std::vector<std::int32_t> i32_values(const Tensor& t) {
  return values_of<std::int32_t>(t, DType::I32);
}

}  // namespace krc
