"""The ufunc methods without a namespace function of their own
(``subtract.reduce``, ``logaddexp.accumulate``, ``maximum.at``,
``add.reduceat``...) and ``x.at[...].divide``/``.power`` bind primitives
whose parameter is the computation (``reduce``, ``cumulative_reduce``,
``scatter_combine``, ``reduce_segments``): programs hold primitive equations
only, eager calls, ``jit`` and ``eval_shape`` agree, indices may be traced,
and NumPy's sequential semantics hold (an index given twice is applied
twice)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from counting_backend import CountingBackend
from support import program_equations, same_array
from typelattice._backends import use

F = Callable[..., Any]

I8 = tnp.asarray(np.arange(-6, 6, dtype=np.int8).reshape(3, 4))
F32 = tnp.asarray(np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 4)
C64 = tnp.asarray((np.arange(6) - 2 + 1j * np.arange(6)).astype(np.complex64))
MASK = tnp.asarray(np.arange(12).reshape(3, 4) % 3 != 1)
DUP = tnp.asarray([0, 2, 0, 0])
STARTS = tnp.asarray([0, 2, 1, 3])

CASES: dict[str, tuple[F, tuple[Any, ...]]] = {
    "subtract.reduce": (lambda x: tnp.subtract.reduce(x), (I8,)),
    "subtract.reduce-none": (
        lambda x: tnp.subtract.reduce(x, axis=None, keepdims=True),
        (F32,),
    ),
    "subtract.reduce-initial-where": (
        lambda x, w: tnp.subtract.reduce(x, axis=1, initial=3, where=w),
        (I8, MASK),
    ),
    "subtract.reduce-dtype": (lambda x: tnp.subtract.reduce(x, dtype="int16"), (I8,)),
    "logaddexp.reduce": (lambda x: tnp.logaddexp.reduce(x, axis=(0, 1)), (F32,)),
    "logaddexp.reduce-complex": (
        lambda x: tnp.logaddexp.reduce(x, initial=0.5),
        (C64,),
    ),
    "logaddexp2.reduce-int": (lambda x: tnp.logaddexp2.reduce(x, axis=1), (I8,)),
    "logical_xor.reduce": (lambda x: tnp.logical_xor.reduce(x, axis=1), (I8,)),
    "bitwise_or.reduce-where": (
        lambda x, w: tnp.bitwise_or.reduce(x, where=w),
        (I8, MASK),
    ),
    "subtract.accumulate": (lambda x: tnp.subtract.accumulate(x, axis=1), (I8,)),
    "subtract.accumulate-none": (
        lambda x: tnp.subtract.accumulate(x, axis=None),
        (F32,),
    ),
    "logaddexp.accumulate-complex": (lambda x: tnp.logaddexp.accumulate(x), (C64,)),
    "bitwise_xor.accumulate-0d": (lambda x: tnp.bitwise_xor.accumulate(x), (I8[1, 1],)),
    "maximum.at": (
        lambda x, i: tnp.maximum.at(x, i, 2.5, inplace=False),
        (F32[0], DUP),
    ),
    "logaddexp.at-complex": (
        lambda x, i: tnp.logaddexp.at(x, i, x[:4], inplace=False),
        (C64, DUP),
    ),
    "logical_xor.at": (
        lambda x, i: tnp.logical_xor.at(x, i, True, inplace=False),
        (I8[0], DUP),
    ),
    "bitwise_and.at-tuple": (
        lambda x, i: tnp.bitwise_and.at(x, (i[:2], i[1:3]), 3, inplace=False),
        (I8, DUP),
    ),
    "x.at.divide": (lambda x, i: x.at[i].divide(2.0), (F32[0], DUP)),
    "x.at.power": (lambda x, i: x.at[i].power(2), (I8[1], DUP)),
    "x.at.power-slice": (lambda x: x.at[1:, ::2].power(3), (I8,)),
    "x.at.divide-drop": (
        lambda x, i: x.at[i + 2].divide(4.0, mode="drop"),
        (F32[1], DUP),
    ),
    "x.at.apply": (lambda x, i: x.at[i].apply(tnp.sin), (F32[0], DUP)),
    "x.at.apply-slice": (lambda x: x.at[::2].apply(lambda v: v * 3), (I8[2],)),
    "add.reduceat": (lambda x, i: tnp.add.reduceat(x, i, axis=1), (I8, STARTS)),
    "subtract.reduceat": (lambda x, i: tnp.subtract.reduceat(x, i), (F32[2], STARTS)),
    "logaddexp.reduceat-complex": (
        lambda x, i: tnp.logaddexp.reduceat(x, i),
        (C64, STARTS),
    ),
    "logical_or.reduceat-dtype": (
        lambda x, i: tnp.logical_or.reduceat(x, i, dtype="float32"),
        (I8[0], STARTS),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_programs_hold_primitive_equations_only(name: str) -> None:
    fn, args = CASES[name]
    equations = program_equations(tl.jit(fn).program(*args))
    assert equations, name
    for line in equations:
        assert " = lax." in line, f"{name}: {line}"
    shown = str(tl.make_jaxpr(fn)(*args))
    method = name.split("-")[0]
    if method == "x.at.apply":
        assert "scatter_apply[func=" in shown
    else:
        computation = method.split(".")[-1] if method.startswith("x.") else method
        assert f"computation={computation.split('.')[0]}" in shown


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_jit_and_eval_shape_agree(name: str) -> None:
    """Indices are traced arguments of the jitted function."""
    fn, args = CASES[name]
    want = fn(*args)
    same_array(tl.jit(fn)(*args), want)
    shape = tl.eval_shape(fn, *args)
    assert (shape.dtype, shape.weak_type, shape.shape) == (
        want.dtype,
        want.weak_type,
        want.shape,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_counting_backend_computes_the_same(name: str) -> None:
    fn, args = CASES[name]
    want = fn(*args)
    counting = CountingBackend()
    with use(counting):
        got = fn(*args)
    same_array(got, want)
    folds = (
        "reduce",
        "cumulative_reduce",
        "scatter_combine",
        "reduce_segments",
        "scatter_apply",
    )
    assert sum(counting.calls[p] for p in folds) == 1, counting.calls


def test_reduce_and_accumulate_fold_left_to_right() -> None:
    x = tnp.asarray(np.int8([[10, 1], [2, 3], [3, 7]]))
    same_array(tnp.subtract.reduce(x), tnp.asarray(np.int8([5, -9])))
    same_array(
        tnp.subtract.reduce(x, axis=0, initial=1), tnp.asarray(np.int8([-14, -10]))
    )
    same_array(
        tnp.subtract.accumulate(x),
        tnp.asarray(np.int8([[10, 1], [8, -2], [5, -9]])),
    )
    wide = tnp.subtract.reduce(x, axis=None, dtype="int16")
    assert (wide.dtype, int(wide)) == (np.dtype(np.int16), 10 - 1 - 2 - 3 - 3 - 7)


def test_an_index_given_twice_is_applied_twice() -> None:
    x = np.float32([8, 8, 8, 8])
    want = x.copy()
    np.divide.at(want, [0, 0, 3, 0], np.float32(2))
    for run in (lambda f, *a: f(*a), lambda f, *a: tl.jit(f)(*a)):
        got = run(
            lambda a, i: a.at[i].divide(2.0), tnp.asarray(x), tnp.asarray([0, 0, 3, 0])
        )
        np.testing.assert_array_equal(np.asarray(got), want)
        got = run(
            lambda a, i: tnp.bitwise_xor.at(a, i, 5, inplace=False),
            tnp.asarray(np.int8([1, 2, 3])),
            tnp.asarray([0, 0, 2]),
        )
        np.testing.assert_array_equal(np.asarray(got), [1, 2, 6])
        got = run(
            lambda a, i: a.at[i].power(2),
            tnp.asarray(np.int8([2, 3])),
            tnp.asarray([1, 0, 0]),
        )
        np.testing.assert_array_equal(np.asarray(got), [16, 9])


def test_apply_is_applied_once_per_occurrence() -> None:
    calls: list[int] = []

    def double(v: Any) -> Any:
        calls.append(v.shape[0])
        return v * 2

    x = tnp.asarray(np.int8([1, 1, 1, 1]))
    i = tnp.asarray([3, 0, 3, 3, 1])
    want = np.int8([2, 2, 1, 8])
    np.testing.assert_array_equal(np.asarray(x.at[i].apply(double)), want)
    assert calls == [3, 1, 1]  # (each round: the positions named that often)
    np.testing.assert_array_equal(
        np.asarray(tl.jit(lambda a, j: a.at[j].apply(double))(x, i)), want
    )
    with pytest.raises(TypeError, match="sin turned int8 values into float32"):
        tl.eval_shape(lambda a, j: a.at[j].apply(tnp.sin), x, i)
    with pytest.raises(TypeError, match="sin turned int8 values into float32"):
        x.at[i].apply(tnp.sin)


def test_traced_indices_out_of_range_raise_when_the_program_runs() -> None:
    x = tnp.asarray(np.float32([1, 2, 3]))
    bad = tnp.asarray([0, 7])
    calls: dict[str, F] = {
        "maximum.at": lambda a, i: tnp.maximum.at(a, i, 0.0, inplace=False),
        "x.at[...].divide": lambda a, i: a.at[i].divide(2.0),
        "add.reduceat": lambda a, i: tnp.add.reduceat(a, i),
        "x.at[...].apply": lambda a, i: a.at[i].apply(tnp.negative),
    }
    for where, fn in calls.items():
        for run in (fn, tl.jit(fn)):
            with pytest.raises(
                IndexError, match=f"{re.escape(where)}: index 7 is out of bounds"
            ):
                run(x, bad)
    # (mode='drop' skips the update instead)
    got = tl.jit(lambda a, i: a.at[i].divide(2.0, mode="drop"))(x, bad)
    np.testing.assert_array_equal(np.asarray(got), [0.5, 2, 3])


def test_errors_are_those_of_numpy_s_methods() -> None:
    with pytest.raises(ValueError, match="'subtract' is not reorderable"):
        tl.eval_shape(lambda a: tnp.subtract.reduce(a, axis=(0, 1)), I8)
    with pytest.raises(ValueError, match="has no identity.*pass initial"):
        tnp.subtract.reduce(tnp.zeros((0, 2), "int8"))
    with pytest.raises(ValueError, match="where= needs initial="):
        tl.jit(lambda a, w: tnp.subtract.reduce(a, where=w))(I8, MASK)
    with pytest.raises(OverflowError, match="1000 does not fit in int8"):
        tnp.subtract.reduce(I8, initial=1000)
    with pytest.raises(TypeError, match="choose dtype=float32"):
        tnp.logaddexp.accumulate(I8, dtype="int8")
    with pytest.raises(TypeError, match="dividing an int8 array in place"):
        tl.jit(lambda a, i: a.at[i].divide(2))(I8[0], DUP)
    with pytest.raises(TypeError, match="must be an array, not a list"):
        tnp.add.reduceat(F32, [0, 1])


def test_big_values_are_checked_where_the_conversion_runs() -> None:
    big = tnp.asarray(np.float32([1, 300]))
    for run in (lambda f: f(big), lambda f: tl.jit(f)(big)):
        with pytest.raises(OverflowError, match="300"):
            run(lambda a: tnp.subtract.reduce(a, dtype="int8"))
        with pytest.raises(OverflowError, match="300"):
            run(lambda a: tnp.subtract.reduceat(a, tnp.asarray([0]), dtype="int8"))


def test_weak_arrays_keep_their_weak_flag_where_the_method_does() -> None:
    weak = tnp.full(3, 2.0)
    assert weak.weak_type
    assert weak.at[tnp.asarray([0, 0])].divide(2.0).weak_type
    assert tnp.add.reduceat(weak, tnp.asarray([0, 1])).weak_type
    assert not tnp.subtract.reduce(weak).weak_type


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: tnp.subtract.reduce(a),
        lambda a: tnp.sum(tnp.logaddexp.accumulate(a)),
        lambda a: tnp.sum(a.at[tnp.asarray([0, 0])].divide(2.0)),
        lambda a: tnp.sum(tnp.maximum.at(a, tnp.asarray([1]), 0.0, inplace=False)),
        lambda a: tnp.sum(tnp.add.reduceat(a, tnp.asarray([0, 2]))),
        lambda a: tnp.sum(a.at[tnp.asarray([0, 0])].apply(tnp.sin)),
    ],
    ids=["reduce", "accumulate", "x.at.divide", "maximum.at", "reduceat", "apply"],
)
def test_not_differentiated(fn: F) -> None:
    x = tnp.asarray(np.float32([1, 2, 3]))
    with pytest.raises(NotImplementedError, match="not differentiated"):
        tl.grad(fn)(x)
    # (a function of other arguments is: its tangent here is zero)
    assert float(tl.grad(lambda y, a: fn(a) * 0 + y)(1.0, x)) == 1.0
