"""`krc export --format gpt2` and krc.Network.to_hf: the checkpoint loads in the real
`transformers` as a stock GPT2LMHeadModel (no custom code, eager attention, float32 on the CPU)
and in TransformerLens 4, and at every position of random words its argmax is the automaton's
state (an independent simulation of the automaton's JSON) and its state logits equal krc's own
float32 forward pass (`krc run --json`): bit for bit where the export proves every LayerNorm
exact (it refuses the other networks by default). A network it cannot prove, exported with
--allow-inexact, may see a residual value below 2^-96 in magnitude (a softmax leak) rounded by a
LayerNorm to a multiple of 2^-119; its logits are checked within 2^-100. The LayerNorm identity the export relies on is checked
on PyTorch's kernel directly, with a width that breaks it as the control, and on every LayerNorm
of exported models through forward hooks.

Run: python -m pytest tests/python (KRC_BINARY names the krc command, default build/krc).
KRC_GPT2_FULL=1 adds the full table: every zoo automaton, scan and kr, max-len 1024, 20 words.
"""
import json
import os
import pathlib
import random
import subprocess

import pytest

torch = pytest.importorskip("torch")
safe_open = pytest.importorskip("safetensors").safe_open
transformers = pytest.importorskip("transformers")

ROOT = pathlib.Path(__file__).resolve().parents[2]
KRC = os.environ.get("KRC_BINARY", str(ROOT / "build" / "krc"))
FULL = os.environ.get("KRC_GPT2_FULL") == "1"
K = 30  # the export's epsilon is 4^K and gamma 2^K
ZOO = ["parity", "abab", "quaternion", "cyclic", "flipflop", "dihedral", "gridworld",
       "alternating", "symmetric", "full_transformations"]


def krc(*args):
    return subprocess.run([KRC, *map(str, args)], capture_output=True, text=True)


