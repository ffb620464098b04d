"""Network.check_circuit's arguments checked and its two checks dispatched: the runtime's
(framework "krc", float64, the circuit the runtime derives) or PyTorch's (framework "torch",
krc.torch_circuit, on the network's dense module). Kept apart from krc.network so that the
class reads as its API; torch is imported only for the torch check."""
from typing import Any, Dict, List, Optional, Sequence

from .errors import InputError, require


def reference_words(words: Optional[Sequence[Sequence[str]]]) -> Optional[List[List[str]]]:
    """Mean ablation's reference words, each a list of letters (a string word is refused: "ab"
    would be ambiguous)."""
    if words is None:
        return None
    if isinstance(words, str) or any(isinstance(w, str) for w in words):
        raise TypeError("reference: a list of words, each a list of letters")
    return [[str(a) for a in w] for w in words]


def check_circuit(network: Any, circuit: Optional[Dict[str, Any]], framework: str,
                  dtype: Optional[str], granularity: str, max_exhaustive_words: int, random: int,
                  length: int, seed: int, ablation: str,
                  reference: Optional[Sequence[Sequence[str]]]) -> Dict[str, Any]:
    """Network.check_circuit (its docstring says what each argument does)."""
    if ablation not in ("zero", "mean"):
        raise InputError("Network.check_circuit: ablation %r is not 'zero' or 'mean'"
                         % (ablation,), "", "ablation", "unknown ablation")
    words = reference_words(reference)
    if words is not None and ablation != "mean":
        raise InputError("Network.check_circuit: only mean ablation averages over reference "
                         "words", "", "reference", "reference without mean ablation")
    options = (granularity, max_exhaustive_words, random, length, seed, ablation, words)
    if framework == "krc":
        return check_in_runtime(network, circuit, dtype, *options)
    if framework != "torch":
        raise InputError("Network.check_circuit: framework %r is not 'torch' or 'krc'"
                         % framework, "", "framework", "unknown framework")
    return check_in_torch(network, circuit, dtype, *options)


def check_in_runtime(network, circuit, dtype, granularity, max_exhaustive_words, random, length,
                     seed, ablation, reference):
    """The C++ check, on the circuit the runtime derives, in float64."""
    if circuit is not None:
        raise InputError("Network.check_circuit: framework 'krc' checks the circuit the "
                         "runtime derives; pass circuit=None (or framework='torch')",
                         "", "circuit", "a circuit given to the runtime's check")
    if dtype not in (None, "float64"):
        raise InputError("Network.check_circuit: krc's runtime checks in float64, not "
                         "%s" % dtype, "", "dtype", "unknown dtype")
    check = network.circuit(granularity, True, max_exhaustive_words, random, length, seed,
                            ablation, reference)["check"]
    return dict(check, framework="krc")


def check_in_torch(network, circuit, dtype, granularity, max_exhaustive_words, random, length,
                   seed, ablation, reference):
    """The PyTorch check (krc.torch_circuit) in float32 (the default) or float64."""
    dtype = dtype or "float32"
    if dtype not in ("float32", "float64"):
        raise InputError("Network.check_circuit: dtype %r: the torch check runs in float32 "
                         "or float64" % dtype, "", "dtype", "unknown dtype")
    require(["torch", "safetensors"], "torch", "Network.check_circuit")
    from .torch_circuit import check_circuit_torch, tested_words
    for name, value in (("max_exhaustive_words", max_exhaustive_words), ("random", random),
                        ("length", length)):
        if not 0 <= value <= 1_000_000:
            raise InputError("Network.check_circuit: %s %d is not in [0, 1000000]"
                             % (name, value), "", name, "out of range")
    if circuit is None:
        circuit = network.circuit(granularity, True, max(1, max_exhaustive_words), random,
                                  length, seed, ablation, reference)
    if reference is not None:
        check_reference(network, reference)
    words, words_json = tested_words(network, max(1, max_exhaustive_words), random, length,
                                     seed)
    return check_circuit_torch(network.to_torch(), network.automaton, circuit, dtype, words,
                               words_json, ablation=ablation, reference=reference)


def check_reference(network: Any, reference: List[List[str]]) -> None:
    """Mean ablation's reference words: at least one, each within max_len and the alphabet."""
    letters = set(network.letters)
    for i, w in enumerate(reference):
        if len(w) > network.max_len or not set(w) <= letters:
            raise InputError("Network.check_circuit: reference word %d is longer than "
                             "max_len %d or has a letter outside the alphabet"
                             % (i, network.max_len), "", "reference", "bad reference word")
    if not reference:
        raise InputError("Network.check_circuit: no reference words", "", "reference",
                         "no reference words")
