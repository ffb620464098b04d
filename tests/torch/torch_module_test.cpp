// tools/krc_torch.py, the PyTorch module written from README's "Weights file format": its
// float32 forward pass against `krc run`, the numpy reference forward pass and the automaton,
// on zoo networks compiled with both strategies, sparse and dense files; its parameter names
// and shapes against TransformerLens's (written here from TransformerLens's source, not taken
// from the module); chunked attention and sparse MLPs against one dense pass; the residual
// stream it caches against the file's own tensors and labels.
#include <doctest/doctest.h>

#include "krc/automata/automaton_json.hpp"
#include "torch_support.hpp"

using namespace krc;
using nlohmann::json;

namespace {

Automaton zoo(const std::string& name) {
  const auto path = test::source_dir() / "automata" / "zoo" / (name + ".json");
  return automaton_from_json(json::parse(test::read_text(path)), path.string());
}

// Python run from the test: sys.path reaches tools/, the model is argv[1].
std::string with_module(const std::string& body) {
  return "import sys, json, torch\nsys.path.insert(0, " +
         json((test::source_dir() / "tools").string()).dump() +
         ")\nimport krc_torch\nmodel = krc_torch.load(sys.argv[1])\n" + body;
}

}  // namespace

TEST_CASE("the module, krc run, reference_forward.py and the automaton agree on zoo networks") {
  KRC_REQUIRE_TORCH();
  struct Case {
    const char* automaton;
    std::vector<std::string> options;
  };
  const Case cases[] = {
      {"parity", {"--strategy", "kr"}},
      {"cyclic_5", {"--strategy", "kr"}},
      {"cyclic_5", {"--strategy", "scan", "--dense"}},
      {"symmetric_3", {"--strategy", "kr", "--dense"}},
      {"symmetric_3", {"--strategy", "scan"}},
      {"quaternion", {"--strategy", "kr"}},
      {"flipflop_3", {"--strategy", "kr", "--attention", "hard"}},
      {"gridworld_4", {"--strategy", "kr"}},
      {"gridworld_4", {"--strategy", "scan", "--dense", "--attention", "hard"}},
      {"abab", {"--strategy", "scan"}},
  };
  std::mt19937_64 rng(11);
  test::TempDir dir;
  for (const auto& c : cases) {
    std::string options;
    for (const auto& o : c.options) options += " " + o;
    CAPTURE(c.automaton);
    CAPTURE(options);
    const Automaton automaton = zoo(c.automaton);
    const std::string model = test::compile_zoo(dir, c.automaton, "model.safetensors", [&] {
      auto o = c.options;
      o.insert(o.end(), {"--max-len", "48"});
      return o;
    }());
    test::Words words = test::random_words(automaton, rng, 6, 0, 48);
    const auto torch_out = test::run_krc_torch(dir, model, words.letters);
    // The other kind of attention too: hard makes select heads an argmax, ties to the latest.
    const bool hard_file = std::find(c.options.begin(), c.options.end(), "hard") != c.options.end();
    const std::string other = hard_file ? "softmax" : "hard";
    const auto torch_other = test::run_krc_torch(dir, model, words.letters, {"--attention", other});
    std::vector<std::string> lines;
    for (const auto& w : words.letters) {
      std::string line;
      for (const auto& a : w) line += (line.empty() ? "" : " ") + a;
      lines.push_back(line);
    }
    const auto numpy32 = test::run_reference_forward(dir, model, lines, {"--float32"});
    for (std::size_t w = 0; w < words.letters.size(); ++w) {
      CAPTURE(w);
      const json krc = test::krc_run(model, words.letters[w]);
      const json krc_other = test::krc_run(model, words.letters[w], {"--attention", other});
      CHECK(torch_out[w]["letters"] == json(words.letters[w]));
      CHECK(torch_out[w]["states"] == words.states[w]);
      CHECK(torch_out[w]["expected"] == words.states[w]);
      CHECK(torch_out[w]["states"] == krc["states"]);
      CHECK(torch_out[w]["states"] == numpy32[w]["states"]);
      CHECK(torch_other[w]["states"] == words.states[w]);
      CHECK(torch_other[w]["states"] == krc_other["states"]);
      CHECK(torch_other[w]["attention"] == other);
      // Margins: float32 throughout here, float64 sums rounded once in krc; on short words
      // they differ by a few units in the last place at most.
      for (std::size_t t = 0; t < krc["margins"].size(); ++t)
        if (!krc["margins"][t].is_null())
          CHECK(torch_out[w]["margins"][t].get<double>() ==
                doctest::Approx(krc["margins"][t].get<double>()).epsilon(1e-4));
    }
  }
}

