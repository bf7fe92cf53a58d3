"""Temporaries lend their buffers only where it is proven that nothing else
can see them: in ``x * y + 1.5`` on CPython 3.14 and later the addition
computes into the buffer of ``x * y``, whose one reference Python finds on
its own evaluation stack (as NumPy does for its own temporaries). Before
3.14 a reference count of 1 is all there is to go by, and the one reference
may belong to a C object (a ``functools.partial``, a mapping proxy, an
``itertools`` iterator) that hands the Array on without counting it: there
every result gets a new buffer. Every Array that anyone can still see keeps
its value, eagerly and in compiled programs.

The tests of what a user sees run on either path. Those that check whether a
buffer was reused ask ``typelattice._speedups.reuses_temporaries()``.
"""

from __future__ import annotations

import functools
import itertools
import operator
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import _promotion, lax
from typelattice._array import ArrayImpl

REUSES = _promotion._speedups is not None and _promotion._speedups.reuses_temporaries()

N = 1 << 18  # float32: 1 MiB, above the 256 KiB from which buffers are reused
SMALL = 1000

RNG = np.random.default_rng(0)
X = RNG.standard_normal(N, dtype=np.float32)
Y = RNG.standard_normal(N, dtype=np.float32)


def address(a: Any) -> int:
    """Where an Array's data lives."""
    assert type(a) is ArrayImpl
    data: tuple[int, bool] = a._value.__array_interface__["data"]
    return data[0]


class Noted:
    """Passes an array through, noting where its data lives; keeps no
    reference to it (the caller's temporary stays a temporary)."""

    def __init__(self) -> None:
        self.addresses: list[int] = []

    def __call__(self, a: Any) -> Any:
        self.addresses.append(address(a))
        return a


def describe(a: Any) -> object:
    """What two results must share to be the same: type, dtype, weak flag,
    shape and bytes."""
    assert type(a) is ArrayImpl
    v = a._value
    return (v.dtype, a.weak_type, v.shape, v.tobytes())


def twice(expression: Callable[[], Any]) -> Any:
    """The second value of ``expression()``: the first call builds and caches
    the plans, which the C path then runs."""
    expression()
    return expression()


# -- what a user sees --------------------------------------------------------------


def test_operands_of_an_expression_keep_their_values() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    for _ in range(3):
        r = x * y + 1.5
        np.testing.assert_array_equal(np.asarray(x), X)
        np.testing.assert_array_equal(np.asarray(y), Y)
        np.testing.assert_array_equal(np.asarray(r), X * Y + np.float32(1.5))


def test_a_named_intermediate_keeps_its_value() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)

    def plus(a: Any) -> Any:
        return a + 1.5  # a is a name here: not a temporary

    for _ in range(3):
        t = x * y
        r = t + 1.5
        np.testing.assert_array_equal(np.asarray(t), X * Y)
        np.testing.assert_array_equal(np.asarray(r), X * Y + np.float32(1.5))
        s = -t
        np.testing.assert_array_equal(np.asarray(t), X * Y)
        np.testing.assert_array_equal(np.asarray(s), -(X * Y))
        np.testing.assert_array_equal(np.asarray(plus(t)), np.asarray(r))
        np.testing.assert_array_equal(np.asarray(t), X * Y)


