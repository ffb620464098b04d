"""The frameworks `krc bench frameworks` compares (tools/bench_frameworks.py), one class each:
krc's runtime, PyTorch dense and sparse, onnxruntime. Each prepares its input from the words
outside the clock and runs one word a timed call, giving the state ids at every position."""
import os


class Method:
    """One framework on one network: prepare(words) turns the words into its input outside the
    clock, run(i) is the timed call on word i and gives the state ids at every position. The
    times and the first wrong place gather here."""

    def __init__(self, name):
        self.name, self.cpu, self.wall, self.first_wrong = name, [], [], None


class KrcMethod(Method):
    def __init__(self, network, state_index):
        super().__init__("krc")
        self.network, self.state_index = network, state_index

    def prepare(self, words):
        self.words = words

    def run(self, i):
        return [self.state_index[s] for s in self.network.run(self.words[i]).states]


class TorchMethod(Method):
    def __init__(self, name, torch, path, sparse):
        from krc.torch_module import load_torch

        super().__init__(name)
        self.torch, self.model = torch, load_torch(path, sparse=sparse)

    def prepare(self, words):
        self.tokens = [self.model.tokens([w]) for w in words]

    def run(self, i):
        with self.torch.inference_mode():
            return self.model(self.tokens[i])[0].argmax(dim=1)


class OnnxMethod(Method):
    def __init__(self, ort, path, folder, vocabulary):
        from krc.onnx_export import to_onnx

        super().__init__("onnxruntime")
        onnx_path = os.path.join(folder, os.path.basename(path) + ".onnx")
        to_onnx(path, onnx_path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(onnx_path, options,
                                            providers=["CPUExecutionProvider"])
        os.remove(onnx_path)  # the session holds the model
        self.ids = {a: i for i, a in enumerate(vocabulary)}  # <bos> is 0

    def prepare(self, words):
        import numpy as np

        self.tokens = [np.array([[0] + [self.ids[a] for a in w]], np.int64) for w in words]

    def run(self, i):
        import numpy as np

        return np.argmax(self.session.run(["logits"], {"tokens": self.tokens[i]})[0][0], axis=1)


def skip_reason(error):
    return "%s: %s" % (type(error).__name__, error)


def make_methods(krc, found, path, network, state_index, folder):
    """The methods that can run this network, and {name: reason} for those that cannot."""
    methods, skipped = [KrcMethod(network, state_index)], {}
    torch, ort = found["torch"], found["onnxruntime"]
    for name, sparse in (("torch", False), ("torch-sparse", True)):
        if isinstance(torch, str):
            skipped[name] = torch
            continue
        try:
            methods.append(TorchMethod(name, torch, path, sparse))
        except Exception as e:  # the dense budget, memory, anything the framework raises
            skipped[name] = skip_reason(e)
    if isinstance(ort, str):
        skipped["onnxruntime"] = ort
    else:
        try:
            methods.append(OnnxMethod(ort, path, folder, network.vocabulary))
        except Exception as e:  # ONNX's 2 GiB, the dense budget, onnxruntime's own errors
            skipped["onnxruntime"] = skip_reason(e)
    return methods, skipped