TEST_CASE(
    "the module's parameters have TransformerLens's names and shapes, and uniform ones load") {
  KRC_REQUIRE_TORCH();
  test::TempDir dir;
  // kr symmetric_3 has layers without heads and layers without MLPs; scan has one head each.
  for (const char* strategy : {"kr", "scan"}) {
    CAPTURE(strategy);
    const std::string model = test::compile_zoo(dir, "symmetric_3", "s3.safetensors",
                                                {"--strategy", strategy, "--max-len", "40"});
    // The shapes TransformerLens's HookedTransformer gives its parameters (components/embed.py,
    // pos_embed.py, abstract_attention.py, attention.py, mlps/mlp.py, unembed.py) for a config,
    // with n_ctx = max_len + 1, d_vocab the vocabulary with <bos>, d_vocab_out the states.
    const std::string code = with_module(R"(
raw = open(sys.argv[1], 'rb').read()
n = int.from_bytes(raw[:8], 'little')
config = json.loads(json.loads(raw[8:8 + n])['__metadata__']['config'])
d, V, S, L = config['d_model'], len(config['vocabulary']), len(config['states']), config['max_len']
def hooked_transformer_shapes(c):
    shapes = {'embed.W_E': (c['d_vocab'], c['d_model']), 'pos_embed.W_pos': (c['n_ctx'], c['d_model']),
              'unembed.W_U': (c['d_model'], c['d_vocab_out']), 'unembed.b_U': (c['d_vocab_out'],)}
    H, e, dm = c['n_heads'], c['d_head'], c['d_model']
    for i in range(c['n_layers']):
        p = 'blocks.%d.' % i
        shapes.update({p + 'attn.W_Q': (H, dm, e), p + 'attn.W_K': (H, dm, e), p + 'attn.W_V': (H, dm, e),
                       p + 'attn.W_O': (H, e, dm), p + 'attn.b_Q': (H, e), p + 'attn.b_K': (H, e),
                       p + 'attn.b_V': (H, e), p + 'attn.b_O': (dm,)})
        if not c['attn_only']:
            shapes.update({p + 'mlp.W_in': (dm, c['d_mlp']), p + 'mlp.b_in': (c['d_mlp'],),
                           p + 'mlp.W_out': (c['d_mlp'], dm), p + 'mlp.b_out': (dm,)})
    return shapes
native = {n: tuple(t.shape) for n, t in model.state_dict().items()}
expected = {'embed.W_E': (V, d), 'pos_embed.W_pos': (L + 1, d), 'unembed.W_U': (d, S), 'unembed.b_U': (S,)}
for i, layer in enumerate(config['layers']):
    p, H, e = 'blocks.%d.' % i, len(layer['heads']), layer['head_dim']
    if H:
        expected.update({p + 'attn.W_Q': (H, d, e), p + 'attn.W_K': (H, d, e), p + 'attn.W_V': (H, d, e),
                         p + 'attn.W_O': (H, e, d), p + 'attn.b_Q': (H, e), p + 'attn.b_K': (H, e),
                         p + 'attn.b_V': (H, e), p + 'attn.b_O': (d,)})
    if layer['mlp_hidden'] is not None:
        m = layer['mlp_hidden']
        expected.update({p + 'mlp.W_in': (d, m), p + 'mlp.b_in': (m,), p + 'mlp.W_out': (m, d), p + 'mlp.b_out': (d,)})
assert native == expected, (native, expected)
uniform = krc_torch.load(sys.argv[1], uniform=True)
c = uniform.transformer_lens_config()
assert c['normalization_type'] is None and c['act_fn'] == 'relu' and c['n_ctx'] == L + 1
assert c['d_vocab'] == V and c['d_vocab_out'] == S and c['n_layers'] == len(config['layers'])
assert c['n_heads'] == max([len(l['heads']) for l in config['layers']] + [1])
assert c['d_mlp'] == max(l['mlp_hidden'] or 0 for l in config['layers'])
assert c['use_attn_scale'] == (config['attention']['scale'] != 1.0)
shapes = {n: tuple(t.shape) for n, t in uniform.state_dict().items()}
assert shapes == hooked_transformer_shapes(c), shapes
# A state-dict load into a module with exactly those parameters, strict.
class Skeleton(torch.nn.Module):
    def __init__(self, shapes):
        super().__init__()
        for name, shape in shapes.items():
            owner = self
            for part in name.split('.')[:-1]:
                if not hasattr(owner, part):
                    owner.add_module(part, torch.nn.Module())
                owner = getattr(owner, part)
            owner.register_parameter(name.split('.')[-1], torch.nn.Parameter(torch.zeros(shape)))
Skeleton(hooked_transformer_shapes(c)).load_state_dict(uniform.state_dict(), strict=True)
# Zero padding adds exact zeros (an optimised BLAS may group the longer sums differently).
tokens = model.tokens([config['vocabulary'][1:] * 3, config['vocabulary'][:0:-1]])
for attention in ('softmax', 'hard'):
    a, b = model(tokens, attention), uniform(tokens, attention)
    assert torch.allclose(a, b, rtol=0, atol=1e-5) and torch.equal(a.argmax(2), b.argmax(2)), attention
print('ok')
)");
    const auto result = test::run_python_code(dir, code, {model});
    CHECK_MESSAGE(result.status == 0, result.err);
    CHECK(result.out == "ok\n");
  }
}