@pytest.mark.parametrize(
    "take_view",
    [
        np.asarray,
        lambda a: memoryview(np.asarray(a)),
        np.from_dlpack,
        lambda a: a[: N // 2],  # an Array viewing the temporary's data
        lambda a: tnp.reshape(a, (2, -1)),
    ],
    ids=["asarray", "memoryview", "dlpack", "slice", "reshape"],
)
def test_views_of_a_temporary_are_never_overwritten(
    take_view: Callable[[Any], Any],
) -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    views: list[Any] = []

    def keep_a_view(a: Any) -> Any:
        views.append(take_view(a))
        return a

    for _ in range(3):
        r = keep_a_view(x * y) + 1.5
        np.testing.assert_array_equal(np.asarray(r), X * Y + np.float32(1.5))
    for view in views:
        seen = np.asarray(view).ravel()
        np.testing.assert_array_equal(seen, (X * Y)[: seen.size])


def test_elements_of_an_object_array_are_never_overwritten() -> None:
    """NumPy's object loops pass their elements to our operators with no
    reference of their own: the array's is the only one."""
    x, y = tnp.asarray(X), tnp.asarray(Y)
    for _ in range(3):
        objects = np.empty(2, dtype=object)
        objects[0] = x * y
        objects[1] = x - y
        sums = objects + 1.5
        negated = -objects
        np.testing.assert_array_equal(np.asarray(objects[0]), X * Y)
        np.testing.assert_array_equal(np.asarray(objects[1]), X - Y)
        np.testing.assert_array_equal(np.asarray(sums[0]), X * Y + np.float32(1.5))
        np.testing.assert_array_equal(np.asarray(negated[1]), -(X - Y))
        assert address(sums[0]) != address(objects[0])


def held_only_by_a_container(a: Any) -> None:
    """Python's own C code that hands on a reference it does not hold: the
    container's is the only one (``a`` is float32, above the threshold)."""
    args = (a * 1, 1.5)
    tnp.add(*args)
    operator.add(*args)
    tnp.negative(*args[:1])
    functools.partial(tnp.add, args[0])(1.5)
    functools.partial(operator.mul, args[0])(2.0)
    functools.partial(tnp.exp, args[0])()
    operator.methodcaller("add", args[0], 1.5)(tnp)

    class Shifted:  # operators some other class made of functions
        __add__ = staticmethod(functools.partial(tnp.add, args[0]))
        __neg__ = staticmethod(functools.partial(tnp.negative, args[0]))

    Shifted() + 1.5  # pyright: ignore[reportUnusedExpression]
    -Shifted()  # pyright: ignore[reportUnusedExpression]
    np.testing.assert_array_equal(np.asarray(args[0]), np.asarray(a))


def test_arrays_held_by_a_container_are_never_overwritten() -> None:
    x = tnp.asarray(X)
    for _ in range(3):
        held_only_by_a_container(x)


def test_compared_elements_of_a_tuple_or_list_are_never_overwritten() -> None:
    """Tuple comparison and list.sort compare elements the container alone
    holds; bool operands give bool results, which a buffer could take."""
    ones = np.ones(4 * N, bool)
    for _ in range(3):
        pair = (tnp.asarray(ones) == True, tnp.asarray(ones) == False)  # noqa: E712
        with pytest.raises(ValueError, match="truth value"):
            pair == (pair[1] * 1, pair[0] * 1)  # noqa: B015
        np.testing.assert_array_equal(np.asarray(pair[0]), ones)
        listed = [tnp.asarray(ones) == True, tnp.asarray(ones) == False]  # noqa: E712
        with pytest.raises(ValueError, match="truth value"):
            listed.sort()
        np.testing.assert_array_equal(np.asarray(listed[0]), ones)
        np.testing.assert_array_equal(np.asarray(listed[1]), ~ones)


def test_reductions_in_python_give_the_right_values() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    total = functools.reduce(operator.add, [x * y, x, y])
    np.testing.assert_array_equal(np.asarray(total), X * Y + X + Y)
    np.testing.assert_array_equal(np.asarray(sum([x * y, x], y)), Y + X * Y + X)
    np.testing.assert_array_equal(np.asarray(x), X)


# -- the same results as without reuse ------------------------------------------------

DTYPES = ["bool", "uint8", "int16", "int32", "float16", ml_dtypes.bfloat16]
DTYPES += ["float32", "complex64"]
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "power"]
BINARY += ["arctan2", "float_power", "floor_divide", "bitwise_and", "less"]
BINARY += ["logical_and", "left_shift"]
UNARY = ["negative", "exp", "sqrt", "abs", "floor", "logical_not"]


