// krc._core.Network: a compiled network and what it is made of (layers, heads with typed roles,
// MLP blocks, residual subspaces and labels), the weights file (safetensors) both ways.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_scope.hpp"
#include "krc/automata/automaton_json.hpp"
#include "krc/runtime/circuit.hpp"
#include "krc/runtime/gpt2_export.hpp"
#include "krc/runtime/network_summary.hpp"
#include "krc/runtime/safetensors.hpp"
#include "krc/runtime/weights_file.hpp"
#include "krc/runtime/word_run.hpp"
#include "network_drawing.hpp"

namespace krc::python {

namespace {

Eigen::MatrixXf dense(const SparseMatrix& m) { return Eigen::MatrixXf(m); }

void bind_role(py::module_& m) {
  py::class_<Role>(m, "Role",
                   "What a head, an MLP block or a subspace computes (krc/runtime/role.hpp).")
      .def_property_readonly(
          "kind", [](const Role& r) { return to_string(r.kind); },
          "e.g. \"counter sum\", \"memory\", \"scan fetch\"")
      .def_readonly("level", &Role::level, "1-based cascade level; 0: not part of a level")
      .def_readonly("component", &Role::component)
      .def_readonly("counter", &Role::counter)
      .def_readonly("step", &Role::step)
      .def_property_readonly("part", [](const Role& r) { return role_part(r); })
      .def("__str__", [](const Role& r) { return describe(r); })
      .def("__repr__", [](const Role& r) { return "<krc.Role " + describe(r) + ">"; });
}

void bind_parts(py::module_& m) {
  py::class_<AttentionHead>(m, "AttentionHead")
      .def_readonly("name", &AttentionHead::name)
      .def_readonly("role", &AttentionHead::role)
      .def_property_readonly(
          "kind", [](const AttentionHead& h) { return to_string(h.kind); },
          "\"select\" or \"average\"")
      .def_property_readonly("head_dim", [](const AttentionHead& h) { return h.query.cols(); })
      .def_property_readonly(
          "query", [](const AttentionHead& h) { return dense(h.query); },
          "[d_model, head_dim], a dense copy")
      .def_property_readonly("key", [](const AttentionHead& h) { return dense(h.key); })
      .def_property_readonly("value", [](const AttentionHead& h) { return dense(h.value); })
      .def_property_readonly(
          "output", [](const AttentionHead& h) { return dense(h.output); }, "[head_dim, d_model]")
      .def("__repr__", [](const AttentionHead& h) { return "<krc.AttentionHead " + h.name + ">"; });
  py::class_<MlpBlock>(m, "MlpBlock", "A named range of an MLP's hidden units.")
      .def_readonly("name", &MlpBlock::name)
      .def_readonly("first", &MlpBlock::first)
      .def_readonly("count", &MlpBlock::count)
      .def_readonly("role", &MlpBlock::role);
  py::class_<Mlp>(m, "Mlp")
      .def_property_readonly("hidden", &Mlp::hidden)
      .def_readonly("blocks", &Mlp::blocks)
      .def_property_readonly(
          "in_weight", [](const Mlp& p) { return dense(p.in_weight); },
          "[hidden, d_model], a dense copy")
      .def_readonly("in_bias", &Mlp::in_bias)
      .def_property_readonly(
          "out_weight", [](const Mlp& p) { return dense(p.out_weight); }, "[d_model, hidden]")
      .def_readonly("out_bias", &Mlp::out_bias);
  py::class_<Layer>(m, "Layer")
      .def_readonly("purpose", &Layer::purpose)
      .def_property_readonly(
          "heads",
          [](py::object self) { return references(self.cast<const Layer&>().heads, self); })
      .def_property_readonly(
          "mlp", [](const Layer& l) -> const Mlp* { return l.mlp ? &*l.mlp : nullptr; },
          py::return_value_policy::reference_internal)
      .def("__repr__", [](const Layer& l) { return "<krc.Layer " + l.purpose + ">"; });
  py::class_<ResidualSubspace>(m, "ResidualSubspace")
      .def_readonly("name", &ResidualSubspace::name)
      .def_readonly("first", &ResidualSubspace::first)
      .def_readonly("width", &ResidualSubspace::width)
      .def_readonly("role", &ResidualSubspace::role);
  py::class_<NetworkSize>(m, "NetworkSize")
      .def_readonly("layers", &NetworkSize::layers)
      .def_readonly("d_model", &NetworkSize::d_model)
      .def_readonly("heads", &NetworkSize::heads)
      .def_readonly("mlp_hidden", &NetworkSize::mlp_hidden)
      .def_readonly("parameters", &NetworkSize::parameters)
      .def_readonly("nonzeros", &NetworkSize::nonzeros);
}

py::bytes to_safetensors(const CompiledNetwork& c, bool dense_storage) {
  WriteOptions options;
  if (dense_storage) options.storage = WriteOptions::Storage::Dense;
  std::string bytes;
  {
    InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
    py::gil_scoped_release unlocked;
    try {
      bytes = network_to_safetensors(*c.network, options);
    } catch (const LimitError& e) {
      throw OptionLimitError(std::string(e.what()) + " (a smaller max_len makes a smaller network)",
                             "max_len");
    }
  }
  return py::bytes(bytes);
}

// The files of krc::gpt2_checkpoint, the one GPT-2 export (krc.Network.to_hf writes them):
// ([(name, bytes)] in writing order, {"exact", "reason", "largest", "formats"}).
py::tuple to_gpt2(const CompiledNetwork& c, bool allow_inexact, long long max_bytes) {
  Gpt2Checkpoint checkpoint;
  {
    InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
    py::gil_scoped_release unlocked;
    try {
      checkpoint = gpt2_checkpoint(*c.network, c.source.empty() ? "<network>" : c.source,
                                   {max_bytes, allow_inexact});
    } catch (const LimitError& e) {
      throw OptionLimitError(e.what(), "max_bytes");
    }
  }
  py::list files;
  for (const auto& [name, contents] : checkpoint.files)
    files.append(py::make_tuple(name, py::bytes(contents)));
  py::dict exactness;
  exactness["exact"] = checkpoint.exactness.exact;
  exactness["reason"] = checkpoint.exactness.reason;
  exactness["largest"] = checkpoint.exactness.largest;
  py::dict formats;  // krc_gpt2.json's "formats"
  for (const Gpt2Format& f : checkpoint.formats) {
    py::dict one;
    one["kept"] = f.kept;
    one["network_certified"] = f.certified;
    one["why"] = f.why;
    formats[py::str(f.name)] = one;
  }
  exactness["formats"] = formats;
  return py::make_tuple(files, exactness);
}

// The check's word options, bounded.
CircuitCheckOptions check_options(long long max_exhaustive_words, long long random_words,
                                  int random_length, std::uint64_t seed) {
  if (max_exhaustive_words < 1 || max_exhaustive_words > 1'000'000 || random_words < 0 ||
      random_words > 1'000'000 || random_length < 0)
    throw py::value_error(
        "max_exhaustive_words must be 1 to 1,000,000, random 0 to 1,000,000, length at least 0");
  CircuitCheckOptions options;
  options.max_exhaustive_words = max_exhaustive_words;
  options.random_words = random_words;
  options.random_length = random_length;
  options.seed = seed;
  return options;
}

// The circuit file as JSON text (krc.Network.circuit parses it), checked when `check` with
// `ablation` (zero or mean; mean's reference words `reference`, none: the tested words).
std::string circuit(const CompiledNetwork& c, const std::string& granularity, bool check,
                    long long max_exhaustive_words, long long random_words, int random_length,
                    std::uint64_t seed, const std::string& ablation,
                    const std::optional<std::vector<std::vector<std::string>>>& reference) {
  const std::string file = c.source.empty() ? std::string("network") : c.source;
  CircuitGranularity g;
  CircuitCheckOptions options =
      check_options(max_exhaustive_words, random_words, random_length, seed);
  try {
    g = circuit_granularity_from_string(granularity);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, "granularity", e.what());
  }
  try {
    options.ablation = circuit_ablation_from_string(ablation);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, "ablation", e.what());
  }
  if (reference) {
    if (!check || options.ablation != CircuitAblation::Mean)
      throw InputError(file, "reference",
                       "only the mean-ablation check (check=True, "
                       "ablation=\"mean\") averages over reference words");
    if (reference->empty()) throw InputError(file, "reference", "no reference words");
    if (reference->size() > 1'000'000) throw InputError(file, "reference", "over 1,000,000 words");
    for (std::size_t i = 0; i < reference->size(); ++i) {
      const std::string where = "reference word " + std::to_string(i);
      auto word = parse_word((*reference)[i], c.automaton, where);
      if (static_cast<int>(word.size()) > c.network->max_len)
        throw InputError(file, where,
                         "longer than the network's max_len " + std::to_string(c.network->max_len));
      options.reference_words.push_back(std::move(word));
    }
  }
  InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
  py::gil_scoped_release unlocked;
  nlohmann::json out = circuit_json(*c.network, g);
  if (check) {
    try {
      check_circuit(*c.network, c.automaton, out, options);
    } catch (const std::invalid_argument& e) {
      throw InputError(file, "reference", e.what());
    }
  }
  return out.dump();
}

