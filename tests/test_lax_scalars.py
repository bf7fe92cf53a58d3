"""Python scalar operands of typelattice.lax functions: converted through a
remembered range check, they give exactly what the checked conversion gives
(dtype, weak flag, bytes) and raise the same errors, in every mode."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
from support import run_without_speedups
from typelattice import _config, _core, lax
from typelattice._array import ArrayImpl, wrap
from typelattice._lax._primitive import _holds


def array(value: Any, dtype: Any, weak: bool = False) -> ArrayImpl:
    return ArrayImpl(np.asarray(value, dtype=dtype), weak_type=weak)


def checked_scalar(x: Any, like: np.dtype[Any], fname: str) -> ArrayImpl:
    """A Python scalar meeting an array of dtype ``like``, converted by the
    checked conversion alone (as lax documents it)."""
    t = type(x)
    if t is bool:
        return wrap(np.asarray(x), _core.aval(np.dtype(bool), False))
    state = _config.current()
    dt = _core.key_dtype(t, state.enable_x64)
    if _holds(like, t, state):
        dt = like
    return wrap(_core.python_scalar_to(x, dt, f"lax.{fname}"), _core.aval(dt, True))


def outcome(fn: Callable[[], Any]) -> object:
    try:
        out = fn()
    except Exception as err:  # noqa: BLE001 (compared, not hidden)
        return (type(err), str(err))
    assert isinstance(out, ArrayImpl)
    v = out._value
    return (v.dtype, out.weak_type, v.shape, v.tobytes())


LIKES: list[ArrayImpl] = [
    array([True, False], bool),
    array([-2, 5], "int8"),
    array([0, 255], "uint8"),
    array([-3, 9], "int32"),
    array(4, "int32", weak=True),
    array([1, 65535], "uint64"),
    array([0.5, -1.5], "float16"),
    array([0.5, -1.5], ml_dtypes.bfloat16),
    array([0.5, 2.0], ml_dtypes.float8_e4m3fn),
    array([0.25, -0.0], "float32"),
    array(2.5, "float32", weak=True),
    array([1.0, 2.0], "float64"),
    array([1 + 2j, -1j], "complex64"),
    array([1 + 2j, -1j], "complex128"),
    array([1, 2], ml_dtypes.int4),
]

F16_MAX = float(np.finfo(np.float16).max)
F32_MAX = float(np.finfo(np.float32).max)
F64_MAX = float(np.finfo(np.float64).max)

SCALARS: list[Any] = [
    True,
    False,
    0,
    1,
    -1,
    7,
    127,
    128,
    -129,
    255,
    256,
    1000,
    -1000,
    65504,
    65520,
    2**31,
    2**63,
    2**64,
    -(2**63) - 1,
    2**1023,
    2**1023 + 1,
    2**1024,
    -(2**1030),
    0.0,
    -0.0,
    2.0,
    0.1,
    1e-10,
    5e-324,
    1e6,
    -1e6,
    F16_MAX,
    65519.0,
    65520.0,
    F32_MAX,
    3.4028235677973366e38,
    1e39,
    F64_MAX,
    math.inf,
    -math.inf,
    math.nan,
    1j,
    2 + 0.5j,
    complex(1e39, 0),
    complex(0, -1e39),
    complex(math.inf, 1),
    complex(math.nan, 0),
    complex(F64_MAX, F64_MAX),
]


def assert_as_checked(fname: str, like: ArrayImpl, s: Any) -> None:
    fn = getattr(lax, fname)
    dt = like._value.dtype
    got_right = outcome(lambda: fn(like, s))
    want_right = outcome(lambda: fn(like, checked_scalar(s, dt, fname)))
    assert got_right == want_right, (fname, dt, s)
    got_left = outcome(lambda: fn(s, like))
    want_left = outcome(lambda: fn(checked_scalar(s, dt, fname), like))
    assert got_left == want_left, (fname, dt, s)


@pytest.mark.parametrize("fname", ["add", "mul", "max", "sub", "ne"])
@pytest.mark.parametrize("like", LIKES, ids=lambda a: str(a._key))
def test_scalars_convert_as_the_checked_conversion(fname: str, like: ArrayImpl) -> None:
    for s in SCALARS:
        assert_as_checked(fname, like, s)


@pytest.mark.parametrize("mode", ["x64", "strict"])
def test_in_other_modes_too(mode: str) -> None:
    scope = tl.enable_x64(True) if mode == "x64" else tl.dtype_promotion("strict")
    with scope:
        for like in LIKES:
            for s in SCALARS[::3]:
                assert_as_checked("add", like, s)


def test_values_that_do_not_fit_raise() -> None:
    i8 = array([1, 2], "int8")
    with pytest.raises(OverflowError, match="1000"):
        lax.mul(i8, 1000)
    with pytest.raises(OverflowError, match="1000000.0"):
        lax.add(array([1.0], "float16"), 1e6)
    with pytest.raises(OverflowError, match="1e\\+39"):
        lax.add(array([1.0], "float32"), 1e39)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(array([1.0], "float32"), 1j)
    with pytest.raises(TypeError, match="does not accept dtype bool"):
        lax.add(array([1.0], "float32"), True)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.max(array([1.0], "float32"), True)


def test_scalars_take_the_array_dtype_and_are_weak() -> None:
    f32 = array([1.0, 2.0], "float32")
    out = lax.mul(f32, 2)
    assert out.dtype == np.float32 and not out.weak_type
    out = lax.add(array(1.0, "float32", weak=True), 2.0)
    assert out.dtype == np.float32 and out.weak_type
    out = lax.max(array([1, 2], "int8"), 0)
    assert out.dtype == np.int8
    assert lax.add(array([1.0], "float32"), math.inf).tolist() == [math.inf]
    assert math.isnan(lax.add(array([1.0], "float32"), math.nan).tolist()[0])


def test_without_the_c_accelerator() -> None:
    code = (
        "from typelattice import lax\n"
        "import typelattice.numpy as tnp\n"
        "x = tnp.asarray([1.5, 2.0], dtype='float16')\n"
        "print(repr(lax.mul(x, 2)), repr(lax.max(0.0, x)))\n"
        "try:\n    lax.add(x, 1e6)\n"
        "except OverflowError as e:\n    print(type(e).__name__)\n"
    )
    assert run_without_speedups(code) == [
        "Array([3., 4.], dtype=float16) Array([1.5, 2. ], dtype=float16)",
        "OverflowError",
    ]
