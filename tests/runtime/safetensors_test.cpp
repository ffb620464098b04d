#include "krc/runtime/safetensors.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "krc/automata/input_error.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

// A container built by hand from its definition: 8-byte little-endian length, header, data.
std::string container(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

// The error a bad container raises, checked to name the file.
InputError error_of(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "bad.safetensors");
  } catch (const InputError& e) {
    CHECK(e.file() == "bad.safetensors");
    return e;
  }
  FAIL("the container was accepted");
  return InputError("", "", "");
}

// The same bad file through the command line: exit 2, file and place named, no crash.
void check_cli_rejects(const std::string& bytes, const std::string& place) {
  test::TempDir dir;
  const std::string path = (dir / "bad.safetensors").string();
  std::ofstream(path, std::ios::binary) << bytes;
  for (const char* command : {"verify", "run"}) {
    auto result = test::run_krc({command, path});
    CAPTURE(result.err);
    CHECK(result.status == 2);
    CHECK(result.err.find(path) != std::string::npos);
    CHECK(result.err.find(place) != std::string::npos);
  }
}

const std::string two_floats(8, '\x01');  // 8 bytes: two F32 values

}  // namespace

TEST_CASE("safetensors: random tensor files round-trip exactly") {
  std::mt19937_64 rng(42);
  const DType dtypes[] = {DType::F32, DType::F64,  DType::I32, DType::I64,
                          DType::U8,  DType::BF16, DType::BOOL};
  for (int round = 0; round < 200; ++round) {
    TensorFile file;
    const int tensors = std::uniform_int_distribution<int>(0, 6)(rng);
    for (int t = 0; t < tensors; ++t) {
      Tensor tensor;
      tensor.dtype = dtypes[rng() % std::size(dtypes)];
      const int rank = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int r = 0; r < rank; ++r)
        tensor.shape.push_back(std::uniform_int_distribution<int>(0, 5)(rng));
      tensor.data.resize(tensor.element_count() * dtype_size(tensor.dtype));
      for (auto& byte : tensor.data) byte = static_cast<char>(rng());
      file.tensors["tensor." + std::to_string(rng() % 1000) + (t % 2 ? "/ü" : "")] = tensor;
    }
    if (round % 2)
      file.metadata = {{"format", "krc"}, {"note", "ünïcode \"quoted\"\n"}, {"empty", ""}};
    const std::string bytes = write_safetensors(file);

    // The layout, checked from the definition rather than from the reader.
    std::uint64_t n;
    std::memcpy(&n, bytes.data(), 8);
    CHECK((8 + n) % 8 == 0);
    json header = json::parse(bytes.substr(8, n));
    std::uint64_t data_bytes = 0;
    for (const auto& [name, t] : file.tensors) {
      REQUIRE(header.contains(name));
      const auto begin = header[name]["data_offsets"][0].get<std::uint64_t>();
      const auto end = header[name]["data_offsets"][1].get<std::uint64_t>();
      CHECK(bytes.substr(8 + n + begin, end - begin) == t.data);
      CHECK(header[name]["shape"] == json(t.shape));
      data_bytes += end - begin;
    }
    CHECK(bytes.size() == 8 + n + data_bytes);

    CHECK(parse_safetensors(bytes, "round trip") == file);
  }
}

TEST_CASE("safetensors: read_safetensors reads what was written to disk") {
  test::TempDir dir;
  TensorFile file;
  std::vector<float> values{1.5f, -2.0f, 0.0f, 3.25f, 7.0f, -0.0f};
  file.tensors["w"] = make_f32_tensor({2, 3}, values);
  file.metadata["k"] = "v";
  const auto path = (dir / "w.safetensors").string();
  std::ofstream(path, std::ios::binary) << write_safetensors(file);
  TensorFile back = read_safetensors(path);
  CHECK(back == file);
  CHECK(f32_values(back.tensors["w"]) == values);
  CHECK_THROWS_AS(read_safetensors((dir / "missing.safetensors").string()), InputError);
  CHECK_THROWS_AS(read_safetensors(dir.path().string()), InputError);  // a directory
  const auto empty = (dir / "empty.safetensors").string();
  std::ofstream(empty, std::ios::binary).close();
  try {
    read_safetensors(empty);
    FAIL("an empty file was accepted");
  } catch (const InputError& e) {
    CHECK(e.place() == "header");
    CHECK(e.problem().find("0 bytes") != std::string::npos);
  }
}

TEST_CASE("safetensors: a file shorter than the 8-byte header length") {
  auto e = error_of("\x10\x00\x00");
  CHECK(e.place() == "header");
  check_cli_rejects(std::string("\x10\x00\x00", 3), "header");
}

TEST_CASE("safetensors: a truncated file (data cut short)") {
  TensorFile file;
  std::vector<float> values{1, 2, 3, 4};
  file.tensors["w"] = make_f32_tensor({4}, values);
  std::string bytes = write_safetensors(file);
  bytes.resize(bytes.size() - 5);
  auto e = error_of(bytes);
  CHECK(e.place() == "tensor 'w'");
  CHECK(e.problem().find("past the data section") != std::string::npos);
  check_cli_rejects(bytes, "tensor 'w'");
}