// The words the circuit check tests (circuit_check_words), as letter names, and their JSON
// summary: the torch check runs the same words.
py::tuple circuit_words(const CompiledNetwork& c, long long max_exhaustive_words,
                        long long random_words, int random_length, std::uint64_t seed) {
  const CircuitCheckOptions options =
      check_options(max_exhaustive_words, random_words, random_length, seed);
  nlohmann::json description;
  std::vector<std::vector<LetterId>> words;
  {
    py::gil_scoped_release unlocked;
    words = circuit_check_words(*c.network, options, &description);
  }
  py::list out;
  for (const auto& w : words) {
    py::list word;
    for (LetterId a : w) word.append(py::str(c.network->vocabulary[a + 1]));
    out.append(word);
  }
  return py::make_tuple(out, description.dump());
}

// The picture krc.Network.draw writes to `path` (format from its extension), as bytes: the
// same code and so the same bytes as `krc draw`.
py::bytes draw(const CompiledNetwork& c, const std::string& path,
               const std::optional<std::vector<std::string>>& word, bool attention) {
  const DrawFormat format = draw_format_from_path(path);
  if (attention && !word)
    throw InputError("draw", "attention", "needs the word to run: word=\"a b a\"");
  if (!attention && word)
    throw InputError("draw", "word", "only the attention picture (attention=True) uses it");
  std::vector<LetterId> letters;
  if (word) letters = parse_word(*word, c.automaton, "word");
  std::string picture;
  {
    py::gil_scoped_release unlocked;
    picture = draw_picture(*c.network, word ? &letters : nullptr, format, "word");
  }
  return py::bytes(picture);
}

