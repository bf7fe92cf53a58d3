"""The C elementwise path (typelattice._speedups.FastElementwise) answers as
the Python code.

When the extension is built, every unary and binary elementwise function of
typelattice.numpy made from an Op, and ArrayImpl's elementwise operators, are
FastElementwise objects: they run cached plans for arrays and Python scalars
in C and call the Python function for anything else. These tests make the same
calls through both and require the same outcome: the result's type, dtype,
weak flag, shape and bytes, or the exception's type and message, and the
warnings; and NumPy's error state left as it was.
"""

from __future__ import annotations

import inspect
import math
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import run_without_speedups
from typelattice import _promotion
from typelattice._array import ArrayImpl
from typelattice._basearray import Array
from typelattice._tracing.tracer import Tracer
from typelattice.numpy import _ufuncs
from typelattice.numpy._array_methods import ARRAY_METHODS

BUILT = _promotion._speedups is not None
needs_c = pytest.mark.skipif(not BUILT, reason=_promotion.SPEEDUPS)


def fast_functions(nin: int = 2) -> dict[str, Any]:
    """The namespace's functions of ``nin`` operands with a C path, by name."""
    if _promotion._speedups is None:
        return {}
    fast_type = _promotion._speedups.FastElementwise
    return {
        name: fn
        for name, fn in vars(_ufuncs).items()
        if type(fn) is fast_type and not name.startswith("_") and fn.op.nin == nin
    }


def array(value: Any, dtype: Any, weak: bool = False) -> ArrayImpl:
    return ArrayImpl(np.asarray(value, dtype=dtype), weak_type=weak)


F32_MAX = float(np.finfo(np.float32).max)

OPERANDS: list[Any] = [
    array([1, 0, 3], bool),
    array([-2, 0, 5], "int8"),
    array([0, 7, 255], "uint8"),
    array([-3, 2, 9], "int32"),
    array(4, "int32", weak=True),
    array([1, 2, 3], "uint32"),
    # Values int32 (32-bit mode's join with int32) and float16 cannot hold:
    # checked before the conversion, in C as in Python.
    array([7, 2**31, 4_000_000_000], "uint32"),
    array([1, 65535, 0], "uint16"),
    array([0.5, -1.5, 3.0], "float16"),
    array([0.5, -1.5, 3.0], ml_dtypes.bfloat16),
    array([0.25, -0.0, F32_MAX], "float32"),
    array(2.5, "float32", weak=True),
    array([1.5, np.nan, np.inf], "float64"),
    array([1 + 2j, -1j, 3], "complex64"),
    array([[1], [2]], "int16"),  # broadcasts against the (3,) operands
    array([1, 2], "int8"),  # does not
    0,
    2,
    -1,
    300,
    2**40,
    2**64,
    -(2**1030),
    2.5,
    -0.0,
    65504.0,  # float16's largest
    65519.0,  # rounds down to it
    65520.0,  # becomes inf in float16
    F32_MAX,
    3.5e38,  # becomes inf in float32
    1e300,
    math.inf,
    math.nan,
    1 + 2j,
    complex(1e300, 0),
    True,
    False,
]
# Operands the C path leaves to Python: it must hand them over unchanged.
OTHERS: list[Any] = [
    np.asarray([1, 2, 3], "int16"),
    np.float32(1.5),
    [1, 2, 3],
    "text",
    None,
]


