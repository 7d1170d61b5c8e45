"""gemmlab.matmul on GPU arrays (PyTorch, CuPy): bf16, f16, f32, tf32 and FP8 results against
torch.matmul (CuPy's) in float64 within each rung's own bound, transposed views, out= (float32,
or bfloat16 / float16 C beside inputs of that type or FP8 ones), FP8 scales, a non-default
stream, a second device.
Skipped, with the reason, without a GPU or without either framework."""

from __future__ import annotations

import pytest

# The frameworks first (run_pytest.py imports them before gemmlab too): gemmlab's extension then
# uses the CUDA libraries they loaded. test_imports.py (the CPU suite) imports them after gemmlab.
try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None

import gemmlab
from bounds import Precision, assert_within_bound

if not gemmlab.build_info()["cuda_built"]:
    pytest.skip("gemmlab GPU tests not run: this build has no CUDA backend", allow_module_level=True)
if not gemmlab.cuda_available():
    pytest.skip("gemmlab GPU tests not run: no CUDA device is visible", allow_module_level=True)
if torch is None and cupy is None:
    pytest.skip("gemmlab GPU tests not run: neither PyTorch nor CuPy is installed", allow_module_level=True)

needs_torch = pytest.mark.skipif(torch is None or not torch.cuda.is_available(), reason="PyTorch with CUDA")
needs_cupy = pytest.mark.skipif(cupy is None, reason="CuPy")

RUNS_HERE = [v for v in gemmlab.variants("cuda") if v["runs_here"]]
DTYPES = sorted({v["dtype"] for v in RUNS_HERE if v["dtype"]})
# The input types whose C may be stored in the type itself, where a rung that does so runs here.
HALF_C_DTYPES = sorted({v["dtype"] for v in RUNS_HERE if v["dtype"] and v["output"] == v["dtype"]})


FP8 = ("e4m3", "e5m2")


def torch_dtype(name: str):
    return {"f32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[name]


def rung_b(k: int, n: int, dtype: str):
    """B for a test of every rung: FP8's stored n x k (K contiguous, as cuBLASLt's FP8 anchor
    needs it and FP8 GEMMs keep it), the others k x n."""
    t = torch_dtype(dtype)
    return trand(n, k, dtype=t).T if dtype in FP8 else trand(k, n, dtype=t)


def auto_bound(dtype: str, output: str = "f32") -> Precision:
    """Whichever rung variant="auto" picks for `dtype` and C of `output`, its bound holds."""
    return Precision.loosest([v for v in RUNS_HERE if v["dtype"] == dtype and v["output"] == output])


def out_for(record: dict, m: int, n: int):
    """C for a rung: None (gemmlab allocates float32) or an empty array of the rung's C type."""
    return None if record["output"] == "f32" else torch.empty(m, n, dtype=torch_dtype(record["output"]),
                                                              device="cuda")


def trand(*shape: int, dtype=None, device: str = "cuda", generator=None):
    """Uniform in [-1, 1), rounded to `dtype` (so the reference sees exactly what gemmlab reads)."""
    x = torch.rand(*shape, device=device, generator=generator, dtype=torch.float32) * 2 - 1
    return x.to(dtype or torch.float32)


@pytest.fixture(autouse=True)
def seeded():
    if torch is not None:
        torch.manual_seed(1234)


# ---- PyTorch ----------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", [(256, 256, 128), (257, 131, 97), (1, 64, 1), (128, 1, 512), (1000, 513, 77)],
                         ids=lambda v: str(v))
def test_torch_auto(dtype, m, n, k):
    a, b = trand(m, k, dtype=torch_dtype(dtype)), trand(k, n, dtype=torch_dtype(dtype))
    c = gemmlab.matmul(a, b, tf32=dtype == "tf32")
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.device == a.device
    assert c.shape == (m, n)
    assert_within_bound(c, a, b, precision=auto_bound(dtype))


@needs_torch
@pytest.mark.parametrize("rung", [v["name"] for v in RUNS_HERE if v["dtype"]])
def test_every_rung_that_runs_here(rung):
    record = next(v for v in RUNS_HERE if v["name"] == rung)
    dtype = record["dtype"]
    a, b = trand(256, 128, dtype=torch_dtype(dtype)), rung_b(128, 384, dtype)
    c = gemmlab.matmul(a, b, out=out_for(record, 256, 384), variant=rung, tf32=dtype == "tf32")
    assert c.dtype == torch_dtype(record["output"])
    assert_within_bound(c, a, b, precision=Precision.of(record))


