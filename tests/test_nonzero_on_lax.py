"""The functions whose result's shape depends on values (``nonzero``,
``argwhere``, ``flatnonzero``, ``where`` with one argument) and ``x.view``
are written on ``typelattice.lax``: one path, eager, under ``jit``,
``eval_shape`` and differentiation.

With ``size=``, their records hold only primitives, and eager, jitted and
abstract evaluation agree; without it, the count is read eagerly and a
trace refuses. ``view`` is ``bitcast_convert_type`` with reshapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from counting_backend import CountingBackend
from support import same_array
from typelattice import lax
from typelattice._backends import use

F = Callable[..., Any]

FAMILY: dict[str, F] = {
    "nonzero": tnp.nonzero,
    "argwhere": tnp.argwhere,
    "flatnonzero": tnp.flatnonzero,
    "where": lambda a, **kw: tnp.where(a, **kw),
}

SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3), (2, 3, 4), (1, 1, 1, 6)]
DTYPES = ["bool", "int8", "uint16", "int32", "float32", "bfloat16", "complex64"]


def _operand(shape: tuple[int, ...], dtype: str, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    values = rng.integers(-2, 3, size=shape) * (rng.random(shape) < 0.5)
    if dtype == "complex64":
        return tnp.asarray(values + 1j * np.roll(values, 1), dtype)
    return tnp.asarray(np.asarray(values).astype(dtype))


def _reference(name: str, a: Any, size: int | None, fill: Any) -> list[Any]:
    """NumPy's indices, cut and padded to ``size``: one list per result."""
    v = np.asarray(a)
    if name == "flatnonzero":
        v = v.reshape(-1)
    if name == "argwhere" and v.ndim == 0:
        found: tuple[Any, ...] = tuple(np.nonzero(np.atleast_1d(v)))
        columns: list[list[Any]] = [[] for _ in found[0]]
        return [columns if size is None else [[]] * size]
    found = np.nonzero(v)
    n = len(found[0]) if size is None else size
    fills = fill if isinstance(fill, tuple) else (0 if fill is None else fill,) * v.ndim
    columns = [
        [*i[:n].tolist(), *[np.asarray(f).item()] * max(0, n - len(i))]
        for i, f in zip(found, fills, strict=True)
    ]
    if name == "argwhere":
        return [[list(row) for row in zip(*columns, strict=True)]]
    if name == "flatnonzero":
        return columns
    return columns


def _results(name: str, out: Any) -> list[Any]:
    return list(out) if name in ("nonzero", "where") else [out]


def _family_cases() -> list[Any]:
    cases = []
    for name in FAMILY:
        for shape in SHAPES:
            for dtype in DTYPES:
                if name not in ("argwhere", "flatnonzero") and not shape:
                    continue
                cases.append(
                    pytest.param(name, shape, dtype, id=f"{name}-{shape}-{dtype}")
                )
    return cases


@pytest.mark.parametrize(("name", "shape", "dtype"), _family_cases())
def test_eager_jit_and_eval_shape_agree(name: str, shape: Any, dtype: str) -> None:
    fn = FAMILY[name]
    a = _operand(shape, dtype)
    count = int(np.count_nonzero(np.asarray(a)))
    for size in (None, 0, 1, count, count + 3):
        for fill in (None, -1, 2.5, np.float32(7), np.int8(3), True):
            if size is None and fill is not None:
                continue
            kw: dict[str, Any] = {} if size is None else {"size": size}
            if fill is not None:
                kw["fill_value"] = fill
            eager = _results(name, fn(a, **kw))
            want = _reference(name, a, size, fill)
            assert [np.asarray(e).tolist() for e in eager] == want, (size, fill)
            if size is None:
                continue
            jitted = _results(name, tl.jit(lambda x, kw=kw: fn(x, **kw))(a))
            shaped = _results(name, tl.eval_shape(lambda x, kw=kw: fn(x, **kw), a))
            for e, j, s in zip(eager, jitted, shaped, strict=True):
                same_array(j, e)
                assert (s.shape, s.dtype, s.weak_type) == (
                    e.shape,
                    e.dtype,
                    e.weak_type,
                )


