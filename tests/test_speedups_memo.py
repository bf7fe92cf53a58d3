"""What the C fast paths remember between calls changes no answer.

``Primitive.bind`` in C remembers the plan it last found per primitive and
operand avals (and reads NumPy's arrays' fields directly); the binary
functions and operators keep the 0-d arrays of Python scalars they convert
again and again. These tests call the same functions many times, with
signatures that share a memo entry, with parameters that are equal but not
the same objects, with plans replaced under it, and with scalars whose bits
differ but compare equal, and require the Python path's answers, results
that own their memory, and operands left untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from test_speedups_bind import both, describe, outcome, python_path
from typelattice import _promotion, lax
from typelattice._array import ArrayImpl
from typelattice._lax._elementwise import add_p, neg_p
from typelattice._lax._reductions import reduce_sum_p
from typelattice._tracing.primitive import EagerPlan
from typelattice.numpy import _ufuncs

BUILT = _promotion._speedups is not None
needs_c = pytest.mark.skipif(not BUILT, reason=_promotion.SPEEDUPS)


def array(value: Any, dtype: Any, weak: bool = False) -> ArrayImpl:
    return ArrayImpl(np.asarray(value, dtype=dtype), weak_type=weak)


def value_of(out: Any) -> np.ndarray[Any, Any]:
    """The NumPy array an Array holds."""
    assert type(out) is ArrayImpl
    return out._value


def test_shapes_that_share_a_memo_entry_each_get_their_plan() -> None:
    # The same primitive and avals, other shapes (and broadcasting), in turn.
    xs = [array(np.arange(n, dtype=np.float32), "float32") for n in (1, 2, 3, 1, 2, 3)]
    xs += [array(np.ones((2, 3)), "float32"), array(np.ones((3, 1)), "float32")]
    for _ in range(3):
        for x in xs:
            both(lax.add, x, x)
            both(add_p.bind, x, x)
            both(lax.neg, x)
    both(lax.add, xs[6], xs[2])  # (2, 3) + (3,): broadcasts
    both(lax.add, xs[6], xs[7])  # (2, 3) + (3, 1): does not


def test_equal_parameters_that_are_new_objects_answer_as_python() -> None:
    x = array(np.arange(6.0).reshape(2, 3), "float32")
    for _ in range(3):
        for axes in [(0,), (1,), (0, 1), ()]:
            both(reduce_sum_p.bind, x, axes=tuple(list(axes)))
        both(reduce_sum_p.bind, x, axes=[0])  # unhashable: never remembered
    # A parameter of another type that compares equal is another signature.
    both(reduce_sum_p.bind, x, axes=(True,))
    both(reduce_sum_p.bind, x, axes=(1,))


def test_reductions_to_a_scalar_give_arrays_that_own_their_memory() -> None:
    x = array([1.0, 2.0, 3.0], "float32")
    for _ in range(3):
        both(reduce_sum_p.bind, x, axes=(0,))
        out = reduce_sum_p.bind(x, axes=(0,))
        assert type(out) is ArrayImpl
        assert type(out._value) is np.ndarray
        assert out._value.shape == ()
        assert out._value.flags.owndata
        assert out.tolist() == 6.0


@needs_c
def test_a_plan_replaced_in_the_primitive_is_used_at_once() -> None:
    x = array([1.0, 2.0], "float32")
    for _ in range(2):
        lax.neg(x)  # (the plan, remembered)
    try:
        for key, plan in list(neg_p.eager.items()):
            neg_p.eager[key] = plan._replace(fn=lambda v: np.full_like(v, 7.0))
        assert lax.neg(x).tolist() == [7.0, 7.0]
        neg_p.eager.clear()  # made again, by the Python code
        assert lax.neg(x).tolist() == [-1.0, -2.0]
        assert lax.neg(x).tolist() == [-1.0, -2.0]
    finally:
        neg_p.eager.clear()
    assert lax.neg(x).tolist() == [-1.0, -2.0]


@needs_c
def test_a_plan_left_in_a_cleared_dict_is_never_used() -> None:
    x = array([3.0], "float32")
    for _ in range(2):
        lax.neg(x)
    saved = dict(neg_p.eager)
    neg_p.eager.clear()
    try:
        # The dict refilled with the same number of entries, other plans.
        for key, plan in saved.items():
            neg_p.eager[key] = EagerPlan(
                lambda v: np.full_like(v, 5.0), False, plan.out_key, plan.out
            )
        assert lax.neg(x).tolist() == [5.0]
    finally:
        neg_p.eager.clear()
    assert lax.neg(x).tolist() == [-3.0]


def test_operands_are_never_results_and_are_left_as_they_were() -> None:
    a = np.array([1.0, -2.0, 3.0], np.float32)
    x = tnp.asarray(a)
    before = a.copy()
    outs = [lax.add(x, x), add_p.bind(x, x), x + 2, 2 + x, x * 0.5, lax.neg(x)]
    outs += [reduce_sum_p.bind(x, axes=(0,)) for _ in range(3)]
    for out in outs:
        assert value_of(out) is not a
        assert value_of(out) is not value_of(x)
        assert value_of(out).flags.owndata
    np.testing.assert_array_equal(a, before)


def python_function(fn: Any) -> Any:
    """The Python function behind a C fast path (``fn`` itself without one)."""
    return getattr(fn, "fallback", fn)


SCALAR_FUNCTIONS = [
    _ufuncs.add,
    _ufuncs.multiply,
    _ufuncs.subtract,
    _ufuncs.maximum,
    vars(ArrayImpl)["__add__"],
    vars(ArrayImpl)["__rmul__"],
    vars(ArrayImpl)["__truediv__"],
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_python_scalars_seen_again_answer_as_python(dtype: str) -> None:
    x = array([0.0, -0.0, 1.5, 100.0], dtype)
    scalars: list[Any] = [2, 2.0, 0.0, -0.0, 0.5, -3, float("nan"), float("inf")]
    scalars += [True, 1 + 2j, 2**40, 2**70, 1e300]
    for _ in range(3):
        for s in scalars:
            for fn in SCALAR_FUNCTIONS:
                got = outcome(fn, x, s)
                assert got == outcome(python_function(fn), x, s), (fn, x, s)
                with python_path():
                    assert outcome(fn, x, s) == got, (fn, x, s)


def test_zero_and_negative_zero_are_told_apart() -> None:
    x = array([-0.0], "float32")
    for _ in range(3):
        assert np.signbit(value_of(x + -0.0)[0])
        assert not np.signbit(value_of(x + 0.0)[0])
        assert not np.signbit(value_of(x + 0)[0])


def test_results_of_a_scalar_seen_again_are_new_writable_arrays() -> None:
    for x in (array(1.5, "float32"), array([1.5, 2.5], "float32")):
        with python_path():
            expected = describe(x + 2), describe(2 * x)
        outs = [(x + 2, 2 * x) for _ in range(4)]
        assert len({id(value_of(o)) for pair in outs for o in pair}) == 8
        for pair in outs:
            assert (describe(pair[0]), describe(pair[1])) == expected
            for out in pair:
                assert value_of(out).flags.owndata
                assert value_of(out).flags.writeable


@needs_c
def test_under_differentiation_arrays_bind_in_c_as_in_python() -> None:
    """Differentiation traces take no arrays: while one runs (and no jit or
    eval_shape trace in this context), the primal computations on arrays
    are the eager ones."""
    c = array([1.0, -2.0, 3.0], "float32")
    seen: list[Any] = []

    def f(t: Any) -> Any:
        seen.append(outcome(lax.add, c, c))
        seen.append(outcome(lax.broadcast_in_dim, c, (2, 3), (1,)))
        seen.append(outcome(reduce_sum_p.bind, c, axes=(0,)))
        return lax.reduce_sum(lax.mul(lax.exp(t), lax.add(c, c)), (0,))

    x = array([0.5, 0.25, 0.125], "float32")
    with python_path():
        want = outcome(tl.grad(f), x)
        expected = list(seen)
    seen.clear()
    assert outcome(tl.grad(f), x) == want
    assert seen == expected
    seen.clear()
    assert outcome(tl.jit(tl.grad(f)), x) == want
    assert len(seen) == 3


def _operator_plans(x: ArrayImpl) -> dict[Any, Any]:
    """The plans of ``x + x`` in the memo in force, by key."""
    return {
        key: plan
        for key, plan in _promotion._global_memo.items()
        if isinstance(key, tuple)
        and len(key) == 3  # pyright: ignore[reportUnknownArgumentType]
        and key[1] is x._key
        and key[2] is x._key
        and getattr(plan, "fn", None) is np.add
    }


@needs_c
def test_an_operator_plan_replaced_in_the_memo_is_used_at_once() -> None:
    x = array([1.0, 2.0], "float32")
    for _ in range(3):
        assert value_of(x + x).tolist() == [2.0, 4.0]  # (the plan, remembered)
    saved = _operator_plans(x)
    assert saved
    memo = _promotion._global_memo
    try:
        for key, plan in saved.items():
            memo[key] = plan._replace(fn=np.subtract)
        assert value_of(x + x).tolist() == [0.0, 0.0]
        assert value_of(tnp.add(x, x)).tolist() == [0.0, 0.0]
        for key in saved:
            del memo[key]  # made again, by the Python code
        assert value_of(x + x).tolist() == [2.0, 4.0]
        assert value_of(x + x).tolist() == [2.0, 4.0]
    finally:
        memo.update(saved)
    assert value_of(x + x).tolist() == [2.0, 4.0]


@needs_c
def test_an_operator_plan_of_a_cleared_memo_is_never_used() -> None:
    x = array([3.0], "float32")
    for _ in range(3):
        x + x  # noqa: B018 (the plan, remembered)
    saved = _operator_plans(x)
    memo = _promotion._global_memo
    memo.clear()
    try:
        # The memo refilled with as many entries, other plans.
        for key, plan in saved.items():
            memo[key] = plan._replace(fn=np.multiply)
        assert value_of(x + x).tolist() == [9.0]
    finally:
        memo.clear()
    assert value_of(x + x).tolist() == [6.0]
    with tl.rank_promotion("allow"):  # (a scoped state, a memo of its own)
        assert value_of(x + x).tolist() == [6.0]


@needs_c
def test_a_unary_plan_replaced_in_the_memo_is_used_at_once() -> None:
    x = array([0.0, 1.0], "float32")
    for _ in range(3):
        tnp.negative(x)  # (the plan, remembered)
    memo = _promotion._global_memo
    saved = {
        key: plan
        for key, plan in memo.items()
        if isinstance(key, tuple)
        and len(key) == 2  # pyright: ignore[reportUnknownArgumentType]
        and key[1] is x._key
        and getattr(plan, "fn", None) is np.negative
    }
    assert saved
    try:
        for key, plan in saved.items():
            memo[key] = plan._replace(fn=np.exp)
        assert value_of(tnp.negative(x)).tolist() == [1.0, float(np.exp(np.float32(1)))]
        memo.clear()
        assert value_of(tnp.negative(x)).tolist() == [-0.0, -1.0]
    finally:
        memo.clear()
    assert value_of(tnp.negative(x)).tolist() == [-0.0, -1.0]