CompiledNetwork load(const std::string& path) {
  InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
  py::gil_scoped_release unlocked;
  auto network = std::make_shared<const Network>(load_network(path));
  Automaton automaton = automaton_from_json(network->automaton, path);  // checked by the loader
  return CompiledNetwork{std::move(network), std::move(automaton), path, std::nullopt};
}

}  // namespace

void bind_network(py::module_& m) {
  bind_role(m);
  bind_parts(m);
  using C = CompiledNetwork;
  auto net = [](const C& c) -> const Network& { return *c.network; };
  py::class_<C>(m, "Network", "A compiled network (krc.Network wraps it).")
      .def_property_readonly("automaton", [](const C& c) { return c.automaton; })
      .def_property_readonly("source", [](const C& c) { return c.source; })
      .def_property_readonly("max_len", [=](const C& c) { return net(c).max_len; })
      .def_property_readonly("vocabulary", [=](const C& c) { return net(c).vocabulary; })
      .def_property_readonly("states", [=](const C& c) { return net(c).states; })
      .def_property_readonly("d_model", [=](const C& c) { return net(c).d_model(); })
      .def_property_readonly("size", [=](const C& c) { return net(c).size(); })
      .def_property_readonly("residual_labels", [=](const C& c) { return net(c).residual_labels; })
      .def_property_readonly("attention", [=](const C& c) { return to_string(net(c).attention); })
      .def_property_readonly("attention_scale", [=](const C& c) { return net(c).attention_scale; })
      .def_property_readonly(
          "layers",
          [](py::object self) { return references(self.cast<const C&>().network->layers, self); })
      .def_property_readonly("subspaces",
                             [](py::object self) {
                               return references(self.cast<const C&>().network->subspaces, self);
                             })
      .def_property_readonly("token_embedding", [=](const C& c) { return net(c).token_embedding; })
      .def_property_readonly("position_embedding",
                             [=](const C& c) { return net(c).position_embedding; })
      .def_property_readonly("unembedding", [=](const C& c) { return dense(net(c).unembedding); })
      .def_property_readonly("compiler_json", [=](const C& c) { return net(c).compiler.dump(); })
      .def("size_line", [=](const C& c) { return network_size_line(net(c)); })
      .def("layers_text", [=](const C& c) { return network_layers_text(net(c)); })
      .def("to_safetensors", &to_safetensors, py::arg("dense") = false,
           "The weights file's bytes (README: runtime/README.md, weights file format)")
      .def("to_gpt2", &to_gpt2, py::arg("allow_inexact") = false, py::arg("max_bytes") = 2LL << 30,
           "The GPT-2 checkpoint's files and whether it is provably exact (krc.Network.to_hf)")
      .def("circuit", &circuit, py::arg("granularity") = "head", py::arg("check") = false,
           py::arg("max_exhaustive_words") = 512, py::arg("random") = 32, py::arg("length") = 0,
           py::arg("seed") = 1, py::arg("ablation") = "zero", py::arg("reference") = std::nullopt,
           "The circuit file as JSON text (krc.Network.circuit)")
      .def("circuit_words", &circuit_words, py::arg("max_exhaustive_words") = 512,
           py::arg("random") = 32, py::arg("length") = 0, py::arg("seed") = 1,
           "The words the circuit check tests and their JSON summary (krc.torch_circuit)")
      .def("draw", &draw, py::arg("path"), py::arg("word") = std::nullopt,
           py::arg("attention") = false,
           "The picture krc.Network.draw writes to `path` (svg, png or dot), as bytes");
  m.def("load", &load, py::arg("path"), "Reads a weights file; every field is validated.");
  m.def(
      "load_bytes",
      [](const py::bytes& data, const std::string& source) {
        const std::string_view bytes = data;
        InterruptScope interruptible;  // Ctrl-C stops the work: KeyboardInterrupt
        py::gil_scoped_release unlocked;
        const std::string name = source.empty() ? "<bytes>" : source;
        auto network = std::make_shared<const Network>(
            network_from_safetensors(parse_safetensors(bytes, name), name));
        Automaton automaton = automaton_from_json(network->automaton, name);
        return CompiledNetwork{std::move(network), std::move(automaton), source, std::nullopt};
      },
      py::arg("data"), py::arg("source") = "",
      "A weights file's bytes (Network.to_safetensors), validated as krc.load validates a file.");
}

}  // namespace krc::python
