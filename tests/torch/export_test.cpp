// `krc export`: the dense TransformerLens-layout file, read back by a generic safetensors
// reader written here (plain Python and numpy, nothing from krc), and a forward pass written
// here from those tensors and the config alone, against `krc run` and the automaton.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "krc/automata/automaton_json.hpp"
#include "torch_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

// The generic reader (20 lines), then the check of the tensors against the config and a
// TransformerLens-style forward pass in float64 (softmax attention; no LayerNorm; ReLU).
constexpr const char* kExportForward = R"(import json, struct, sys
import numpy as np

DTYPES = {'F16': np.float16, 'F32': np.float32, 'F64': np.float64, 'I32': np.int32, 'I64': np.int64}


def read_safetensors(path):
    with open(path, 'rb') as f:
        data = f.read()
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop('__metadata__', {})
    body = data[8 + n:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry['data_offsets']
        tensors[name] = np.frombuffer(body[begin:end], DTYPES[entry['dtype']]).reshape(entry['shape'])
    return tensors, metadata


t, meta = read_safetensors(sys.argv[1])
cfg, info = json.loads(meta['config']), json.loads(meta['krc'])
H, d, e, m = cfg['n_heads'], cfg['d_model'], cfg['d_head'], cfg['d_mlp']
shapes = {'embed.W_E': (cfg['d_vocab'], d), 'pos_embed.W_pos': (cfg['n_ctx'], d),
          'unembed.W_U': (d, cfg['d_vocab_out']), 'unembed.b_U': (cfg['d_vocab_out'],)}
for i in range(cfg['n_layers']):
    p = 'blocks.%d.' % i
    shapes.update({p + 'attn.W_Q': (H, d, e), p + 'attn.W_K': (H, d, e), p + 'attn.W_V': (H, d, e),
                   p + 'attn.W_O': (H, e, d), p + 'attn.b_Q': (H, e), p + 'attn.b_K': (H, e),
                   p + 'attn.b_V': (H, e), p + 'attn.b_O': (d,)})
    if not cfg['attn_only']:
        shapes.update({p + 'mlp.W_in': (d, m), p + 'mlp.b_in': (m,), p + 'mlp.W_out': (m, d),
                       p + 'mlp.b_out': (d,)})
assert {k: v.shape for k, v in t.items()} == shapes, sorted(t)
assert all(v.dtype == np.float32 for v in t.values())
assert cfg['normalization_type'] is None and cfg['act_fn'] == 'relu'
assert len(json.loads(meta['residual_labels'])) == d and 'states' in json.loads(meta['automaton'])
scale = 1.0 / cfg['attn_scale'] if cfg['use_attn_scale'] else 1.0
t = {k: v.astype(np.float64) for k, v in t.items()}
for line in sys.stdin.read().splitlines():
    tokens = [0] + [info['vocabulary'].index(a) for a in line.split()]
    T = len(tokens)
    x = t['embed.W_E'][tokens] + t['pos_embed.W_pos'][:T]
    causal = np.tril(np.ones((T, T), dtype=bool))
    for i in range(cfg['n_layers']):
        p = 'blocks.%d.attn.' % i
        q, k, v = (np.einsum('td,hde->hte', x, t[p + 'W_' + n]) + t[p + 'b_' + n][:, None] for n in 'QKV')
        s = np.where(causal, scale * (q @ k.transpose(0, 2, 1)), -np.inf)
        w = np.exp(s - s.max(axis=2, keepdims=True))
        w /= w.sum(axis=2, keepdims=True)
        x = x + np.einsum('hte,hed->td', w @ v, t[p + 'W_O']) + t[p + 'b_O']
        if not cfg['attn_only']:
            p = 'blocks.%d.mlp.' % i
            x = x + np.maximum(x @ t[p + 'W_in'] + t[p + 'b_in'], 0) @ t[p + 'W_out'] + t[p + 'b_out']
    logits = x @ t['unembed.W_U'] + t['unembed.b_U']
    print(json.dumps([info['states'][s] for s in logits.argmax(axis=1)]))
)";

}  // namespace