def values(dtype: Any, n: int) -> np.ndarray[Any, Any]:
    """Small positive and negative values of ``dtype``."""
    out = np.arange(n) % 7 - 3
    if np.dtype(dtype).kind in "bu":
        out = np.abs(out)
    return out.astype(dtype)


def outcome(expression: Callable[..., Any], *args: Any) -> object:
    try:
        return ("returns", describe(expression(*args)))
    except Exception as err:
        return ("raises", type(err), str(err))


def copy_then(fn: Callable[..., Any], a: Any, other: Any) -> Any:
    """``fn`` with a temporary copy of ``a`` as first operand."""
    return fn(tnp.maximum(a, a), other)


def copy_second(fn: Callable[..., Any], other: Any, a: Any) -> Any:
    """``fn`` with a temporary copy of ``a`` as second operand."""
    return fn(other, tnp.maximum(a, a))


def copy_only(fn: Callable[..., Any], a: Any) -> Any:
    return fn(tnp.maximum(a, a))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_results_equal_those_of_named_operands(name: str, dtype: Any) -> None:
    fn = getattr(tnp, name)
    a = tnp.asarray(values(dtype, N))
    others: list[Any] = [tnp.asarray(values(dtype, N)[::-1]), 2, 1.5, True]
    others += [tnp.asarray(values(dtype, 1)[0]), tnp.asarray(values(dtype, 4)[:1])]
    for other in others:
        t = tnp.maximum(a, a)
        named_left = outcome(fn, t, other)
        named_right = outcome(fn, other, t)
        for _ in range(2):
            left = outcome(copy_then, fn, a, other)
            right = outcome(copy_second, fn, other, a)
            assert left == named_left, (name, dtype, other)
            assert right == named_right, (name, dtype, other)
    np.testing.assert_array_equal(np.asarray(a), values(dtype, N))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_results_equal_those_of_named_operands(name: str, dtype: Any) -> None:
    fn = getattr(tnp, name)
    a = tnp.asarray(values(dtype, N))
    named = outcome(fn, tnp.maximum(a, a))
    for _ in range(2):
        assert outcome(copy_only, fn, a) == named, (name, dtype)


# -- Arrays that C objects alone hold ----------------------------------------------
#
# Each holder below keeps an Array (its only reference) and hands it, from
# C code, to an operation that an operator of another class started: the
# evaluation stack holds the holder, never the Array. The operation must
# leave the Array as it was.


def running(fn: Callable[..., Any]) -> Any:
    """An object whose ``+`` and unary ``-`` call ``fn`` (with the other
    operand for ``+``), with no Python code between the operator and
    ``fn``."""
    methods = {"__add__": staticmethod(fn), "__neg__": staticmethod(fn)}
    return type("Runs", (), methods)()


def by_partial(
    op: Callable[[Any, Any], Any], t: Any, b: Any
) -> tuple[Callable[[], object], Callable[[], Any]]:
    """``op(t, b)`` from a ``functools.partial`` holding ``t``; the run and
    the way to read ``t`` back."""
    held = functools.partial(op, t)
    return (lambda: running(held) + b), lambda: held.args[0]


def by_methodcaller(
    op: Callable[[Any, Any], Any], t: Any, b: Any
) -> tuple[Callable[[], object], Callable[[], Any]]:
    """``op(t, b)`` from an ``operator.methodcaller`` holding ``t``."""
    held = operator.methodcaller("__call__", t, b)
    return (lambda: running(held) + op), lambda: held.__reduce__()[1][1]


def by_starmap(
    op: Callable[[Any, Any], Any], t: Any, b: Any
) -> tuple[Callable[[], object], Callable[[], Any]]:
    """``op(t, b)`` from an ``itertools.starmap`` over a tuple holding ``t``."""
    pairs = [(t, b)]
    steps = itertools.starmap(op, pairs)
    step = functools.partial(next, steps)
    return (lambda: running(step) + None), lambda: pairs[0][0]