TEST_CASE("chunked attention, batches and sparse MLPs give the logits of one dense pass") {
  KRC_REQUIRE_TORCH();
  test::TempDir dir;
  // Counters (average heads over every position, combs of 2 units per count) and lookups.
  for (const char* strategy : {"kr", "scan"}) {
    CAPTURE(strategy);
    const std::string model = test::compile_zoo(dir, "symmetric_4", "s4.safetensors",
                                                {"--strategy", strategy, "--max-len", "300"});
    const std::string code = with_module(R"(
import random
rng = random.Random(5)
words = [[rng.choice(model.vocabulary[1:]) for _ in range(n)] for n in (300, 299, 1)]
tokens = model.tokens(words)
for attention in ('softmax', 'hard'):
    model.max_scores = 1 << 30  # the whole 301 x 301 score matrix of every head at once
    one_pass = model(tokens, attention)
    model.max_scores = 7 * 301  # query chunks of one or two rows
    chunked = model(tokens, attention)
    model.use_sparse_mlp()
    sparse = model(tokens, attention)
    model.use_sparse_mlp(False)
    model.max_scores = 1 << 22
    # A row's scores, softmax and value sum do not depend on the rows beside it.
    assert torch.equal(one_pass, chunked), (one_pass - chunked).abs().max()
    # The same products over the nonzero terms: bit for bit with a BLAS that sums in index
    # order (the reference BLAS), up to rounding with one that groups the sums differently.
    assert torch.allclose(sparse, one_pass, rtol=0, atol=1e-4), (sparse - one_pass).abs().max()
    assert torch.equal(sparse.argmax(2), one_pass.argmax(2))
    dense = one_pass
    # A batch is its words one by one (shorter words padded after their end).
    for w, word in enumerate(words):
        alone = model(model.tokens([word]), attention)[0]
        assert torch.equal(alone, dense[w, :len(word) + 1]), (w, (alone - dense[w, :len(word) + 1]).abs().max())
print('ok')
)");
    const auto result = test::run_python_code(dir, code, {model});
    CHECK_MESSAGE(result.status == 0, result.err);
    CHECK(result.out == "ok\n");
  }
}

