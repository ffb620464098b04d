#include "krc/runtime/weights_file.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "krc/automata/automaton_json.hpp"
#include "krc/automata/input_error.hpp"
#include "random_network.hpp"
#include "reset_network.hpp"
#include "test_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

// Bitwise equality of float matrices (so -0.0 and +0.0 differ).
template <typename M>
bool same_bits(const M& a, const M& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  Eigen::MatrixXf da = Eigen::MatrixXf(a), db = Eigen::MatrixXf(b);
  return da.size() == 0 || std::memcmp(da.data(), db.data(), sizeof(float) * da.size()) == 0;
}

void check_same_network(const Network& a, const Network& b) {
  CHECK(a.max_len == b.max_len);
  CHECK(a.vocabulary == b.vocabulary);
  CHECK(a.states == b.states);
  CHECK(a.residual_labels == b.residual_labels);
  CHECK(a.attention_scale == b.attention_scale);
  CHECK(a.attention == b.attention);
  CHECK(a.automaton == b.automaton);
  CHECK(a.compiler == b.compiler);
  CHECK(same_bits(a.token_embedding, b.token_embedding));
  CHECK(same_bits(a.position_embedding, b.position_embedding));
  CHECK(same_bits(SparseMatrix(a.unembedding).toDense(), b.unembedding.toDense()));
  REQUIRE(a.layers.size() == b.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const Layer &la = a.layers[i], &lb = b.layers[i];
    CHECK(la.purpose == lb.purpose);
    REQUIRE(la.heads.size() == lb.heads.size());
    for (std::size_t h = 0; h < la.heads.size(); ++h) {
      CHECK(la.heads[h].name == lb.heads[h].name);
      CHECK(la.heads[h].kind == lb.heads[h].kind);
      CHECK(same_bits(la.heads[h].query.toDense(), lb.heads[h].query.toDense()));
      CHECK(same_bits(la.heads[h].key.toDense(), lb.heads[h].key.toDense()));
      CHECK(same_bits(la.heads[h].value.toDense(), lb.heads[h].value.toDense()));
      CHECK(same_bits(la.heads[h].output.toDense(), lb.heads[h].output.toDense()));
    }
    REQUIRE(la.mlp.has_value() == lb.mlp.has_value());
    if (!la.mlp) continue;
    CHECK(same_bits(la.mlp->in_weight.toDense(), lb.mlp->in_weight.toDense()));
    CHECK(same_bits(la.mlp->out_weight.toDense(), lb.mlp->out_weight.toDense()));
    CHECK(same_bits(Eigen::MatrixXf(la.mlp->in_bias), Eigen::MatrixXf(lb.mlp->in_bias)));
    CHECK(same_bits(Eigen::MatrixXf(la.mlp->out_bias), Eigen::MatrixXf(lb.mlp->out_bias)));
    REQUIRE(la.mlp->blocks.size() == lb.mlp->blocks.size());
    for (std::size_t k = 0; k < la.mlp->blocks.size(); ++k) {
      CHECK(la.mlp->blocks[k].name == lb.mlp->blocks[k].name);
      CHECK(la.mlp->blocks[k].first == lb.mlp->blocks[k].first);
      CHECK(la.mlp->blocks[k].count == lb.mlp->blocks[k].count);
    }
  }
}

Network sample_network(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Automaton a = test::random_automaton(rng, 4, 3);
  return test::random_network(rng, a);
}

// A network with one big, very sparse MLP (worth storing sparse) and a -0.0 weight.
Network network_with_big_mlp() {
  Network n = sample_network(11);
  const int d = n.d_model();
  Mlp mlp;
  const int hidden = 3000;
  mlp.in_weight = SparseMatrix(hidden, d);
  mlp.out_weight = SparseMatrix(d, hidden);
  for (int u = 0; u < hidden; u += 7) {
    mlp.in_weight.insert(u, u % d) = 1.0f + static_cast<float>(u);
    mlp.out_weight.insert((u + 1) % d, u) = -0.5f;
  }
  mlp.in_weight.insert(1, 0) = -0.0f;
  mlp.in_bias = Eigen::VectorXf::Constant(hidden, -1.0f);
  mlp.out_bias = Eigen::VectorXf::Zero(d);
  n.layers[0].mlp = mlp;
  return n;
}

