"""gemmlab.matmul on NumPy arrays (the CPU backend): results against a float64 reference within
the float32 bound (bounds.py), every CPU rung and configuration, the layouts NumPy makes
(transposed views, sliced leading dimensions, column-major results), alpha and beta."""

from __future__ import annotations

import concurrent.futures
import zlib

import numpy as np
import pytest

import gemmlab
from bounds import assert_within_bound

CPU_F32_RUNGS = [v for v in gemmlab.variants("cpu") if v["dtype"] == "f32"]


def rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


@pytest.fixture
def rng(request) -> np.random.Generator:
    # A fixed seed per test (from its id), so a failure replays.
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# 1x1x1, k = 1, primes, tile sizes +- 1, tall and skinny, wide and short.
SHAPES = [(1, 1, 1), (64, 64, 1), (127, 131, 257), (33, 65, 129), (255, 1, 63), (1, 300, 31), (97, 89, 1),
          (2, 3, 1009)]


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_shapes_auto(rng, m, n, k):
    a, b = rand(rng, m, k), rand(rng, k, n)
    c = gemmlab.matmul(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (m, n)
    assert_within_bound(c, a, b)


@pytest.mark.parametrize("rung", [v["name"] for v in CPU_F32_RUNGS])
@pytest.mark.parametrize("m,n,k", [(37, 29, 41), (64, 1, 7), (1, 53, 1)], ids=lambda v: str(v))
def test_every_cpu_rung(rng, rung, m, n, k):
    a, b = rand(rng, m, k), rand(rng, k, n)
    assert_within_bound(gemmlab.matmul(a, b, variant=rung), a, b)


CONFIGURED = [(v["name"], c["name"]) for v in CPU_F32_RUNGS for c in v["configs"]]


@pytest.mark.skipif(not CONFIGURED, reason="no CPU rung has named configurations")
@pytest.mark.parametrize("rung,config", CONFIGURED or [("", "")])
def test_every_named_configuration(rng, rung, config):
    a, b = rand(rng, 45, 38), rand(rng, 38, 51)
    assert_within_bound(gemmlab.matmul(a, b, variant=rung, config=config), a, b)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_transposed_views(rng, trans_a, trans_b):
    m, n, k = 23, 31, 17
    a = rand(rng, k, m).T if trans_a else rand(rng, m, k)  # .T: a column-major view, no copy
    b = rand(rng, n, k).T if trans_b else rand(rng, k, n)
    assert a.flags.f_contiguous == trans_a or m == 1
    assert_within_bound(gemmlab.matmul(a, b), a, b)


def test_padded_leading_dimensions_and_padding_left_alone(rng):
    m, n, k, pad = 19, 23, 29, 5
    a_storage, b_storage = rand(rng, m, k + pad), rand(rng, k, n + pad)
    a, b = a_storage[:, :k], b_storage[:, :n]  # ld = k + pad, n + pad
    c_storage = np.full((m, n + 3), 7.0, dtype=np.float32)
    out = c_storage[:, :n]
    result = gemmlab.matmul(a, b, out=out)
    assert result is out
    assert_within_bound(out, a, b)
    assert (c_storage[:, n:] == 7.0).all(), "the padding of out's rows was written"


def test_transposed_sliced_view(rng):
    # Column-major storage whose leading dimension is past the column: a slice, then .T.
    m, n, k = 13, 11, 9
    a = rand(rng, k, m + 6)[:, :m].T  # (m, k), strides (1, m + 6)
    b = rand(rng, n, k + 2)[:, :k].T  # (k, n), strides (1, k + 2)
    assert_within_bound(gemmlab.matmul(a, b), a, b)


def test_column_major_out(rng):
    m, n, k = 17, 14, 12
    a, b = rand(rng, m, k), rand(rng, k, n)
    out = np.empty((n, m), dtype=np.float32).T  # (m, n), column-major
    assert gemmlab.matmul(a, b, out=out) is out
    assert_within_bound(out, a, b)


def test_column_major_out_with_transposed_inputs_and_beta(rng):
    m, n, k = 21, 8, 30
    a, b = rand(rng, k, m).T, rand(rng, n, k).T
    c0 = rand(rng, n, m).T
    out = c0.copy(order="F")
    gemmlab.matmul(a, b, out=out, alpha=0.75, beta=-1.5)
    assert_within_bound(out, a, b, alpha=0.75, beta=-1.5, c0=c0)


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (-0.5, 2.0), (3.0, 0.0), (0.0, 0.5), (2.0, -1.0)])
def test_alpha_and_beta_with_out(rng, alpha, beta):
    m, n, k = 40, 36, 52
    a, b, c0 = rand(rng, m, k), rand(rng, k, n), rand(rng, m, n)
    out = c0.copy()
    assert gemmlab.matmul(a, b, out=out, alpha=alpha, beta=beta) is out
    assert_within_bound(out, a, b, alpha=alpha, beta=beta, c0=c0)


def test_alpha_without_out(rng):
    a, b = rand(rng, 9, 10), rand(rng, 10, 11)
    assert_within_bound(gemmlab.matmul(a, b, alpha=-2.5), a, b, alpha=-2.5)


def test_beta_zero_never_reads_out(rng):
    a, b = rand(rng, 12, 7), rand(rng, 7, 9)
    out = np.full((12, 9), np.nan, dtype=np.float32)
    gemmlab.matmul(a, b, out=out)
    assert_within_bound(out, a, b)


def test_k_zero_scales_c():
    a, b = np.empty((4, 0), np.float32), np.empty((0, 5), np.float32)
    c0 = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = c0.copy()
    gemmlab.matmul(a, b, out=out, beta=2.0)
    np.testing.assert_array_equal(out, 2 * c0)
    np.testing.assert_array_equal(gemmlab.matmul(a, b), np.zeros((4, 5), np.float32))


def test_empty_result():
    c = gemmlab.matmul(np.empty((0, 3), np.float32), np.ones((3, 4), np.float32))
    assert c.shape == (0, 4)


def test_read_only_inputs(rng):
    a, b = rand(rng, 6, 5), rand(rng, 5, 4)
    a.flags.writeable = b.flags.writeable = False
    assert_within_bound(gemmlab.matmul(a, b), a, b)


def test_threads_each_with_their_own_context(rng):
    problems = [(rand(rng, 50 + i, 40), rand(rng, 40, 30 + i)) for i in range(8)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda ab: gemmlab.matmul(*ab), problems * 3))
    for (a, b), c in zip(problems * 3, results):
        assert_within_bound(c, a, b)
