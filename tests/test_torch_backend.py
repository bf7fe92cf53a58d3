"""The PyTorch backend (typelattice._backends.torch): its dtype map, the
dtypes torch lacks or cannot compute with, the registration of every
primitive, its support table, and answers equal to the NumPy backend's on
the cases where torch's own rules differ from lax's (integer division by
zero, shifts out of range, NaN in max and argmax, float8 overflow, unsigned
wraparound). Skipped where torch is not installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import typelattice as tl  # noqa: E402
import typelattice.numpy as tnp  # noqa: E402
from typelattice import _dtypes, lax  # noqa: E402
from typelattice._backends import torch as tb  # noqa: E402
from typelattice._backends import use  # noqa: E402
from typelattice._lax._primitive import PRIMITIVES  # noqa: E402

# TYPELATTICE_TORCH_DEVICE=cuda compares the answers computed on the GPU.
DEVICE = os.environ.get("TYPELATTICE_TORCH_DEVICE", "cpu")
ON_DEVICE = tb.BACKEND if DEVICE == "cpu" else tb.backend_on(DEVICE)

ROUND_TRIP = [np.dtype(getattr(ml_dtypes, n, None) or n) for n in tb._DTYPES]


@pytest.mark.parametrize("dt", ROUND_TRIP, ids=lambda d: d.name)
def test_dtype_round_trip(dt: np.dtype[Any]) -> None:
    values = np.array([0, 1, 2, 3, 0.5, -1, 7, 1], np.float64)
    if _dtypes.kind_of(dt) == "b":
        a = values > 1
    elif _dtypes.kind_of(dt) in "iu":
        a = (values * 3).astype(np.int64).astype(dt)
    else:
        a = values.astype(dt)
    t = tb.from_numpy(a)
    assert tb.owns(t) and not tb.owns(a)
    assert tb.dtype_of(t) == dt
    assert tb.shape_of(t) == (8,)
    assert tb.device_of(t) == "cpu"
    back = tb.to_numpy(t)
    assert back.dtype == dt
    assert back.tobytes() == a.tobytes()


def test_bfloat16_and_float8_are_torch_dtypes() -> None:
    a = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    assert tb.from_numpy(a).dtype is torch.bfloat16
    b = np.array([1.5, -2.0], ml_dtypes.float8_e4m3fn)
    assert tb.from_numpy(b).dtype is torch.float8_e4m3fn
    assert tb.to_numpy(tb.from_numpy(b)).tolist() == b.tolist()


def test_from_numpy_shares_cpu_memory_and_takes_reversed_arrays() -> None:
    a = np.arange(4.0, dtype=np.float32)
    a.flags.writeable = False
    t = tb.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data  # no copy
    r = tb.from_numpy(np.arange(4)[::-1])
    assert r.tolist() == [3, 2, 1, 0]


def test_missing_dtype_raises_naming_it_and_the_fix() -> None:
    with pytest.raises(TypeError, match=r"int4.*backend='numpy'"):
        tb.from_numpy(np.zeros(2, ml_dtypes.int4))
    with pytest.raises(TypeError, match="int4"):
        tb.dtype_of(
            torch.zeros(2, dtype=torch.int8).view(torch.int8)[:0].to(torch.int4)
        )
    x = tnp.zeros(2, dtype="int4")
    with (
        use(tb.BACKEND),
        pytest.raises(TypeError, match="torch backend has no dtype int4"),
    ):
        lax.neg(x)


def test_every_primitive_registered() -> None:
    missing = [n for n, p in PRIMITIVES.items() if not tb.BACKEND.implements(p)]
    assert missing == []


def test_support_table_shape() -> None:
    table = tb.support_table()
    assert set(table) == set(PRIMITIVES)
    names = {d.name for d in _dtypes.ALL_DTYPES}
    for row in table.values():
        assert set(row) == names
        for v in row.values():
            assert v == "yes" or v.startswith(("emulated: ", "no: "))
    assert table["add"]["float32"] == "yes"
    assert table["add"]["uint32"] == "emulated: on int32 bits"
    assert table["lt"]["uint32"] == "emulated: in int64"
    assert table["lt"]["uint64"] == "emulated: by NumPy on the host"
    assert table["add"]["int4"].startswith("no: ")
    # Every dtype torch lacks is a "no" in every row.
    assert all(table[p]["float8_e3m4"].startswith("no: ") for p in table)


def _both(fn: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """``fn(*args)`` under the NumPy backend and under torch's."""
    want = fn(*args)
    with use(ON_DEVICE):
        got = fn(*args)
    return want, got


def _same(want: Any, got: Any) -> None:
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    assert got.shape == want.shape
    w, g = np.asarray(want), np.asarray(got)
    if _dtypes.kind_of(w.dtype) in "fc":
        np.testing.assert_array_equal(g.astype(np.complex128), w.astype(np.complex128))
    else:
        assert g.tolist() == w.tolist()


INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dt", INTS)
def test_integer_division_and_remainder(dt: str) -> None:
    with tl.enable_x64():
        _division(dt)


def _division(dt: str) -> None:
    info = np.iinfo(dt)
    x = tnp.asarray(np.array([7, int(info.min), 5, int(info.max), 0, 9], dt))
    y = tnp.asarray(np.array([0, 1, 2, 3, 0, 4], dt))
    if info.min < 0:
        x = tnp.asarray(np.array([-7, int(info.min), 5, -5, 0, 9], dt))
        y = tnp.asarray(np.array([2, -1, -2, 0, 0, -4], dt))
    for f in (lax.div, lax.rem):
        _same(*_both(f, x, y))


@pytest.mark.parametrize("dt", INTS)
def test_wrapping_arithmetic_and_order(dt: str) -> None:
    with tl.enable_x64():
        _wrapping(dt)


def _wrapping(dt: str) -> None:
    info = np.iinfo(dt)
    x = tnp.asarray(
        np.array([int(info.max), int(info.min), 3, 100 % int(info.max)], dt)
    )
    y = tnp.asarray(np.array([1, int(info.max), 2, int(info.max)], dt))
    for f in (lax.add, lax.sub, lax.mul, lax.max, lax.min, lax.lt, lax.ge, lax.eq):
        _same(*_both(f, x, y))
    for g in (lax.neg, lax.abs, lax.bitwise_not, lambda v: lax.integer_pow(v, 3)):
        if g is lax.abs and info.min == 0:
            continue
        _same(*_both(g, x))
    _same(*_both(lambda v: lax.reduce_sum(v, (0,)), x))
    _same(*_both(lambda v: lax.cumsum(v, 0), x))
    _same(*_both(lambda v: lax.argmax(v, 0, np.int32), x))
    _same(*_both(lambda v: lax.convert_element_type(v, np.float32), x))


@pytest.mark.parametrize("dt", INTS)
def test_shifts_out_of_range(dt: str) -> None:
    with tl.enable_x64():
        _shifts(dt)


def _shifts(dt: str) -> None:
    bits = np.iinfo(dt).bits
    x = tnp.asarray(np.array([1, 5, int(np.iinfo(dt).max), 3, 2, 7], dt))
    amounts = [0, 1, bits - 1, bits, bits + 3, 2]
    if np.iinfo(dt).min < 0:
        amounts[5] = -1
        x = tnp.asarray(np.array([-1, 5, int(np.iinfo(dt).min), -3, 2, -7], dt))
    y = tnp.asarray(np.array(amounts, dt))
    for f in (lax.shift_left, lax.shift_right_logical, lax.shift_right_arithmetic):
        _same(*_both(f, x, y))


def test_nan_in_max_min_and_argmax() -> None:
    x = tnp.asarray(np.array([1.0, np.nan, 3.0, np.nan], np.float32))
    y = tnp.asarray(np.array([2.0, 0.0, np.nan, 1.0], np.float32))
    _same(*_both(lax.max, x, y))
    _same(*_both(lax.min, x, y))
    z = tnp.asarray(np.array([[1.0, np.nan, 5.0], [3.0, 3.0, 1.0]], np.float32))
    _same(*_both(lambda v: lax.argmax(v, 1, np.int32), z))
    _same(*_both(lambda v: lax.argmin(v, 1, np.int32), z))
    _same(*_both(lambda v: lax.reduce_max(v, (1,)), z))
    _same(*_both(lambda v: lax.cummax(v, 1), z))


def test_float_to_int_saturates_and_nan_is_zero() -> None:
    x = tnp.asarray(np.array([1e10, -1e10, np.nan, 2.7, -2.7, np.inf], np.float32))
    for dt in ("int8", "int32", "uint8", "uint16", "uint32"):
        _same(*_both(lambda v, d=dt: lax.convert_element_type(v, d), x))