FILLS = [
    (None, "int32", False),
    (-1, "int32", False),
    (2.5, "float32", True),
    (1j, "complex64", True),
    (True, "int32", False),
    (np.float32(7), "float32", False),
    (np.int8(3), "int32", False),
    (np.uint32(5), "int32", False),
    (np.array(1.5), "float32", False),
    (tnp.asarray(2.5), "float32", True),
    (tnp.asarray(np.int16(9)), "int32", False),
]


@pytest.mark.parametrize(("fill", "dtype", "weak"), FILLS)
def test_the_fill_value_decides_dtype_and_weak_flag(
    fill: Any, dtype: str, weak: bool
) -> None:
    a = tnp.asarray([0, 3, 0, 4])
    kw = {"size": 4} if fill is None else {"size": 4, "fill_value": fill}
    got = tnp.nonzero(a, **kw)[0]
    assert (got.dtype, got.weak_type) == (np.dtype(dtype), weak)
    jitted = tl.jit(lambda x: tnp.nonzero(x, **kw)[0])(a)
    same_array(jitted, got)
    pad = 0 if fill is None else np.asarray(fill).item()
    assert got.tolist() == [1, 3, pad, pad]


def test_a_traced_fill_value_is_converted_in_the_program() -> None:
    a = tnp.asarray([0.0, 3.0, 0.0])
    f = tl.jit(lambda x, fill: tnp.flatnonzero(x, size=3, fill_value=fill))
    got = f(a, tnp.asarray(np.int8(-7)))
    assert (got.tolist(), got.dtype, got.weak_type) == ([1, -7, -7], "int32", False)
    got = f(a, 2.5)
    assert (got.tolist(), got.dtype, got.weak_type) == (
        [1.0, 2.5, 2.5],
        "float32",
        True,
    )


def test_fills_per_axis_and_x64() -> None:
    a = tnp.asarray([[0, 1], [2, 0]])
    rows, cols = tnp.nonzero(a, size=3, fill_value=(-1, -2))
    assert (rows.tolist(), cols.tolist()) == ([0, 1, -1], [1, 0, -2])
    with tl.enable_x64():
        got = tnp.argwhere(tnp.asarray([0, 5]), size=2, fill_value=1.5)
        assert (got.tolist(), got.dtype, got.weak_type) == (
            [[1.0], [1.5]],
            np.dtype("float64"),
            True,
        )
        assert tnp.nonzero(tnp.asarray([0, 5]))[0].dtype == np.dtype("int64")


@pytest.mark.parametrize("name", list(FAMILY))
def test_records_hold_primitives_only(name: str) -> None:
    fn = FAMILY[name]
    a = tnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4) % 3)
    record = tl.make_jaxpr(lambda x: fn(x, size=5, fill_value=-1))(a)
    assert record.eqns
    assert not [e.name for e in record.eqns if isinstance(e.primitive, str)]
    names = {e.primitive.name for e in record.eqns}
    assert {"cumsum", "scatter"} <= names


@pytest.mark.parametrize("name", list(FAMILY))
def test_without_size_a_trace_refuses(name: str) -> None:
    fn = FAMILY[name]
    a = tnp.asarray([0.0, 1.0])
    message = "the number of nonzero elements is not known while tracing"
    with pytest.raises(tl.ConcretizationTypeError, match=message):
        tl.jit(fn)(a)
    with pytest.raises(tl.ConcretizationTypeError, match=message):
        tl.eval_shape(fn, a)
    with pytest.raises(tl.ConcretizationTypeError, match=message):
        tl.make_jaxpr(fn)(a)


