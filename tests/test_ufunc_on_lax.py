"""The ufunc methods that are namespace functions in jax.numpy (``reduce`` of
add, multiply, maximum, minimum, logical_and, logical_or; ``accumulate`` of
add, multiply, maximum and minimum; every ``outer``) are written on ``lax``:
under ``jit`` their programs hold primitive equations only, and eagerly, under
``jit``, under ``eval_shape`` and under differentiation they run the same
code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import program_equations, same_array

F = Callable[..., Any]

M = tnp.asarray((np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 4)
B = tnp.asarray(np.arange(-6, 6, dtype=np.int8).reshape(3, 4))
MASK = tnp.asarray(np.arange(12).reshape(3, 4) % 3 == 0)
EMPTY = tnp.zeros((0, 3))

CASES: dict[str, tuple[F, tuple[Any, ...]]] = {
    "add.reduce": (lambda x: tnp.add.reduce(x), (B,)),
    "add.reduce-initial": (lambda x: tnp.add.reduce(x, initial=1), (M,)),
    "add.reduce-where": (
        lambda x, w: tnp.add.reduce(x, axis=1, where=w, initial=0.5),
        (M, MASK),
    ),
    "add.reduce-empty": (lambda x: tnp.add.reduce(x, dtype="int16"), (EMPTY,)),
    "multiply.reduce": (
        lambda x: tnp.multiply.reduce(x, axis=(0, 1), keepdims=True),
        (M,),
    ),
    "multiply.reduce-initial": (lambda x: tnp.multiply.reduce(x, initial=2), (B,)),
    "maximum.reduce": (lambda x: tnp.maximum.reduce(x, axis=None), (M,)),
    "maximum.reduce-dtype": (lambda x: tnp.maximum.reduce(x, dtype="int16"), (B,)),
    "minimum.reduce-initial": (
        lambda x: tnp.minimum.reduce(x, axis=1, initial=-1),
        (M,),
    ),
    "logical_and.reduce": (lambda x: tnp.logical_and.reduce(x, axis=1), (B,)),
    "logical_and.reduce-initial": (
        lambda x: tnp.logical_and.reduce(x, initial=False, dtype="int8"),
        (M,),
    ),
    "logical_or.reduce-where": (
        lambda x, w: tnp.logical_or.reduce(x, where=w, keepdims=True),
        (B, MASK),
    ),
    "add.accumulate": (lambda x: tnp.add.accumulate(x, axis=1), (B,)),
    "add.accumulate-none": (lambda x: tnp.add.accumulate(x, axis=None), (M,)),
    "multiply.accumulate": (
        lambda x: tnp.multiply.accumulate(x, dtype="float32"),
        (B,),
    ),
    "maximum.accumulate": (lambda x: tnp.maximum.accumulate(x, axis=1), (M,)),
    "maximum.accumulate-bool": (lambda x: tnp.maximum.accumulate(x), (MASK,)),
    "minimum.accumulate-none": (
        lambda x: tnp.minimum.accumulate(x, axis=None, dtype="int16"),
        (B,),
    ),
    "minimum.accumulate-0d": (lambda x: tnp.minimum.accumulate(x), (M[0, 0],)),
    "subtract.outer": (lambda x, y: tnp.subtract.outer(x, y), (M[0], B[1])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_programs_hold_primitive_equations_only(name: str) -> None:
    fn, args = CASES[name]
    equations = program_equations(tl.jit(fn).program(*args))
    assert equations, name
    for line in equations:
        assert " = lax." in line, f"{name}: {line}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_jit_and_eval_shape_agree(name: str) -> None:
    """Keyword arguments (``initial``, ``where``) and empty axes included:
    the program computes what the eager call does."""
    fn, args = CASES[name]
    want = fn(*args)
    same_array(tl.jit(fn)(*args), want)
    shape = tl.eval_shape(fn, *args)
    assert (shape.dtype, shape.weak_type, shape.shape) == (
        want.dtype,
        want.weak_type,
        want.shape,
    )


def test_the_methods_are_the_namespace_functions() -> None:
    x = M
    same_array(tnp.add.reduce(x, axis=1), tnp.sum(x, axis=1))
    same_array(tnp.multiply.reduce(x), tnp.prod(x, axis=0))
    same_array(tnp.maximum.reduce(x, axis=None), tnp.max(x))
    same_array(tnp.minimum.reduce(x, initial=0.0), tnp.min(x, axis=0, initial=0.0))
    same_array(tnp.logical_and.reduce(B), tnp.all(B, axis=0))
    same_array(tnp.logical_or.reduce(B, axis=1), tnp.any(B, axis=1))
    same_array(tnp.add.accumulate(B), tnp.cumsum(B, axis=0))
    same_array(tnp.multiply.accumulate(x, axis=1), tnp.cumprod(x, axis=1))


def test_logical_reduce_with_initial_is_strong_bool() -> None:
    got = tnp.logical_or.reduce(tnp.zeros(3, "int8"), initial=True)
    assert (got.dtype, got.weak_type, bool(got)) == (np.dtype(bool), False, True)
    got = tl.jit(lambda x: tnp.logical_and.reduce(x, initial=False))(M)
    assert (got.dtype, got.weak_type) == (np.dtype(bool), False)
    assert not np.asarray(got).any()


@pytest.mark.parametrize(
    ("method", "want"),
    [
        (lambda x: tnp.add.reduce(x, axis=1), lambda x: np.ones_like(x)),
        (
            lambda x: tnp.multiply.reduce(x, axis=0),
            lambda x: np.prod(x, axis=0, keepdims=True) / x,
        ),
        (lambda x: tnp.add.accumulate(x, axis=1), lambda x: x * 0 + [4, 3, 2, 1]),
    ],
    ids=["add.reduce", "multiply.reduce", "add.accumulate"],
)
def test_grad(method: F, want: F) -> None:
    x = np.asarray(M) + 2  # no zeros: the product's gradient is prod / x
    grad = tl.grad(lambda a: tnp.sum(method(a)))(tnp.asarray(x))
    np.testing.assert_allclose(np.asarray(grad), want(x), rtol=1e-6)


def test_maximum_reduce_grad_picks_the_maximum() -> None:
    x = tnp.asarray(np.float32([1, 5, 2]))
    grad = tl.grad(lambda a: tnp.maximum.reduce(a))(x)
    np.testing.assert_array_equal(np.asarray(grad), [0, 1, 0])


def test_bad_axis_is_refused_on_every_path() -> None:
    for run in (lambda f: f(tnp.asarray(2.0)), lambda f: tl.jit(f)(2.0)):
        with pytest.raises(ValueError, match="0-d array; pass axis=None"):
            run(lambda x: tnp.add.reduce(x, axis=0))
    with pytest.raises(ValueError, match="out of bounds"):
        tl.eval_shape(lambda x: tnp.maximum.reduce(x, axis=3), M)


def test_running_extremes_keep_nan_and_check_the_dtype() -> None:
    x = tnp.asarray(np.float32([1, np.nan, 3, 0]))
    for run in (lambda f: f(x), lambda f: tl.jit(f)(x)):
        got = run(lambda a: tnp.maximum.accumulate(a))
        np.testing.assert_array_equal(np.asarray(got), [1, np.nan, np.nan, np.nan])
    big = tnp.asarray(np.int16([3, 300]))
    for run in (lambda f: f(big), lambda f: tl.jit(f)(big)):
        with pytest.raises(OverflowError, match="300 does not fit in int8"):
            run(lambda a: tnp.minimum.accumulate(a, dtype="int8"))


def test_running_maximum_grad_follows_the_maximum() -> None:
    x = tnp.asarray(np.float32([1, 3, 2, 5]))
    grad = tl.grad(lambda a: tnp.sum(tnp.maximum.accumulate(a)))(x)
    np.testing.assert_array_equal(np.asarray(grad), [1, 2, 0, 1])