def krc_ok(*args):
    result = krc(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def simulate(automaton, word):
    """The state after every prefix, from the automaton's native JSON alone."""
    states = automaton["states"]

    def index(s):
        return s if isinstance(s, int) else states.index(s)

    q = index(automaton["initial"])
    run = [states[q]]
    for letter in word:
        q = index(automaton["transitions"][letter][q])
        run.append(states[q])
    return run


def compile_and_export(tmp, name, strategy, max_len, *options, norm="none"):
    source, weights, out = tmp / f"{name}.json", tmp / f"{name}_{strategy}.safetensors", tmp / f"{name}_{strategy}"
    source.write_text(krc_ok("zoo", name))
    krc_ok("compile", source, "--strategy", strategy, "--max-len", max_len, "--norm", norm,
           "-o", weights)
    krc_ok("export", weights, "--format", "gpt2", "-o", out, *options)
    return json.loads(source.read_text()), weights, out


def load(directory):
    model, info = transformers.AutoModelForCausalLM.from_pretrained(
        directory, attn_implementation="eager", output_loading_info=True)
    assert not any(info.values()), info  # no missing, unexpected or mismatched tensor
    return model.eval()


def check_words(model, automaton, weights, directory, words, forward=None):
    """Every position of every word: the argmax against the automaton, the state logits
    against krc's float32 forward pass (`krc run --json`, or forward(word) -> logits): bit for
    bit when the export says it is exact, else within 2^-100. Returns the positions checked."""
    vocab = json.loads((directory / "krc_vocab.json").read_text())
    side = json.loads((directory / "krc_gpt2.json").read_text())
    exact = side["exactness"]["exact"]
    k = side["layout"]["layer_norm_epsilon_log4"]
    hook = lambda module, inputs, output: check_layernorm(module, inputs, output, k)
    first_state = min(vocab["states"].values())
    ids = torch.tensor([[vocab["bos"]] + [vocab["letters"][a] for a in w] for w in words])
    logits = []
    with torch.no_grad():
        hooks = [m.register_forward_hook(hook) for m in model.modules()
                 if isinstance(m, torch.nn.LayerNorm)]
        try:
            for batch in ids.split(4):
                logits.append(model(batch).logits)
        finally:
            for h in hooks:
                h.remove()
    logits = torch.cat(logits)
    assert logits.dtype == torch.float32
    by_id = {i: s for s, i in vocab["states"].items()}
    for w, row in zip(words, logits):
        expected = simulate(automaton, w)
        assert [by_id.get(i, "<letter>") for i in row.argmax(-1).tolist()] == expected
        if forward is None:
            theirs = json.loads(krc_ok("run", weights, ",".join(w), "--json"))["logits"]
        else:
            theirs = forward(w)
        # krc's logits are float32 values: any decimal that names one (shortest or widened)
        # reads back as that float32, so torch.equal is equality bit for bit.
        if exact:
            assert torch.equal(row[:, first_state:], torch.tensor(theirs, dtype=torch.float32))
        else:
            theirs = torch.tensor(theirs, dtype=torch.float64)
            assert (row[:, first_state:].double() - theirs).abs().max().item() < 2.0**-100
    return sum(len(w) + 1 for w in words)


def certified_in_fp16(weights):
    """Whether the file's compiler metadata certifies it in fp16 at its max-len: its GPT-2
    export then uses fp16's gamma 2^15 (epsilon 4^15) instead of 2^30."""
    with safe_open(str(weights), "np") as f:
        metadata = f.metadata()
    longest = json.loads(metadata["compiler"])["precision"]["exact_in"].get("fp16")
    return longest is not None and longest >= json.loads(metadata["config"])["max_len"]


def check_layernorm(module, inputs, output, k=K):
    """A LayerNorm of an exported model (epsilon 4^k, gamma 2^k): the identity on every value of
    magnitude >= 2^(k - 126) and on zeros; smaller values are rounded to a multiple of
    2^(k - 149); every |x| <= 2^(k - 12)."""
    x = inputs[0]
    assert x.abs().max().item() <= 2.0 ** (k - 12)
    exact = (x.abs() >= 2.0 ** (k - 126)) | (x == 0)
    assert torch.equal(output[exact], x[exact])
    assert (output - x).abs().max().item() <= 2.0 ** (k - 150)


@pytest.mark.parametrize("width", [512, 1024, 4096])
def test_layernorm_is_identity_on_mirrored_halves(width):
    gen = torch.Generator().manual_seed(width)
    half = torch.randn(64, width // 2, generator=gen) * torch.exp2(
        torch.randint(-20, 12, (64, width // 2), generator=gen).float())
    half[torch.rand(half.shape, generator=gen) < 0.5] = 0
    x = torch.cat([half, -half], 1)
    gamma = torch.full((width,), 2.0**K)
    y = torch.nn.functional.layer_norm(x, (width,), gamma, torch.zeros(width), 4.0**K)
    assert torch.equal(y, x)


def test_layernorm_control_width_768_is_not_identity():
    """The power-of-two width matters: 768 = 3 * 256 splits the Welford cascade unevenly."""
    gen = torch.Generator().manual_seed(1)
    half = torch.randn(64, 384, generator=gen)
    x = torch.cat([half, -half], 1)
    y = torch.nn.functional.layer_norm(x, (768,), torch.full((768,), 2.0**K), torch.zeros(768), 4.0**K)
    assert not torch.equal(y, x)


@pytest.mark.parametrize("name,strategy,max_len,exact", [
    ("parity", "scan", 64, False), ("abab", "kr", 64, False), ("quaternion", "scan", 64, False),
    ("flipflop", "kr", 64, False), ("abab", "onelayer", 11, True), ("cyclic", "kr", 16, True),
    ("parity", "kr", 1024, True)])
def test_transformers_matches_automaton_and_krc(tmp_path, name, strategy, max_len, exact):
    """`exact`: whether the export proves every LayerNorm exact (then it exports by default and
    the logits must equal krc's bit for bit); the others are exported with --allow-inexact."""
    automaton, weights, out = compile_and_export(tmp_path, name, strategy, max_len,
                                                 "--allow-inexact")
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "gpt2" and config["activation_function"] == "relu"
    assert config["n_embd"] & (config["n_embd"] - 1) == 0 and config["n_embd"] >= 512
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert len(side["residual_labels"]) == config["n_embd"]
    assert side["exactness"]["exact"] is exact
    by_default = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "default")
    assert by_default.returncode == (0 if exact else 2), by_default.stderr
    model = load(out)
    assert type(model).__name__ == "GPT2LMHeadModel"
    assert not torch.equal(model.lm_head.weight, model.transformer.wte.weight)
    rng = random.Random(7)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(max_len)] for _ in range(6)]
    assert check_words(model, automaton, weights, out, words) == 6 * (max_len + 1)


def test_transformer_lens_bridge_matches_transformers(tmp_path):
    bridge_module = pytest.importorskip("transformer_lens.model_bridge")
    automaton, weights, out = compile_and_export(tmp_path, "abab", "kr", 32, "--allow-inexact")
    bridge = bridge_module.TransformerBridge.boot_transformers(str(out), device="cpu")
    model = load(out)
    vocab = json.loads((out / "krc_vocab.json").read_text())
    rng = random.Random(3)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(32)] for _ in range(4)]
    ids = torch.tensor([[0] + [vocab["letters"][a] for a in w] for w in words])
    with torch.no_grad():
        reference = model(ids).logits
        # The bridge's own LayerNorm (x - x.mean()) / sqrt(mean(x^2) + eps) takes torch.mean,
        # whose sum is not exactly 0 on mirrored halves: close, and the same argmax.
        default = bridge(ids)
        assert (default - reference).abs().max().item() < 1e-6
        assert torch.equal(default.argmax(-1), reference.argmax(-1))
        # Running the LayerNorm of transformers inside the bridge: bit for bit.
        for module in bridge.modules():
            if type(module).__name__ == "NormalizationBridge":
                module.use_native_layernorm_autograd = True
        assert torch.equal(bridge(ids), reference)
        _, cache = bridge.run_with_cache(ids)
    assert len(cache) > 0
    check_words(model, automaton, weights, out, words)