def by_object_array(
    op: Callable[[Any, Any], Any], t: Any, b: Any
) -> tuple[Callable[[], object], Callable[[], Any]]:
    """``op(t, b)`` from NumPy's object loop over an array holding ``t``."""
    objects = np.empty(2, dtype=object)
    objects[0] = t
    objects[1] = b  # (an element too: NumPy would loop over an Array's)
    loop = functools.partial(np.frompyfunc(op, 2, 1), objects[:1])
    return (lambda: running(loop) + objects[1:]), lambda: objects[0]


HOLDERS = [by_partial, by_methodcaller, by_starmap, by_object_array]


@pytest.mark.parametrize("hold", HOLDERS, ids=lambda h: h.__name__)
def test_arrays_held_by_c_objects_are_never_overwritten(
    hold: Callable[..., tuple[Callable[[], object], Callable[[], Any]]],
) -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    for op, b in [(operator.add, 1.5), (operator.mul, y), (tnp.subtract, 2.0)]:
        for _ in range(3):  # (the first call builds the plans)
            run, held = hold(op, x * y, b)
            run()
            np.testing.assert_array_equal(np.asarray(held()), X * Y)


def test_arrays_held_by_a_partial_keep_their_values_under_unary_operators() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    for op in (operator.neg, operator.pos, operator.abs, tnp.exp):
        for _ in range(3):
            held = functools.partial(op, x * y)
            -running(held)  # pyright: ignore[reportUnusedExpression]
            np.testing.assert_array_equal(np.asarray(held.args[0]), X * Y)


def test_an_array_under_a_mapping_proxy_keeps_its_value() -> None:
    """A mapping proxy over an Array hands its ``|`` to the Array itself."""
    ints = values("int32", N)
    i = tnp.asarray(ints)
    for _ in range(3):
        proxy = types.MappingProxyType(i + i)
        np.testing.assert_array_equal(np.asarray(proxy | 1), (ints + ints) | 1)
        np.testing.assert_array_equal(np.asarray(2 | proxy), 2 | (ints + ints))
        np.testing.assert_array_equal(np.asarray(proxy[...]), ints + ints)


# -- the same in compiled programs ---------------------------------------------------


@tl.jit
def scaled_sum(a: Any, b: Any) -> Any:
    """A program whose intermediate ``a * 2`` dies in the addition."""
    return lax.add(lax.mul(a, 2.0), b)


@tl.jit
def passes_through(a: Any, b: Any) -> Any:
    """A program whose operations each read an input for the last time."""
    return lax.neg(a), lax.add(a, lax.convert_element_type(b, np.float32))


@pytest.mark.parametrize("hold", HOLDERS, ids=lambda h: h.__name__)
def test_compiled_programs_never_overwrite_their_inputs(
    hold: Callable[..., tuple[Callable[[], object], Callable[[], Any]]],
) -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    for fn in (scaled_sum, passes_through):
        for _ in range(3):
            run, held = hold(fn, x * y, y)
            run()
            np.testing.assert_array_equal(np.asarray(held()), X * Y)
    np.testing.assert_array_equal(np.asarray(y), Y)


def test_compiled_programs_never_overwrite_their_constants() -> None:
    x = tnp.asarray(X)
    held = types.MappingProxyType({"c": x * 1.0})

    @tl.jit
    def f(a: Any) -> Any:
        c = held["c"]  # a constant of the program, only the dict holds it
        return lax.add(lax.neg(c), a), lax.mul(lax.convert_element_type(c, c.dtype), a)

    for _ in range(3):
        first, second = f(x)
        np.testing.assert_array_equal(np.asarray(first), -X + X)
        np.testing.assert_array_equal(np.asarray(second), X * X)
        np.testing.assert_array_equal(np.asarray(held["c"]), X)


# -- where buffers are reused --------------------------------------------------------


def test_temporaries_are_told_from_other_arrays_only_from_python_3_14() -> None:
    """Before 3.14 nothing proves that an Array referenced once is a
    temporary: the extension says so, and reuses nothing."""
    if _promotion._speedups is None:
        pytest.skip("the C extension is not in use")
    assert _promotion._speedups.reuses_temporaries() == (sys.version_info >= (3, 14))