def test_errors_are_kept() -> None:
    with pytest.raises(ValueError, match="a 0-d array has no indices"):
        tnp.nonzero(tnp.asarray(1.0))
    with pytest.raises(ValueError, match="fill_value needs size="):
        tnp.nonzero(tnp.asarray([1.0]), fill_value=1)
    with pytest.raises(TypeError, match="size must be a non-negative integer"):
        tnp.flatnonzero(tnp.asarray([1.0]), size=-1)
    with pytest.raises(TypeError, match="size must be a non-negative integer"):
        tl.jit(lambda x: tnp.argwhere(x, size=1.5))(tnp.asarray([1.0]))
    with pytest.raises(ValueError, match="fill_value has 2 values"):
        tnp.nonzero(tnp.asarray([1.0]), size=2, fill_value=(1, 2))
    with pytest.raises(ValueError, match="fill_value must be a scalar"):
        tnp.nonzero(tnp.asarray([1.0]), size=2, fill_value=np.array([1]))
    with pytest.raises(OverflowError, match="does not fit in int32"):
        tnp.nonzero(tnp.asarray([1.0]), size=2, fill_value=2**40)
    with pytest.raises(TypeError, match="nonzero requires ndarray or scalar"):
        tnp.nonzero([1, 0])  # type: ignore[arg-type]


def test_the_indices_carry_no_derivative() -> None:
    x = tnp.asarray([1.0, -2.0, 3.0, 0.5])
    for sized in ({"size": 3}, {}):

        def f(x: Any, sized: dict[str, Any] = sized) -> Any:
            return tnp.sum(x[tnp.nonzero(x > 0, **sized)] ** 2)

        assert tl.grad(f)(x).tolist() == [2.0, 0.0, 6.0, 1.0]
    g = tl.grad(lambda x: tnp.sum(x[tnp.where(x > 0, size=3, fill_value=3)]))(x)
    assert g.tolist() == [1.0, 0.0, 1.0, 1.0]
    g = tl.grad(lambda x: tnp.sum(tnp.argwhere(x, size=2)[:, 0] * x[:2]))(x)
    assert g.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_the_counting_backend_computes_them() -> None:
    a = tnp.asarray(np.float32([[0, 1], [2, 0]]))
    want = tnp.argwhere(a, size=3, fill_value=-1)
    counting = CountingBackend()
    with use(counting):
        got = tnp.argwhere(a, size=3, fill_value=-1)
        rows = tnp.nonzero(a)[0]
        bits = a.view("uint8")
    assert got.tolist() == want.tolist()
    assert rows.tolist() == [0, 1]
    assert bits.shape == (2, 8)
    assert counting.calls["scatter"] == 2
    assert counting.calls["cumsum"] == 2
    assert counting.calls["reduce_sum"] == 1  # the count, without size
    assert counting.calls["bitcast_convert_type"] == 1


# -- view ------------------------------------------------------------------------

VIEW_DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "float16",
    "bfloat16",
    "int32",
    "uint32",
    "float32",
    "int64",
    "float64",
    "complex64",
    "complex128",
]


def _dt(name: str) -> np.dtype[Any]:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _bytes(dtype: str, shape: tuple[int, ...], seed: int = 1) -> np.ndarray[Any, Any]:
    """Values of ``dtype`` from random bytes (bool: 0 and 1), no NaN: the
    bytes must survive any copy unchanged."""
    dt = _dt(dtype)
    rng = np.random.default_rng(seed)
    if dt == np.dtype(bool):
        return rng.random(shape) < 0.5
    raw = rng.integers(0, 256, size=(*shape, dt.itemsize), dtype=np.uint8)
    values = raw.view(dt).reshape(shape)
    if dt.kind in "fc" or dtype == "bfloat16":
        values = np.where(np.isfinite(values), values, np.zeros((), dt))
    return values


def _numpy_view(v: np.ndarray[Any, Any], dtype: str) -> np.ndarray[Any, Any]:
    dt = _dt(dtype)
    if dt == np.dtype(bool):
        return v.view(np.uint8) != 0
    return v.view(dt)


