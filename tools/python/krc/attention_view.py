"""Every head's attention pattern on one word, and CircuitsVis's notebook view of them (issue 35):
`Network.attention_patterns(word)` and `Network.attention_view(word)`.

The patterns come from the network's PyTorch module (krc.torch_module, float32 unless asked
otherwise): each attention layer's queries and keys are projected from that layer's residual
stream, scored with the file's scale, masked causally, and turned into weights as the network
was compiled to attend: softmax, or under hard attention a one-hot on the latest maximum for
select heads (averaging heads keep softmax). That is the computation the module's forward pass
makes (torch_layers.Attention.attend), kept as weights instead of mixed into values.

Heads are named as the circuit file names them, a{L}.h{H} (L the layer's index in the file,
layers without heads included in the count), followed by their typed role, so the names in
CircuitsVis's picture are the names `krc circuit` and `krc draw` use."""
from typing import Any, Dict, List, Optional, Sequence

from .errors import InputError, require


def _pattern(q: Any, k: Any, scale: float, hard_select: bool) -> Any:
    """q, k [T, e] -> weights [T, T] (rows: queries, columns: keys), causal."""
    import torch
    scores = (q @ k.T) * scale
    positions = scores.shape[0]
    future = torch.ones(positions, positions, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    if not hard_select:
        return torch.softmax(scores, dim=1)
    # The latest maximum: the first maximum of the keys in reverse order.
    latest = positions - 1 - scores.flip(1).argmax(dim=1)
    return torch.nn.functional.one_hot(latest, positions).to(q.dtype)


def attention_patterns(network: Any, word: Sequence[str], dtype: Any = None) -> Dict[str, Any]:
    """{"tokens": ["<bos>", letters...], "heads": [name per head], "roles": [role per head],
    "patterns": float tensor [heads, T, T]} for `word` (a list of letters) run through
    `network` (a krc.Network)."""
    require(["torch", "safetensors"], "torch", "Network.attention_patterns")
    import torch
    letters = list(word)
    if len(letters) > network.max_len:
        raise InputError("word: %d letters, more than the network's max_len %d"
                         % (len(letters), network.max_len), "word", "", "too long")
    model = network.to_torch(dtype=dtype)
    tokens = model.tokens([letters])
    names = {"blocks.%d.hook_resid_pre" % i for i in range(len(model.blocks))}
    hard = model.attention == "hard"
    heads: List[str] = []
    roles: List[str] = []
    patterns = []
    with torch.no_grad():
        _, cache = model.run_with_cache(tokens, names=names)
        for i, block in enumerate(model.blocks):
            if block.attn is None:
                continue
            q, k, _ = block.attn.project(cache["blocks.%d.hook_resid_pre" % i])
            for h, kind in enumerate(block.attn.kinds):
                patterns.append(_pattern(q[0, h], k[0, h], block.attn.scale,
                                         hard and kind == "select"))
                heads.append("a%d.h%d" % (i, h))
                roles.append(_role_text(model.heads[i][h]))
    positions = len(letters) + 1
    stacked = (torch.stack(patterns) if patterns
               else torch.zeros(0, positions, positions))
    return {"tokens": ["<bos>"] + letters, "heads": heads, "roles": roles,
            "patterns": stacked.float()}


def _role_text(head: Dict[str, Any]) -> str:
    """A head's typed role as one line: its role's fields, then its kind."""
    role = head.get("role", {})
    if isinstance(role, dict):
        text = " ".join("%s=%s" % (key, value) for key, value in role.items())
    else:
        text = str(role)
    return ("%s (%s)" % (text, head.get("kind", ""))).strip()


def attention_view(network: Any, word: Sequence[str], path: Optional[str] = None) -> Any:
    """CircuitsVis's `attention_heads` picture of every head on `word`: a
    circuitsvis.utils.render.RenderedHTML, which a notebook shows when it is the cell's value.
    Each head is labelled "a{L}.h{H} role". With `path`, also writes the self-contained HTML
    (CircuitsVis's bundled script inlined: it opens without a network connection)."""
    require(["circuitsvis"], "vis", "Network.attention_view")
    from circuitsvis.attention import attention_heads
    found = attention_patterns(network, word)
    labels = ["%s %s" % (name, role) for name, role in zip(found["heads"], found["roles"])]
    html = attention_heads(attention=found["patterns"], tokens=found["tokens"],
                           attention_head_names=labels, mask_upper_tri=True)
    if path is not None:
        from . import _core
        _core.write_file(path, html.local_src.encode("utf-8"), [], "path")
    return html