def test_export_refuses_bad_requests(tmp_path):
    source, weights = tmp_path / "p.json", tmp_path / "p.safetensors"
    source.write_text(krc_ok("zoo", "parity"))
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 8, "--attention", "hard", "-o", weights)
    refused = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "out")
    assert refused.returncode == 2 and "softmax" in refused.stderr
    assert not (tmp_path / "out" / "config.json").exists()
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 8, "-o", weights)
    (tmp_path / "file").write_text("x")
    refused = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "file", "--allow-inexact")
    assert refused.returncode == 2 and "not a directory" in refused.stderr
    refused = krc("export", weights, "-o", tmp_path / "tl.safetensors", "--allow-inexact")
    assert refused.returncode == 2 and "--allow-inexact" in refused.stderr
    refused = krc("export", weights, "--format", "gpt2", "-o", "-")
    assert refused.returncode == 2 and "directory" in refused.stderr and refused.stdout == ""


@pytest.mark.skipif(not FULL, reason="the full table: KRC_GPT2_FULL=1")
@pytest.mark.parametrize("strategy", ["scan", "kr"])
@pytest.mark.parametrize("name", ZOO)
def test_full_table_max_len_1024(tmp_path, name, strategy):
    automaton, weights, out = compile_and_export(tmp_path, name, strategy, 1024,
                                                 "--allow-inexact")
    rng = random.Random(11)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(1024)] for _ in range(20)]
    assert check_words(load(out), automaton, weights, out, words) == 20 * 1025


# What `--norm layernorm` makes exact at max-len 1024 (compiler/README.md §7, measured
# 2026-11-26, abab and flipflop since their memory heads score 128 apart, 2026-11-28): every zoo
# scan network, and these kr networks; the other kr networks are refused by the proof (gridworld
# kr: the walk's dyadic sum heads, whose tied weights the proof does not see; quaternion,
# dihedral and full_transformations kr: the variance bound) and are in the table above.
LAYERNORM_KR = ["parity", "abab", "cyclic", "flipflop", "alternating", "symmetric"]


@pytest.mark.skipif(not FULL, reason="the full table: KRC_GPT2_FULL=1")
@pytest.mark.parametrize("name, strategy", [(n, "scan") for n in ZOO]
                         + [(n, "kr") for n in LAYERNORM_KR])
def test_full_table_layernorm_transformers_and_transformer_lens(tmp_path, name, strategy):
    """Issue 22's table: compiled with --norm layernorm and exported without --allow-inexact
    (the proof holds), 20 random words of 1,024 letters; in transformers every position is the
    automaton's state and the state logits equal krc's float32 pass bit for bit; TransformerLens
    4's bridge booted from the same checkpoint, with transformers' LayerNorm inside it, gives
    transformers' logits bit for bit on the same words."""
    bridge_module = pytest.importorskip("transformer_lens.model_bridge")
    automaton, weights, out = compile_and_export(tmp_path, name, strategy, 1024,
                                                 norm="layernorm")
    assert json.loads((out / "krc_gpt2.json").read_text())["exactness"]["exact"] is True
    rng = random.Random(17)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(1024)] for _ in range(20)]
    model = load(out)
    assert check_words(model, automaton, weights, out, words) == 20 * 1025
    vocab = json.loads((out / "krc_vocab.json").read_text())
    ids = torch.tensor([[vocab["bos"]] + [vocab["letters"][a] for a in w] for w in words])
    bridge = bridge_module.TransformerBridge.boot_transformers(str(out), device="cpu")
    for module in bridge.modules():
        if type(module).__name__ == "NormalizationBridge":
            module.use_native_layernorm_autograd = True
    with torch.no_grad():
        for batch in ids.split(4):
            assert torch.equal(bridge(batch), model(batch).logits)


