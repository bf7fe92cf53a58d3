"""The plans of operations on another library's arrays: what a call on
native Arrays decides once per signature, backend and device (the dtype,
the conversions, the kernel), and the Python scalars it meets.

Each case is computed on native Arrays (the boxed backend of
``tests/boxed_backend.py``, and torch when installed) from its plan (a
signature seen before), and by the general path on the same operands:
they must agree on every bit (NaNs aside), or raise the same error. Both
must give the dtype and weak flag of NumPy-held Arrays, whose answers are
JAX's (the recorded goldens check them), and the result must stay on the
operands' backend and device.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import boxed_backend
import support
import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice.numpy import _elementwise

boxed_backend.register()


#: Every native result checked against its abstract evaluation.
pytestmark = pytest.mark.usefixtures("checked_native")


DTYPES = ("bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32")
SCALARS: tuple[Any, ...] = (2, -3, 300, 2.5, 0.0, -0.0, math.nan, -math.inf, 1e300, 1j)
BINARY: tuple[Callable[..., Any], ...] = (
    tnp.add,
    tnp.multiply,
    tnp.subtract,
    tnp.maximum,
    tnp.less,
    tnp.true_divide,
)
UNARY: tuple[Callable[..., Any], ...] = (tnp.negative, tnp.exp, tnp.sin, tnp.abs)


def _values(dt: str) -> np.ndarray[Any, Any]:
    data = np.array([[0, 1, -2], [3, 100, -0.0]], "float64")
    if dt == "bool":
        return data != 0
    if dt == "uint8":
        data = np.abs(data)
    return data.astype(tl.numpy.dtype(dt))


def _outcome(fn: Callable[..., Any], *args: Any, signed_zeros: bool = True) -> Any:
    """``fn(*args)``: the result's dtype, weak flag, values (as NumPy, nan
    and signed zeros told apart) and backend; or the error's type and
    message. (Which of two equal zeros ``maximum`` gives is no library's
    promise: its zeros are compared without their signs, ``signed_zeros``
    False.)"""
    try:
        out = fn(*args)
    except Exception as err:  # noqa: BLE001 (compared as outcomes)
        return type(err).__name__, str(err)
    value = np.asarray(out)
    if value.dtype.kind in "biu":
        bits = value
    else:  # (a NaN's sign and payload are no library's promise)
        parts = value.astype("complex128").view("float64")
        bits = np.where(np.isnan(parts), np.nan, parts)
        if not signed_zeros:
            bits = bits + 0.0
    return out.dtype, out.weak_type, bits.tobytes(), out.backend


def _native(x: Any, backend: str, device: str) -> Any:
    if not isinstance(x, tnp.Array):
        return x
    return tnp.asarray(x, backend=backend, device=device)


def _agree(
    fn: Callable[..., Any], args: tuple[Any, ...], backend: str, device: str
) -> None:
    """``fn`` on native operands, from its plan, against the general path
    on the same operands (every bit, or the same error) and against the
    NumPy backend (the dtype and weak flag, or the same error)."""
    signed = fn is not tnp.maximum
    numpy_side = _outcome(fn, *args, signed_zeros=signed)
    native = tuple(_native(a, backend, device) for a in args)
    op = fn._op  # type: ignore[attr-defined]  # pyright: ignore[reportFunctionMemberAccess]
    general = _outcome(
        lambda *a: _elementwise.compute(op, a), *native, signed_zeros=signed
    )
    # Twice: the first call makes the signature's plan, the second runs it.
    for _ in range(2):
        got = _outcome(fn, *native, signed_zeros=signed)
        assert got == general, (fn, [getattr(a, "dtype", a) for a in args])
        if len(numpy_side) == 2:  # an error: the same one
            assert got == numpy_side, (fn, args)
            continue
        assert got[:2] == numpy_side[:2]
        assert got[3] == backend
        assert fn(*native).device == device


def _backends() -> list[tuple[str, str]]:
    found = [("boxed", "box:1")]
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        found.append(("torch", "cpu"))
    return found


@pytest.mark.parametrize(("backend", "device"), _backends())
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_arrays_agree_with_the_numpy_backend(
    fn: Callable[..., Any], backend: str, device: str
) -> None:
    for a, b in itertools.product(DTYPES, repeat=2):
        x, y = tnp.asarray(_values(a)), tnp.asarray(_values(b)[::-1])
        _agree(fn, (x, y), backend, device)


@pytest.mark.parametrize(("backend", "device"), _backends())
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_python_scalars_agree_with_the_numpy_backend(
    fn: Callable[..., Any], backend: str, device: str
) -> None:
    for dt, s in itertools.product(DTYPES, SCALARS):
        x = tnp.asarray(_values(dt))
        _agree(fn, (x, s), backend, device)
        _agree(fn, (s, x), backend, device)


@pytest.mark.parametrize(("backend", "device"), _backends())
def test_weak_arrays_ranks_and_unary_functions(backend: str, device: str) -> None:
    weak = tl.device_put(2.5)  # a weak 0-d float32
    assert weak.weak_type
    for dt in DTYPES:
        x = tnp.asarray(_values(dt))
        for fn in UNARY:
            _agree(fn, (x,), backend, device)
        _agree(tnp.add, (x, weak), backend, device)
        _agree(tnp.multiply, (x[0], x), backend, device)  # (3,) with (2, 3)
        _agree(tnp.add, (x[:1], x), backend, device)  # (1, 3) with (2, 3)
        _agree(tnp.add, (x, tnp.asarray(_values(dt)[0, 0])), backend, device)


def test_signed_zero_and_nan_scalars_are_not_confused() -> None:
    x = tnp.asarray(np.ones(3, "float32"), backend="boxed", device="box:0")
    for s in (0.0, -0.0, 0.0, -0.0):
        got = np.asarray(x * s)
        assert (np.signbit(got) == (math.copysign(1.0, s) < 0)).all(), s
    for s in (math.nan, 1.0, math.nan):
        got = np.asarray(x + s)
        assert np.isnan(got).all() == (s != s)


def test_a_scalar_out_of_range_raises_on_every_call() -> None:
    x = tnp.asarray(np.ones(3, "int8"), backend="boxed", device="box:0")
    for _ in range(3):
        with pytest.raises(OverflowError, match="300"):
            tnp.add(x, 300)
        assert np.asarray(tnp.add(x, 3)).tolist() == [4, 4, 4]


def test_modes_and_x64_take_their_own_plans() -> None:
    x = tnp.asarray(np.ones(3, "int32"), backend="boxed", device="box:0")
    assert (x + 1.5).dtype == np.dtype("float32")
    with tl.enable_x64():
        assert (x + 1.5).dtype == np.dtype("float64")
        assert (x + 1.5).backend == "boxed"
    y = tnp.asarray(np.ones(3, "int8"), backend="boxed", device="box:0")
    with tl.dtype_promotion("strict"):
        with pytest.raises(tl.TypePromotionError):
            tnp.add(x, y)
    assert tnp.add(x, y).dtype == np.dtype("int32")


def test_operands_of_two_devices_are_refused_after_a_plan_exists() -> None:
    a = tnp.asarray(np.ones(3, "float32"), backend="boxed", device="box:0")
    b = tnp.asarray(np.ones(3, "float32"), backend="boxed", device="box:1")
    assert (a + a).device == "box:0"
    with pytest.raises(TypeError, match="box:1"):
        a + b
    with pytest.raises(TypeError, match="box:1"):
        lax.add(a, b)


def test_a_replaced_implementation_is_used_by_existing_plans() -> None:
    backend = tl._backends.named("boxed")  # pyright: ignore[reportPrivateUsage]
    from typelattice._lax._elementwise import add_p

    x = tnp.asarray(np.ones(3, "float32"), backend="boxed", device="box:0")
    assert np.asarray(x + x).tolist() == [2, 2, 2]
    old = backend.impl(add_p)
    calls: list[int] = []

    def counting(*args: Any, **params: Any) -> Any:
        calls.append(1)
        return old(*args, **params)

    backend.def_impl(add_p, counting)
    try:
        assert np.asarray(x + x).tolist() == [2, 2, 2]
        assert np.asarray(lax.add(x, x)).tolist() == [2, 2, 2]
        assert len(calls) == 2
    finally:
        backend.def_impl(add_p, old)


def test_torch_int32_plus_float32_converts_inside_the_kernel() -> None:
    torch = pytest.importorskip("torch")
    from typelattice._backends import torch as tb

    i = tnp.asarray(torch.tensor([16777217, -3, 7], dtype=torch.int32))
    f = tnp.asarray(torch.tensor([0.0, 0.5, -0.0], dtype=torch.float32))
    with support.counting_conversions(tb) as calls:
        out = i + f
    assert calls == [0]  # (no separate conversion of the int32 operand)
    assert (out.dtype, out.weak_type, out.backend) == (
        np.dtype("float32"),
        False,
        "torch",
    )
    want = np.asarray(
        tnp.asarray(np.int32([16777217, -3, 7])) + np.float32([0.0, 0.5, -0.0])
    )
    assert np.asarray(out).tobytes() == want.tobytes()


def test_torch_in_kernel_conversions_follow_a_replaced_implementation() -> None:
    torch = pytest.importorskip("torch")
    from typelattice._backends import torch as tb
    from typelattice._lax._elementwise import add_p

    i = tnp.asarray(torch.tensor([1, 2, 3], dtype=torch.int32))
    f = tnp.asarray(torch.tensor([0.5, 0.5, 0.5], dtype=torch.float32))
    step = tl.jit(lambda a, b: a + b)
    assert (
        np.asarray(i + f).tolist() == np.asarray(step(i, f)).tolist() == [1.5, 2.5, 3.5]
    )
    old = tb.BACKEND.impl(add_p)

    def doubled(x: Any, y: Any) -> Any:
        return old(x, y) * 2

    tb.BACKEND.def_impl(add_p, doubled)
    try:  # (the plan and the program made before the replacement)
        assert np.asarray(i + f).tolist() == [3.0, 5.0, 7.0]
        assert np.asarray(step(i, f)).tolist() == [3.0, 5.0, 7.0]
    finally:
        tb.BACKEND.def_impl(add_p, old)
    assert np.asarray(i + f).tolist() == [1.5, 2.5, 3.5]