InputError load_error(const TensorFile& file) {
  try {
    network_from_safetensors(file, "model.safetensors");
  } catch (const InputError& e) {
    CHECK(e.file() == "model.safetensors");
    return e;
  }
  FAIL("the file was accepted");
  return InputError("", "", "");
}

json config_of(const TensorFile& f) { return json::parse(f.metadata.at("config")); }

}  // namespace

TEST_CASE("weights file: networks round-trip exactly, dense, sparse and auto") {
  for (auto storage :
       {WriteOptions::Storage::Auto, WriteOptions::Storage::Dense, WriteOptions::Storage::Sparse}) {
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      Network n = seed == 25 ? network_with_big_mlp() : sample_network(seed);
      const std::string bytes = network_to_safetensors(n, {storage});
      Network back = network_from_safetensors(parse_safetensors(bytes, "round trip"), "round trip");
      check_same_network(n, back);
      CHECK(network_to_safetensors(back, {storage}) == bytes);
    }
  }
}

TEST_CASE("weights file: tensors are laid out as the README says") {
  Network n = sample_network(3);
  // Two heads of different widths: query/key 2 and 1, value 3 and 4; hd = 4.
  std::mt19937_64 rng(10);
  n.layers[0].heads.resize(2);
  for (int h = 0; h < 2; ++h) {
    AttentionHead& head = n.layers[0].heads[h];
    head.query = test::random_sparse(rng, n.d_model(), 2 - h, 0.5);
    head.key = test::random_sparse(rng, n.d_model(), 2 - h, 0.5);
    head.value = test::random_sparse(rng, n.d_model(), 3 + h, 0.5);
    head.output = test::random_sparse(rng, 3 + h, n.d_model(), 0.5);
  }
  TensorFile f = network_to_tensor_file(n, {WriteOptions::Storage::Dense});
  const long d = n.d_model(), hd = 4, V = static_cast<long>(n.vocabulary.size());
  CHECK(f.tensors.at("embed.token").shape == std::vector<std::int64_t>{V, d});
  CHECK(f.tensors.at("embed.position").shape == std::vector<std::int64_t>{n.max_len + 1, d});
  CHECK(f.tensors.at("unembed").shape ==
        std::vector<std::int64_t>{d, static_cast<long>(n.states.size())});
  CHECK(f.tensors.at("layers.0.attn.q").shape == std::vector<std::int64_t>{2, d, hd});
  CHECK(f.tensors.at("layers.0.attn.o").shape == std::vector<std::int64_t>{2, hd, d});
  const auto q = f32_values(f.tensors.at("layers.0.attn.q"));
  const auto v = f32_values(f.tensors.at("layers.0.attn.v"));
  const auto o = f32_values(f.tensors.at("layers.0.attn.o"));
  for (int h = 0; h < 2; ++h) {
    Eigen::MatrixXf dq = n.layers[0].heads[h].query, dv = n.layers[0].heads[h].value,
                    dout = n.layers[0].heads[h].output;
    for (long r = 0; r < d; ++r)
      for (long c = 0; c < hd; ++c) {
        CHECK(q[(h * d + r) * hd + c] == (c < dq.cols() ? dq(r, c) : 0.0f));  // zero padded
        CHECK(v[(h * d + r) * hd + c] == (c < dv.cols() ? dv(r, c) : 0.0f));
        CHECK(o[(h * hd + c) * d + r] == (c < dout.rows() ? dout(c, r) : 0.0f));
      }
  }
  const auto token = f32_values(f.tensors.at("embed.token"));
  for (long t = 0; t < V; ++t)
    for (long c = 0; c < d; ++c) CHECK(token[t * d + c] == n.token_embedding(t, c));
  json config = config_of(f);
  CHECK(config["d_model"] == d);
  CHECK(config["layers"][0]["head_dim"] == hd);
  CHECK(config["layers"][0]["heads"][1]["query_dim"] == 1);
  CHECK(config["layers"][0]["heads"][1]["value_dim"] == 4);
  CHECK(f.metadata.at("format") == "krc");
  CHECK(f.metadata.at("version") == "1");
  CHECK(json::parse(f.metadata.at("residual_labels")) == json(n.residual_labels));
  CHECK(automaton_from_json(json::parse(f.metadata.at("automaton")), "x") ==
        automaton_from_json(n.automaton, "x"));
}