def test_network_to_hf_loads_in_transformers(tmp_path):
    """krc.Network.to_hf writes the checkpoint `krc export --format gpt2` writes (one export in
    the library) and returns its path; transformers loads it as it is, and every position of
    random words equals the automaton and Network.run's float32 logits bit for bit."""
    api = pytest.importorskip("krc")
    source = tmp_path / "cyclic.json"
    source.write_text(krc_ok("zoo", "cyclic"))
    automaton = json.loads(source.read_text())
    network = api.compile(api.load_automaton(str(source)), strategy="kr", max_len=16)
    path = network.to_hf(tmp_path / "hf")
    assert path == str(tmp_path / "hf")
    side = json.loads((tmp_path / "hf" / "krc_gpt2.json").read_text())
    assert side["exactness"] == {"exact": True, "reason": "", "largest": side["exactness"]["largest"]}
    # The same files as the command line's export of the same network.
    network.save(tmp_path / "cyclic.safetensors")
    krc_ok("export", tmp_path / "cyclic.safetensors", "--format", "gpt2", "-o", tmp_path / "cli")
    for name in ["config.json", "model.safetensors", "krc_vocab.json"]:
        assert (tmp_path / "hf" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    model = load(path)
    assert next(model.parameters()).dtype == torch.float32
    rng = random.Random(5)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(16)] for _ in range(8)]
    forward = lambda w: network.run(w, arithmetic="float32").logits.tolist()
    assert check_words(model, automaton, None, tmp_path / "hf", words, forward) == 8 * 17


def test_inexact_networks_are_refused_unless_allowed(tmp_path):
    """flipflop's kr network leaks softmax weights below the normal floats onto the residual:
    a LayerNorm may round them (measured: logits 7.1e-39 apart from krc's). The export proves
    nothing for it, so it is refused by default, in the command and in Python, and written
    with the reason when allowed."""
    source, weights = tmp_path / "f.json", tmp_path / "f.safetensors"
    source.write_text(krc_ok("zoo", "flipflop"))
    krc_ok("compile", source, "--strategy", "kr", "--max-len", 64, "-o", weights)
    refused = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "out")
    assert refused.returncode == 2, refused.stderr
    assert "not provably exact" in refused.stderr and "leak" in refused.stderr
    assert "--allow-inexact" in refused.stderr
    assert not (tmp_path / "out").exists()
    allowed = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "out", "--allow-inexact")
    assert allowed.returncode == 0 and "not provably exact" in allowed.stderr
    side = json.loads((tmp_path / "out" / "krc_gpt2.json").read_text())
    assert side["exactness"]["exact"] is False and "leak" in side["exactness"]["reason"]
    api = pytest.importorskip("krc")
    network = api.load(str(weights))
    with pytest.raises(api.InputError, match="not provably exact"):
        network.to_hf(tmp_path / "py")
    assert not (tmp_path / "py" / "config.json").exists()
    with pytest.warns(RuntimeWarning, match="not provably exact"):
        assert network.to_hf(tmp_path / "py", allow_inexact=True) == str(tmp_path / "py")
    assert (tmp_path / "py" / "config.json").exists()


@pytest.mark.parametrize("name", ["parity", "flipflop", "cyclic"])
def test_layernorm_option_makes_scan_exact(tmp_path, name):
    """`krc compile --norm layernorm`: the scan's fetches win by 128, so their other weights are
    float32 zeros; the export proves it and writes the checkpoint by default, and transformers'
    logits equal krc's bit for bit at every position. Without the option the same network is
    refused, and the refusal names the option."""
    automaton, weights, out = compile_and_export(tmp_path, name, "scan", 1024, norm="layernorm")
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert side["exactness"]["exact"] is True, side["exactness"]["reason"]
    rng = random.Random(13)
    model = load(out)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(1024)] for _ in range(2)]
    checked = check_words(model, automaton, weights, out, words)
    for n in (1, 5, 77):  # one length a batch
        checked += check_words(model, automaton, weights, out,
                               [[rng.choice(automaton["alphabet"]) for _ in range(n)]])
    assert checked == 2 * 1025 + 2 + 6 + 78
    plain = tmp_path / "plain.safetensors"
    krc_ok("compile", tmp_path / f"{name}.json", "--strategy", "scan", "--max-len", 1024,
           "-o", plain)
    refused = krc("export", plain, "--format", "gpt2", "-o", tmp_path / "plain")
    assert refused.returncode == 2 and "--norm layernorm" in refused.stderr, refused.stderr


