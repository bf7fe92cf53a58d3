"""Window reductions, pooling, ``pad`` and ``take_along_axis`` against JAX
and Flax (``golden/pool_pad.json``, recorded by
``golden/make_pool_pad_golden.py``): values, dtypes, weak flags and
gradients, eagerly and under ``jit``; ``vmap`` against a loop; and the
errors and extensions that differ from JAX on purpose."""

from __future__ import annotations

import json
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax, nn
from typelattice._array import from_numpy


def _recorder() -> ModuleType:
    return recorder("make_pool_pad_golden.py")


REC = _recorder()
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "pool_pad.json").read_text())
LIB = SimpleNamespace(lax=lax, jnp=tnp, nn=nn)


def _operands(name: str) -> list[Any]:
    return [from_numpy(v, weak) for v, weak in REC.operand_values(REC.CASES[name])]


def _close(got: Any, want: Any, narrow: bool) -> bool:
    # Narrow floats: XLA may round partial sums where typelattice rounds once.
    rtol = 1e-2 if narrow else 1e-5
    want_values = np.asarray(
        [float(v) if isinstance(v, str) else v for v in want], np.float64
    )
    got_values = np.asarray(got, np.float64).ravel()
    return bool(
        np.allclose(got_values, want_values, rtol=rtol, atol=rtol, equal_nan=True)
    )


def _check(got: Any, want: Any, what: str, case: Any) -> None:
    code, shape, values = want
    narrow = any(c.removeprefix("w:") in ("bf", "f2") for _, c in case.operands)
    enc = REC.encode(got)
    assert enc[0] == code and enc[1] == shape, f"{what}: got {enc[:2]}, JAX {want[:2]}"
    assert _close(np.asarray(got), values, narrow), (
        f"{what}: got {np.asarray(got).ravel()[:8]}, JAX {values[:8]}"
    )


def test_golden_file_matches_the_cases() -> None:
    assert list(GOLDEN["cases"]) == list(REC.CASES)


@pytest.mark.parametrize("name", list(REC.CASES))
def test_case_matches_jax(name: str) -> None:
    case = REC.CASES[name]
    row = GOLDEN["cases"][name]
    ops = _operands(name)
    out = case.fn(LIB, *ops)
    _check(out, row["out"], "eager", case)
    _check(tl.jit(lambda *a: case.fn(LIB, *a))(*ops), row["out"], "jit", case)
    if "grad" in row:
        ct = tnp.asarray(REC.cotangent(case, out.shape, out.dtype))

        def loss(x: Any) -> Any:
            return tnp.sum(case.fn(LIB, x, *ops[1:]) * ct)

        _check(tl.grad(loss)(ops[0]), row["grad"], "grad", case)
        _check(tl.jit(tl.grad(loss))(ops[0]), row["grad"], "jit of grad", case)


VMAPPED = [
    "max_pool_strided_same",
    "avg_pool_exclude_pad",
    "min_pool_pairs",
    "reduce_window_sum_dilated",
    "reduce_window_max_base_dilated",
    "pad_4_wrap_f4",
    "pad_6_reflect_f4",
    "pad_13_mean_f4",
    "take_along_axis_clip",
]