def _view_pairs() -> list[Any]:
    return [pytest.param(a, b, id=f"{a}-{b}") for a in VIEW_DTYPES for b in VIEW_DTYPES]


@pytest.mark.parametrize(("source", "target"), _view_pairs())
def test_view_reads_the_bytes(source: str, target: str) -> None:
    with tl.enable_x64():
        v = _bytes(source, (3, 16))
        x = tnp.asarray(v)
        got = x.view(target)
        want = _numpy_view(v, target)
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, False)
        assert np.asarray(got).tobytes() == want.tobytes()
        jitted = tl.jit(lambda x: x.view(target))(x)
        assert (jitted.shape, jitted.dtype, jitted.weak_type) == (
            got.shape,
            got.dtype,
            False,
        )
        assert np.asarray(jitted).tobytes() == want.tobytes()
        shaped = tl.eval_shape(lambda x: x.view(target), x)
        assert (shaped.shape, shaped.dtype) == (got.shape, got.dtype)
        record = tl.make_jaxpr(lambda x: x.view(target))(x)
        assert not [e.name for e in record.eqns if isinstance(e.primitive, str)]
        if target != "bool" or source == "bool":  # (no other byte is lost)
            back = got.view(source)
            assert np.asarray(back).tobytes() == v.tobytes()
        # A transposed array is read in its logical (C) order.
        t = tnp.asarray(v[:, :3]).T
        if t.shape[-1] * t.dtype.itemsize % _dt(target).itemsize == 0:
            want_t = _numpy_view(np.ascontiguousarray(v[:, :3].T), target)
            assert np.asarray(t.view(target)).tobytes() == want_t.tobytes()


def test_view_of_0d_arrays_and_weak_arrays() -> None:
    x = tnp.asarray(1.0)  # weak float32
    got = x.view("int32")
    assert (got.shape, got.dtype, got.weak_type) == ((), np.dtype("int32"), False)
    assert got.tolist() == 1065353216
    same = x.view()
    assert (same.dtype, same.weak_type, same.tolist()) == (
        np.dtype("float32"),
        False,
        1.0,
    )
    with pytest.raises(ValueError, match="a 0-d array can only be viewed as a type of"):
        x.view("int16")


def test_view_errors() -> None:
    x = tnp.asarray(np.int8([1, 2, 3]))
    with pytest.raises(
        ValueError, match="its size must be a divisor of the total size"
    ):
        x.view("int16")
    with pytest.raises(
        ValueError, match="its size must be a divisor of the total size"
    ):
        tl.jit(lambda x: x.view("int16"))(x)
    with pytest.raises(TypeError, match="unknown dtype 'foo'"):
        x.view("foo")
    with pytest.raises(TypeError, match="the type argument is not supported"):
        x.view("int8", type=np.ndarray)


def test_view_has_no_derivative() -> None:
    x = tnp.asarray([1.0, 2.0])
    g = tl.grad(lambda x: tnp.sum(x.view("int32").astype("float32") + x))(x)
    assert g.tolist() == [1.0, 1.0]
    g = tl.grad(lambda x: tnp.sum(x.view("float32")))(x)
    assert g.tolist() == [0.0, 0.0]


def test_lax_bitcast_convert_type_changes_the_last_axis() -> None:
    x = tnp.asarray(np.float32([[1.0, 2.0]]))
    small = lax.bitcast_convert_type(x, "uint16")
    assert (small.shape, small.dtype) == ((1, 2, 2), np.dtype("uint16"))
    back = lax.bitcast_convert_type(small, "float32")
    assert back.tolist() == [[1.0, 2.0]]
    t = tnp.asarray(np.float32([[1.0, 2.0], [3.0, 4.0]])).T
    wide = lax.bitcast_convert_type(lax.bitcast_convert_type(t, "uint8"), "float32")
    assert wide.tolist() == [[1.0, 3.0], [2.0, 4.0]]
