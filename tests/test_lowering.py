"""The namespace's elementwise functions computed with primitives (under
differentiation) give what they give eagerly: the same values, dtypes and
weak flags. Every one with inexact results is written with primitives."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp


def test_every_elementwise_function_with_inexact_results_has_a_lowering() -> None:
    """Each is written with primitives: one (``prim``) or a composition."""
    missing = []
    for name in dir(tnp):
        op = getattr(getattr(tnp, name), "_op", None)
        if op is None or op.lowered is not None or op.prim is not None:
            continue
        # Comparisons, logical and bitwise functions give bool or integers.
        if op.out != "bool" and "f" in op.accept:
            missing.append(name)
    assert missing == []


def _lowered(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` as differentiation computes it (every float argument
    traced)."""
    positions = [i for i, a in enumerate(args) if isinstance(a, tnp.Array)]

    def of(*traced: Any) -> Any:
        full = list(args)
        for i, t in zip(positions, traced, strict=True):
            full[i] = t
        return fn(*full)

    return tl.vjp(of, *(args[i] for i in positions))[0]


def _same(eager: Any, lowered: Any, exact: bool) -> None:
    assert (lowered.dtype, lowered.weak_type, lowered.shape) == (
        eager.dtype,
        eager.weak_type,
        eager.shape,
    )
    e = np.asarray(eager).astype(np.complex128)
    g = np.asarray(lowered).astype(np.complex128)
    if exact:
        np.testing.assert_array_equal(g, e)
    else:
        eps = float(
            tnp.finfo(eager.dtype if eager.dtype.kind != "c" else "float32").eps
        )
        np.testing.assert_allclose(g, e, rtol=8 * eps, atol=8 * eps)


# Compositions of primitives that may round differently from NumPy's own
# function (a few ulps).
APPROXIMATE = {"log2", "log10", "logaddexp", "logaddexp2", "hypot", "reciprocal"}


def _with_primitives(op: Any) -> bool:
    """Written with primitives (one, or a composition), with inexact
    results (bool and integer results have no derivative to compare)."""
    inexact = "f" in op.accept or "c" in op.accept
    return (op.lowered is not None or op.prim is not None) and inexact


UNARY = sorted(
    name
    for name in dir(tnp)
    if getattr(getattr(tnp, name), "_op", None) is not None
    and getattr(tnp, name)._op.nin == 1
    and _with_primitives(getattr(tnp, name)._op)
)
BINARY = sorted(
    name
    for name in dir(tnp)
    if getattr(getattr(tnp, name), "_op", None) is not None
    and getattr(tnp, name)._op.nin == 2
    and _with_primitives(getattr(tnp, name)._op)
    and name != "nextafter"  # no derivative, as in JAX: below
)


def test_nextafter_has_no_derivative() -> None:
    with pytest.raises(NotImplementedError, match="nextafter"):
        tl.grad(lambda x: tnp.nextafter(x, 2.0))(tnp.float32(1.0))