@pytest.mark.parametrize("kind", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz"])
def test_float8_arithmetic_rounds_as_ml_dtypes(kind: str) -> None:
    a = np.array([448.0, 0.3, -2.5, 1e-3, 240.0, 57344.0], np.float32)
    x = tnp.asarray(a.astype(getattr(ml_dtypes, kind)))
    y = tnp.asarray(
        np.array([32.0, 0.1, 3.0, 1e-3, 16, 8192], np.float32).astype(x.dtype)
    )
    for f in (lax.add, lax.mul, lax.sub, lax.max, lax.lt):
        _same(*_both(f, x, y))
    # Conversion overflow: NaN for the kinds without infinity (torch itself
    # would saturate float8_e4m3fn to 448).
    big = tnp.asarray(np.array([500.0, -1e6, np.inf, 464.0], np.float32))
    _same(*_both(lambda v: lax.convert_element_type(v, x.dtype), big))


def test_complex_order_pow_and_atan2() -> None:
    x = tnp.asarray(np.array([1 + 2j, 1 - 1j, 0j, 2 + 0j], np.complex64))
    y = tnp.asarray(np.array([1 + 1j, 1 + 0j, 0j, -1j], np.complex64))
    _same(*_both(lax.max, x, y))
    _same(*_both(lax.min, x, y))
    got_want = _both(lax.pow, x, y)
    np.testing.assert_allclose(
        np.asarray(got_want[1]), np.asarray(got_want[0]), rtol=1e-6
    )
    _same(*_both(lambda v: lax.clamp(y, v, y), x))


def test_structural_primitives() -> None:
    x = tnp.asarray(np.arange(24, dtype=np.uint32).reshape(2, 3, 4))
    pad = tnp.asarray(np.uint32(99))
    config = ((1, -1, 1), (-1, 2, 0), (0, 0, 2))
    _same(*_both(lambda v: lax.pad(v, pad, config), x))
    _same(*_both(lambda v: lax.rev(v, (0, 2)), x))
    _same(*_both(lambda v: lax.dynamic_slice(v, (1, 2, -3), (1, 2, 2)), x))
    upd = tnp.asarray(np.full((1, 2, 2), 7, np.uint32))
    _same(*_both(lambda v: lax.dynamic_update_slice(v, upd, (1, 5, 1)), x))
    _same(*_both(lambda v: lax.concatenate([v, v], 1), x))
    _same(*_both(lambda v: lax.slice(v, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x))
    _same(*_both(lambda: lax.iota(np.uint16, 5)))


def test_dot_general_preferred_element_type() -> None:
    a = tnp.asarray(np.arange(6, dtype=np.int8).reshape(2, 3) * 40)
    b = tnp.asarray(np.arange(6, dtype=np.int8).reshape(3, 2))
    dims = (((1,), (0,)), ((), ()))
    _same(*_both(lambda u, v: lax.dot_general(u, v, dims), a, b))
    _same(
        *_both(
            lambda u, v: lax.dot_general(u, v, dims, preferred_element_type=np.int32),
            a,
            b,
        )
    )
    f = tnp.asarray(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
    g = tnp.asarray(np.linspace(0, 2, 24, dtype=np.float32).reshape(2, 4, 3))
    want, got = _both(
        lambda u, v: lax.dot_general(u, v, (((2,), (1,)), ((0,), (0,)))), f, g
    )
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_operands_unchanged_and_results_not_aliased() -> None:
    # Where the NumPy backend's result has memory of its own, so has
    # torch's: no result shares an operand's memory unless NumPy's does.
    x = tnp.asarray(np.arange(6, dtype=np.float32))
    before = np.asarray(x).copy()
    calls: list[Callable[[], Any]] = [
        lambda: lax.dynamic_update_slice(
            x, tnp.asarray(np.array([9.0], np.float32)), (2,)
        ),
        lambda: lax.select_n(tnp.asarray(True), x),
        lambda: lax.pad(x, tnp.asarray(np.float32(0)), ((0, 0, 0),)),
        lambda: lax.reduce_sum(x.reshape(2, 3), ()),
        lambda: lax.sort(x),
        lambda: lax.convert_element_type(x, np.int32),
        lambda: lax.neg(x),
        lambda: lax.integer_pow(x, 1),
        lambda: lax.clamp(np.float32(1), x, np.float32(3)),
        lambda: lax.rev(x, ()),
        lambda: lax.real(x.astype(np.complex64)),
    ]
    for call in calls:
        want, got = _both(call)
        _same(want, got)
        if not np.shares_memory(np.asarray(want), np.asarray(x)):
            assert not np.shares_memory(np.asarray(got), np.asarray(x)), call
    assert np.asarray(x).tolist() == before.tolist()


def test_host_primitive_results_equal_numpy_backend() -> None:
    # sort and gather are computed by NumPy on the host: the same answers.
    x = tnp.asarray(np.array([3.0, np.nan, -0.0, 0.0, 1.0], np.float32))
    _same(*_both(lambda v: lax.sort(v), x))
    idx = tnp.asarray(np.array([4, 0, 2]))
    _same(*_both(lambda v, i: v[i], x, idx))


def test_sort_total_order_and_stability() -> None:
    # -0.0 before 0.0, NaNs last (the sign bit first), equal keys stable.
    keys = np.array([0.0, np.nan, -0.0, -np.inf, 1.0, -np.nan, 1.0, 0.0], np.float32)
    x = tnp.asarray(keys)
    payload = tnp.asarray(np.arange(8, dtype=np.int32))
    want, got = _both(lambda k, p: lax.sort((k, p), num_keys=1), x, payload)
    for w, g in zip(want, got, strict=True):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    for dt in ("uint32", "bool", "bfloat16", "int8"):
        v = tnp.asarray(np.array([3, 0, 2, 1, 3, 0]).astype(dt))
        _same(*_both(lambda u: lax.sort(u), v))


def test_gather_and_scatter_add_as_numpy() -> None:
    x = tnp.asarray(np.arange(20, dtype=np.float32).reshape(4, 5))
    idx = tnp.asarray(np.array([3, -1, 0, 2, 2], np.int32))
    _same(*_both(lambda v, i: v[i], x, idx))
    _same(*_both(lambda v, i: v[:, i], x, idx))
    bad = tnp.asarray(np.array([3, -1, 0, 7, 2], np.int32))
    _same(*_both(lambda v, i: v.at[i].get(mode="fill", fill_value=-5), x, bad))
    upd = tnp.asarray(np.ones((5, 5), np.float32))
    _same(*_both(lambda v, i, u: v.at[i].add(u), x, idx, upd))
    _same(*_both(lambda v, i, u: v.at[i].add(u, mode="drop"), x, bad, upd))
    u16 = tnp.asarray(np.arange(6, dtype=np.uint16) * 9000)
    _same(*_both(lambda v, i: v[i], u16, tnp.asarray(np.array([5, 0, 2]))))


PROMOTING_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32"]
PROMOTING_DTYPES += ["float64", "complex64", "complex128", "float16", "bfloat16"]


@pytest.mark.parametrize("name", sorted(tb._PROMOTING))
def test_promoting_equals_convert_then_primitive(name: str) -> None:
    # torch's own mixed-dtype kernel, where offered, gives bit for bit what
    # converting both operands and computing the primitive gives.
    rng = np.random.default_rng(0)
    raw = rng.normal(size=64) * 10.0 ** rng.integers(0, 9, size=64)
    raw[:4] = [16777217, -(2**31), 0.5, 2049]
    convert = tb.BACKEND.impl(PRIMITIVES["convert_element_type"])
    prim = tb.BACKEND.impl(PRIMITIVES[name])
    offered = 0
    for xn in PROMOTING_DTYPES:
        for yn in PROMOTING_DTYPES:
            x_dt, y_dt = (
                np.dtype(getattr(ml_dtypes, xn, xn)),
                np.dtype(getattr(ml_dtypes, yn, yn)),
            )
            with tl.enable_x64():
                common = tl.promote_types(x_dt, y_dt)
            fused = tb.promoting(name, x_dt, y_dt, common)
            if fused is None:
                continue
            offered += 1
            with np.errstate(all="ignore"):  # (wrapped test data)
                x = tb.from_numpy(np.clip(raw, -(2**31), 2**31 - 1).astype(x_dt))
                y = tb.from_numpy(raw[::-1].copy().astype(y_dt))
            want = prim(convert(x, new_dtype=common), convert(y, new_dtype=common))
            got = fused(x, y)
            assert got.dtype == want.dtype, (xn, yn)
            assert tb.to_numpy(got).tobytes() == tb.to_numpy(want).tobytes(), (xn, yn)
    assert offered > 0


def test_documented_support_table_is_the_generated_one() -> None:
    from pathlib import Path

    docs = Path(__file__).parent.parent / "docs" / "backends.md"
    assert tb.support_markdown() in docs.read_text()


@pytest.mark.parametrize("dt", INTS)
def test_bit_counts_and_bitcasts(dt: str) -> None:
    info = np.iinfo(dt)
    values = [0, 1, int(info.max), int(info.min), 6, int(info.max) // 3]
    with tl.enable_x64():
        x = tnp.asarray(np.array(values, dt))
        _same(*_both(lax.population_count, x))
        _same(*_both(lax.clz, x))
        for target in ("uint8", "int16", "float32", "int64"):
            size = np.dtype(target).itemsize
            if size > np.dtype(dt).itemsize:
                continue
            _same(*_both(lambda v, t=target: lax.bitcast_convert_type(v, t), x))


def test_triangular_solve_as_numpy() -> None:
    a = tnp.asarray(np.array([[2.0, 0.5, 1], [1, 3, 2], [4, 1, 5]], np.float32))
    b = tnp.asarray(np.array([[1.0, 2], [3, 4], [5, 6]], np.float32))
    for lower in (True, False):
        for transpose in (True, False):
            want, got = _both(
                lambda u, v, lo=lower, tr=transpose: lax.linalg.triangular_solve(
                    u, v, left_side=True, lower=lo, transpose_a=tr
                ),
                a,
                b,
            )
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
