"""The error bound the Python tests hold gemmlab's results to: the library's own
(include/gemmlab/tolerance.hpp), from the standard analysis of a dot product (Higham, 3.1),
against a float64 reference computed with NumPy.

    E = [(1 + g2)(1 + gk) - 1] * (|alpha| |A||B| + |beta| |C0|)
    |C - C_ref| <= E + u_out * max(|C_ref| + E, min_normal_out)

g2 = gamma(2, u_in) for operands the hardware reduces first (tf32), gk = gamma(k + 2, u_acc)
for the k products, their sums and the alpha/beta scaling (FP8: partial sums of P = 128 terms
at u_partial each, promoted into float32: gk = (1 + gamma(P, u_partial))(1 + gamma(ceil(k / P)
+ 2, u_acc)) - 1), u_out for storing C in its type
(float32, or bfloat16 / float16 beside inputs of that type: rounded once more, half an ulp
of the value stored, and below float16's smallest normal half its subnormals' spacing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

U32 = 2.0 ** -24  # float32 unit roundoff


def gamma(n: float, u: float) -> float:
    return n * u / (1 - n * u)


@dataclass(frozen=True)
class Precision:
    input_u: float  # operands reduced to the compute type (0: used exactly)
    accumulate_u: float
    terms_per_k: float = 1  # 3xTF32 sums three products per term
    output_u: float = U32  # C's storage: float32, or 2^-8 (bfloat16), 2^-11 (float16)
    output_min_normal: float = 2.0 ** -126  # float16: 2^-14
    promote_every: int = 0  # FP8: the K-terms of each partial sum the tensor cores add (0: one sum)
    partial_u: float = 0.0  # each addition into such a partial sum

    @staticmethod
    def of(variant: dict) -> "Precision":
        """A rung's own bound, from its gemmlab.variants() record."""
        t = variant["tolerance"]
        assert (t["output_u"] <= U32) == (variant["output"] == "f32"), (variant["name"], t)
        return Precision(t["input_u"], t["accumulate_u"], t["terms_per_k"], t["output_u"], t["output_min_normal"],
                         t["promote_every"], t["partial_u"])

    @staticmethod
    def loosest(variants: list) -> "Precision":
        """The bound that holds whichever of these rungs runs (as variant="auto" chooses)."""
        every = [Precision.of(v) for v in variants]
        return Precision(max(p.input_u for p in every), max(p.accumulate_u for p in every),
                         max(p.terms_per_k for p in every), max(p.output_u for p in every),
                         max(p.output_min_normal for p in every), max(p.promote_every for p in every),
                         max(p.partial_u for p in every))


# The CPU rungs and the SIMT float32 ones: exact operands, float32 round-to-nearest.
F32 = Precision(0.0, U32)


def float64(x):
    """x in float64 where it is: a NumPy array, a PyTorch tensor (on its device) or a CuPy array."""
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return x.detach().double()
    if module == "cupy":
        return x.astype("float64")
    return np.asarray(x, dtype=np.float64)


def host(x) -> np.ndarray:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":  # NumPy has no bfloat16; widening to float32 is exact
            x = x.float()
        return x.numpy()
    if module == "cupy":
        return x.get()
    return np.asarray(x)


def reference(a, b, alpha: float, beta: float, c0):
    """(C_ref, magnitude) in float64 from inputs already in their storage type: NumPy's matmul
    for NumPy arrays, torch.matmul (CuPy's) in float64 on the device for GPU arrays."""
    a64, b64 = float64(a), float64(b)
    ref = alpha * (a64 @ b64)
    magnitude = abs(alpha) * (abs(a64) @ abs(b64))
    if c0 is not None and beta != 0.0:
        c64 = float64(c0)
        ref = ref + beta * c64
        magnitude = magnitude + abs(beta) * abs(c64)
    return host(ref), host(magnitude)


def assert_within_bound(c, a, b, *, alpha: float = 1.0, beta: float = 0.0, c0=None,
                        precision: Precision = F32) -> None:
    """Every element of c within the bound; the message names the worst."""
    c = host(c).astype(np.float64)
    k = np.shape(a)[1]
    ref, magnitude = reference(a, b, alpha, beta, c0)
    g2, gk = gamma(2, precision.input_u), gamma(precision.terms_per_k * k + 2, precision.accumulate_u)
    if precision.promote_every > 0:
        every = precision.promote_every
        partial = gamma(min(k, every) * precision.terms_per_k, precision.partial_u)
        gk = (1 + partial) * (1 + gamma(-(-k // every) + 2, precision.accumulate_u)) - 1
    computed = ((1 + g2) * (1 + gk) - 1) * magnitude
    bound = computed + precision.output_u * np.maximum(np.abs(ref) + computed, precision.output_min_normal)
    assert c.shape == ref.shape, f"result shape {c.shape}, expected {ref.shape}"
    error = np.abs(c - ref)
    ok = error <= bound
    if not ok.all():
        excess = np.where(ok, 0.0, error / np.maximum(bound, np.finfo(np.float64).tiny))
        i, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
        raise AssertionError(f"{int((~ok).sum())} of {ok.size} elements outside the bound; worst at ({i}, {j}): "
                             f"{c[i, j]!r} vs reference {ref[i, j]!r}, error {error[i, j]:.3e} > bound "
                             f"{bound[i, j]:.3e} (k = {k})")
