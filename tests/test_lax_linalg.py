"""``typelattice.lax.linalg.qr``: the QR decomposition as a primitive, on
every path (eagerly, jit, eval_shape; its abstract values are compared with
JAX's in test_jaxpr.py), and its refusals."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice.lax import linalg

RNG = np.random.default_rng(0)


def _matrix(shape: tuple[int, ...], dtype: str) -> Any:
    values = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * RNG.standard_normal(shape)
    return values.astype(dtype)


SHAPES = [(4, 3), (3, 4), (3, 3), (2, 5, 3), (2, 2, 3, 4)]


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_is_numpys_decomposition(
    shape: tuple[int, ...], dtype: str, full_matrices: bool
) -> None:
    a = _matrix(shape, dtype)
    with tl.enable_x64(dtype == "float64"):
        q, r = linalg.qr(a, full_matrices=full_matrices)
        mode = "complete" if full_matrices else "reduced"
        want_q, want_r = np.linalg.qr(a, mode=mode)
        for got, want in ((q, want_q), (r, want_r)):
            assert isinstance(got, tnp.Array)
            assert (got.dtype, got.weak_type) == (np.dtype(dtype), False)
            np.testing.assert_array_equal(np.asarray(got), want)
        *_, m, n = shape
        k = m if full_matrices else min(m, n)
        assert q.shape == (*shape[:-2], m, k)
        assert r.shape == (*shape[:-2], k, n)
        # (q's columns orthonormal, r upper triangular, q @ r == a)
        eye = np.broadcast_to(np.eye(k), (*shape[:-2], k, k))
        qh = np.conj(np.swapaxes(np.asarray(q), -1, -2))
        np.testing.assert_allclose(qh @ np.asarray(q), eye, atol=1e-5)
        np.testing.assert_array_equal(np.triu(np.asarray(r)), np.asarray(r))
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-5)


def test_qr_under_jit_and_eval_shape() -> None:
    a = _matrix((5, 3), "float32")
    eager = linalg.qr(a)
    jitted = tl.jit(linalg.qr)(a)
    for x, y in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    shapes = tl.eval_shape(lambda x: linalg.qr(x, full_matrices=False), a)
    assert shapes == (
        tl.ShapeDtypeStruct((5, 3), "float32"),
        tl.ShapeDtypeStruct((3, 3), "float32"),
    )


def test_qr_under_eval_shape_computes_nothing() -> None:
    huge = tl.ShapeDtypeStruct((1000, 1000, 1000), "float32")
    tracemalloc.start()
    try:
        q, r = tl.eval_shape(linalg.qr, huge)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert (q.shape, r.shape) == ((1000, 1000, 1000), (1000, 1000, 1000))
    assert peak < 2_000_000, f"{peak} bytes"


def test_qr_is_not_differentiable_yet() -> None:
    a = tnp.asarray(_matrix((3, 2), "float32"))
    with pytest.raises(NotImplementedError, match="'qr' not implemented"):
        tl.grad(lambda a: linalg.qr(a)[1].sum())(a)
    # A constant to the differentiation is fine.
    got = tl.grad(lambda x: (x * linalg.qr(a)[1]).sum())(tnp.ones((3, 2)))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(linalg.qr(a)[1]))


@pytest.mark.parametrize("dtype", ["int32", "bool", "float16", "bfloat16"])
def test_qr_refuses_dtypes_without_a_decomposition(dtype: str) -> None:
    with pytest.raises(TypeError, match=f"qr does not accept dtype {dtype}") as info:
        linalg.qr(tnp.zeros((2, 2), dtype))
    assert "astype('float32')" in str(info.value)
    q, _ = linalg.qr(tnp.zeros((2, 2), dtype).astype("float32"))
    assert q.dtype == np.dtype("float32")


def test_qr_needs_a_matrix() -> None:
    with pytest.raises(ValueError, match="must have ndims >= 2, got shape"):
        linalg.qr(tnp.zeros(3))


def test_qr_does_not_share_memory_with_its_operand() -> None:
    a = np.eye(3, dtype=np.float32)
    q, r = linalg.qr(a)
    a[:] = 7
    assert not np.shares_memory(np.asarray(q), a)
    np.testing.assert_array_equal(np.abs(np.asarray(r)), np.eye(3))


def test_lax_has_the_linalg_submodule() -> None:
    assert lax.linalg is linalg
    assert linalg.__all__ == ["qr"]
