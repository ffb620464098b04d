# Types of krc._core, the C++ extension (tools/python/bindings/*.cpp), for editors and type
# checkers. tests/python/test_api_stubs.py checks that every name here exists in the module
# and every public name of the module is here.
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class Automaton:
    def __init__(self, name: str, states: Sequence[str], letters: Sequence[str],
                 transitions: Sequence[Sequence[int]], initial: str,
                 accepting: Sequence[str] = ..., description: str = ...) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def states(self) -> List[str]: ...
    @property
    def letters(self) -> List[str]: ...
    @property
    def transitions(self) -> List[List[int]]: ...
    @property
    def initial(self) -> str: ...
    @property
    def accepting(self) -> List[str]: ...
    def step(self, state: str, letter: str) -> str: ...
    def run(self, word: Sequence[str], start: Optional[str] = None) -> List[str]: ...
    def to_json(self) -> str: ...

class ZooFamily:
    name: str
    description: str
    parameter: str
    has_parameter: bool
    default_n: int
    min_n: int
    max_n: int

DEFAULT_MAX_SUBSET_STATES: int
def from_regex(pattern: str, alphabet: Union[str, List[str], None] = None,
               max_subset_states: int = 65536) -> Automaton: ...
def load_automaton(path: str, input_format: Optional[str] = None, complete: bool = False,
                   initial: Optional[str] = None, no_determinise: bool = False,
                   max_subset_states: int = 65536,
                   etf_label: Optional[str] = None) -> Automaton: ...
def parse_automaton(text: str, file: str = "<string>", input_format: Optional[str] = None,
                    complete: bool = False, initial: Optional[str] = None,
                    no_determinise: bool = False, max_subset_states: int = 65536,
                    etf_label: Optional[str] = None) -> Automaton: ...
class ObjectDescription:
    file: str
    name: str
    states: List[str]
    letters: List[str]
    transitions: List[Tuple[int, int, int]]
    epsilon: List[Tuple[int, int]]
    initial: List[int]
    accepting: List[int]
    mealy: List[Tuple[int, int, str]]
    moore: List[str]
    def __init__(self) -> None: ...
def build_automaton(description: ObjectDescription, complete: bool = False,
                    acceptor: bool = False, max_subset_states: int = 65536) -> Automaton: ...
def zoo_families() -> List[ZooFamily]: ...
def zoo_automaton(family: str, n: Optional[int] = None) -> Automaton: ...
def set_max_memory(bytes: int) -> None: ...
def max_memory() -> int: ...

class Group:
    order: int
    name: str
    factors: List[int]
    solvable: bool
    exact: bool

class Component:
    representative: List[str]
    tiles: List[List[str]]
    group: Group
    subduction_class: int

class DecompositionLevel:
    level: int
    width: int
    dummy: Optional[int]
    components: List[Component]

class Skeleton:
    set_count: int
    image_count: int
    class_count: int
    depth: int
    def states_of(self, set: int) -> List[int]: ...
    def is_image(self, set: int) -> bool: ...
    def depth_of(self, set: int) -> int: ...
    def class_of(self, set: int) -> int: ...
    def class_depth(self, cls: int) -> int: ...
    def representative(self, cls: int) -> int: ...
    def class_members(self, cls: int) -> List[int]: ...
    def tiles(self, set: int) -> List[int]: ...
    def successor(self, set: int, letter: int) -> int: ...

class Decomposition:
    automaton: Automaton
    levels: List[DecompositionLevel]
    skeleton: Skeleton
    solvable: bool
    aperiodic: bool
    has_tables: bool
    reachable: List[List[int]]
    def encode(self, state: str) -> List[int]: ...
    def decode(self, coordinates: Sequence[int]) -> str: ...
    def apply(self, coordinates: Sequence[int], letter: str) -> List[int]: ...
    def text(self, max_elements: int = ...) -> str: ...
    def to_json(self, max_elements: int = ...) -> Dict[str, Any]: ...
    def to_dot(self, max_sets: int = ...) -> str: ...
    def draw(self, path: Union[str, "os.PathLike[str]"]) -> None: ...

def decompose(automaton: Automaton, tables: bool = True, max_images: int = ...,
              max_image_memory: int = ..., max_tuples: int = ...,
              max_table_cells: int = ...) -> Decomposition: ...

class ScanPlan:
    form: str
    set_size: int
    monoid_size: int
    steps: int
    units: int

class KrComponentPlan:
    tiles: int
    group: str
    counters: List[int]

class KrLevelPlan:
    level: int
    mode: str
    resets: bool
    values: int
    components: List[KrComponentPlan]
    scan: Optional[ScanPlan]
    sublayers: Tuple[int, int]

class WalkLetter:
    name: str
    shift: int
    low: int
    high: int

class WalkPlan:
    form: str
    cells: int
    initial: int
    state_of_cell: List[int]
    letters: List[WalkLetter]
    heads: List[int]
    mlp_units: List[int]
    max_len: int
    layers: int
    def text(self) -> str: ...

class KrPlan:
    form: str
    max_len: int
    counter_sum: str  # "whole", "dyadic" or "blocks"
    counter_block: int
    levels: List[KrLevelPlan]
    layers: int
    def text(self) -> str: ...

class OneLayerPlan:
    code: str
    max_len: int
    largest_len: int
    classes: int
    letter_code: List[int]
    sharpness: float
    values: int
    transformations: int
    reachable_states: int
    run_states: List[int]
    relative_error: float
    safety: float
    units: int
    layers: int
    def text(self) -> str: ...