# Proved by the value sets (compiler/README.md §7, "When it is exact") at max-len 1024 with
# --norm layernorm, as the five above were by the intervals: one word of 1,024 letters and two
# short ones each. symmetric (1.35 GB of float32 tensors, 25 s to export) only with KRC_GPT2_FULL=1.
@pytest.mark.parametrize("name", ["abab", "gridworld", "alternating", "full_transformations"]
                         + (["symmetric"] if FULL else []))
def test_layernorm_value_sets_prove_scan(tmp_path, name):
    automaton, weights, out = compile_and_export(tmp_path, name, "scan", 1024, norm="layernorm")
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert side["exactness"]["exact"] is True, side["exactness"]["reason"]
    assert side["layout"]["layer_norm_epsilon_log4"] == (15 if certified_in_fp16(weights) else K)
    rng = random.Random(29)
    model = load(out)
    checked = 0
    for n in (1024, 3, 40):
        checked += check_words(model, automaton, weights, out,
                               [[rng.choice(automaton["alphabet"]) for _ in range(n)]])
    assert checked == 1025 + 4 + 41


@pytest.mark.parametrize("name", ZOO)
def test_every_zoo_scan_with_layernorm_export_and_verify(tmp_path, name):
    """Every zoo automaton, scan, --norm layernorm, max-len 1024: `krc verify` passes in float32
    (every word up to its exhaustive length, 50 random words of 1,024 letters), and every one
    exports without --allow-inexact (measured 2026-11-26): at epsilon 4^15 where the network
    is also certified in fp16 at 1,024 (fp16's gamma; the checkpoint then keeps float16), at
    4^30 elsewhere."""
    source, weights = tmp_path / "a.json", tmp_path / "a.safetensors"
    source.write_text(krc_ok("zoo", name))
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 1024, "--norm", "layernorm",
           "-o", weights)
    exported = krc("export", weights, "--format", "gpt2", "-o", tmp_path / "out")
    assert exported.returncode == 0, exported.stderr
    side = json.loads((tmp_path / "out" / "krc_gpt2.json").read_text())
    fp16 = certified_in_fp16(weights)
    assert side["layout"]["layer_norm_epsilon_log4"] == (15 if fp16 else K)
    assert side["formats"]["float16"]["kept"] == fp16
    verified = krc("verify", weights, "--arithmetic", "float32", "--random", 50, "--threads", 2)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_python_compile_norm_layernorm(tmp_path):
    """krc.compile(..., norm="layernorm") builds what `krc compile --norm layernorm` builds, and
    its Network.to_hf() is provably exact (the plain network's is refused, naming the option)."""
    api = pytest.importorskip("krc")
    source = tmp_path / "parity.json"
    source.write_text(krc_ok("zoo", "parity"))
    automaton = api.load_automaton(str(source))
    network = api.compile(automaton, strategy="scan", max_len=64, norm="layernorm")
    assert network.compiler["norm"] == "layernorm"
    network.to_hf(tmp_path / "hf")
    assert json.loads((tmp_path / "hf" / "krc_gpt2.json").read_text())["exactness"]["exact"]
    network.save(tmp_path / "py.safetensors")
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 64, "--norm", "layernorm",
           "-o", tmp_path / "cli.safetensors")
    krc_ok("export", tmp_path / "cli.safetensors", "--format", "gpt2", "-o", tmp_path / "cli")
    for name in ["config.json", "model.safetensors"]:
        assert (tmp_path / "hf" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    plain = api.compile(automaton, strategy="scan", max_len=64)
    with pytest.raises(api.InputError, match=r'`krc\.compile\(norm="layernorm"\)`'):
        plain.to_hf(tmp_path / "plain")
    with pytest.raises(ValueError, match="norm"):
        api.compile(automaton, strategy="scan", max_len=64, norm="rmsnorm")


def dtype_logits(directory, dtype, words):
    """transformers' logits (as float32) for <bos> + each word, the model loaded in `dtype`."""
    vocab = json.loads((directory / "krc_vocab.json").read_text())
    model = transformers.AutoModelForCausalLM.from_pretrained(
        directory, dtype=getattr(torch, dtype), attn_implementation="eager").eval()
    assert next(model.parameters()).dtype == getattr(torch, dtype)
    ids = torch.tensor([[vocab["bos"]] + [vocab["letters"][a] for a in w] for w in words])
    with torch.no_grad():
        return model(ids).logits.float()


def assert_right_in_three_dtypes(out, weights, automaton, words):
    """The checkpoint in `out`, loaded in transformers in float32, bfloat16 and float16: every
    position of `words` is the automaton's state, and the state logits are krc's forward of
    `weights` in that arithmetic (bit for bit in float32 and fp16, within 2^-24 in bf16, where
    the CPU's bf16 matmul sums in another order)."""
    vocab = json.loads((out / "krc_vocab.json").read_text())
    by_id = {i: s for s, i in vocab["states"].items()}
    first_state = min(vocab["states"].values())
    for dtype, arithmetic in [("float32", "float32"), ("bfloat16", "bf16"), ("float16", "fp16")]:
        logits = dtype_logits(out, dtype, words)
        assert not torch.isnan(logits).any(), dtype
        for w, row in zip(words, logits):
            assert [by_id.get(i, "<letter>") for i in row.argmax(-1).tolist()] == \
                simulate(automaton, w), dtype
            theirs = json.loads(krc_ok("run", weights, ",".join(w), "--arithmetic", arithmetic,
                                       "--json"))["logits"]
            difference = (row[:, first_state:] - torch.tensor(theirs)).abs().max().item()
            assert difference <= (2.0**-24 if dtype == "bfloat16" else 0.0), (dtype, difference)


@pytest.mark.parametrize("name,precision", [("parity", "fp16"), ("gridworld", "bf16"),
                                            ("quaternion", "fp16")])
def test_checkpoint_of_a_narrow_network_is_exact_in_bf16_and_fp16(tmp_path, name, precision):
    """A scan network compiled --precision bf16|fp16 --norm layernorm (certified in both
    formats) exports with epsilon 4^15 and gamma 2^15, a gamma fp16 holds (4^30's 2^30 is past
    65,504: every fp16 checkpoint was NaN at every position). krc_gpt2.json says it keeps
    float32, bfloat16 and float16, and in transformers loaded in each (CPU, eager) every
    position of random words is the automaton's state; the state logits equal krc's forward in
    that arithmetic (`krc run --arithmetic`) bit for bit in float32 and fp16, and within 2^-24
    in bf16, where the CPU kernels' summation order differs from krc's ascending running sum in
    sums that are not exact (measured: at most 1.7e-8, on logits krc computes as 0)."""
    source, weights, out = tmp_path / "a.json", tmp_path / "a.safetensors", tmp_path / "gpt2"
    source.write_text(krc_ok("zoo", name))
    automaton = json.loads(source.read_text())
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 128, "--precision", precision,
           "--norm", "layernorm", "-o", weights)
    summary = json.loads(krc_ok("export", weights, "--format", "gpt2", "-o", out, "--json"))
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert side["formats"] == summary["formats"]
    assert {f: v["kept"] for f, v in side["formats"].items()} == {
        "float32": True, "bfloat16": True, "float16": True}
    assert side["layout"]["layer_norm_epsilon_log4"] == 15
    config = json.loads((out / "config.json").read_text())
    assert config["layer_norm_epsilon"] == 4.0**15
    rng = random.Random(11)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(128)] for _ in range(3)]
    assert_right_in_three_dtypes(out, weights, automaton, words)


