"""gemmlab._core: the C++ library as the package gemmlab uses it (python/src/module.cpp)."""

from typing import Any

class GemmlabError(RuntimeError):
    """A gemmlab Status other than a bad argument: its message begins with the code
    ("not supported: ...", "architecture mismatch: ...", "execution failed: ...")."""

class Context:
    """A gemmlab::Context: one backend (and CUDA device), its workspaces and handles."""

    @staticmethod
    def create(backend: str, device: int = 0, threads: int = 0) -> Context: ...
    @property
    def backend(self) -> str: ...
    @property
    def device(self) -> int: ...

# (data address, rows, cols, leading dimension, transposed) of row-major storage.
Operand = tuple[int, int, int, int, bool]

def gemm(context: Context, stream: int, m: int, n: int, k: int, a: Operand, b: Operand, c: Operand,
         dtype: str, out_dtype: str, compute: str, alpha: float, beta: float, scale_a: float, scale_b: float,
         variant: str, config: str) -> tuple[str, str]: ...
def variants(backend: str | None = None) -> list[dict[str, Any]]: ...
def cuda_built() -> bool: ...
def cuda_device_present() -> bool: ...
def build_info() -> dict[str, Any]: ...
def devices_json() -> str: ...
def device_measured_json(device: int) -> str: ...
def pointer_device(address: int) -> int: ...
def buffer_address(array: Any) -> int | None: ...

class HarnessArgs:
    command: str
    backend: str
    device: int
    dtype: str
    out_dtype: str
    variants: list[str]
    config: str
    shapes: list[tuple[int, int, int]]
    trans: str
    layout: str
    alpha: float
    beta: float
    pad: int
    seed: int | None
    verify: bool
    warmup: int | None
    reps: int | None
    min_time: float | None
    max_time: float | None
    max_spread: float | None
    interleave: bool | None
    l2_flush: str | None
    samples: bool
    command_line: str
    def __init__(self) -> None: ...

def run_harness(args: HarnessArgs) -> str: ...

class DLPackView:
    """A consumed DLPack capsule; the tensor is released with the view."""

    def __init__(self, capsule: Any) -> None: ...
    @property
    def data(self) -> int: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def strides(self) -> list[int]: ...
    @property
    def dtype(self) -> tuple[int, int, int]: ...
    @property
    def device(self) -> tuple[int, int]: ...
    @property
    def readonly(self) -> bool: ...