TEST_CASE("weights file: auto storage goes sparse exactly when it saves space") {
  Network n = network_with_big_mlp();
  TensorFile f = network_to_tensor_file(n);
  json sparse = json::parse(f.metadata.at("sparse"));
  // 3000 x d weights with 429 nonzeros: sparse; every small tensor (<= 4096 entries): dense.
  CHECK(sparse.contains("layers.0.mlp.in.weight"));
  CHECK(f.tensors.count("layers.0.mlp.in.weight.indices") == 1);
  CHECK(f.tensors.at("layers.0.mlp.in.weight.indices").shape ==
        std::vector<std::int64_t>{429 + 1, 2});
  CHECK(f.tensors.count("layers.0.mlp.in.weight") == 0);
  CHECK(f.tensors.count("embed.token") == 1);
  CHECK(f.tensors.count("layers.0.mlp.in.bias") == 1);  // 3000 entries, all nonzero
  // The index tuples are sorted and point at the nonzeros.
  const auto index = i32_values(f.tensors.at("layers.0.mlp.in.weight.indices"));
  const auto value = f32_values(f.tensors.at("layers.0.mlp.in.weight.values"));
  Eigen::MatrixXf dense = n.layers[0].mlp->in_weight;
  for (std::size_t k = 0; k < value.size(); ++k) {
    CHECK(dense(index[2 * k], index[2 * k + 1]) == value[k]);
    if (k > 0)
      CHECK(std::make_pair(index[2 * k - 2], index[2 * k - 1]) <
            std::make_pair(index[2 * k], index[2 * k + 1]));
  }
  TensorFile all_dense = network_to_tensor_file(n, {WriteOptions::Storage::Dense});
  CHECK(json::parse(all_dense.metadata.at("sparse")).empty());
  TensorFile all_sparse = network_to_tensor_file(n, {WriteOptions::Storage::Sparse});
  for (const auto& [name, t] : all_sparse.tensors)
    CHECK((name.ends_with(".indices") || name.ends_with(".values")));
}

TEST_CASE("weights file: bad krc metadata is named") {
  const TensorFile good = network_to_tensor_file(sample_network(5));
  auto with = [&](const std::string& key, const std::string& value) {
    TensorFile f = good;
    f.metadata[key] = value;
    return f;
  };
  CHECK(load_error(with("format", "gguf")).place() == "__metadata__ \"format\"");
  CHECK(load_error(with("version", "2")).place() == "__metadata__ \"version\"");
  CHECK(load_error(with("config", "{not json")).place() == "__metadata__ \"config\"");
  TensorFile missing = good;
  missing.metadata.erase("automaton");
  CHECK(load_error(missing).problem().find("\"automaton\"") != std::string::npos);

  json config = config_of(good);
  auto with_config = [&](auto change) {
    json c = config;
    change(c);
    return with("config", c.dump());
  };
  CHECK(load_error(with_config([](json& c) { c.erase("d_model"); })).problem().find("d_model") !=
        std::string::npos);
  CHECK(load_error(with_config([](json& c) { c["d_model"] = "ten"; })).place() ==
        "__metadata__ \"config\" at /d_model");
  CHECK(load_error(with_config([](json& c) { c["n_layers"] = 7; })).place() ==
        "__metadata__ \"config\" at /layers");
  CHECK(load_error(with_config([](json& c) { c["max_len"] = -3; })).place() ==
        "__metadata__ \"config\" at /max_len");
  CHECK(load_error(with_config([](json& c) { c["vocabulary"][0] = "<s>"; })).place() ==
        "__metadata__ \"config\" at /vocabulary");
  CHECK(load_error(with_config([](json& c) { c["attention"]["kind"] = "linear"; })).place() ==
        "__metadata__ \"config\" at /attention/kind");
  CHECK(load_error(with_config([](json& c) {
          c["layers"][0]["heads"] = json::array({{{"name", "x"}, {"kind", "maybe"}}});
        })).place() == "__metadata__ \"config\" at /layers/0/heads/0/kind");
  // The config's own states disagree with the automaton's.
  CHECK(load_error(with_config([](json& c) { c["states"][0] = "renamed"; })).place() ==
        "__metadata__ \"automaton\" at /states");

  json labels = json::parse(good.metadata.at("residual_labels"));
  labels.erase(labels.size() - 1);
  CHECK(load_error(with("residual_labels", labels.dump())).problem().find("labels for d_model") !=
        std::string::npos);

  json automaton = json::parse(good.metadata.at("automaton"));
  automaton["initial"] = "nowhere";
  CHECK(load_error(with("automaton", automaton.dump())).place() ==
        "__metadata__ \"automaton\" at /initial");
  automaton = json::parse(good.metadata.at("automaton"));
  const std::string first = automaton["alphabet"][0];
  automaton["alphabet"][0] = "zz";
  automaton["transitions"]["zz"] = automaton["transitions"][first];
  automaton["transitions"].erase(first);
  CHECK(load_error(with("automaton", automaton.dump())).place() ==
        "__metadata__ \"automaton\" at /alphabet");
}

