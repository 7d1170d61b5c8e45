"""The rest of the package on the CPU: bad arguments raise exceptions that name the problem;
variants(), device(), verify() and bench() return the records the CLI's JSON holds."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

import gemmlab
from isolated import assert_ran, run_python


def f32(*shape: int) -> np.ndarray:
    return np.ones(shape, dtype=np.float32)


# ---- matmul: what it refuses, and the words it says it in ---------------------------------------

@pytest.mark.parametrize("a,b,error,words", [
    (np.ones((3, 4)), f32(4, 2), TypeError, "a has dtype float64"),
    (f32(3, 4), np.ones((4, 2), np.int32), TypeError, "b has dtype int32"),
    (f32(3, 4), np.ones((4, 2), np.float16), TypeError, "a is float32 and b is float16"),
    (f32(3, 4), f32(5, 2), ValueError, "a's columns (4) must equal b's rows (5)"),
    (f32(4), f32(4, 2), ValueError, "a must be 2-D"),
    (f32(2, 3, 4), f32(4, 2), ValueError, "a must be 2-D"),
    (f32(3, 8)[:, ::2], f32(4, 2), ValueError, "strides (8, 2)"),
    (f32(3, 4)[::-1], f32(4, 2), ValueError, "none negative"),
    (np.broadcast_to(np.float32(1), (3, 4)), f32(4, 2), ValueError, "strides (0, 0)"),
    ([[1.0, 2.0]], f32(2, 2), TypeError, "builtins.list is not an array gemmlab takes"),
    (f32(3, 4), "b", TypeError, "builtins.str is not an array gemmlab takes"),
])
def test_bad_inputs(a, b, error, words):
    with pytest.raises(error) as raised:
        gemmlab.matmul(a, b)
    assert words in str(raised.value)


def test_float16_on_the_cpu_says_where_it_runs():
    with pytest.raises(ValueError) as raised:
        gemmlab.matmul(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))
    message = str(raised.value)
    assert "the cpu backend has no f16 rung" in message and "NumPy has no bfloat16" in message


def test_scales_are_for_float8_inputs():
    with pytest.raises(ValueError, match="scales dequantise float8 inputs; a and b are float32"):
        gemmlab.matmul(f32(2, 2), f32(2, 2), scale_b=0.5)


def test_tf32_on_the_cpu():
    with pytest.raises(ValueError, match="the cpu backend has no tf32 rung"):
        gemmlab.matmul(f32(2, 2), f32(2, 2), tf32=True)


def test_tf32_needs_float32():
    with pytest.raises(ValueError, match="tf32=True runs float32 inputs in TF32; a and b are float16"):
        gemmlab.matmul(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16), tf32=True)


@pytest.mark.parametrize("out,error,words", [
    (np.ones((3, 2)), TypeError, "out has dtype float64"),
    # A 16-bit C goes with 16-bit inputs of its own type only.
    (np.ones((3, 2), np.float16), ValueError,
     "out is float16 but a and b are float32: C is float32, or the inputs' own type"),
    (f32(2, 3), ValueError, "out has shape (2, 3); a @ b is (3, 2)"),
    (f32(3, 4)[:, ::2], ValueError, "out has shape (3, 2) and strides (4, 2)"),
])
def test_bad_out(out, error, words):
    with pytest.raises(error) as raised:
        gemmlab.matmul(f32(3, 4), f32(4, 2), out=out)
    assert words in str(raised.value)


def test_read_only_out():
    out = f32(3, 2)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        gemmlab.matmul(f32(3, 4), f32(4, 2), out=out)


def test_out_overlapping_an_input():
    a = f32(4, 4)
    with pytest.raises(ValueError, match="out overlaps a in memory"):
        gemmlab.matmul(a, f32(4, 4), out=a)
    storage = f32(4, 8)
    with pytest.raises(ValueError, match="out overlaps b in memory"):
        gemmlab.matmul(f32(4, 4), storage[:, :4], out=storage[:, 4:])


def test_beta_needs_out():
    with pytest.raises(ValueError, match=r"beta=0.5 reads C: pass out="):
        gemmlab.matmul(f32(2, 2), f32(2, 2), beta=0.5)


def test_unknown_rung():
    with pytest.raises(ValueError, match="no cpu rung named 'fastest'"):
        gemmlab.matmul(f32(2, 2), f32(2, 2), variant="fastest")


@pytest.mark.parametrize("rung,tf32", [("wgmma_ws_tf32", True), ("pipelined", False)])
def test_gpu_rung_on_host_arrays(rung, tf32):
    with pytest.raises(ValueError) as raised:
        gemmlab.matmul(f32(64, 64), f32(64, 64), variant=rung, tf32=tf32)
    if gemmlab.build_info()["cuda_built"]:
        assert f"{rung!r} is a cuda rung, but the arrays are in host memory" in str(raised.value)
    else:
        assert f"no cpu rung named {rung!r} (this build has no CUDA backend)" in str(raised.value)


def test_unknown_configuration_is_the_library_s_message():
    rung = next(v for v in gemmlab.variants("cpu") if v["dtype"] == "f32")["name"]
    with pytest.raises(ValueError, match=f"{rung} has no"):
        gemmlab.matmul(f32(8, 8), f32(8, 8), variant=rung, config="no-such-config")


# ---- variants ---------------------------------------------------------------------------------------

RECORD_FIELDS = {"name", "backend", "rung", "anchor", "dtype", "input", "compute", "output", "technique",
                 "config", "configs", "threads", "tensor_cores", "min_compute_capability", "arch_specific",
                 "tolerance", "runs_here", "reason"}


def test_variants_records():
    every = gemmlab.variants()
    cpu = gemmlab.variants("cpu")
    assert cpu and all(v["backend"] == "cpu" for v in cpu)
    assert every[:len(cpu)] == cpu
    for v in every:
        assert set(v) == RECORD_FIELDS, v["name"]
        assert v["runs_here"] == (v["reason"] == "")
        for c in v["configs"]:
            assert set(c) == {"name", "description", "default"}
        assert set(v["tolerance"]) == {"input_u", "accumulate_u", "output_u", "output_min_normal", "terms_per_k",
                                       "promote_every", "partial_u"}
        assert (v["tolerance"]["promote_every"] > 0) == (v["dtype"] in ("e4m3", "e5m2")), v["name"]
    assert all(v["runs_here"] for v in cpu)
    assert [v["rung"] for v in cpu if not v["anchor"]] == sorted(v["rung"] for v in cpu if not v["anchor"])
    assert {v["name"] for v in cpu} >= {"naive", "openblas_sgemm"}
    cuda = gemmlab.variants("cuda")
    assert bool(cuda) == gemmlab.build_info()["cuda_built"]
    if cuda and not gemmlab.cuda_available():
        assert not any(v["runs_here"] for v in cuda) and all(v["reason"] for v in cuda)


def test_variants_bad_backend():
    with pytest.raises(ValueError, match="backend 'tpu' must be 'cpu' or 'cuda'"):
        gemmlab.variants("tpu")


# ---- device ----------------------------------------------------------------------------------------

@pytest.mark.skipif(gemmlab.cuda_available(), reason="a CUDA device is present")
def test_device_without_a_gpu_says_so():
    with pytest.raises(gemmlab.GemmlabError) as raised:
        gemmlab.device(0)
    assert isinstance(raised.value, RuntimeError)
    message = str(raised.value)
    assert "no CUDA device" in message or "no CUDA backend" in message, message


def test_build_info():
    info = gemmlab.build_info()
    assert info["version"] == gemmlab.__version__ and info["commit"]
    assert isinstance(info["cuda_built"], bool)


# ---- verify and bench --------------------------------------------------------------------------------

def test_verify_records_as_the_cli_writes_them():
    doc = gemmlab.verify("naive,packed_simd", backend="cpu", shapes=[(33, 17, 9), "5x7x1", 16], seed=11,
                         trans="TN", beta=0.5, document=True)
    assert doc["settings"]["seed"] == 11 and doc["settings"]["trans"] == "TN"
    results = doc["results"]
    assert [(r["variant"], r["m"], r["n"], r["k"]) for r in results] == [
        ("naive", 33, 17, 9), ("packed_simd", 33, 17, 9), ("naive", 5, 7, 1), ("packed_simd", 5, 7, 1),
        ("naive", 16, 16, 16), ("packed_simd", 16, 16, 16)]
    for r in results:
        assert r["status"] == "ok" and r["verification"]["passed"], r
        assert r["trans"] == "TN" and r["beta"] == 0.5 and r["backend"] == "cpu"
        assert "time_ms" not in r


def test_records_say_how_c_was_stored():
    doc = gemmlab.verify("naive", backend="cpu", shapes=[4], document=True)
    assert doc["settings"]["out_dtype"] == "f32"
    assert all(r["out_dtype"] == "f32" and r["dtype"] == "f32" for r in doc["results"])


def test_half_precision_c_on_the_cpu():
    # The CPU has no 16-bit rung at all: the inputs say so first, whatever out is.
    a = np.ones((4, 4), np.float16)
    with pytest.raises(ValueError, match="the cpu backend has no f16 rung"):
        gemmlab.matmul(a, a, out=np.empty((4, 4), np.float16))


def test_verify_default_shapes_and_document():
    doc = gemmlab.verify("naive", backend="cpu", document=True)
    assert doc["command"] == "verify" and doc["schema_version"] >= 3 and doc["tool"] == "gemmlab"
    assert doc["run"]["command_line"].startswith("gemmlab.verify(variant='naive'")
    assert (1, 1, 1) in {(r["m"], r["n"], r["k"]) for r in doc["results"]}
    assert all(r["verification"]["passed"] for r in doc["results"])


def test_bench_times_beside_the_anchor():
    results = gemmlab.bench(["naive", "openblas_sgemm_1t"], backend="cpu", shapes=[64], reps=2, warmup=0,
                            min_time=0, samples=True)
    by_name = {r["variant"]: r for r in results}
    assert set(by_name) == {"naive", "openblas_sgemm_1t"}
    naive = by_name["naive"]
    assert naive["time_ms"]["reps"] >= 2 and len(naive["time_ms"]["samples"]) == naive["time_ms"]["reps"]
    assert naive["gflops"] > 0 and naive["anchor_variant"] == "openblas_sgemm_1t"
    assert naive["verification"]["passed"]


def test_bench_as_frame():
    # In a fresh interpreter, in a user's order (gemmlab, then pandas and the pyarrow it loads,
    # once as_frame asks for it), so that a crash there fails this test with its output rather
    # than ending the suite (test_imports.py tries each package after gemmlab on its own).
    if importlib.util.find_spec("pandas") is None:
        pytest.skip(f"pandas is not installed for {sys.executable}")
    out = assert_ran(run_python("""
        import json
        import gemmlab
        frame = gemmlab.bench("naive", backend="cpu", shapes=[32], reps=1, warmup=0, min_time=0, as_frame=True)
        import pandas
        assert isinstance(frame, pandas.DataFrame), type(frame)
        print(json.dumps(sorted(frame.columns)))
    """), "gemmlab.bench(as_frame=True)")
    assert {"variant", "time_ms.median", "verification.passed"} <= set(json.loads(out.splitlines()[-1]))


def test_as_frame_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"as_frame=True needs pandas, .*returns a list of dicts"):
        gemmlab.verify("naive", backend="cpu", shapes=[4], as_frame=True)


@pytest.mark.parametrize("kwargs,words", [
    (dict(variant="fastest"), "fastest"),
    (dict(dtype="f64"), "f64"),
    (dict(trans="XN"), "trans 'XN' must be NN, NT, TN or TT"),
    (dict(layout="diagonal"), "layout 'diagonal' must be 'row' or 'col'"),
    (dict(shapes=["12x12"]), "shape '12x12' must be MxNxK"),
    (dict(shapes=[(4, -1, 2)]), "negative extent"),
    (dict(backend="tpu"), "backend 'tpu' must be 'cpu', 'cuda' or 'auto'"),
    (dict(pad=-1), "pad=-1 must be >= 0"),
    (dict(out_dtype="bf16"), "out_dtype='bf16' does not go with dtype='f32': C is 'f32', or the 2-byte input type"),
    (dict(dtype="f16", out_dtype="bf16"), "out_dtype='bf16' does not go with dtype='f16'"),
    (dict(dtype="tf32", out_dtype="f16"), "out_dtype='f16' does not go with dtype='tf32'"),
    (dict(out_dtype="f64"), "out_dtype='f64' does not go"),
    (dict(dtype="bf16", out_dtype="bf16"), "the cpu backend has no variant of bf16 inputs with bf16 C"),
    # FP8 inputs take C in f32, bf16 or f16 (never FP8), and run on a GPU only.
    (dict(dtype="e4m3", out_dtype="e4m3"), "out_dtype='e4m3' does not go with dtype='e4m3'"),
    (dict(dtype="e5m2"), "the cpu backend has no e5m2 variant"),
    (dict(dtype="e4m3", out_dtype="bf16"), "the cpu backend has no variant of e4m3 inputs with bf16 C"),
])
def test_verify_bad_arguments(kwargs, words):
    arguments = dict(backend="cpu", shapes=[4])
    arguments.update(kwargs)
    with pytest.raises(ValueError) as raised:
        gemmlab.verify(**arguments)
    assert words in str(raised.value)


def test_bench_l2_flush_on_the_cpu():
    with pytest.raises(ValueError, match="l2_flush applies to the GPU's L2"):
        gemmlab.bench("naive", backend="cpu", shapes=[4], l2_flush="clean")


# ---- arrays that speak only DLPack (as a framework other than NumPy does) ------------------------

class DLPackOnly:
    """A host array reachable only through the DLPack protocol."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, stream=None):
        assert stream is None, "a host array is asked for no stream"
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_view_reads_a_capsule():
    base = np.arange(24, dtype=np.float16).reshape(4, 6)
    view = gemmlab._core.DLPackView(base[:, 1:5].T.__dlpack__())
    assert view.shape == [4, 4] and view.strides == [1, 6]
    assert view.dtype == (2, 16, 1) and view.device == (1, 0)
    assert view.data == base.ctypes.data + 2
    capsule = base.__dlpack__()
    gemmlab._core.DLPackView(capsule)
    with pytest.raises(ValueError, match="a DLPack capsule named 'used_dltensor'"):
        gemmlab._core.DLPackView(capsule)
    with pytest.raises(TypeError, match="takes the capsule"):
        gemmlab._core.DLPackView(base)


def test_matmul_through_dlpack():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (31, 17)).astype(np.float32)
    b = rng.uniform(-1, 1, (23, 17)).astype(np.float32).T  # transposed, through DLPack's strides
    out = np.empty((31, 23), np.float32)
    assert gemmlab.matmul(DLPackOnly(a), DLPackOnly(b), out=out) is out
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="allocates results for NumPy, PyTorch and CuPy arrays only"):
        gemmlab.matmul(DLPackOnly(a), DLPackOnly(b))
    with pytest.raises(TypeError, match="b has dtype"):
        gemmlab.matmul(DLPackOnly(a), DLPackOnly(np.ones((17, 2), np.float64)), out=f32(31, 2))
