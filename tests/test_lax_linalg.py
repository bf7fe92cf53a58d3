"""``typelattice.lax.linalg``: ``qr`` and ``triangular_solve`` as
primitives, on every path (eagerly, jit, eval_shape; qr's abstract values
are compared with JAX's in test_jaxpr.py), their derivatives (compared with
JAX's, recorded by golden/make_linalg_golden.py), and their refusals."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax
from typelattice.lax import linalg

RNG = np.random.default_rng(0)
rec = recorder("make_linalg_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "linalg.json").read_text())


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


@pytest.mark.parametrize("name", list(rec.CASES))
def test_derivatives_are_jaxs(name: str) -> None:
    """The JVPs of qr and triangular_solve, against JAX's (float64)."""
    fn, _, dtype = rec.CASES[name]
    x, t = rec.operands(name)
    want = GOLDEN["cases"][name]
    with tl.enable_x64(True):
        primal, tangent = tl.jvp(lambda x: fn(lax, x), (x,), (t,))
    flat = primal if isinstance(primal, tuple) else (primal,)
    flat_t = tangent if isinstance(tangent, tuple) else (tangent,)
    pairs = [
        *zip(flat, want["primal"], strict=True),
        *zip(flat_t, want["tangent"], strict=True),
    ]
    for got, recorded in pairs:
        assert got.dtype == np.dtype(dtype)
        value = np.asarray(recorded)
        if dtype.startswith("complex"):
            value = value[0] + 1j * value[1]
        np.testing.assert_allclose(np.asarray(got), value, rtol=1e-9, atol=1e-11)


def test_qr_reverse_mode_is_the_transpose_of_forward_mode() -> None:
    x, t = rec.operands("qr_reduced")
    ct = RNG.standard_normal((4, 3))
    with tl.enable_x64(True):
        _, dq = tl.jvp(lambda x: linalg.qr(x, full_matrices=False)[0], (x,), (t,))
        _, pullback = tl.vjp(lambda x: linalg.qr(x, full_matrices=False)[0], x)
        (g,) = pullback(ct)
    np.testing.assert_allclose(np.sum(ct * np.asarray(dq)), np.sum(np.asarray(g) * t))


def test_qr_derivative_cases_jax_leaves_out() -> None:
    wide = tnp.asarray(_matrix((2, 3), "float32"))
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        tl.grad(lambda a: linalg.qr(a)[1].sum())(wide)
    tall = tnp.asarray(_matrix((3, 2), "float32"))
    with pytest.raises(NotImplementedError, match="QR decomposition derivative"):
        tl.grad(lambda a: linalg.qr(a, full_matrices=True)[1].sum())(tall)
    g = tl.grad(lambda a: linalg.qr(a, full_matrices=False)[1].sum())(tall)
    assert (g.shape, g.dtype) == ((3, 2), np.dtype("float32"))
    assert (
        g.tolist()
        == tl.jit(tl.grad(lambda a: linalg.qr(a, full_matrices=False)[1].sum()))(
            tall
        ).tolist()
    )


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_solves(
    left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool
) -> None:
    a = _matrix((2, 3, 3), "complex64") + 3 * np.eye(3, dtype="complex64")
    b = _matrix((2, 3, 4) if left_side else (2, 4, 3), "complex64")
    for conjugate_a in (False, True):
        x = linalg.triangular_solve(
            a,
            b,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )
        assert (x.shape, x.dtype) == (b.shape, np.dtype("complex64"))
        t = np.tril(a) if lower else np.triu(a)
        if unit_diagonal:
            t[..., range(3), range(3)] = 1
        op = np.swapaxes(t, -1, -2) if transpose_a else t
        op = np.conj(op) if conjugate_a else op
        back = op @ np.asarray(x) if left_side else np.asarray(x) @ op
        np.testing.assert_allclose(back, b, atol=1e-4)


def test_triangular_solve_refusals() -> None:
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(TypeError, match="same dtype"):
        linalg.triangular_solve(a, np.zeros((2, 3), np.complex64))
    with pytest.raises(ValueError, match="needs b with 3 columns"):
        linalg.triangular_solve(a, np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="equal in size"):
        linalg.triangular_solve(
            np.zeros((3, 2), np.float32), np.zeros((2, 3), np.float32)
        )


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
    assert linalg.__all__ == ["qr", "triangular_solve"]
