"""krc: compile automata into transformers, and run them in PyTorch, TransformerLens and ONNX.

Placeholder of the frameworks branch: the package's real __init__ (the C++-bound Network) comes
from the pybind branch and imports krc.torch_module, krc.tl_bridge and krc.onnx_export lazily."""