TEST_CASE(
    "krc export: a generic reader finds TransformerLens tensors, and their forward is krc's") {
  KRC_REQUIRE_TORCH();
  struct Case {
    const char* automaton;
    std::vector<std::string> options;
  };
  // Layers without heads or without an MLP (kr symmetric_3), no MLP at all (flipflop_2),
  // one head per layer (scan), a dense input file.
  const Case cases[] = {{"symmetric_3", {"--strategy", "kr"}},
                        {"flipflop_2", {"--strategy", "kr"}},
                        {"gridworld_4", {"--strategy", "scan", "--dense"}},
                        {"quaternion", {"--strategy", "kr"}}};
  std::mt19937_64 rng(4);
  test::TempDir dir;
  for (const auto& c : cases) {
    CAPTURE(c.automaton);
    auto options = c.options;
    options.insert(options.end(), {"--max-len", "32"});
    const std::string model = test::compile_zoo(dir, c.automaton, "model.safetensors", options);
    const std::string exported = (dir / "export.safetensors").string();
    const auto run = test::run_krc({"export", model, "-o", exported});
    REQUIRE_MESSAGE(run.status == 0, run.err);
    CHECK(test::contains(run.out, "wrote " + exported));

    const auto path =
        test::source_dir() / "automata" / "zoo" / (std::string(c.automaton) + ".json");
    const Automaton automaton = automaton_from_json(json::parse(test::read_text(path)), "zoo");
    test::Words words = test::random_words(automaton, rng, 5, 0, 32);
    std::string input;
    for (const auto& w : words.letters) {
      for (std::size_t i = 0; i < w.size(); ++i) input += (i ? " " : "") + w[i];
      input += "\n";
    }
    const auto forward = test::run_python_code(dir, kExportForward, {exported}, input);
    REQUIRE_MESSAGE(forward.status == 0, forward.err);
    std::istringstream lines(forward.out);
    std::size_t w = 0;
    for (std::string line; std::getline(lines, line); ++w) {
      REQUIRE(w < words.letters.size());
      CAPTURE(w);
      CHECK(json::parse(line) == words.states[w]);
      CHECK(json::parse(line) == test::krc_run(model, words.letters[w])["states"]);
    }
    CHECK(w == words.letters.size());
    // The module reads the exported file too, and runs it as it runs the original.
    const auto module = test::run_krc_torch(dir, exported, words.letters);
    for (std::size_t i = 0; i < words.letters.size(); ++i)
      CHECK(module[i]["states"] == words.states[i]);
  }
}

TEST_CASE("krc export: sparse and dense inputs export alike, --json, bad input, --max-bytes") {
  test::TempDir dir;
  const std::string sparse = test::compile_zoo(dir, "symmetric_3", "sparse.safetensors",
                                               {"--strategy", "kr", "--max-len", "64"});
  const std::string dense = test::compile_zoo(dir, "symmetric_3", "dense.safetensors",
                                              {"--strategy", "kr", "--max-len", "64", "--dense"});
  const std::string a = (dir / "a.safetensors").string(), b = (dir / "b.safetensors").string();
  const auto from_sparse = test::run_krc({"export", sparse, "-o", a, "--json"});
  REQUIRE_MESSAGE(from_sparse.status == 0, from_sparse.err);
  REQUIRE(test::run_krc({"export", dense, "-o", b}).status == 0);
  CHECK(test::read_text(a) == test::read_text(b));
  const json summary = json::parse(from_sparse.out);
  CHECK(summary["output"] == a);
  CHECK(summary["bytes"] == std::filesystem::file_size(a));
  CHECK(summary["config"]["n_ctx"] == 65);
  CHECK(summary["config"]["normalization_type"].is_null());

  // Bad input: status 2, the file named, nothing written.
  const std::string junk =
      test::write_file(dir, "junk.safetensors", std::string("\x10\0\0\0\0\0\0\0{}", 10));
  const std::string out = (dir / "out.safetensors").string();
  const auto bad = test::run_krc({"export", junk, "-o", out});
  CHECK(bad.status == 2);
  CHECK(test::contains(bad.err, "krc: error: " + junk));
  CHECK_FALSE(std::filesystem::exists(out));
  // A limit names the option that lifts it and its value.
  const auto limited = test::run_krc({"export", sparse, "-o", out, "--max-bytes", "1000"});
  CHECK(limited.status == 2);
  CHECK(test::contains(limited.err, "--max-bytes 1,000"));
  CHECK_FALSE(std::filesystem::exists(out));
  const auto usage = test::run_krc({"export", sparse});
  CHECK(usage.status == 2);
}
