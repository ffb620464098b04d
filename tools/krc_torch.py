#!/usr/bin/env python3
"""krc networks in PyTorch: a shim over the package module krc.torch_module (tools/python/krc),
kept so that `import krc_torch` and the command line `tools/krc_torch.py FILE [LETTER ...]`
(krc_torch_cli.py; what `krc bench torch` runs) keep working. See tools/README.md "PyTorch and
TransformerLens". Run it with the project's venv Python ($KRC_VENV/bin/python, default .venv)."""
import os
import sys

# The package that tools/setup.sh installed (with its compiled core) comes first; the source
# tree's copy is only a fallback, since its krc/__init__.py needs the built extension.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))

from krc.torch_layers import MLP, Attention, Block, Embed, PosEmbed, Unembed  # noqa: E402,F401
from krc.torch_module import (  # noqa: E402,F401
    DTYPES, EXPORT_FORMAT, KrcFileError, KrcTransformer, dense_float32, load, load_torch,
    read_safetensors)

if __name__ == "__main__":
    import krc_torch_cli

    sys.exit(krc_torch_cli.main(sys.argv))