@needs_torch
@pytest.mark.parametrize("rung,config", [(v["name"], c["name"]) for v in RUNS_HERE if v["dtype"]
                                         for c in v["configs"]])
def test_every_named_configuration(rung, config):
    record = next(v for v in RUNS_HERE if v["name"] == rung)
    dtype = record["dtype"]
    a, b = trand(512, 256, dtype=torch_dtype(dtype)), rung_b(256, 384, dtype)
    try:
        c = gemmlab.matmul(a, b, out=out_for(record, 512, 384), variant=rung, config=config, tf32=dtype == "tf32")
    except gemmlab.GemmlabError as error:  # a configuration that cannot take this shape says so
        assert str(error).startswith("not supported"), error
        pytest.skip(str(error))
    assert_within_bound(c, a, b, precision=Precision.of(record))


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", ["NT", "TN", "TT"])
def test_torch_transposed_views(dtype, trans):
    m, n, k = 192, 160, 96
    t = torch_dtype(dtype)
    a = trand(k, m, dtype=t).T if trans[0] == "T" else trand(m, k, dtype=t)
    b = trand(n, k, dtype=t).T if trans[1] == "T" else trand(k, n, dtype=t)
    c = gemmlab.matmul(a, b, tf32=dtype == "tf32")
    assert_within_bound(c, a, b, precision=auto_bound(dtype))


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_out_in_place_with_beta_and_padding(dtype):
    m, n, k = 130, 70, 64
    t = torch_dtype(dtype)
    a = trand(m, k + 8, dtype=t)[:, :k]  # padded leading dimension
    b = trand(k, n, dtype=t)
    storage = trand(m, n + 8)
    out, c0 = storage[:, :n], storage[:, :n].clone()
    padding = storage[:, n:].clone()
    assert gemmlab.matmul(a, b, out=out, alpha=-1.5, beta=0.5, tf32=dtype == "tf32") is out
    assert_within_bound(out, a, b, alpha=-1.5, beta=0.5, c0=c0, precision=auto_bound(dtype))
    assert torch.equal(storage[:, n:], padding), "out's padding was written"


@needs_torch
@pytest.mark.parametrize("dtype", HALF_C_DTYPES)
@pytest.mark.parametrize("m,n,k", [(256, 256, 128), (257, 131, 97), (1, 64, 1), (1000, 513, 77)],
                         ids=lambda v: str(v))
def test_torch_half_precision_c(dtype, m, n, k):
    # C stored in the inputs' type, as frameworks keep it: beta reads it as stored, the padding stays.
    t = torch_dtype(dtype)
    a, b = trand(m, k, dtype=t), trand(k, n, dtype=t)
    storage = trand(m, n + 8, dtype=t)
    out, c0, padding = storage[:, :n], storage[:, :n].clone(), storage[:, n:].clone()
    assert gemmlab.matmul(a, b, out=out, alpha=0.75, beta=-1.5) is out
    assert out.dtype == t
    assert_within_bound(out, a, b, alpha=0.75, beta=-1.5, c0=c0, precision=auto_bound(dtype, dtype))
    assert torch.equal(storage[:, n:], padding), "out's padding was written"
    # beta = 0: C is written, not read (NaN in it must not leak).
    nan = torch.full((m, n), float("nan"), dtype=t, device="cuda")
    gemmlab.matmul(a, b, out=nan)
    assert_within_bound(nan, a, b, precision=auto_bound(dtype, dtype))


def quantised(x, dtype: str):
    """x in FP8 with a per-tensor scale (its largest magnitude onto the format's largest
    value), and that scale: x is about scale * stored."""
    t = torch_dtype(dtype)
    scale = float(x.abs().max()) / torch.finfo(t).max
    return (x / scale).to(t), scale