@pytest.mark.parametrize("name", VMAPPED)
def test_vmap_agrees_with_a_loop(name: str) -> None:
    """Each example of a batch, and its gradient, as computed alone."""
    case = REC.CASES[name]
    ops = _operands(name)
    x = ops[0]
    batch = tnp.stack([x, x * 2, -x])

    def fn(v: Any) -> Any:
        return case.fn(LIB, v, *ops[1:])

    got = tl.vmap(fn)(batch)
    want = tnp.stack([fn(batch[i]) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)

    def loss(v: Any) -> Any:
        return tnp.sum(fn(v) ** 2)

    grads = tl.vmap(tl.grad(loss))(batch)
    for i in range(3):
        np.testing.assert_allclose(
            np.asarray(grads[i]), np.asarray(tl.grad(loss)(batch[i])), rtol=1e-5
        )


# -- beyond JAX, and data safety --------------------------------------------------


def test_max_pool_gradient_with_window_dilation() -> None:
    """JAX has no reverse-mode derivative of a window maximum with window
    dilation; here it is the transpose of the forward one."""
    x = tnp.asarray(np.random.default_rng(0).standard_normal((5, 6)).astype("f4"))

    def fn(v: Any) -> Any:
        return lax.reduce_window(
            v, -tnp.inf, lax.max, (2, 2), (1, 1), "SAME", None, (2, 1)
        )

    y, pullback = tl.vjp(fn, x)
    ct = tnp.asarray(np.random.default_rng(1).standard_normal(y.shape).astype("f4"))
    (g,) = pullback(ct)
    t = tnp.asarray(np.random.default_rng(2).standard_normal(x.shape).astype("f4"))
    _, ty = tl.jvp(fn, (x,), (t,))
    # <ct, J t> == <J^T ct, t>
    assert float(tnp.sum(ct * ty)) == pytest.approx(float(tnp.sum(g * t)), rel=1e-5)


def test_reduce_window_other_computations_raise() -> None:
    x = tnp.ones(4)
    with pytest.raises(NotImplementedError, match=r"lax.add, lax.max and lax.min"):
        lax.reduce_window(x, 1.0, lax.mul, (2,))


def test_reduce_window_init_of_another_dtype_raises() -> None:
    with pytest.raises(TypeError, match="inconsistent dtypes"):
        lax.reduce_window(tnp.ones(4, "int32"), 1.5, lax.max, (2,))
    # (An identity of another dtype is never used, as in JAX.)
    got = lax.reduce_window(tnp.asarray([1, 3, 2]), -tnp.inf, lax.max, (2,))
    assert (got.dtype, got.tolist()) == (np.dtype("int32"), [3, 3])


def test_reduce_window_init_not_the_identity_joins_each_window_once() -> None:
    x = tnp.asarray([1.0, 5.0, 2.0])
    got = lax.reduce_window(x, 3.0, lax.max, (2,), (1,), "VALID")
    assert got.tolist() == [5.0, 5.0] and not got.weak_type
    got = lax.reduce_window(x, 10.0, lax.add, (2,), (1,), "VALID")
    assert got.tolist() == [16.0, 17.0]


def test_take_along_axis_raises_for_out_of_bounds_by_default() -> None:
    x = tnp.asarray([[1.0, 2.0]])
    with pytest.raises(IndexError, match="index 2 is out of bounds.*mode='fill'"):
        tnp.take_along_axis(x, tnp.asarray([[2]]), 1)
    assert tnp.take_along_axis(x, tnp.asarray([[-1]]), 1).tolist() == [[2.0]]


def test_take_along_axis_wrap_as_numpy() -> None:
    x = np.arange(12.0).reshape(3, 4)
    i = np.asarray([[5, -6], [0, 9], [3, -1]])
    got = tnp.take_along_axis(tnp.asarray(x), tnp.asarray(i), 1, mode="wrap")
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(x, i % 4, 1))


def test_take_along_axis_checks_ranks() -> None:
    with pytest.raises(ValueError, match="same number of dimensions"):
        tnp.take_along_axis(tnp.ones((2, 3)), tnp.asarray([0]), 1)


def test_pad_refuses_a_constant_that_does_not_fit() -> None:
    with pytest.raises(TypeError, match="cannot pad with float"):
        tnp.pad(tnp.asarray([1, 2]), 1, constant_values=1.5)
    with pytest.raises(OverflowError):
        tnp.pad(tnp.asarray(np.int8([1, 2])), 1, constant_values=300)


@pytest.mark.parametrize(
    ("mode", "kwargs"),
    [
        ("edge", {}),
        ("wrap", {}),
        ("reflect", {"reflect_type": "odd"}),
        ("symmetric", {}),
        ("linear_ramp", {"end_values": (2.0, -1.0)}),
        ("median", {"stat_length": 3}),
        ("mean", {}),
    ],
)
def test_pad_agrees_with_numpy_past_one_period(
    mode: str, kwargs: dict[str, Any]
) -> None:
    x = np.asarray([[1.5, -2.0, 4.0], [0.5, 3.0, -1.0]], np.float32)
    got = tnp.pad(tnp.asarray(x), ((5, 4), (7, 2)), mode, **kwargs)
    np.testing.assert_allclose(
        np.asarray(got),
        np.pad(x, ((5, 4), (7, 2)), mode, **kwargs),
        rtol=1e-6,  # type: ignore[call-overload]
    )


def test_pad_errors_name_the_fix() -> None:
    with pytest.raises(NotImplementedError, match="'constant', 'edge'"):
        tnp.pad(tnp.ones(2), 1, mode=lambda *a: None)
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        tnp.pad(tnp.ones(2), 1, mode="edge", constant_values=2)
    with pytest.raises(ValueError, match="must not be negative"):
        tnp.pad(tnp.ones(2), -1)