TEST_CASE("run_with_cache: the residual stream after every block, named by the file's labels") {
  KRC_REQUIRE_TORCH();
  test::TempDir dir;
  const std::string model = test::compile_zoo(dir, "quaternion", "q8.safetensors",
                                              {"--strategy", "kr", "--max-len", "30"});
  // The oracle is the file itself, read here: its embeddings, unembedding and labels.
  const std::string code = with_module(R"(
import numpy as np, struct
data = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', data[:8])[0]
header = json.loads(data[8:8 + n]); meta = header.pop('__metadata__')
labels = json.loads(meta['residual_labels']); config = json.loads(meta['config'])
def tensor(name):
    sparse = json.loads(meta['sparse'])
    if name in sparse:
        out = np.zeros(sparse[name], np.float32)
        idx = tensor(name + '.indices'); out[tuple(idx.T)] = tensor(name + '.values'); return out
    e = header[name]; b, end = e['data_offsets']
    return np.frombuffer(data[8 + n + b:8 + n + end], {'F32': '<f4', 'I32': '<i4'}[e['dtype']]).reshape(e['shape'])
word = ['i', 'j', 'k', '1', 'i', 'i', 'j']
tokens = model.tokens([word])
logits, cache = model.run_with_cache(tokens)
assert model.residual_labels == labels and len(labels) == config['d_model']
ids = [0] + [config['vocabulary'].index(a) for a in word]
assert np.array_equal(cache['hook_embed'][0].numpy(), tensor('embed.token')[ids])
assert np.array_equal(cache['hook_pos_embed'][0].numpy(), tensor('embed.position')[:len(ids)])
L = len(config['layers'])
for i in range(L):
    p = 'blocks.%d.' % i
    pre, mid, post = (cache[p + h] for h in ('hook_resid_pre', 'hook_resid_mid', 'hook_resid_post'))
    assert torch.equal(mid, pre + cache[p + 'hook_attn_out']) if p + 'hook_attn_out' in cache else torch.equal(mid, pre)
    assert torch.equal(post, mid + cache[p + 'hook_mlp_out']) if p + 'hook_mlp_out' in cache else torch.equal(post, mid)
    if i + 1 < L:
        assert torch.equal(post, cache['blocks.%d.hook_resid_pre' % (i + 1)])
    assert (p + 'hook_attn_out' in cache) == bool(config['layers'][i]['heads'])
assert np.allclose(cache['blocks.%d.hook_resid_post' % (L - 1)][0].numpy() @ tensor('unembed'), logits[0].numpy(), atol=1e-5)
# README: the residual dimension labelled token:a holds the letter a's one-hot.
for t, a in enumerate(word, start=1):
    named = model.labelled(cache['hook_embed'][0, t])
    assert named.get('token:' + a) == 1.0, named
only = model.run_with_cache(tokens, names={'blocks.0.hook_resid_post'})[1]
assert list(only) == ['blocks.0.hook_resid_post']
print('ok')
)");
  const auto result = test::run_python_code(dir, code, {model});
  CHECK_MESSAGE(result.status == 0, result.err);
  CHECK(result.out == "ok\n");
  // The command line prints the same stream, per position, nonzero entries by label.
  const auto lines = test::run_krc_torch(dir, model, {{"i", "j"}}, {"--residual"});
  const json& residual = lines[0]["residual"];
  CHECK(residual.contains("blocks.0.hook_resid_post"));
  CHECK(residual["hook_embed"][1]["token:i"] == 1.0);
  CHECK(residual["hook_embed"].size() == 3);
}

TEST_CASE("krc_torch.py: letters on the command line, and bad input exits with 2") {
  KRC_REQUIRE_TORCH();
  test::TempDir dir;
  const std::string model =
      test::compile_zoo(dir, "parity", "parity.safetensors", {"--max-len", "8"});
  const std::string script = (test::source_dir() / "tools" / "krc_torch.py").string();
  auto one = test::run_python(dir, {script, model, "0110"});
  REQUIRE_MESSAGE(one.status == 0, one.err);
  CHECK(json::parse(one.out)["states"] == json({"even", "even", "odd", "even", "even"}));
  auto spaced = test::run_python(dir, {script, model, "0", "1,1"});
  CHECK(json::parse(spaced.out)["states"] == json({"even", "even", "odd", "even"}));

  auto bad_letter = test::run_python(dir, {script, model, "0", "2"});
  CHECK(bad_letter.status == 2);
  CHECK(test::contains(bad_letter.err, "krc_torch: error: letter '2'"));
  auto too_long = test::run_python(dir, {script, model, "010101010"});
  CHECK(too_long.status == 2);
  CHECK(test::contains(too_long.err, "max_len 8"));
  const std::string junk = test::write_file(dir, "junk.safetensors", "not a safetensors file");
  auto bad_file = test::run_python(dir, {script, junk, "0"});
  CHECK(bad_file.status == 2);
  CHECK(test::contains(bad_file.err, "junk.safetensors"));
  auto missing = test::run_python(dir, {script, (dir / "missing.safetensors").string(), "0"});
  CHECK(missing.status == 2);
  auto usage = test::run_python(dir, {script});
  CHECK(usage.status == 2);
  CHECK(test::contains(usage.err, "Usage"));
}