def test_checkpoint_says_which_formats_it_does_not_keep(tmp_path):
    """A float32 network's checkpoint keeps float32 only, and says why not the others (the
    network is not certified there); cast to float16 in transformers it is indeed NaN, the
    failure the statement warns of. The same network compiled for fp16 keeps fp16."""
    source, weights, out = tmp_path / "p.json", tmp_path / "p.safetensors", tmp_path / "gpt2"
    source.write_text(krc_ok("zoo", "parity"))
    krc_ok("compile", source, "--strategy", "kr", "--max-len", 64, "-o", weights)
    printed = krc_ok("export", weights, "--format", "gpt2", "-o", out)
    formats = json.loads((out / "krc_gpt2.json").read_text())["formats"]
    assert formats["float32"] == {"kept": True, "network_certified": True, "why": ""}
    for name, krc_name in [("bfloat16", "bf16"), ("float16", "fp16")]:
        assert not formats[name]["kept"] and not formats[name]["network_certified"]
        assert f"not certified in {krc_name}" in formats[name]["why"]
        assert f"{name}: not kept, the network is not certified in {krc_name}" in printed
    assert torch.isnan(dtype_logits(out, "float16", [["0", "1", "1"]])).any()


def test_a_certified_format_the_checkpoint_loses_is_warned_of(tmp_path):
    """A file that says it is certified in fp16 but whose LayerNorms cannot be proved with
    fp16's gamma 2^15 (here parity's kr network at max-len 1024, whose counter reaches 1,024,
    so the residual's variance is past 2^5, with the claim written into its metadata) exports
    with the float32 gamma: the checkpoint keeps float32 only, says why float16 is lost, and
    both doors warn."""
    api = pytest.importorskip("krc")
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    source, weights, claimed = tmp_path / "s.json", tmp_path / "s.safetensors", tmp_path / "c.safetensors"
    source.write_text(krc_ok("zoo", "parity"))
    krc_ok("compile", source, "--strategy", "kr", "--max-len", 1024, "-o", weights)
    with safe_open(str(weights), "np") as f:
        metadata, tensors = f.metadata(), {k: f.get_tensor(k) for k in f.keys()}
    compiler = json.loads(metadata["compiler"])
    assert compiler["precision"]["exact_in"]["fp16"] is None
    compiler["precision"]["exact_in"]["fp16"] = 1024
    metadata["compiler"] = json.dumps(compiler)
    safetensors_numpy.save_file(tensors, str(claimed), metadata=metadata)
    result = krc("export", claimed, "--format", "gpt2", "-o", tmp_path / "cli")
    assert result.returncode == 0, result.stderr
    assert "is not exact in float16, though the network is: with epsilon 4^15 and gamma 2^15" \
        in result.stderr and "variance" in result.stderr
    formats = json.loads((tmp_path / "cli" / "krc_gpt2.json").read_text())["formats"]
    assert formats["float16"]["network_certified"] and not formats["float16"]["kept"]
    assert formats["float32"]["kept"]
    network = api.load(str(claimed))
    with pytest.warns(api.certified.UncertifiedFormatWarning, match="float16, though"):
        network.to_hf(tmp_path / "py")
    assert (tmp_path / "py" / "model.safetensors").read_bytes() == \
        (tmp_path / "cli" / "model.safetensors").read_bytes()


