"""gemmlab for Python: C <- alpha * a @ b + beta * C on gemmlab's ladder of GEMM implementations.

    import numpy as np, torch, gemmlab

    c = gemmlab.matmul(np_a, np_b)                           # NumPy float32: the CPU backend
    c = gemmlab.matmul(ta.to(torch.bfloat16), tb.to(torch.bfloat16),
                       variant="wgmma_ws_bf16")              # the GPU: the tensors' device and current stream
    gemmlab.matmul(a, b.T, out=c, alpha=2.0, beta=1.0)       # in place, transposed operand, beta reads C
    gemmlab.matmul(ta16, tb16, out=c16)                      # bfloat16 inputs, C in bfloat16 as frameworks keep it

    gemmlab.variants("cuda")        # the rungs: technique, configurations, whether each runs here and why not
    gemmlab.verify("pipelined")     # gemmlab verify: each rung against the float64 reference
    gemmlab.bench(shapes=[512])     # gemmlab bench: verified and timed beside the anchor
    gemmlab.device(0)               # gemmlab device: the GPU's facts and peaks

Arrays are taken where they are, without copies: NumPy arrays (and any array in host memory
that speaks DLPack) run on the CPU backend; PyTorch tensors, CuPy arrays and any array with
``__dlpack__`` or ``__cuda_array_interface__`` in GPU memory run on the CUDA backend, on the
array's device and on its framework's current stream (torch.cuda.current_stream(),
cupy.cuda.get_current_stream()). gemmlab computes C in float32 from float32, float16 or
bfloat16 inputs (NumPy has no bfloat16: use torch.bfloat16 on a GPU), or from float16 and
bfloat16 inputs into C of their own type (``out=`` of that dtype); ``tf32=True`` runs float32
inputs on the tensor cores. Each thread gets its own gemmlab context per backend and
device, created on first use, so threads may call matmul at the same time. There is no
autograd: results are plain arrays.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
from typing import Any, Iterable, Sequence

from . import _core
from ._core import GemmlabError

__all__ = [
    "GemmlabError",
    "bench",
    "build_info",
    "cuda_available",
    "device",
    "devices",
    "matmul",
    "variants",
    "verify",
]

__version__: str = _core.build_info()["version"]

# DLPack's numbers (dmlc/dlpack, dlpack.h): device types and (type code, bits, lanes).
_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13
_DL_DTYPES = {(2, 32, 1): "f32", (2, 16, 1): "f16", (4, 16, 1): "bf16", (10, 8, 1): "e4m3", (12, 8, 1): "e5m2"}
# __cuda_array_interface__ and __array_interface__ type strings (little-endian).
_TYPESTR_DTYPES = {"<f4": "f32", "<f2": "f16"}
_ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1}
_WORDS = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
_FP8 = ("e4m3", "e5m2")
# ml_dtypes' NumPy types by name (NumPy has none of these itself).
_ML_DTYPES = {("bfloat16", 2): "bf16", ("float8_e4m3fn", 1): "e4m3", ("float8_e5m2", 1): "e5m2"}

# gemmlab verify's default shapes (src/cli/cmd_bench.cpp): 1x1x1, primes, k = 1, tile sizes
# +- 1, tall and skinny.
_VERIFY_SHAPES = [(1, 1, 1), (127, 131, 257), (64, 64, 1), (33, 65, 129), (1000, 513, 77), (255, 1, 63),
                  (1, 300, 31)]
# gemmlab bench's default size per backend.
_BENCH_SIZE = {"cpu": 1024, "cuda": 4096}


# ---- where an array lives and what it holds ------------------------------------------------

class _Operand:
    """One array argument as gemmlab sees it: its data pointer, shape, strides in elements,
    gemmlab dtype name, and the (backend, device) it lives on. `keep` holds whatever must stay
    alive while the GEMM reads it (a consumed DLPack capsule)."""

    __slots__ = ("name", "obj", "library", "backend", "device", "data", "shape", "strides", "dtype",
                 "dtype_text", "readonly", "keep")

    def where(self) -> str:
        return "host memory" if self.backend == "cpu" else f"cuda:{self.device}"

    def describe(self) -> str:
        kind = {"numpy": "a NumPy array", "torch": "a PyTorch tensor", "cupy": "a CuPy array"}.get(
            self.library, f"a {type(self.obj).__module__}.{type(self.obj).__name__}")
        return f"{kind} in {self.where()}"


def _library(x: Any) -> str:
    return type(x).__module__.split(".")[0]


def _place(x: Any, name: str) -> tuple[str, int]:
    """('cpu', -1) or ('cuda', ordinal) for an array argument, before reading it."""
    library = _library(x)
    if library == "numpy" and hasattr(x, "__array_interface__"):
        return "cpu", -1
    if library == "torch" and hasattr(x, "data_ptr"):
        if x.device.type in ("cpu", "cuda"):
            return ("cpu", -1) if x.device.type == "cpu" else ("cuda", int(x.device.index))
        raise ValueError(f"{name} is on torch device {x.device}: gemmlab runs on the CPU and on CUDA devices")
    if hasattr(x, "__dlpack_device__"):
        device_type, device_id = x.__dlpack_device__()
        if device_type == _DL_CPU:
            return "cpu", -1
        if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            return "cuda", int(device_id)
        raise ValueError(f"{name} is on DLPack device type {int(device_type)}: gemmlab runs on the CPU "
                         f"(host memory) and on CUDA devices")
    if hasattr(x, "__cuda_array_interface__"):
        address = x.__cuda_array_interface__["data"][0]
        device = _core.pointer_device(address) if address else 0
        return ("cuda", device) if device >= 0 else ("cpu", -1)
    raise TypeError(f"{name}: a {type(x).__module__}.{type(x).__name__} is not an array gemmlab takes: "
                    f"NumPy arrays, or arrays with __dlpack__ or __cuda_array_interface__ (PyTorch, CuPy)")


def _dtype_of_numpy(x: Any) -> str | None:
    return _ML_DTYPES.get((x.dtype.name, x.dtype.itemsize)) or _TYPESTR_DTYPES.get(x.dtype.str)


_torch_dtypes: dict[Any, str] = {}


def _learn_torch_dtypes(torch: Any) -> None:
    """torch's dtypes gemmlab takes (the float8 ones where this torch has them)."""
    _torch_dtypes.update({torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"})
    for attribute, name in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
        if hasattr(torch, attribute):
            _torch_dtypes[getattr(torch, attribute)] = name


def _dtype_of_torch(x: Any) -> str | None:
    if not _torch_dtypes:
        import torch
        _learn_torch_dtypes(torch)
    return _torch_dtypes.get(x.dtype)


def _stream_of(x: Any, library: str, device: int) -> int:
    """The stream a GPU array's framework is working on now (a cudaStream_t as an integer;
    0: the legacy default stream)."""
    if library == "torch":
        return _torch_stream(device)
    if library == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return int(cupy.cuda.get_current_stream().ptr)
    interface = getattr(x, "__cuda_array_interface__", None)
    if interface is not None and interface.get("stream") is not None:
        stream = int(interface["stream"])
        return 0 if stream == 1 else stream  # 1: the legacy default stream
    return 0


def _read(x: Any, name: str, backend: str, device: int, stream: int) -> _Operand:
    """Reads an array argument whose place is (backend, device): NumPy and PyTorch arrays through
    their own attributes (a tensor's data_ptr and strides: no DLPack capsule per call), others
    through DLPack with `stream` as the consumer's stream (so the producer orders its work before
    ours), or through __cuda_array_interface__."""
    op = _Operand()
    op.name, op.obj, op.library, op.backend, op.device, op.keep = name, x, _library(x), backend, device, None
    op.readonly = False
    if op.library == "numpy" and hasattr(x, "__array_interface__"):
        op.dtype = _dtype_of_numpy(x)
        op.dtype_text = str(x.dtype)
        op.data = int(x.__array_interface__["data"][0])
        op.shape = tuple(int(s) for s in x.shape)
        itemsize = x.dtype.itemsize
        if any(s % itemsize for s in x.strides):
            raise ValueError(f"{name}: strides {tuple(x.strides)} (bytes) are not whole elements of "
                             f"{itemsize} bytes; copy it first (numpy.ascontiguousarray)")
        op.strides = tuple(int(s) // itemsize for s in x.strides)
        op.readonly = not x.flags.writeable
    elif op.library == "torch" and hasattr(x, "data_ptr"):
        op.dtype = _dtype_of_torch(x)
        op.dtype_text = str(x.dtype)
        op.data = int(x.data_ptr())
        op.shape = tuple(x.shape)
        op.strides = tuple(x.stride())
    elif hasattr(x, "__dlpack__"):
        if backend == "cuda":
            # The protocol's stream numbers: 1 is the legacy default stream (0 is not allowed).
            capsule = x.__dlpack__(stream=stream if stream != 0 else 1)
        else:
            capsule = x.__dlpack__()
        view = _core.DLPackView(capsule)
        op.keep = view
        code = tuple(view.dtype)
        op.dtype = _DL_DTYPES.get(code)
        op.dtype_text = str(getattr(x, "dtype", f"DLPack (code, bits, lanes) {code}"))
        op.data = view.data
        op.shape = tuple(view.shape)
        op.strides = tuple(view.strides)
        op.readonly = view.readonly
    else:
        interface = x.__cuda_array_interface__
        op.dtype = _TYPESTR_DTYPES.get(interface["typestr"])
        op.dtype_text = str(getattr(x, "dtype", interface["typestr"]))
        op.data, op.readonly = int(interface["data"][0]), bool(interface["data"][1])
        op.shape = tuple(int(s) for s in interface["shape"])
        itemsize = int(interface["typestr"][2:]) if interface["typestr"][2:].isdigit() else 1
        strides = interface.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for extent in reversed(op.shape):
                strides.insert(0, step)
                step *= extent
            op.strides = tuple(strides)
        else:
            if any(int(s) % itemsize for s in strides):
                raise ValueError(f"{name}: strides {tuple(strides)} (bytes) are not whole elements")
            op.strides = tuple(int(s) // itemsize for s in strides)
    if len(op.shape) != 2:
        raise ValueError(f"{name} must be 2-D (a matrix); it has shape {op.shape}")
    if op.dtype is not None and op.data % _ITEMSIZE[op.dtype]:
        raise ValueError(f"{name}: its data at {op.data:#x} is not aligned to its {_ITEMSIZE[op.dtype]}-byte "
                         f"elements; copy it first")
    return op


def _storage(op: _Operand) -> tuple[bool, int]:
    """How gemmlab reads a 2-D operand of shape (r, c): (transposed, ld). Row-major storage
    (inner stride 1) is read as it is with ld = the row stride; column-major storage (outer
    stride 1, as a C-contiguous array's .T) as the transpose of row-major storage with ld = the
    column stride. Anything else raises ValueError naming the strides."""
    (r, c), (s0, s1) = op.shape, op.strides
    layout = _layout(r, c, s0, s1)
    if layout is not None:
        return layout
    raise ValueError(
        f"{op.name} has shape {op.shape} and strides {op.strides} (in elements): gemmlab takes a matrix whose "
        f"rows or columns are contiguous (one stride 1, the other at least that dimension's extent, none "
        f"negative), such as a C-contiguous array, its .T, or a slice of either; copy it first "
        f"(numpy.ascontiguousarray, tensor.contiguous())")


def _layout(r: int, c: int, s0: int, s1: int) -> tuple[bool, int] | None:
    """_storage's rule on (rows, cols, row stride, column stride): (transposed, ld), or None
    where neither the rows nor the columns are contiguous."""
    if r == 0 or c == 0:
        return False, max(c, 1)
    if c == 1 or s1 == 1:
        if r == 1:
            return False, c
        if s0 >= c:
            return False, s0
    if r == 1 or s0 == 1:
        if s1 >= r:
            return True, s1
    return None


def _span_bytes(op: _Operand, transposed: bool, ld: int) -> tuple[int, int]:
    """The [first, last) byte addresses an operand's elements occupy."""
    r, c = op.shape
    if r == 0 or c == 0:
        return op.data, op.data
    lines, extent = (c, r) if transposed else (r, c)
    return op.data, op.data + ((lines - 1) * ld + extent) * _ITEMSIZE.get(op.dtype or "f32", 4)


# ---- the fast path's readers: NumPy arrays and PyTorch tensors ---------------------------------
#
# Each returns (backend, device, dtype, data, rows, cols, row stride, column stride, readonly)
# for a 2-D array gemmlab takes as it is (strides in elements, data aligned), or None: then
# matmul takes the general path, whose checks raise the error. The classes and dtype tables
# are fetched from sys.modules once the framework is imported (gemmlab imports neither).

_fast_readers: dict[type, Any] = {}
_fast_allocators: dict[type, Any] = {}
_rungs_checked: set[tuple[str, str, str, str]] = set()  # (backend, variant, want, C's type) that passed _check_rung
_numpy_dtypes: dict[Any, str | None] = {}
_numpy: Any = None
_torch: Any = None
_torch_raw_stream: Any = None
_buffer_address = _core.buffer_address


def _numpy_dtype(dtype: Any) -> str | None:
    name = _numpy_dtypes.get(dtype, 0)
    if name == 0:
        name = _ML_DTYPES.get((dtype.name, dtype.itemsize)) or _TYPESTR_DTYPES.get(dtype.str)
        _numpy_dtypes[dtype] = name
    return name  # type: ignore[return-value]


def _read_numpy(x: Any) -> tuple | None:
    shape = x.shape
    if len(shape) != 2:
        return None
    dtype = _numpy_dtypes.get(x.dtype, 0)
    if dtype == 0:
        dtype = _numpy_dtype(x.dtype)
    if dtype is None:
        return None
    size = _ITEMSIZE[dtype]
    s0, s1 = x.strides
    if s0 % size or s1 % size:
        return None
    data = _buffer_address(x)  # the buffer protocol: no __array_interface__ dict per call
    if data is None:
        data = x.__array_interface__["data"][0]
    if data % size:
        return None
    return "cpu", -1, dtype, data, shape[0], shape[1], s0 // size, s1 // size, not x.flags.writeable


def _allocate_numpy(like: Any, m: int, n: int) -> Any:
    return _numpy.empty((m, n), dtype=_numpy.float32)


def _read_torch(x: Any) -> tuple | None:
    if x.is_cuda:
        backend, device = "cuda", x.get_device()
    elif x.device.type == "cpu":
        backend, device = "cpu", -1
    else:
        return None
    dtype = _torch_dtypes.get(x.dtype)
    if dtype is None:
        return None
    shape = x.shape
    if len(shape) != 2:
        return None
    data = x.data_ptr()
    if data % _ITEMSIZE[dtype]:
        return None
    s0, s1 = x.stride()
    return backend, device, dtype, data, shape[0], shape[1], s0, s1, False


def _allocate_torch(like: Any, m: int, n: int) -> Any:
    return _torch.empty((m, n), dtype=_torch.float32, device=like.device)


def _torch_stream(device: int) -> int:
    """PyTorch's current stream on `device` (a cudaStream_t as an integer)."""
    if _torch_raw_stream is not None:
        return int(_torch_raw_stream(device))
    import torch
    return int(torch.cuda.current_stream(device).cuda_stream)


def _learn_types() -> None:
    """Fetches numpy.ndarray and torch.Tensor (and torch's dtypes) once their modules are imported."""
    global _numpy, _torch, _torch_raw_stream
    numpy = sys.modules.get("numpy")
    if _numpy is None and numpy is not None and isinstance(getattr(numpy, "ndarray", None), type) \
            and hasattr(numpy, "float32"):
        _numpy = numpy
        _fast_allocators[numpy.ndarray] = _allocate_numpy
        _fast_readers[numpy.ndarray] = _read_numpy
    torch = sys.modules.get("torch")
    if _torch is None and torch is not None and isinstance(getattr(torch, "Tensor", None), type) \
            and hasattr(torch, "bfloat16") and hasattr(torch, "empty"):
        _torch = torch
        _torch_raw_stream = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        if not _torch_dtypes:
            _learn_torch_dtypes(torch)
        _fast_allocators[torch.Tensor] = _allocate_torch
        _fast_readers[torch.Tensor] = _read_torch


# ---- contexts: one per thread, backend and device -----------------------------------------------

class _Contexts(threading.local):
    def __init__(self) -> None:
        self.by_place: dict[tuple[str, int], Any] = {}


_contexts = _Contexts()


def _context(backend: str, device: int) -> Any:
    key = (backend, device)
    context = _contexts.by_place.get(key)
    if context is None:
        context = _core.Context.create(backend, max(device, 0))
        _contexts.by_place[key] = context
    return context


@atexit.register
def _release_contexts() -> None:
    # Before the CUDA runtime shuts down: a context frees its device workspaces and handles.
    _contexts.by_place.clear()


_registry_cache: dict[str, dict[str, tuple[str | None, str]]] = {}


def _registry() -> dict[str, dict[str, tuple[str | None, str]]]:
    """{backend: {rung name: (its dtype name, its C's type)}}: the registries do not change in a process."""
    if not _registry_cache:
        for record in _core.variants():
            _registry_cache.setdefault(record["backend"], {})[record["name"]] = (record["dtype"], record["output"])
        _registry_cache.setdefault("cpu", {})
        _registry_cache.setdefault("cuda", {})
    return _registry_cache


def _output_allowed(want: str, out: str) -> bool:
    """C is float32, or float16 / bfloat16 beside inputs of that type (not tf32: float32 inputs) or FP8 inputs."""
    return out == "f32" or (out in ("bf16", "f16") and (out == want or want in ("e4m3", "e5m2")))


def _check_rung(variant: str, want: str, out: str, backend: str, where: str) -> None:
    registry = _registry()
    names = registry[backend]
    if variant == "auto":
        if (want, out) not in names.values():
            has = sorted({d for d, _ in names.values() if d})
            if want in has:  # the inputs run here; C of this type does not
                raise ValueError(f"the {backend} backend has no {want} rung that writes {_WORDS[out]} C; pass a "
                                 f"float32 out")
            hint = ""
            if backend == "cpu":
                hint = ("; float16, bfloat16, float8 and tf32 run on a GPU (PyTorch or CuPy arrays), and NumPy "
                        "has no bfloat16")
            elif not names:
                hint = "; this build has no CUDA backend"
            raise ValueError(f"the {backend} backend has no {want} rung (it computes {', '.join(has) or 'nothing'})"
                             f"{hint}")
        return
    if variant not in names:
        other = "cuda" if backend == "cpu" else "cpu"
        if variant in registry[other]:
            raise ValueError(f"variant {variant!r} is a {other} rung, but the arrays are in {where}: "
                             + ("pass GPU arrays (PyTorch, CuPy) to run it" if other == "cuda"
                                else "pass NumPy arrays to run it"))
        built = "" if _core.cuda_built() else " (this build has no CUDA backend)"
        raise ValueError(f"no {backend} rung named {variant!r}{built}; gemmlab.variants({backend!r}) lists them")
    dtype, output = names[variant]
    if dtype != want:
        raise ValueError(f"variant {variant!r} computes {dtype}, but the call asks for {want} "
                         f"(the inputs' dtype{' and tf32=True' if want == 'tf32' else ''})")
    if output != out:
        raise ValueError(f"variant {variant!r} writes {_WORDS[output]} C, but out is {_WORDS[out]} "
                         f"(pass a {_WORDS[output]} out to run it)")


def _allocate(like: _Operand, m: int, n: int) -> Any:
    """An (m, n) float32 array of `like`'s framework on its device."""
    if like.library == "numpy":
        import numpy
        return numpy.empty((m, n), dtype=numpy.float32)
    if like.library == "torch":
        import torch
        return torch.empty((m, n), dtype=torch.float32, device=like.obj.device)
    if like.library == "cupy":
        import cupy
        with cupy.cuda.Device(like.device):
            return cupy.empty((m, n), dtype=cupy.float32)
    raise ValueError(f"gemmlab allocates results for NumPy, PyTorch and CuPy arrays only; a is "
                     f"{like.describe()}: pass out= (an ({m}, {n}) float32 array)")


# ---- the API ---------------------------------------------------------------------------------

def matmul(a: Any, b: Any, *, out: Any = None, alpha: float = 1.0, beta: float = 0.0, scale_a: float = 1.0,
           scale_b: float = 1.0, variant: str = "auto", config: str | None = None, tf32: bool = False) -> Any:
    """C <- alpha * a @ b + beta * C, computed by gemmlab; returns C.

    a: (m, k) and b: (k, n) arrays of the same dtype (float32, float16, bfloat16, or on a GPU
    float8_e4m3fn or float8_e5m2) on the same device: NumPy arrays on the CPU backend, GPU
    arrays (PyTorch, CuPy, anything with __dlpack__ or __cuda_array_interface__) on the CUDA
    backend, read in place on the array's device and its framework's current stream. Rows or columns must be contiguous: a C-contiguous array,
    its .T (read as a transposed operand) and slices of either (a leading dimension larger than
    the row) are taken as they are; other strides raise ValueError.

    out: C, an (m, n) array on the same device, written in place (row- or column-contiguous);
    beta != 0 reads it. Its dtype is float32 or, beside float16 or bfloat16 inputs, that same
    type, or either beside float8 inputs (C stored in 16 bits, as frameworks keep it: the
    float32 sums rounded once, to nearest); another mix raises ValueError. Without out, C is a
    float32 array allocated with a's framework (numpy.empty, torch.empty, cupy.empty) and beta
    must be 0.

    scale_a, scale_b: float8 inputs' per-tensor dequantisation scales (as cuBLASLt's): the
    product is alpha * (scale_a * a) @ (scale_b * b), summed in float32 (promoted every 128 of
    k, as the tensor cores keep about 14 bits of an FP8 sum). Other dtypes take scales of 1 only.

    variant: a rung of the backend (gemmlab.variants() lists them) or "auto", the rung measured
    fastest for this dtype, C's type and shape; config: one of its named configurations. tf32=True runs
    float32 inputs on the tensor cores in TF32 (GPU only). float16, bfloat16 and float8 inputs
    always run on the tensor cores with float32 sums.

    Raises TypeError for an argument that is not an array or has a dtype gemmlab does not take,
    ValueError for a bad shape, layout, device mix or rung name, and GemmlabError (a
    RuntimeError) when the library cannot run the problem, with the library's message.
    """
    # The fast path: a, b (and out) all NumPy arrays or all PyTorch tensors, read through their
    # own attributes once, and a call that passes every check. Anything else, or any check
    # that fails, goes to _matmul_general, which runs every check in order and raises its error.
    reader = _fast_readers.get(type(a))
    if reader is None:
        _learn_types()
        reader = _fast_readers.get(type(a))
    if reader is not None and type(b) is type(a) and (out is None or type(out) is type(a)):
        A = reader(a)
        B = reader(b) if A is not None else None
        if B is not None and A[0] == B[0] and A[1] == B[1] and A[2] == B[2] and A[5] == B[4] \
                and (not tf32 or A[2] == "f32") and (A[2] in _FP8 or scale_a == 1.0 == scale_b):
            backend, device, dtype, a_data, m, k, a_s0, a_s1, _ = A
            _, _, _, b_data, _, n, b_s0, b_s1, _ = B
            C = None
            if out is not None:
                C = reader(out)
                if C is None or C[0] != backend or C[1] != device:
                    return _matmul_general(a, b, out, alpha, beta, scale_a, scale_b, variant, config, tf32)
            want = "tf32" if tf32 else dtype
            alpha, beta = float(alpha), float(beta)
            result = out
            if C is None and beta == 0.0:
                result = _fast_allocators[type(a)](a, m, n)
                C = reader(result)
            out_dtype = C[2] if C is not None else "f32"
            rung = (backend, variant, want, out_dtype)
            if C is not None and rung not in _rungs_checked and _output_allowed(want, out_dtype):
                _check_rung(variant, want, out_dtype, backend, _where((backend, device)))
                _rungs_checked.add(rung)
            if C is not None and rung in _rungs_checked and C[4] == m and C[5] == n and not C[8]:
                layout_a, layout_b = _layout(m, k, a_s0, a_s1), _layout(k, n, b_s0, b_s1)
                layout_c = _layout(m, n, C[6], C[7])
                # (Empty operands take the general path, whose _span_bytes sees them as they are.)
                if layout_a is not None and layout_b is not None and layout_c is not None and m and n and k:
                    (trans_a, lda), (trans_b, ldb), (trans_c, ldc) = layout_a, layout_b, layout_c
                    c_data, size = C[3], _ITEMSIZE[dtype]
                    c_last = c_data + ((n - 1) * ldc + m if trans_c else (m - 1) * ldc + n) * _ITEMSIZE[out_dtype]
                    # The inputs' [first, last) byte ranges must not meet C's.
                    if (a_data < c_last and c_data < a_data + ((k - 1) * lda + m if trans_a else
                                                              (m - 1) * lda + k) * size) \
                            or (b_data < c_last and c_data < b_data + ((n - 1) * ldb + k if trans_b else
                                                                       (k - 1) * ldb + n) * size):
                        return _matmul_general(a, b, out, alpha, beta, scale_a, scale_b, variant, config, tf32)
                    context = _contexts.by_place.get((backend, device))
                    if context is None:
                        context = _context(backend, device)
                    stream = _torch_stream(device) if backend == "cuda" else 0
                    if not trans_c:
                        _core.gemm(context, stream, m, n, k,
                                   (a_data, k if trans_a else m, m if trans_a else k, lda, trans_a),
                                   (b_data, n if trans_b else k, k if trans_b else n, ldb, trans_b),
                                   (c_data, m, n, ldc, False), dtype, out_dtype, want, alpha, beta,
                                   float(scale_a), float(scale_b), variant, config or "")
                    else:
                        # Column-major C: compute its row-major transpose, C^T = op(B)^T op(A)^T (n x m).
                        _core.gemm(context, stream, n, m, k,
                                   (b_data, n if trans_b else k, k if trans_b else n, ldb, not trans_b),
                                   (a_data, k if trans_a else m, m if trans_a else k, lda, not trans_a),
                                   (c_data, n, m, ldc, False), dtype, out_dtype, want, alpha, beta,
                                   float(scale_b), float(scale_a), variant, config or "")
                    return result
    return _matmul_general(a, b, out, alpha, beta, scale_a, scale_b, variant, config, tf32)


def _matmul_general(a: Any, b: Any, out: Any, alpha: float, beta: float, scale_a: float, scale_b: float,
                    variant: str, config: str | None, tf32: bool) -> Any:
    """matmul for any arguments: every check, in order, with its message."""
    where_a, where_b = _place(a, "a"), _place(b, "b")
    if where_a != where_b:
        raise ValueError(f"a and b are on different devices ({_where(where_a)} and {_where(where_b)}): "
                         f"gemmlab runs where both are")
    backend, device = where_a
    if out is not None and _place(out, "out") != where_a:
        raise ValueError(f"out is in {_where(_place(out, 'out'))} but a and b are in {_where(where_a)}")
    stream = _stream_of(a, _library(a), device) if backend == "cuda" else 0

    A, B = _read(a, "a", backend, device, stream), _read(b, "b", backend, device, stream)
    for op in (A, B):
        if op.dtype is None:
            raise TypeError(f"{op.name} has dtype {op.dtype_text}: gemmlab takes float32, float16 or bfloat16 "
                            f"inputs, and on a GPU float8_e4m3fn or float8_e5m2 (NumPy has no bfloat16: use "
                            f"torch.bfloat16 on a GPU)")
    if A.dtype != B.dtype:
        raise TypeError(f"a is {_WORDS[A.dtype]} and b is {_WORDS[B.dtype]}: gemmlab takes two inputs of one dtype")
    (m, k), (k_b, n) = A.shape, B.shape
    if k != k_b:
        raise ValueError(f"a is {m}x{k} and b is {k_b}x{n}: a's columns ({k}) must equal b's rows ({k_b})")
    if tf32 and A.dtype != "f32":
        raise ValueError(f"tf32=True runs float32 inputs in TF32; a and b are {_WORDS[A.dtype]}")
    want = "tf32" if tf32 else A.dtype
    scale_a, scale_b = float(scale_a), float(scale_b)
    if A.dtype not in _FP8 and (scale_a != 1.0 or scale_b != 1.0):
        raise ValueError(f"scale_a={scale_a} and scale_b={scale_b}: scales dequantise float8 inputs; a and b are "
                         f"{_WORDS[A.dtype]} (scale alpha instead)")

    alpha, beta = float(alpha), float(beta)
    if out is None:
        _check_rung(variant, want, "f32", backend, A.where())
        if beta != 0.0:
            raise ValueError(f"beta={beta} reads C: pass out= holding C (an ({m}, {n}) float32 array)")
        out = _allocate(A, m, n)
    C = _read(out, "out", backend, device, stream)
    if C.dtype is None:
        raise TypeError(f"out has dtype {C.dtype_text}: gemmlab writes float32 results, or float16 and bfloat16 "
                        f"beside inputs of that type")
    if not _output_allowed(want, C.dtype):
        raise ValueError(f"out is {_WORDS[C.dtype]} but a and b are {_WORDS[A.dtype]}"
                         f"{' run in tf32' if tf32 else ''}: C is float32, or the inputs' own type where they are "
                         f"float16 or bfloat16, or either of those beside float8 inputs")
    _check_rung(variant, want, C.dtype, backend, A.where())
    if C.shape != (m, n):
        raise ValueError(f"out has shape {C.shape}; a @ b is ({m}, {n})")
    if C.readonly:
        raise ValueError("out is read-only")

    trans_a, lda = _storage(A)
    trans_b, ldb = _storage(B)
    trans_c, ldc = _storage(C)
    c_first, c_last = _span_bytes(C, trans_c, ldc)
    for op, trans, ld in ((A, trans_a, lda), (B, trans_b, ldb)):
        first, last = _span_bytes(op, trans, ld)
        if first < c_last and c_first < last:
            raise ValueError(f"out overlaps {op.name} in memory (their address ranges intersect): C must not "
                             f"share memory with an input; give out an array of its own")

    a_desc = (A.data, k if trans_a else m, m if trans_a else k, lda, trans_a)
    b_desc = (B.data, n if trans_b else k, k if trans_b else n, ldb, trans_b)
    if not trans_c:
        c_desc = (C.data, m, n, ldc, False)
        _core.gemm(_context(backend, device), stream, m, n, k, a_desc, b_desc, c_desc, A.dtype, C.dtype, want, alpha,
                   beta, scale_a, scale_b, variant, config or "")
    else:
        # Column-major C: compute its row-major transpose, C^T = op(B)^T op(A)^T (n x m).
        bt = (B.data, b_desc[1], b_desc[2], ldb, not trans_b)
        at = (A.data, a_desc[1], a_desc[2], lda, not trans_a)
        c_desc = (C.data, n, m, ldc, False)
        _core.gemm(_context(backend, device), stream, n, m, k, bt, at, c_desc, A.dtype, C.dtype, want, alpha, beta,
                   scale_b, scale_a, variant, config or "")
    return out


def _where(place: tuple[str, int]) -> str:
    return "host memory" if place[0] == "cpu" else f"cuda:{place[1]}"


def variants(backend: str | None = None) -> list[dict[str, Any]]:
    """The registered rungs, in ladder order: of one backend ("cpu" or "cuda") or both.

    Each record: name, backend, rung (its number; 0 for an anchor), anchor, dtype (the name
    bench's dtype takes: f32, tf32, bf16, f16), input/compute/output types, technique, config
    (its tile sizes), configs (its named configurations: name, description, default),
    threads, tensor_cores, min_compute_capability, arch_specific, tolerance (the error bound
    its results are verified against: input_u, accumulate_u, output_u, output_min_normal,
    terms_per_k; see include/gemmlab/tolerance.hpp), runs_here and reason (why it does not run here; "" when
    it does).
    """
    return list(_core.variants(backend))


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a CUDA device is visible."""
    return bool(_core.cuda_device_present())


def build_info() -> dict[str, Any]:
    """What this build is: version, commit, build type, compilers, CUDA architectures, cuda_built."""
    return dict(_core.build_info())


def devices() -> list[dict[str, Any]]:
    """Every visible CUDA device's facts and peaks (gemmlab device --all --format json).
    Raises GemmlabError where there is no device (or no CUDA backend in this build)."""
    return json.loads(_core.devices_json())


def device(index: int = 0, *, measure: bool = False) -> dict[str, Any]:
    """The facts of CUDA device `index` (an ordinal among the visible ones) and its peaks, as
    `gemmlab device --format json` records them; measure=True also measures its ceilings
    (copy, read, FMA, cuBLAS SGEMM: a few seconds) under "ceilings". Raises GemmlabError where
    there is no device, ValueError for an ordinal past the last."""
    every = devices()
    if not 0 <= index < len(every):
        raise ValueError(f"device {index} does not exist: {len(every)} CUDA device"
                         f"{'s are' if len(every) != 1 else ' is'} visible")
    if not measure:
        return every[index]
    document = json.loads(_core.device_measured_json(index))
    facts = document["device"]
    facts["ceilings"] = document["ceilings"]
    return facts


def _shapes(shapes: Any) -> list[tuple[int, int, int]]:
    if isinstance(shapes, (int, str)) or (isinstance(shapes, tuple) and len(shapes) == 3
                                          and all(isinstance(x, int) for x in shapes)):
        shapes = [shapes]
    out = []
    for shape in shapes:
        if isinstance(shape, int):
            out.append((shape, shape, shape))
        elif isinstance(shape, str):
            parts = shape.lower().split("x")
            if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
                raise ValueError(f"shape {shape!r} must be MxNxK, e.g. '1000x513x77'")
            out.append(tuple(int(p) for p in parts))  # type: ignore[arg-type]
        else:
            shape = tuple(int(x) for x in shape)
            if len(shape) != 3:
                raise ValueError(f"shape {shape} must be (m, n, k)")
            out.append(shape)  # type: ignore[arg-type]
    if not out:
        raise ValueError("shapes is empty")
    for m, n, k in out:
        if min(m, n, k) < 0:
            raise ValueError(f"shape ({m}, {n}, {k}) has a negative extent")
    return out


def _names(variant: str | Iterable[str] | None) -> list[str]:
    if variant is None:
        return []
    names = variant.split(",") if isinstance(variant, str) else list(variant)
    names = [name.strip() for name in names if name.strip()]
    if not names:
        raise ValueError("variant names no rung")
    return names


def _call_text(function: str, arguments: dict[str, Any]) -> str:
    given = ", ".join(f"{key}={value!r}" for key, value in arguments.items() if value is not None)
    return f"gemmlab.{function}({given})"


def _run(command: str, arguments: dict[str, Any], as_frame: bool, document: bool) -> Any:
    if as_frame and document:
        raise ValueError("as_frame=True and document=True: choose one")
    frame_module = None
    if as_frame:
        try:
            import pandas as frame_module
        except ImportError as error:
            raise ImportError(f"as_frame=True needs pandas, which is not installed for this Python (pip install "
                              f"pandas); without it, gemmlab.{command}() returns a list of dicts") from error
    backend = arguments["backend"]
    if backend == "auto":
        backend = "cuda" if _core.cuda_device_present() else "cpu"
    if backend not in ("cpu", "cuda"):
        raise ValueError(f"backend {backend!r} must be 'cpu', 'cuda' or 'auto'")
    args = _core.HarnessArgs()
    args.command = command
    args.backend = backend
    args.device = int(arguments["device"])
    args.dtype = arguments["dtype"]
    out_dtype = arguments["out_dtype"]
    if out_dtype not in _WORDS or not _output_allowed(args.dtype, out_dtype):
        raise ValueError(f"out_dtype={out_dtype!r} does not go with dtype={args.dtype!r}: C is 'f32', or the 2-byte "
                         f"input type itself ('bf16' with dtype='bf16', 'f16' with dtype='f16'), or 'bf16' or 'f16' "
                         f"with dtype='e4m3' or 'e5m2'")
    args.out_dtype = out_dtype
    args.variants = _names(arguments["variant"])
    args.config = arguments["config"] or ""
    shapes = arguments["shapes"]
    if shapes is None:
        shapes = _VERIFY_SHAPES if command == "verify" else [_BENCH_SIZE[backend]]
    args.shapes = _shapes(shapes)
    args.trans = arguments["trans"]
    args.layout = arguments["layout"]
    args.alpha = float(arguments["alpha"])
    args.beta = float(arguments["beta"])
    if int(arguments["pad"]) < 0:
        raise ValueError(f"pad={arguments['pad']} must be >= 0")
    args.pad = int(arguments["pad"])
    args.seed = arguments["seed"]
    for key in ("verify", "warmup", "reps", "min_time", "max_time", "max_spread", "interleave", "l2_flush",
                "samples"):
        if key in arguments and arguments[key] is not None:
            setattr(args, key, arguments[key])
    args.command_line = _call_text(command, arguments)
    doc = json.loads(_core.run_harness(args))
    if document:
        return doc
    if frame_module is not None:
        return frame_module.json_normalize(doc["results"])
    return doc["results"]


def verify(variant: str | Sequence[str] | None = None, *, backend: str = "auto", device: int = 0,
           dtype: str = "f32", out_dtype: str = "f32", shapes: Any = None, trans: str = "NN", layout: str = "row",
           alpha: float = 1.0, beta: float = 0.0, pad: int = 0, seed: int | None = None, config: str | None = None,
           as_frame: bool = False, document: bool = False) -> Any:
    """gemmlab verify: runs rungs against the float64 reference, untimed.

    variant: a rung's name, several ("a,b" or a list), or None for every rung of `dtype`
    (f32, tf32, bf16, f16, or e4m3 / e5m2: FP8 inputs quantised with a per-tensor scale) and
    `out_dtype` (how C is stored: f32, or bf16 / f16 with that dtype or an FP8 one) on
    `backend` ("cpu", "cuda", or "auto": cuda with a GPU). shapes:
    (m, n, k) tuples, ints (square) or "MxNxK" strings; by default the awkward shapes of
    `gemmlab verify` (1x1x1, primes, k = 1, tall and skinny). trans ("NN", "NT", "TN", "TT"),
    layout ("row", "col"), alpha, beta, pad (extra elements in every leading dimension), seed
    (None: a fresh one, recorded) and config as the CLI's flags.

    Returns the results as a list of dicts with the fields of the CLI's JSON results
    (variant, m, n, k, status, verification: passed, rel_frobenius, worst ...); as_frame=True
    a pandas DataFrame of them (nested fields as "verification.passed" columns);
    document=True the whole JSON document (build, device, settings, results).
    """
    return _run("verify", dict(variant=variant, backend=backend, device=device, dtype=dtype, out_dtype=out_dtype,
                               shapes=shapes, trans=trans, layout=layout, alpha=alpha, beta=beta, pad=pad, seed=seed,
                               config=config), as_frame, document)


def bench(variant: str | Sequence[str] | None = None, *, backend: str = "auto", device: int = 0,
          dtype: str = "f32", out_dtype: str = "f32", shapes: Any = None, trans: str = "NN", layout: str = "row",
          alpha: float = 1.0, beta: float = 0.0, pad: int = 0, seed: int | None = None, config: str | None = None,
          verify: bool = True, reps: int | None = None, warmup: int | None = None, min_time: float | None = None,
          max_time: float | None = None, max_spread: float | None = None, interleave: bool | None = None,
          l2_flush: str | None = None, samples: bool = False, as_frame: bool = False,
          document: bool = False) -> Any:
    """gemmlab bench: verifies and times rungs beside their anchor (cuBLAS or OpenBLAS).

    The selection as verify()'s (shapes default to the CLI's: 1024^3 on the CPU, 4096^3 on a
    GPU); timing as the CLI's flags: verify=False skips the check, reps (a minimum), warmup,
    min_time and max_time (seconds), max_spread (percent), interleave (None: on for cuda),
    l2_flush ("clean", "write", "none"; GPU only), samples (every repetition's time).

    Returns a list of dicts with the fields of `gemmlab bench --format json`'s results
    (time_ms: median, min, max, spread, reps; gflops; ratio_to_anchor; verification ...);
    as_frame=True a pandas DataFrame ("time_ms.median" columns); document=True the whole
    JSON document.
    """
    return _run("bench", dict(variant=variant, backend=backend, device=device, dtype=dtype, out_dtype=out_dtype,
                              shapes=shapes, trans=trans, layout=layout, alpha=alpha, beta=beta, pad=pad, seed=seed,
                              config=config, verify=verify, reps=reps, warmup=warmup, min_time=min_time,
                              max_time=max_time, max_spread=max_spread, interleave=interleave,
                              l2_flush=l2_flush, samples=samples), as_frame, document)