def test_temporaries_lend_their_buffer_to_the_result_where_told() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    i = tnp.asarray(values("int32", N))
    b = tnp.asarray(values(ml_dtypes.bfloat16, N))
    half = tnp.asarray(np.float32(0.5))
    noted = Noted()
    # Each result is made while the temporary lives: another buffer when
    # nothing is reused.
    cases: dict[str, Callable[[], Any]] = {
        "temporary + scalar": lambda: noted(x * y) + 1.5,
        "function call": lambda: tnp.add(noted(x * y), 1.5),
        "scalar - temporary (reflected)": lambda: 1.5 - noted(x * y),
        "array * temporary": lambda: y * noted(x * y),
        "temporary + array": lambda: noted(x * y) + y,
        "temporary * 0-d array": lambda: noted(x * y) * half,
        "unary operator": lambda: -noted(x * y),
        "unary function": lambda: tnp.exp(noted(x * y)),
        "int32 temporary + int": lambda: noted(i + i) + 3,
        "bfloat16 temporary * float": lambda: noted(b * b) * 2.0,
    }
    if REUSES:  # (without reuse, a later result may land where x * y was)
        cases["chain"] = lambda: ((noted(x * y) + 1.5) * 2.0 - x) / 3.0
    for label, expression in cases.items():
        result = twice(expression)
        assert (address(result) == noted.addresses[-1]) == REUSES, label


def test_x_times_y_plus_scalar_computes_in_place_where_told() -> None:
    x, y = tnp.asarray(X), tnp.asarray(Y)
    noted = Noted()
    r = twice(lambda: noted(x * y) + 1.5)
    assert (address(r) == noted.addresses[-1]) == REUSES
    np.testing.assert_array_equal(np.asarray(r), X * Y + np.float32(1.5))


def test_buffers_that_are_not_reused() -> None:
    """Results that get a new buffer, and are right: the operand is named,
    small, of another dtype than the result, smaller than the result, viewed
    or weakly referenced, or its function is computed by a composition."""
    x, y = tnp.asarray(X), tnp.asarray(Y)
    small = tnp.asarray(X[:SMALL])
    i = tnp.asarray(values("int32", N))
    matrix = tnp.asarray(np.ones((4, N), np.float32))
    noted = Noted()
    views: list[Any] = []

    def viewed(a: Any) -> Any:
        views.append(np.asarray(a))
        return a

    def weakly_referenced(a: Any) -> Any:
        views.append(weakref.ref(a._value))  # a's own ndarray
        return a

    t = x * y
    cases: dict[str, tuple[Callable[[], Any], Any]] = {
        "named": (lambda: noted(t) + 1.5, X * Y + np.float32(1.5)),
        "small": (lambda: noted(small * small) + 1.5, X[:SMALL] ** 2 + 1.5),
        "comparison": (lambda: noted(x * y) < 0.5, X * Y < 0.5),
        "int32 to float32": (lambda: noted(i * i) / 2, values("int32", N) ** 2 / 2),
        "broadcast": (lambda: noted(x * y) + matrix, X * Y + np.ones((4, N))),
        "viewed": (lambda: viewed(noted(x * y)) + 1.5, X * Y + np.float32(1.5)),
        "weakly referenced": (
            lambda: weakly_referenced(noted(x * y)) + 1.5,
            X * Y + np.float32(1.5),
        ),
        # A function computed by a composition of primitives (not one plain
        # NumPy function): its result is a new array, never the operand's.
        "composition": (
            lambda: tnp.float_power(noted(x * y), 2.0),
            np.float_power(X * Y, 2.0).astype(np.float32),
        ),
    }
    for label, (expression, expected) in cases.items():
        result = twice(expression)
        assert address(result) != noted.addresses[-1], label
        np.testing.assert_allclose(
            np.asarray(result),
            np.asarray(expected, np.asarray(result).dtype),
            rtol=1e-6,
            err_msg=label,
        )
    np.testing.assert_array_equal(np.asarray(t), X * Y)