def describe(value: object) -> object:
    """What must be equal between the two paths."""
    if isinstance(value, ArrayImpl):
        v = value._value
        return ("Array", type(v), v.dtype, value.weak_type, v.shape, v.tobytes())
    if isinstance(value, tuple):
        return tuple(describe(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return (type(value), repr(value))


def outcome(fn: Callable[..., Any], *args: Any) -> object:
    errstate = np.geterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: object = ("returns", describe(fn(*args)))
        except Exception as err:
            result = ("raises", type(err), str(err))
    assert np.geterr() == errstate, (fn, args)
    return result, [(w.category, str(w.message)) for w in caught]


@contextmanager
def mode(name: str) -> Iterator[None]:
    """A configuration, set as a scope or globally."""
    if name == "default":
        yield
    elif name == "x64 scoped":
        with tl.enable_x64(True):
            yield
    elif name == "strict global":
        tl.config.update("dtype_promotion", "strict")
        try:
            yield
        finally:
            tl.config.reset()
    elif name == "rank warn scoped":
        with tl.rank_promotion("warn"):
            yield
    elif name == "rank raise global":
        tl.config.update("rank_promotion", "raise")
        try:
            yield
        finally:
            tl.config.reset()
    else:  # pragma: no cover
        raise AssertionError(name)


MODES = [
    "default",
    "x64 scoped",
    "strict global",
    "rank warn scoped",
    "rank raise global",
]


@needs_c
@pytest.mark.parametrize("mode_name", MODES)
def test_functions_answer_as_python(mode_name: str) -> None:
    """Each function on each pair of operands, twice (a miss, then a cached
    plan): the C outcome is the Python one."""
    functions = fast_functions()
    assert len(functions) >= 30
    with mode(mode_name):
        for name, fn in functions.items():
            for x in OPERANDS:
                for y in OPERANDS:
                    for _ in range(2):
                        got = outcome(fn, x, y)
                        assert got == outcome(fn.fallback, x, y), (name, x, y)


@needs_c
@pytest.mark.parametrize("mode_name", ["default", "x64 scoped", "strict global"])
def test_unary_functions_answer_as_python(mode_name: str) -> None:
    functions = fast_functions(nin=1)
    assert len(functions) >= 40
    with mode(mode_name):
        for name, fn in functions.items():
            for x in OPERANDS + OTHERS:
                for _ in range(2):
                    got = outcome(fn, x)
                    assert got == outcome(fn.fallback, x), (name, x)


@needs_c
@pytest.mark.parametrize("mode_name", ["default", "x64 scoped", "rank raise global"])
def test_operators_answer_as_python(mode_name: str) -> None:
    """``x + y``, ``y + x`` (reflected) and the comparisons, against the
    Python operators of the table (the tracers')."""
    arrays = [x for x in OPERANDS if isinstance(x, ArrayImpl)]
    fast_type = _promotion._speedups.FastElementwise  # type: ignore[union-attr]
    c_operators = [d for d in ARRAY_METHODS if type(getattr(ArrayImpl, d)) is fast_type]
    # Every elementwise operator of one function with a C path has one.
    assert len(c_operators) == 32
    with mode(mode_name):
        for dunder in c_operators:
            python_op = getattr(Tracer, dunder)
            assert getattr(ArrayImpl, dunder).fallback is python_op
            for x in arrays:
                if getattr(ArrayImpl, dunder).op.nin == 1:
                    got = outcome(getattr(x, dunder))
                    assert got == outcome(python_op, x), (dunder, x)
                    continue
                for y in OPERANDS + OTHERS:
                    got = outcome(getattr(x, dunder), y)
                    assert got == outcome(python_op, x, y), (dunder, x, y)


@needs_c
def test_python_syntax_reaches_the_c_operators() -> None:
    x = array([1, 2, 3], "int8")
    assert describe(x + 2) == describe(_ufuncs.add.fallback(x, 2))
    assert describe(2 - x) == describe(_ufuncs.subtract.fallback(2, x))
    assert describe(x == 2) == describe(_ufuncs.equal.fallback(x, 2))
    assert describe(1.5 * x) == describe(_ufuncs.multiply.fallback(1.5, x))
    assert describe(-x) == describe(_ufuncs.negative.fallback(x))
    assert describe(abs(x)) == describe(_ufuncs.abs.fallback(x))
    assert describe(~x) == describe(_ufuncs.invert.fallback(x))
    # NumPy arrays on the left still defer to us (through __array_ufunc__).
    got = np.asarray([1, 2, 3], "int8") + x
    assert isinstance(got, Array) and got.dtype == np.int8
    assert (x == None) is False  # noqa: E711
    assert (x != "a") is True
    with pytest.raises(OverflowError, match="300 does not fit in int8"):
        x + 300


@needs_c
def test_tracers_go_to_python() -> None:
    @tl.jit
    def f(x: Any, k: Any) -> Any:
        return tnp.add(x, k) * k + (k - x)

    x = tnp.asarray([1, 2, 3], dtype="int8")
    assert describe(f(x, 2)) == describe((x + 2) * 2 + (2 - x))
    assert f(x, 2).dtype == np.int8


@needs_c
def test_floating_point_errors_are_silent_and_restored() -> None:
    before = np.geterr()
    x = array([1.0, 0.0, -1.0], "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = x / 0
        np.testing.assert_array_equal(np.asarray(got), [np.inf, np.nan, -np.inf])
        got = tnp.sqrt(array([-1.0, 4.0], "float32"))
        np.testing.assert_array_equal(np.asarray(got), [np.nan, 2.0])
        got = tnp.sqrt(array([-1, 4], "int32"))  # converted, then computed
        np.testing.assert_array_equal(np.asarray(got), [np.nan, 2.0])
        # An error raised inside the ufunc call restores NumPy's state too.
        with pytest.raises(ValueError, match="do not broadcast"):
            x / array([1.0, 2.0], "float32")
    assert np.geterr() == before


@needs_c
def test_functions_stand_for_the_python_functions() -> None:
    for name, fn in {**fast_functions(1), **fast_functions(2)}.items():
        py = fn.fallback
        assert inspect.isfunction(py)
        assert fn.__wrapped__ is py
        assert fn.__name__ == py.__name__ == name or fn.__name__ == fn.op.name
        assert fn.__module__ == "typelattice.numpy"
        assert fn.__doc__ == py.__doc__
        assert fn._op is fn.op is py._op
        assert inspect.signature(fn) == inspect.signature(py)
        assert fn.swap is False
    for fn in (tnp.add, tnp.less, tnp.bitwise_xor, tnp.sqrt):
        assert pickle.loads(pickle.dumps(fn)) is fn
    assert tnp.add is _ufuncs.add


@needs_c
def test_operators_bind_like_methods() -> None:
    x = array([1, 2, 3], "int8")
    bound = x.__radd__
    assert describe(bound(1)) == describe(1 + x)
    assert ArrayImpl.__radd__.swap is True  # type: ignore[attr-defined]
    assert ArrayImpl.__add__.__get__(None, ArrayImpl) is ArrayImpl.__add__  # type: ignore[attr-defined]
    assert ArrayImpl.__add__.__name__ == "__add__"


@needs_c
def test_constructor_arguments() -> None:
    fast_type = _promotion._speedups.FastElementwise  # type: ignore[union-attr]
    with pytest.raises(TypeError, match="must be callable"):
        fast_type(_ufuncs.add.op, 3)
    with pytest.raises(AttributeError):
        fast_type(object(), _ufuncs.add.fallback)
    with pytest.raises(ValueError, match="swap is for binary"):
        fast_type(_ufuncs.sqrt.op, _ufuncs.sqrt.fallback, True)


def test_pure_python_mode_gives_plain_functions() -> None:
    code = (
        "import inspect, typelattice.numpy as tnp; "
        "from typelattice._array import ArrayImpl; "
        "x = tnp.asarray([1, 2, 3], dtype='int8'); "
        "print(inspect.isfunction(tnp.add), inspect.isfunction(ArrayImpl.__add__)); "
        "print(repr(x + 2), repr(2.5 * x)); "
        "print(x.__add__(object()) is NotImplemented, x.__sub__(None))"
    )
    assert run_without_speedups(code) == [
        "True True",
        "Array([3, 4, 5], dtype=int8) "
        "Array([2.5, 5. , 7.5], dtype=float32, weak_type=True)",
        "True NotImplemented",
    ]


# -- jit calls ------------------------------------------------------------------------


@needs_c
def test_jit_calls_answer_as_python() -> None:
    """Jitted.__call__ in C (traced calls with arrays as positional arguments)
    gives what the Python method gives, counts its hits, and leaves every
    other call to the Python method."""
    from typelattice._tracing.jit import Jitted

    c_call = vars(Jitted)["__call__"]
    assert type(c_call) is _promotion._speedups.JitCall  # type: ignore[union-attr]
    python_call = c_call.fallback

    @tl.jit
    def f(x: Any, y: Any) -> Any:
        return x * 2 + y

    @tl.jit
    def pair(x: Any, y: Any) -> Any:
        return {"sum": x + y, "first": x}

    x = array([1, 2, 3], "int8")
    y = array([0.5, 1.5, 2.5], "float32")
    for fn in (f, pair):
        expected = describe(python_call(fn, x, y))  # traces
        assert fn.cache_info().misses == 1
        for _ in range(3):
            assert describe(fn(x, y)) == expected
        assert describe(python_call(fn, x, y)) == expected
        assert fn.cache_info().hits == 4
    # A new configuration, shape or weak flag traces again.
    with tl.enable_x64(True):
        f(x, y)
    f(array([1, 2], "int8"), array([1.0, 2.0], "float32"))
    f(x, array(2.0, "float32", weak=True))
    assert f.cache_info().misses == 4
    tl.config.update("dtype_promotion", "strict")
    try:
        with pytest.raises(tl.TypePromotionError):
            f(x, y)
    finally:
        tl.config.reset()
    # Other arguments go to the Python method: same answers as eagerly.
    assert describe(f(x, 1.5)) == describe(x * 2 + 1.5)
    assert describe(f(np.asarray([1, 2, 3], "int8"), y)) == describe(f(x, y))
    assert describe(f(x, y=y)) == describe(f(x, y))


@needs_c
def test_jit_calls_inside_a_trace_run_inline() -> None:
    inner = tl.jit(lambda x: x + 1)
    outer = tl.jit(lambda x: inner(x) * 2)
    x = array([1, 2], "int8")
    inner(x)  # cached for concrete calls
    assert describe(outer(x)) == describe((x + 1) * 2)
    assert "add" in str(outer.program(x))