TEST_CASE("weights file: bad tensors are named") {
  const Network n = network_with_big_mlp();
  const TensorFile good = network_to_tensor_file(n);
  REQUIRE_NOTHROW(network_from_safetensors(good, "model.safetensors"));

  TensorFile missing = good;
  missing.tensors.erase("unembed");
  CHECK(load_error(missing).place() == "tensor 'unembed'");

  TensorFile reshaped = good;
  auto& token = reshaped.tensors.at("embed.token");
  token.shape = {token.shape[1], token.shape[0]};
  if (token.shape[0] != token.shape[1])
    CHECK(load_error(reshaped).place() == "tensor 'embed.token'");

  TensorFile wrong_dtype = good;
  wrong_dtype.tensors.at("unembed").dtype = DType::I32;
  CHECK(load_error(wrong_dtype).problem().find("must be F32") != std::string::npos);

  TensorFile extra = good;
  extra.tensors["layers.9.attn.q"] = make_f32_tensor({1}, std::vector<float>{1.0f});
  CHECK(load_error(extra).place() == "tensor 'layers.9.attn.q'");

  TensorFile not_finite = good;
  auto values = f32_values(not_finite.tensors.at("embed.token"));
  values[0] = std::nanf("");
  not_finite.tensors.at("embed.token") =
      make_f32_tensor(not_finite.tensors.at("embed.token").shape, values);
  CHECK(load_error(not_finite).problem().find("not finite") != std::string::npos);

  const std::string sparse_name = "layers.0.mlp.in.weight";
  TensorFile out_of_range = good;
  auto index = i32_values(out_of_range.tensors.at(sparse_name + ".indices"));
  index[0] = 3000;
  out_of_range.tensors.at(sparse_name + ".indices") =
      make_i32_tensor(out_of_range.tensors.at(sparse_name + ".indices").shape, index);
  CHECK(load_error(out_of_range).place() == "tensor '" + sparse_name + ".indices'");
  CHECK(load_error(out_of_range).problem().find("outside [0, 3000)") != std::string::npos);

  TensorFile unsorted = good;
  index = i32_values(unsorted.tensors.at(sparse_name + ".indices"));
  std::swap(index[0], index[2]);
  std::swap(index[1], index[3]);
  unsorted.tensors.at(sparse_name + ".indices") =
      make_i32_tensor(unsorted.tensors.at(sparse_name + ".indices").shape, index);
  CHECK(load_error(unsorted).problem().find("sorted") != std::string::npos);

  TensorFile both = good;
  both.tensors[sparse_name] = make_f32_tensor({1}, std::vector<float>{1.0f});
  CHECK(load_error(both).problem().find("both dense and sparse") != std::string::npos);

  TensorFile wrong_dense_shape = good;
  json sparse = json::parse(good.metadata.at("sparse"));
  sparse[sparse_name] = {3000, 1};
  wrong_dense_shape.metadata["sparse"] = sparse.dump();
  CHECK(load_error(wrong_dense_shape).place() == "__metadata__ \"sparse\" at /" + sparse_name);
}