@needs_torch
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d in FP8])
@pytest.mark.parametrize("output", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("m,n,k", [(256, 256, 256), (131, 257, 300), (1, 96, 1), (64, 1, 129)], ids=lambda v: str(v))
def test_torch_fp8_with_scales(dtype, output, m, n, k):
    # Per-tensor scales fold into alpha: the product is alpha (scale_a a)(scale_b b) + beta C.
    a, scale_a = quantised(trand(m, k) * 3, dtype)
    b, scale_b = quantised(trand(n, k) * 0.25, dtype)
    b = b.T  # stored n x k, as FP8 GEMMs keep B
    storage = trand(m, n + 8, dtype=torch_dtype(output))
    out, c0, padding = storage[:, :n], storage[:, :n].clone(), storage[:, n:].clone()
    assert gemmlab.matmul(a, b, out=out, alpha=0.75, beta=-0.5, scale_a=scale_a, scale_b=scale_b) is out
    bound = auto_bound(dtype, output)
    assert bound.promote_every > 0
    assert_within_bound(out, a, b, alpha=0.75 * scale_a * scale_b, beta=-0.5, c0=c0, precision=bound)
    assert torch.equal(storage[:, n:], padding), "out's padding was written"
    # beta = 0 over NaN, and B as it comes from a k x n tensor (copied K-major by the rung).
    nan = torch.full((m, n), float("nan"), dtype=torch_dtype(output), device="cuda")
    b_rows = b.contiguous()
    gemmlab.matmul(a, b_rows, out=nan, scale_a=scale_a, scale_b=scale_b)
    assert_within_bound(nan, a, b_rows, alpha=scale_a * scale_b, precision=bound)


@needs_torch
def test_torch_fp8_errors():
    a8, b8 = trand(64, 64, dtype=torch.float8_e4m3fn), trand(64, 64, dtype=torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="scales dequantise float8 inputs; a and b are bfloat16"):
        gemmlab.matmul(a8.bfloat16(), b8.bfloat16(), scale_a=2.0)
    with pytest.raises(TypeError, match="a is float8_e4m3fn and b is float8_e5m2"):
        gemmlab.matmul(a8, trand(64, 64, dtype=torch.float8_e5m2))
    with pytest.raises(ValueError, match="out is float8_e4m3fn but a and b are float8_e4m3fn"):
        gemmlab.matmul(a8, b8, out=torch.empty(64, 64, dtype=torch.float8_e4m3fn, device="cuda"))
    with pytest.raises(ValueError, match="the cpu backend has no e4m3 rung"):
        gemmlab.matmul(a8.cpu(), b8.cpu())
    with pytest.raises(ValueError, match=r"scale_a \(inf\) must be finite"):  # the library's InvalidValue
        gemmlab.matmul(a8, b8, scale_a=float("inf"))


@needs_torch
def test_torch_column_major_out():
    a, b = trand(96, 64, dtype=torch.bfloat16), trand(64, 80, dtype=torch.bfloat16)
    out = torch.empty(80, 96, device="cuda").T
    gemmlab.matmul(a, b, out=out)
    assert_within_bound(out, a, b, precision=auto_bound("bf16"))


@needs_torch
def test_torch_non_default_stream():
    # The inputs are rewritten on a side stream that a sleep holds back; only a GEMM on that same
    # stream (the current one, as gemmlab takes it) reads the new values.
    m = n = k = 512
    a, b = trand(m, k, dtype=torch.bfloat16), trand(k, n, dtype=torch.bfloat16)
    fresh = trand(m, k, dtype=torch.bfloat16)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)  # about 50 ms of the side stream
        a.copy_(fresh)
        c = gemmlab.matmul(a, b)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    assert_within_bound(c, fresh, b, precision=auto_bound("bf16"))


@needs_torch
def test_torch_requires_grad_inputs():
    a = trand(64, 32).requires_grad_()
    b = trand(32, 16)
    assert_within_bound(gemmlab.matmul(a, b), a, b, precision=auto_bound("f32"))


@needs_torch
@pytest.mark.skipif(torch is None or torch.cuda.device_count() < 2, reason="two GPUs")
def test_torch_second_device():
    a = trand(256, 128, dtype=torch.bfloat16, device="cuda:1")
    b = trand(128, 192, dtype=torch.bfloat16, device="cuda:1")
    with torch.cuda.device(0):  # the current device is another one, and stays so
        c = gemmlab.matmul(a, b)
        assert torch.cuda.current_device() == 0
    assert c.device == torch.device("cuda:1")
    assert_within_bound(c, a, b, precision=auto_bound("bf16"))
    with pytest.raises(ValueError, match=r"different devices \(cuda:0 and cuda:1\)"):
        gemmlab.matmul(trand(4, 4, device="cuda:0"), trand(4, 4, device="cuda:1"))