def test_binary_coordinate_network_exports_by_the_selector_rule(tmp_path):
    """Issue 36: full_transformations_5 (T_5, 3,125 transformations) compiled --precision bf16
    --norm layernorm at max-len 64 is a binary-coordinate scan whose compose MLPs join every
    state's bits: too many joint values to enumerate, so before the selector rule the prover fell
    back to intervals and exported with gamma 2^30 (variance bound 1,215 past fp16's 2^5), keeping
    float32 and bfloat16 but not float16 (measured with main's krc, without the rule). The rule
    (compiler/certify.md, "Next: the selector rule") follows each written coordinate on its own:
    the checkpoint is proved at epsilon 4^15, keeps all three formats, and in transformers loaded
    in each every position of random words is the automaton's state, the state logits as krc's
    forward in that arithmetic (bit for bit in float32 and fp16, within 2^-24 in bf16, as in
    test_checkpoint_of_a_narrow_network_is_exact_in_bf16_and_fp16)."""
    source, weights, out = tmp_path / "t5.json", tmp_path / "t5.safetensors", tmp_path / "gpt2"
    source.write_text(krc_ok("zoo", "full_transformations", "--n", 5))
    automaton = json.loads(source.read_text())
    krc_ok("compile", source, "--strategy", "scan", "--max-len", 64, "--precision", "bf16",
           "--norm", "layernorm", "-o", weights)
    assert "binary coordinates form" in krc_ok("info", weights)
    summary = json.loads(krc_ok("export", weights, "--format", "gpt2", "-o", out, "--json"))
    assert summary["exact"] is True
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert side["layout"]["layer_norm_epsilon_log4"] == 15
    assert {f: v["kept"] for f, v in side["formats"].items()} == {
        "float32": True, "bfloat16": True, "float16": True}
    rng = random.Random(36)
    words = [[rng.choice(automaton["alphabet"]) for _ in range(64)] for _ in range(3)]
    assert_right_in_three_dtypes(out, weights, automaton, words)