class Role:
    kind: str
    level: int
    component: int
    counter: int
    step: int
    part: str

class AttentionHead:
    name: str
    role: Role
    kind: str
    head_dim: int
    query: npt.NDArray[np.float32]
    key: npt.NDArray[np.float32]
    value: npt.NDArray[np.float32]
    output: npt.NDArray[np.float32]

class MlpBlock:
    name: str
    first: int
    count: int
    role: Role

class Mlp:
    hidden: int
    blocks: List[MlpBlock]
    in_weight: npt.NDArray[np.float32]
    in_bias: npt.NDArray[np.float32]
    out_weight: npt.NDArray[np.float32]
    out_bias: npt.NDArray[np.float32]

class Layer:
    purpose: str
    heads: List[AttentionHead]
    mlp: Optional[Mlp]

class ResidualSubspace:
    name: str
    first: int
    width: int
    role: Role

class NetworkSize:
    layers: int
    d_model: int
    heads: int
    mlp_hidden: List[int]
    parameters: int
    nonzeros: int

class RunResult:
    letters: List[str]
    states: List[str]
    expected: List[str]
    margins: List[float]
    logits: npt.NDArray[np.float64]
    attention: str
    arithmetic: str
    ok: bool

class VerifyProgress:
    words_done: int
    words_total: int
    positions_done: int
    positions_total: int
    seconds: float
    seconds_left: float
    def __str__(self) -> str: ...

class Counterexample:
    part: str
    word_index: int
    position: int
    word: List[str]
    expected: List[str]
    actual: List[str]
    wrong: List[bool]

class VerifyReport:
    ok: bool
    attention: str
    arithmetic: str
    exhaustive_length: int
    exhaustive_words: int
    random_words: int
    random_length: int
    seed: int
    words: int
    positions: int
    wrong_positions: int
    wrong_words: int
    smallest_margin: float
    seconds: float
    budget_limited: bool
    budget_below_minimum: bool
    counterexample: Optional[Counterexample]
    text: str

class Network:
    automaton: Automaton
    source: str
    max_len: int
    vocabulary: List[str]
    states: List[str]
    d_model: int
    size: NetworkSize
    residual_labels: List[str]
    attention: str
    attention_scale: float
    layers: List[Layer]
    subspaces: List[ResidualSubspace]
    token_embedding: npt.NDArray[np.float32]
    position_embedding: npt.NDArray[np.float32]
    unembedding: npt.NDArray[np.float32]
    compiler_json: str
    strategy: Optional[str]
    reason: Optional[str]
    scan_plan: Optional[ScanPlan]
    kr_plan: Optional[KrPlan]
    walk_plan: Optional[WalkPlan]
    onelayer_plan: Optional[OneLayerPlan]
    def size_line(self) -> str: ...
    def layers_text(self) -> str: ...
    def to_safetensors(self, dense: bool = False) -> bytes: ...
    def to_gpt2(self, allow_inexact: bool = False, max_bytes: int = 2147483648
                ) -> Tuple[List[Tuple[str, bytes]], Dict[str, Any]]: ...
    def circuit(self, granularity: str = "head", check: bool = False,
                max_exhaustive_words: int = 512, random: int = 32, length: int = 0,
                seed: int = 1, ablation: str = "zero",
                reference: Optional[Sequence[Sequence[str]]] = None) -> str: ...
    def circuit_words(self, max_exhaustive_words: int = 512, random: int = 32, length: int = 0,
                      seed: int = 1) -> Tuple[List[List[str]], str]: ...
    def draw(self, path: str, word: Optional[Sequence[str]] = None,
             attention: bool = False) -> bytes: ...
    def run(self, tokens: Sequence[str], attention: Optional[str] = None,
            arithmetic: str = "float32") -> RunResult: ...
    def verify(self, exhaustive: Optional[int] = None, random: Optional[int] = None,
               length: Optional[int] = None, seed: int = 1, attention: Optional[str] = None,
               arithmetic: str = "float32", threads: int = 0,
               progress: Optional[Callable[[VerifyProgress], None]] = None) -> VerifyReport: ...

def compile(automaton: Automaton, strategy: str = "auto", max_len: int = 1024,
            attention: str = "softmax", max_onelayer_units: int = 2048,
            max_onelayer_values: int = 131072,
            progress: Optional[Callable[[str], None]] = None, norm: str = "none",
            precision: str = "fp32", counting: str = "auto",
            output_kind: Optional[str] = None, certify: bool = False) -> Network: ...
def compile_request_options() -> List[Dict[str, Any]]: ...
def load(path: str) -> Network: ...
def load_bytes(data: bytes, source: str = "") -> Network: ...
def write_file(path: str, data: bytes, inputs: Sequence[str] = ..., keyword: str = "path") -> None: ...
def suite(directory: str, files: Sequence[str] = ..., set: str = ...,
          strategies: Sequence[str] = ..., norm: Sequence[str] = ..., max_len: int = ...,
          random: int = ..., max_models: int = ..., max_bytes: int = ...,
          progress: Optional[Callable[[Dict[str, Any]], None]] = ...) -> str: ...
def write_directory(path: str, files: Sequence[Tuple[str, bytes]], inputs: Sequence[str] = ...,
                    keyword: str = "directory") -> None: ...