TEST_CASE("weights file: a nonzero in a head's zero padding is an error") {
  Network n = sample_network(8);
  Layer layer;
  AttentionHead wide, narrow;
  std::mt19937_64 rng(4);
  wide.query = test::random_sparse(rng, n.d_model(), 3, 0.5);
  wide.key = test::random_sparse(rng, n.d_model(), 3, 0.5);
  wide.value = test::random_sparse(rng, n.d_model(), 3, 0.5);
  wide.output = test::random_sparse(rng, 3, n.d_model(), 0.5);
  narrow.query = test::random_sparse(rng, n.d_model(), 1, 0.5);
  narrow.key = test::random_sparse(rng, n.d_model(), 1, 0.5);
  narrow.value = test::random_sparse(rng, n.d_model(), 1, 0.5);
  narrow.output = test::random_sparse(rng, 1, n.d_model(), 0.5);
  layer.heads = {wide, narrow};
  n.layers = {layer};
  TensorFile f = network_to_tensor_file(n, {WriteOptions::Storage::Dense});
  auto q = f32_values(f.tensors.at("layers.0.attn.q"));
  const long d = n.d_model();
  q[(1 * d + 0) * 3 + 2] = 1.0f;  // head 1, row 0, column 2: beyond its query_dim 1
  f.tensors.at("layers.0.attn.q") = make_f32_tensor(f.tensors.at("layers.0.attn.q").shape, q);
  auto e = load_error(f);
  CHECK(e.place() == "tensor 'layers.0.attn.q'");
  CHECK(e.problem().find("declared width") != std::string::npos);
}

TEST_CASE("weights file: the command line rejects bad krc files with exit status 2") {
  test::TempDir dir;
  TensorFile f = network_to_tensor_file(sample_network(6));
  f.tensors.erase("embed.position");
  const std::string path = (dir / "model.safetensors").string();
  std::ofstream(path, std::ios::binary) << write_safetensors(f);
  auto result = test::run_krc({"verify", path});
  CHECK(result.status == 2);
  CHECK(result.err.find(path) != std::string::npos);
  CHECK(result.err.find("tensor 'embed.position'") != std::string::npos);
  auto missing = test::run_krc({"verify", (dir / "absent.safetensors").string()});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("absent.safetensors") != std::string::npos);
}

TEST_CASE("weights file: damaged files are rejected with an InputError, never a crash") {
  // Random byte changes, truncations and header edits of a valid file: every outcome must be
  // a network or an InputError (the sanitizer build checks the "never a crash" part).
  std::mt19937_64 rng(99);
  const std::string good = network_to_safetensors(network_with_big_mlp());
  const std::string dense =
      network_to_safetensors(sample_network(2), {WriteOptions::Storage::Dense});
  int rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = round % 2 ? good : dense;
    std::uint64_t header_length;
    std::memcpy(&header_length, bytes.data(), 8);
    const int changes = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int c = 0; c < changes; ++c) {
      // Mostly inside the header, where the structure is.
      const std::size_t limit = round % 3 == 0 ? bytes.size() : 8 + header_length;
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, limit - 1)(rng);
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes[at] = "0123456789[]{},:\"-."[rng() % 19];
          break;
        case 2:
          bytes.resize(at);
          break;
        default:
          bytes.erase(at, 1);
          break;
      }
      if (bytes.size() < 9) break;
      std::memcpy(&header_length, bytes.data(), 8);
      header_length = std::min<std::uint64_t>(header_length, bytes.size() - 8);
    }
    try {
      network_from_safetensors(parse_safetensors(bytes, "damaged"), "damaged");
    } catch (const InputError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 2500);
}