@needs_torch
def test_torch_errors():
    a, b = trand(64, 64, dtype=torch.bfloat16), trand(64, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"different devices \(cuda:0 and host memory\)"):
        gemmlab.matmul(a, b.cpu())
    with pytest.raises(ValueError, match="the cpu backend has no bf16 rung"):
        gemmlab.matmul(a.cpu(), b.cpu())
    with pytest.raises(ValueError, match="out is float16 but a and b are bfloat16: C is float32, or the inputs' own"):
        gemmlab.matmul(a, b, out=torch.empty(64, 64, dtype=torch.float16, device="cuda"))
    with pytest.raises(ValueError, match="out is bfloat16 but a and b are float32"):
        gemmlab.matmul(a.float(), b.float(), out=torch.empty(64, 64, dtype=torch.bfloat16, device="cuda"))
    with pytest.raises(TypeError, match="out has dtype torch.float64"):
        gemmlab.matmul(a, b, out=torch.empty(64, 64, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="out is in host memory"):
        gemmlab.matmul(a, b, out=torch.empty(64, 64))
    with pytest.raises(TypeError, match="a has dtype torch.float64"):
        gemmlab.matmul(a.double(), b.double())
    with pytest.raises(ValueError, match="strides"):
        gemmlab.matmul(trand(64, 128, dtype=torch.bfloat16)[:, ::2], b)
    with pytest.raises(ValueError, match="'packed_simd' is a cpu rung, but the arrays are in cuda:0"):
        gemmlab.matmul(a.float(), b.float(), variant="packed_simd")
    with pytest.raises(ValueError, match="computes bf16, but the call asks for f16"):
        gemmlab.matmul(a.half(), b.half(), variant=next(v["name"] for v in RUNS_HERE if v["dtype"] == "bf16"))
    f32_c = next(v["name"] for v in RUNS_HERE if v["dtype"] == "bf16" and v["output"] == "f32")
    with pytest.raises(ValueError, match=f"variant '{f32_c}' writes float32 C, but out is bfloat16"):
        gemmlab.matmul(a, b, out=torch.empty(64, 64, dtype=torch.bfloat16, device="cuda"), variant=f32_c)
    bf16_c = [v["name"] for v in RUNS_HERE if v["dtype"] == "bf16" and v["output"] == "bf16"]
    if bf16_c:
        with pytest.raises(ValueError, match=f"variant '{bf16_c[0]}' writes bfloat16 C, but out is float32"):
            gemmlab.matmul(a, b, variant=bf16_c[0])


@needs_torch
def test_torch_cpu_tensors_run_on_the_cpu():
    a, b = trand(33, 17, device="cpu"), trand(17, 21, device="cpu")
    c = gemmlab.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.device.type == "cpu"
    assert_within_bound(c, a, b)


# ---- CuPy -------------------------------------------------------------------------------------

def crand(*shape: int, dtype="float32", seed: int = 7):
    return (cupy.random.default_rng(seed).random(shape, dtype=cupy.float32) * 2 - 1).astype(dtype)


@needs_cupy
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d in ("f32", "tf32", "f16")])  # CuPy: no bf16, no FP8
def test_cupy(dtype):
    numpy_type = "float16" if dtype == "f16" else "float32"
    a, b = crand(200, 96, dtype=numpy_type, seed=1), crand(96, 136, dtype=numpy_type, seed=2)
    c = gemmlab.matmul(a, b, tf32=dtype == "tf32")
    assert isinstance(c, cupy.ndarray) and c.dtype == cupy.float32
    assert_within_bound(c, a, b, precision=auto_bound(dtype))
    at, bt = crand(96, 200, dtype=numpy_type, seed=3).T, crand(136, 96, dtype=numpy_type, seed=4).T
    out = cupy.zeros((200, 136), dtype=cupy.float32)
    assert gemmlab.matmul(at, bt, out=out, tf32=dtype == "tf32") is out
    assert_within_bound(out, at, bt, precision=auto_bound(dtype))


@needs_cupy
def test_cupy_non_default_stream():
    a, b = crand(256, 256, dtype="float16", seed=5), crand(256, 256, dtype="float16", seed=6)
    fresh = crand(256, 256, dtype="float16", seed=8)
    cupy.cuda.Device().synchronize()
    with cupy.cuda.Stream(non_blocking=True) as side:
        a[...] = fresh
        c = gemmlab.matmul(a, b)
    side.synchronize()
    assert_within_bound(c, fresh, b, precision=auto_bound("f16"))
