"""gemmlab for Python: C <- alpha * a @ b + beta * C on gemmlab's ladder of GEMM implementations."""

from typing import Any, Literal, Sequence, TypeVar, overload

from ._core import GemmlabError as GemmlabError

__version__: str
__all__: list[str]

# An array gemmlab takes: a NumPy array, or one with __dlpack__ or __cuda_array_interface__
# (PyTorch, CuPy). The result is of the same framework.
_Array = TypeVar("_Array")
# A problem shape: (m, n, k), a square size, or "MxNxK".
Shape = tuple[int, int, int] | int | str
Record = dict[str, Any]

@overload
def matmul(a: Any, b: Any, *, out: _Array, alpha: float = 1.0, beta: float = 0.0, scale_a: float = 1.0,
           scale_b: float = 1.0, variant: str = "auto", config: str | None = None, tf32: bool = False) -> _Array: ...
@overload
def matmul(a: _Array, b: Any, *, out: None = None, alpha: float = 1.0, beta: Literal[0, 0.0] = 0.0,
           scale_a: float = 1.0, scale_b: float = 1.0, variant: str = "auto", config: str | None = None,
           tf32: bool = False) -> _Array: ...
def variants(backend: Literal["cpu", "cuda"] | None = None) -> list[Record]: ...
def cuda_available() -> bool: ...
def build_info() -> dict[str, Any]: ...
def devices() -> list[Record]: ...
def device(index: int = 0, *, measure: bool = False) -> Record: ...
# verify() and bench() return a list of records, a pandas DataFrame with as_frame=True, or the
# whole JSON document (a dict) with document=True.
def verify(variant: str | Sequence[str] | None = None, *, backend: str = "auto", device: int = 0,
           dtype: Literal["f32", "tf32", "bf16", "f16", "e4m3", "e5m2"] = "f32",
           out_dtype: Literal["f32", "bf16", "f16"] = "f32",
           shapes: Shape | Sequence[Shape] | None = None,
           trans: Literal["NN", "NT", "TN", "TT"] = "NN", layout: Literal["row", "col"] = "row",
           alpha: float = 1.0, beta: float = 0.0, pad: int = 0, seed: int | None = None,
           config: str | None = None, as_frame: bool = False, document: bool = False) -> Any: ...
def bench(variant: str | Sequence[str] | None = None, *, backend: str = "auto", device: int = 0,
          dtype: Literal["f32", "tf32", "bf16", "f16", "e4m3", "e5m2"] = "f32",
          out_dtype: Literal["f32", "bf16", "f16"] = "f32",
          shapes: Shape | Sequence[Shape] | None = None,
          trans: Literal["NN", "NT", "TN", "TT"] = "NN", layout: Literal["row", "col"] = "row",
          alpha: float = 1.0, beta: float = 0.0, pad: int = 0, seed: int | None = None,
          config: str | None = None, verify: bool = True, reps: int | None = None, warmup: int | None = None,
          min_time: float | None = None, max_time: float | None = None, max_spread: float | None = None,
          interleave: bool | None = None, l2_flush: Literal["clean", "write", "none"] | None = None,
          samples: bool = False, as_frame: bool = False, document: bool = False) -> Any: ...