def held_out(name):
    """Small automata of the kinds issue 32 calls held out (rebuilt here from their names: the
    originals are not in the repository), as krc's native JSON."""
    def automaton(n, alphabet, delta):
        return {"name": name, "states": [f"q{i}" for i in range(n)], "alphabet": alphabet,
                "initial": "q0",
                "transitions": {a: [f"q{delta(q, a)}" for q in range(n)] for a in alphabet}}
    kmp = {"a": [1, 1, 3, 1, 4], "b": [0, 2, 0, 4, 4]}  # contains "abab" (state 4 absorbs)
    a4 = {"c": [1, 2, 0, 3], "d": [1, 0, 3, 2], "r": [0, 0, 0, 0]}  # A4's generators, a reset
    s4 = {"t": [1, 0, 2, 3], "c": [1, 2, 3, 0], "r": [0, 0, 0, 0]}  # S4's generators, a reset
    torus = {"x": lambda q: (q // 2) * 2 + (q % 2 + 1) % 2,  # Z2 x Z3 as x + 2y, "h" home
             "y": lambda q: ((q // 2 + 1) % 3) * 2 + q % 2, "h": lambda q: 0}
    return {
        "binmod_5": lambda: automaton(5, ["0", "1"], lambda q, a: (2 * q + int(a)) % 5),
        "contains_abab": lambda: automaton(5, ["a", "b"], lambda q, a: kmp[a][q]),
        "a4_reset": lambda: automaton(4, ["c", "d", "r"], lambda q, a: a4[a][q]),
        "permreset_4": lambda: automaton(4, ["t", "c", "r"], lambda q, a: s4[a][q]),
        "torus2x3_home": lambda: automaton(6, ["x", "y", "h"], lambda q, a: torus[a](q)),
        # a random 4-state, 2-letter table (Python's random.Random(4), drawn once)
        "rand_04_n4k2": lambda: automaton(4, ["a", "b"], lambda q, a: {
            "a": [1, 2, 0, 3], "b": [3, 1, 0, 0]}[a][q]),
    }[name]()


# kr networks whose memory heads made the proof refuse them before `--norm layernorm` gave the
# latest-flagged heads exact_latest_flagged's scores (128 apart: every runner-up weight is a
# float32 0) and the proof learned to see it (flagged_score_gap, gpt2_selection.cpp).
@pytest.mark.parametrize("name", ["abab", "flipflop", "contains_abab", "torus2x3_home"])
def test_layernorm_kr_memory_heads_export_exactly(tmp_path, name):
    """Compiled --strategy kr --norm layernorm at max-len 256 and exported without
    --allow-inexact: the proof holds (before, at max-len 1024, it refused abab, flipflop and
    contains_abab for the memory heads' λ = 20 leaks, and torus2x3_home for the variance bound,
    the value sets then losing what the memory heads copy; measured with main's krc), and
    in transformers (float32, eager, no custom code) every position of random words is the
    automaton's state (an independent simulation of its JSON), the state logits equal to krc's
    float32 forward pass bit for bit, every LayerNorm the identity (hooks)."""
    if name in ("abab", "flipflop"):
        automaton, weights, out = compile_and_export(tmp_path, name, "kr", 256, norm="layernorm")
    else:  # held out: not in the zoo
        automaton, weights, out = held_out(name), tmp_path / "n.safetensors", tmp_path / "gpt2"
        (tmp_path / "n.json").write_text(json.dumps(automaton))
        krc_ok("compile", tmp_path / "n.json", "--strategy", "kr", "--max-len", 256, "--norm",
               "layernorm", "-o", weights)
        krc_ok("export", weights, "--format", "gpt2", "-o", out)
    side = json.loads((out / "krc_gpt2.json").read_text())
    assert side["exactness"]["exact"] is True, side["exactness"]["reason"]
    rng = random.Random(32)
    model, checked = load(out), 0
    for n, count in [(256, 2), (9, 1)]:
        words = [[rng.choice(automaton["alphabet"]) for _ in range(n)] for _ in range(count)]
        checked += check_words(model, automaton, weights, out, words)
    assert checked == 2 * 257 + 10