TEST_CASE("safetensors: header length larger than the file") {
  std::string bytes =
      container(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", two_floats);
  bytes[0] = '\x7f';
  bytes[3] = '\x01';
  auto e = error_of(bytes);
  CHECK(e.place() == "header");
  CHECK(e.problem().find("larger than the rest of the file") != std::string::npos);
  check_cli_rejects(bytes, "header");
}

TEST_CASE("safetensors: offsets that overlap") {
  const std::string bytes = container(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      two_floats);
  auto e = error_of(bytes);
  CHECK(e.place() == "tensor 'b'");
  CHECK(e.problem().find("overlap tensor 'a'") != std::string::npos);
  check_cli_rejects(bytes, "tensor 'b'");
}

TEST_CASE("safetensors: offsets that leave a hole") {
  const std::string gap = container(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
      std::string(12, '\0'));
  auto e = error_of(gap);
  CHECK(e.place() == "tensor 'b'");
  CHECK(e.problem().find("belong to no tensor") != std::string::npos);
  check_cli_rejects(gap, "tensor 'b'");
  // Bytes after the last tensor are a hole too.
  const std::string tail =
      container(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(8, '\0'));
  CHECK(error_of(tail).problem().find("belong to no tensor") != std::string::npos);
}

TEST_CASE("safetensors: a shape that disagrees with the byte count") {
  const std::string bytes =
      container(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", two_floats);
  auto e = error_of(bytes);
  CHECK(e.place() == "tensor 'w'");
  CHECK(e.problem().find("needs 12 bytes") != std::string::npos);
  check_cli_rejects(bytes, "tensor 'w'");
}

TEST_CASE("safetensors: a header that is not valid JSON") {
  const std::string bytes = container(R"({"w":{"dtype":"F32",,"shape":[2]}})", two_floats);
  auto e = error_of(bytes);
  CHECK(e.place().rfind("header byte ", 0) == 0);
  check_cli_rejects(bytes, "header byte");
  CHECK(error_of(container("[1, 2]", "")).problem().find("must be a JSON object") !=
        std::string::npos);
  CHECK(error_of(container("{\"\xff\xfe\": 1}", "")).place().rfind("header byte", 0) ==
        0);  // bad UTF-8
  CHECK(error_of(container(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"a":1})", ""))
            .problem()
            .find("duplicate key") != std::string::npos);
}

TEST_CASE("safetensors: bad metadata") {
  const std::string not_strings = container(
      R"({"__metadata__":{"format":"krc","version":1},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      two_floats);
  auto e = error_of(not_strings);
  CHECK(e.place() == "__metadata__");
  CHECK(e.problem().find("\"version\"") != std::string::npos);
  check_cli_rejects(not_strings, "__metadata__");
  CHECK(error_of(container(R"({"__metadata__":["a"]})", "")).place() == "__metadata__");
}

TEST_CASE("safetensors: bad tensor entries name the tensor") {
  auto problem_of = [](const std::string& entry, const std::string& data = "") {
    auto e = error_of(container(R"({"w":)" + entry + "}", data));
    CHECK(e.place() == "tensor 'w'");
    return e.problem();
  };
  CHECK(problem_of(R"({"shape":[2],"data_offsets":[0,8]})", two_floats).find("dtype") !=
        std::string::npos);
  CHECK(problem_of(R"({"dtype":"F31","shape":[2],"data_offsets":[0,8]})", two_floats)
            .find("unknown dtype") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","data_offsets":[0,8]})", two_floats).find("shape") !=
        std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})", two_floats)
            .find("non-negative") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})", two_floats)
            .find("non-negative") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]})",
                   two_floats)
            .find("overflows") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2]})", two_floats).find("data_offsets") !=
        std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})", two_floats)
            .find("after end") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})", two_floats)
            .find("[begin, end]") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1})", two_floats)
            .find("extra") != std::string::npos);
  CHECK(problem_of(R"("F32")").find("must be an object") != std::string::npos);
  CHECK(problem_of(R"({"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]})",
                   two_floats)
            .find("needs 8 bytes") != std::string::npos);
}

TEST_CASE("safetensors: deeply nested or huge headers do not exhaust the stack") {
  // Refused before parsing, at the bracket that opens level 513: nothing recursive (copying,
  // printing a document) ever sees more levels. "header byte N" counts from 1.
  auto check_deep = [](const std::string& prefix, int levels_before, const std::string& suffix) {
    const std::string header =
        prefix + std::string(200000, '[') + std::string(200000, ']') + suffix;
    const InputError e = error_of(container(header, ""));
    const std::size_t opening = prefix.size() + (512 - levels_before);  // 0-based offset
    CHECK(e.place() == "header byte " + std::to_string(opening + 1));
    CHECK(e.problem().find("deeper than 512") != std::string::npos);
  };
  check_deep("", 0, "");
  check_deep("{\"w\":", 1, "}");
  check_deep("{\"__metadata__\":{\"a\":", 2, "}}");
  // 512 levels are fine: the header then fails for what it says, not for its depth.
  const std::string shallow = std::string(512, '[') + std::string(512, ']');
  CHECK(error_of(container(shallow, "")).problem().find("must be a JSON object") !=
        std::string::npos);
}