def _sample(dtype: str, positive: bool = False) -> Any:
    values = np.array([0.3, 0.7, 1.5, -0.4, 2.5, -1.25])
    if positive:
        values = np.abs(values) + 0.1
    if dtype.startswith("complex"):
        return tnp.asarray((values + 0.5j * values[::-1]).astype(dtype))
    return tnp.asarray(values.astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_lowerings_give_the_eager_results(name: str, dtype: str) -> None:
    fn = getattr(tnp, name)
    x = _sample(dtype)
    with np.errstate(all="ignore"):
        try:
            eager = fn(x)
        except (TypeError, ValueError):  # refused eagerly: refused lowered
            with pytest.raises((TypeError, ValueError)):
                _lowered(fn, x)
            return
        _same(eager, _lowered(fn, x), name not in APPROXIMATE)
        _same(fn(x), _lowered(lambda x: fn(x * 1), x), name not in APPROXIMATE)


@pytest.mark.parametrize(
    "other", [2.0, 3, "int8", "float16", "float32"], ids=lambda o: str(o)
)
@pytest.mark.parametrize("name", BINARY)
def test_binary_lowerings_give_the_eager_results(name: str, other: Any) -> None:
    fn = getattr(tnp, name)
    x = _sample("float32", positive=name in ("power", "float_power"))
    y = other if not isinstance(other, str) else _sample(other, positive=True)
    if isinstance(other, str) and other == "int8":
        y = tnp.asarray([1, 2, 3, 1, 2, 3], dtype="int8")
    exact = name not in APPROXIMATE
    with np.errstate(all="ignore"):
        for args in ((x, y), (y, x)):
            try:
                eager = fn(*args)
            except (TypeError, ValueError):
                continue
            _same(eager, _lowered(fn, *args), exact)


CALLS: list[tuple[str, Callable[..., Any]]] = [
    ("sum", lambda x: tnp.sum(x, axis=1)),
    ("sum int8 to float32", lambda x: tnp.sum(x, dtype="float32")),
    ("prod", lambda x: tnp.prod(x, axis=0, keepdims=True)),
    ("max", lambda x: tnp.max(x, axis=1)),
    ("min where", lambda x: tnp.min(x, where=x > 0, initial=5.0)),
    ("mean", lambda x: tnp.mean(x, axis=0)),
    ("var", lambda x: tnp.var(x, axis=1, ddof=1)),
    ("std", lambda x: tnp.std(x)),
    ("cumsum", lambda x: tnp.cumsum(x, axis=1)),
    ("cumprod", lambda x: tnp.cumprod(x)),
    ("ptp", lambda x: tnp.ptp(x, axis=0)),
    ("add.reduce", lambda x: tnp.add.reduce(x, axis=1)),
    ("maximum.reduce", lambda x: tnp.maximum.reduce(x, axis=None)),
    ("multiply.accumulate", lambda x: tnp.multiply.accumulate(x, axis=1)),
    ("subtract.outer", lambda x: tnp.subtract.outer(x[0], x[1])),
    ("mean 0-d", lambda x: tnp.mean(x[0, 0], axis=0, keepdims=True)),
    ("cumsum 0-d", lambda x: tnp.cumsum(x[0, 0], axis=-1)),
    ("reshape", lambda x: x.reshape(3, 2)),
    ("transpose", lambda x: x.T),
    ("getitem", lambda x: x[::-1, 1:]),
    ("fancy", lambda x: x[tnp.asarray([1, 0, 1])]),
    ("bool mask", lambda x: x[x > 0.5]),
    ("concatenate", lambda x: tnp.concatenate([x, x * 2], axis=1)),
    ("stack", lambda x: tnp.stack([x, x], axis=0)),
    ("tile", lambda x: tnp.tile(x, (2, 2))),
    ("repeat", lambda x: tnp.repeat(x, 2, axis=1)),
    ("roll", lambda x: tnp.roll(x, 1)),
    ("flip", lambda x: tnp.flip(x)),
    ("diagonal", lambda x: tnp.diagonal(x)),
    ("take", lambda x: tnp.take(x, tnp.asarray([2, 0]), axis=1)),
    ("split", lambda x: tnp.split(x, 3, axis=1)[2]),
    ("sort", lambda x: tnp.sort(x, axis=1)),
    ("where", lambda x: tnp.where(x > 0.5, x, 2)),
    ("clip", lambda x: tnp.clip(x, 0.0, 1.0)),
    ("power int", lambda x: x**3),
    ("power float", lambda x: tnp.abs(x) ** 1.5),
    ("at set", lambda x: x.at[0, 1].set(7.0)),
    ("at add", lambda x: x.at[tnp.asarray([0, 0])].add(1.5)),
    ("at multiply", lambda x: x.at[tnp.asarray([0, 1])].multiply(x[1])),
    ("at multiply twice", lambda x: x.at[tnp.asarray([0, 0])].multiply(3.0)),
    ("at min", lambda x: x.at[1].min(0.2)),
    ("at max drop", lambda x: x.at[tnp.asarray([1, 9])].max(0.6, mode="drop")),
    ("at subtract", lambda x: x.at[:, 1].subtract(x[0, 2])),
    (
        "at get fill",
        lambda x: x.at[tnp.asarray([0, 5])].get(mode="fill", fill_value=0.5),
    ),
    ("astype", lambda x: x.astype("bfloat16")),
    ("asarray list", lambda x: tnp.asarray([x[0, 0], 2.0])),
    ("linspace", lambda x: tnp.linspace(x[0, 0], x[1, 2], 4)),
    ("linspace arrays", lambda x: tnp.linspace(x[0], x[1], 3, axis=1)),
    ("linspace retstep", lambda x: tnp.linspace(x[0, 1], 2.0, 5, retstep=True)[1]),
    ("matmul", lambda x: x @ x.T),
    ("dot", lambda x: tnp.dot(x, x[0])),
    ("einsum", lambda x: tnp.einsum("ij,kj->ik", x, x)),
    ("tensordot", lambda x: tnp.tensordot(x, x, ([1], [1]))),
    ("outer", lambda x: tnp.outer(x[0], x[1])),
    ("vdot", lambda x: tnp.vdot(x, x)),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", CALLS, ids=[c[0] for c in CALLS])
def test_lowerings_give_the_eager_results(
    case: tuple[str, Callable[..., Any]], dtype: str
) -> None:
    name, fn = case
    x = tnp.asarray((np.arange(6).reshape(2, 3) / 4 - 0.3).astype(dtype))
    products = ("matmul", "dot", "einsum", "tensordot", "vdot", "var", "std", "mean")
    exact = not any(name.startswith(p) for p in products)
    if dtype == "float16" and name in ("sum", "cumsum", "cumprod", "prod"):
        exact = False  # NumPy may accumulate these in float32
    _same(fn(x), _lowered(fn, x), exact)


def test_mean_counts_more_elements_than_its_dtype_holds_exactly() -> None:
    # Over 2**31 float32 elements the count only rounds; eval_shape follows
    # the lowering without making the array.
    big = tl.ShapeDtypeStruct((2**31 + 5,), np.dtype("float32"))
    value, tangent = tl.eval_shape(lambda x: tl.jvp(tnp.mean, (x,), (x,)), big)
    assert (value.shape, value.dtype) == ((), np.dtype("float32"))
    assert (tangent.shape, tangent.dtype) == ((), np.dtype("float32"))
    # float16 holds no count past 65504: mean, var and std compute in
    # float32, as they do eagerly.
    x = tnp.asarray(np.linspace(-1, 2, 70_000).astype("float16"))
    for fn in (tnp.mean, tnp.var, tnp.std):
        _same(fn(x), _lowered(fn, x), exact=False)
        value, tangent = tl.jvp(fn, (x,), (tnp.ones_like(x),))
        assert value.dtype == tangent.dtype == np.dtype("float16")
    g = tl.grad(lambda x: tnp.mean(x).astype("float32"))(x)
    np.testing.assert_array_equal(np.asarray(g), np.float16(1 / 70_000))


def test_a_lowering_is_used_under_jit_of_grad() -> None:
    x = tnp.asarray(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))

    def f(x: Any) -> Any:
        return tnp.sum(tnp.sort(x, axis=1)[:, ::-1] * tnp.arange(3.0))

    np.testing.assert_array_equal(
        np.asarray(tl.jit(tl.grad(f))(x)), np.asarray(tl.grad(f)(x))
    )
    assert math.isfinite(float(tl.jit(f)(x)))


def test_exact_gelu_runs_under_jit_and_differentiates() -> None:
    """It computes with lax.erf, which jit records like any primitive."""
    from typelattice import nn

    x = tnp.asarray([1.0, -0.5, 2.0], dtype="float32")
    eager = nn.gelu(x, approximate=False)
    np.testing.assert_array_equal(
        np.asarray(tl.jit(lambda x: nn.gelu(x, approximate=False))(x)),
        np.asarray(eager),
    )
    g = tl.grad(lambda x: tnp.sum(nn.gelu(x, approximate=False)))(x)
    # d/dx x*Phi(x) = Phi(x) + x*phi(x)
    xs = np.asarray(x, np.float64)
    phi = np.exp(-(xs**2) / 2) / np.sqrt(2 * np.pi)
    cdf = np.asarray([0.8413447460685429, 0.3085375387259869, 0.9772498680518208])
    np.testing.assert_allclose(np.asarray(g), cdf + xs * phi, rtol=1e-5)


def test_programs_show_recorded_primitives_with_their_operands() -> None:
    x = tnp.asarray([1.0, 2.0], dtype="float32")
    shown = tl.jit(tl.grad(lambda x: tnp.sum(tnp.sin(x)))).program(x).pretty()
    assert "lax.cos(v0)" in shown


def test_relu_has_jax_derivative_at_its_kinks() -> None:
    """jax.nn.relu and relu6 define the derivative as 0 at their kinks
    (maximum's symmetric rule would give 1/2), and 0 at NaN."""
    from typelattice import nn

    x = tnp.asarray([-1.0, 0.0, 3.0, 6.0, 7.0, float("nan")], dtype="float32")
    relu = tl.grad(lambda x: tnp.sum(nn.relu(x)))(x)
    relu6 = tl.grad(lambda x: tnp.sum(nn.relu6(x)))(x)
    np.testing.assert_array_equal(np.asarray(relu), [0, 0, 1, 1, 1, 0])
    np.testing.assert_array_equal(np.asarray(relu6), [0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(
        np.asarray(tl.vjp(nn.relu, x)[0]), np.asarray(nn.relu(x))
    )


def test_repeated_multiplications_have_no_derivative_in_the_factors() -> None:
    """As jax.lax.scatter_mul without unique indices."""
    x = tnp.asarray([1.0, 2.0], dtype="float32")
    with pytest.raises(NotImplementedError, match="scatter_mul"):
        tl.grad(lambda v: tnp.sum(x.at[tnp.asarray([0, 0])].multiply(v)))(x)


# -- indexing with arrays ---------------------------------------------------------

INDEXED: list[tuple[str, Callable[..., Any]]] = [
    ("x[i]", lambda x, i, j: x[i]),
    ("x[i, 1:]", lambda x, i, j: x[i, 1:]),
    ("x[:, j]", lambda x, i, j: x[:, j % 3]),
    ("x[i, :, j] apart", lambda x, i, j: x[i[:2], :, j[0]]),
    ("x[0, :, j]", lambda x, i, j: x[0, :, j]),
    ("x[..., j]", lambda x, i, j: x[..., j]),
    ("x[None, i, None]", lambda x, i, j: x[None, i, None]),
    ("x[i][:, ::-1]", lambda x, i, j: x[i][:, ::-1]),
    ("x[i, j] together", lambda x, i, j: x[i[:2], j % 3]),
    ("take", lambda x, i, j: tnp.take(x, j)),
    ("take clip", lambda x, i, j: tnp.take(x, j * 3, axis=1, mode="clip")),
    ("take wrap", lambda x, i, j: tnp.take(x, j * 3, axis=2, mode="wrap")),
    ("take fill", lambda x, i, j: tnp.take(x, j * 2, axis=2, mode="fill")),
    (
        "take fill_value",
        lambda x, i, j: tnp.take(x, j * 2, axis=-1, mode="fill", fill_value=0.5),
    ),
    ("at get", lambda x, i, j: x.at[i, 1].get()),
    ("at get clip", lambda x, i, j: x.at[:, j].get(mode="clip")),
    ("at get fill", lambda x, i, j: x.at[i * 2].get(mode="fill", fill_value=0.25)),
]


@pytest.mark.parametrize("case", INDEXED, ids=[c[0] for c in INDEXED])
def test_indexing_with_arrays_differentiates_under_jit(
    case: tuple[str, Callable[..., Any]],
) -> None:
    """The indices (negative ones too) as jit arguments, traced: the values
    and gradients are those of eager differentiation, which gives the
    function's own values."""
    _, fn = case
    x = tnp.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7)
    i = tnp.asarray([1, -1, 0, 1])
    j = tnp.asarray([[0, 2], [3, -4]])

    def loss(x: Any, i: Any, j: Any) -> Any:
        y = fn(x, i, j)
        return tnp.sum(tnp.sin(y) * tnp.arange(1.0, 1.0 + y.size).reshape(y.shape))

    eager = fn(x, i, j)
    _same(eager, _lowered(lambda x: fn(x, i, j), x), exact=True)
    lowered_in_jit = tl.jit(lambda x, i, j: tl.vjp(lambda x: fn(x, i, j), x)[0])
    _same(eager, lowered_in_jit(x, i, j), exact=True)
    g = tl.grad(loss)(x, i, j)
    assert np.abs(np.asarray(g)).max() > 0
    for again in (tl.jit(tl.grad(loss))(x, i, j), tl.grad(loss)(x, i, j)):
        _same(g, again, exact=True)


def test_indices_out_of_bounds_raise_under_jit_of_grad() -> None:
    """As without differentiation: when the jitted gradient runs."""
    x = tnp.ones((4, 3), dtype="float32")
    step = tl.jit(tl.grad(lambda x, i: tnp.sum(x[i] * tnp.take(x, i, axis=0))))
    np.testing.assert_array_equal(
        np.asarray(step(x, tnp.asarray([3, -4])))[:, 0], [2.0, 0.0, 0.0, 2.0]
    )
    for bad in ([0, 4], [-5]):
        with pytest.raises(IndexError, match=f"index {bad[-1]} is out of bounds"):
            step(x, tnp.asarray(bad))
    clipped = tl.jit(tl.grad(lambda x, i: tnp.sum(tnp.take(x, i, axis=0, mode="clip"))))
    np.testing.assert_array_equal(
        np.asarray(clipped(x, tnp.asarray([7, -9])))[:, 0], [1.0, 0.0, 0.0, 1.0]
    )


def test_a_traced_boolean_mask_still_raises_under_jit_of_grad() -> None:
    x = tnp.ones((4, 3), dtype="float32")
    mask = tnp.asarray([True, False, True, True])
    with pytest.raises(tl.ConcretizationTypeError, match="traced boolean mask"):
        tl.jit(tl.grad(lambda x, m: tnp.sum(x[m])))(x, mask)
    # A constant mask is a constant: it works.
    g = tl.jit(tl.grad(lambda x: tnp.sum(x[mask] ** 2)))(x)
    np.testing.assert_array_equal(np.asarray(g)[:, 0], [2.0, 0.0, 2.0, 2.0])
