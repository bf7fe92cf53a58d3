"""Hypothesis properties of typelattice.numpy's elementwise ops and reductions.

Each property computes the expected values with NumPy at the dtype the
lattice chose, so it checks that the namespace computes in that dtype (and
never lets NumPy's own promotion decide) for arbitrary operands.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import typelattice as tl
import typelattice.numpy as tnp

# NumPy dtypes Hypothesis can generate values for, in 32-bit mode.
DTYPES = [
    np.dtype(n)
    for n in (
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "int8",
        "int16",
        "int32",
        "float16",
        "float32",
        "complex64",
    )
]

ARITHMETIC = {
    "add": np.add,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "equal": np.equal,
    "less": np.less,
}


@st.composite
def operands(draw: st.DrawFn) -> tuple[Any, Any]:
    """A strong array, a weak array or a Python scalar, and its NumPy value."""
    form = draw(st.sampled_from(["array", "weak", "python"]))
    if form == "array":
        dt = draw(st.sampled_from(DTYPES))
        values = draw(
            hnp.arrays(
                dt,
                3,
                elements=hnp.from_dtype(dt, allow_nan=False, allow_infinity=False),
            )
        )
        return tnp.asarray(values), values
    kind = draw(st.sampled_from([int, float]))
    value: Any = (
        draw(st.integers(-100, 100))
        if kind is int
        else draw(st.floats(-100, 100, allow_nan=False, width=16))
    )
    if form == "weak":
        return tnp.asarray(value), value
    return value, value


def holds(values: Any, dt: np.dtype[Any]) -> bool:
    """Whether ``dt`` holds every value of a strong array (up to rounding)."""
    if dt.kind in "iu":
        info = np.iinfo(dt)
        ints = np.asarray(values).astype(object)
        return not ints.size or (info.min <= ints.min() and ints.max() <= info.max)
    with np.errstate(all="ignore"):
        return bool(np.isfinite(np.asarray(values).astype(dt)).all())


def expected(name: str, x: Any, y: Any, xv: Any, yv: Any) -> tuple[np.dtype[Any], Any]:
    dt, weak = tl.lattice_result_type(x, y)
    with np.errstate(all="ignore"):
        a = np.asarray(xv).astype(dt)
        b = np.asarray(yv).astype(dt)
        out = ARITHMETIC[name](a, b)
    return dt, out


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(ARITHMETIC)), xs=operands(), ys=operands())
def test_binary_ops_compute_in_the_promoted_dtype(
    name: str, xs: tuple[Any, Any], ys: tuple[Any, Any]
) -> None:
    (x, xv), (y, yv) = xs, ys
    if isinstance(x, int | float) and isinstance(y, int | float):
        x = tnp.asarray(x)
    dt, weak = tl.lattice_result_type(x, y)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        scalars = [v for v in (xv, yv) if isinstance(v, int)]
        if any(not info.min <= v <= info.max for v in scalars):
            with pytest.raises(OverflowError, match="does not fit"):
                getattr(tnp, name)(x, y)
            return
    # Strong arrays whose values the promoted dtype cannot hold raise too
    # (uint32 from 2**31 with int32 in 32-bit mode, uint16 65520 with float16,
    # which would be inf); JAX wraps or overflows.
    strong = [v for a, v in ((x, xv), (y, yv)) if isinstance(a, tnp.Array)]
    strong = [v for v in strong if isinstance(v, np.ndarray)]
    if dt.kind != "b" and not all(holds(v, dt) for v in strong):
        with pytest.raises(OverflowError, match="does not fit"):
            getattr(tnp, name)(x, y)
        return
    out = getattr(tnp, name)(x, y)
    _, want = expected(name, x, y, xv, yv)
    if name in ("equal", "less"):
        assert out.dtype == np.bool_
    else:
        assert out.dtype == dt
        assert out.weak_type == weak
    np.testing.assert_array_equal(np.asarray(out), want)


@settings(max_examples=100, deadline=None)
@given(xs=operands(), ys=operands(), zs=operands())
def test_add_dtype_is_order_independent(
    xs: tuple[Any, Any], ys: tuple[Any, Any], zs: tuple[Any, Any]
) -> None:
    """(x + y) + z and x + (y + z) have one dtype: the lattice is associative."""
    # Zeros of each operand's form: no overflow can get in the way.
    x, y, z = (
        tnp.zeros_like(v) if isinstance(v, tnp.Array) else type(v)(0)
        for v, _ in (xs, ys, zs)
    )
    if not isinstance(x, tnp.Array):
        x = tnp.asarray(x)
    try:
        left = (x + y) + z
    except tl.TypePromotionError:
        return
    right = x + (y + z)
    assert (left.dtype, left.weak_type) == (right.dtype, right.weak_type)


@settings(max_examples=150, deadline=None)
@given(
    values=st.sampled_from(DTYPES).flatmap(
        lambda dt: hnp.arrays(
            dt,
            hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
            elements=hnp.from_dtype(
                dt,
                allow_nan=False,
                allow_infinity=False,
                min_value=0 if dt.kind == "u" else -8,
                max_value=8,
            )
            if dt.kind in "iuf"
            else hnp.from_dtype(dt),
        )
    ),
    data=st.data(),
)
def test_reductions_match_numpy_at_jax_dtypes(values: Any, data: st.DataObject) -> None:
    x = tnp.asarray(values)
    axis = data.draw(st.none() | st.integers(0, values.ndim - 1))
    kind = values.dtype.kind
    # sum: bool and narrow integers widen to the default (32-bit) integer.
    widened = {"b": np.int32, "i": np.int32, "u": np.uint32}.get(kind, values.dtype)
    total = tnp.sum(x, axis=axis)
    assert total.dtype == widened and not total.weak_type
    with np.errstate(all="ignore"):  # complex infinities give nan parts
        want = np.sum(values.astype(np.float32 if kind == "f" else widened), axis=axis)
    np.testing.assert_allclose(
        np.asarray(total, dtype=want.dtype), want, rtol=1e-2 if kind == "f" else 0
    )
    # max keeps the dtype; mean is inexact (float32 for integers).
    assert tnp.max(x, axis=axis).dtype == values.dtype
    np.testing.assert_array_equal(
        np.asarray(tnp.max(x, axis=axis)), np.max(values, axis=axis)
    )
    mean = tnp.mean(x, axis=axis)
    assert mean.dtype == (values.dtype if kind in "fc" else np.float32)
    with tl.enable_x64():
        assert tnp.sum(x, axis=axis).dtype == {
            "b": np.int64,
            "i": np.int64,
            "u": np.uint64,
        }.get(kind, values.dtype)
