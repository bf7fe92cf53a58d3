"""The shape, joining, indexing and sorting functions are written on
``typelattice.lax``: one path, eager, under ``jit``, ``eval_shape`` and
differentiation.

Each function below is checked to record only primitives in a jitted
program, to bind primitives eagerly (and, for the functions NumPy computes as
views of an Array's memory, to return such a view), to give eval_shape the
eager result's shape, dtype and weak flag, and to differentiate as the data
movement it is: the gradient of ``sum(f(x) * w)`` puts each weight back
where its element came from (found by applying ``f`` to element numbers).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import ON_LAX, arr
from typelattice._lax._indexing import IndexCheck, check_index
from typelattice._tracing import primitive
from typelattice._tracing.primitive import Primitive

F = Callable[..., Any]

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8
IDX = np.array([2, 0, -1, 2], np.int32)
MASK = np.array([True, False, True])

# name: (function of x and an index array, is it a view of x eagerly)
CASES: dict[str, tuple[F, bool]] = {
    "reshape": (lambda x, i: tnp.reshape(x, (4, -1)), True),
    "reshape_F": (lambda x, i: tnp.reshape(x, (4, 6), order="F"), True),
    "ravel": (lambda x, i: tnp.ravel(x), True),
    "transpose": (lambda x, i: tnp.transpose(x, (1, 2, 0)), True),
    "permute_dims": (lambda x, i: tnp.permute_dims(x, (2, 0, 1)), True),
    "matrix_transpose": (lambda x, i: tnp.matrix_transpose(x), True),
    "T": (lambda x, i: x.T, True),
    "moveaxis": (lambda x, i: tnp.moveaxis(x, 0, -1), True),
    "swapaxes": (lambda x, i: tnp.swapaxes(x, 0, 2), True),
    "expand_dims": (lambda x, i: tnp.expand_dims(x, (0, 2)), True),
    "squeeze": (lambda x, i: tnp.squeeze(x[:1]), False),
    "atleast_1d": (lambda x, i: tnp.atleast_1d(x[0, 0, 0]), False),
    "atleast_2d": (lambda x, i: tnp.atleast_2d(x[0, 0]), False),
    "atleast_3d": (lambda x, i: tnp.atleast_3d(x[0]), False),
    "broadcast_to": (lambda x, i: tnp.broadcast_to(x[:, :1], (5, 2, 3, 4)), False),
    "broadcast_arrays": (lambda x, i: tnp.broadcast_arrays(x, x[0, 0])[1], False),
    "flip": (lambda x, i: tnp.flip(x, (0, 2)), False),
    "roll": (lambda x, i: tnp.roll(x, (1, -2), (1, 2)), False),
    "roll_flat": (lambda x, i: tnp.roll(x, 5), False),
    "tile": (lambda x, i: tnp.tile(x, (2, 1, 1, 2)), False),
    "repeat": (lambda x, i: tnp.repeat(x, 2, axis=1), False),
    "repeat_counts": (lambda x, i: tnp.repeat(x, tnp.asarray([1, 0, 3]), 1), False),
    "concatenate": (lambda x, i: tnp.concatenate([x, x[:1] * 2], axis=0), False),
    "concatenate_flat": (lambda x, i: tnp.concatenate([x, x], axis=None), False),
    "concat": (lambda x, i: tnp.concat([x, x], axis=2), False),
    "stack": (lambda x, i: tnp.stack([x, x * 2], axis=1), False),
    "hstack": (lambda x, i: tnp.hstack([x, x]), False),
    "vstack": (lambda x, i: tnp.vstack([x[0, 0], x[1, 1]]), False),
    "split": (lambda x, i: tnp.split(x, [1, 3], axis=2)[1], False),
    "diagonal": (lambda x, i: tnp.diagonal(x, 1, 1, 2), False),
    "compress": (lambda x, i: tnp.compress(MASK, x, axis=1, size=3), False),
    "take": (lambda x, i: tnp.take(x, i, axis=2), False),
    "take_fill": (lambda x, i: tnp.take(x, i + 2, axis=1, mode="fill"), False),
    "take_clip": (lambda x, i: tnp.take(x, i * 3, mode="clip"), False),
    "take_wrap": (lambda x, i: tnp.take(x, i * 3, axis=2, mode="wrap"), False),
    "basic_index": (lambda x, i: x[1, ::-2, None, 1:3], False),
    "index_array": (lambda x, i: x[:, i[:3]], False),
    "index_arrays": (lambda x, i: x[i[:2] % 2, :, i[2:]], False),
    "index_mixed": (lambda x, i: x[None, ..., 1, i], False),
    "index_mask": (lambda x, i: x[:, MASK], False),
    "at_get": (lambda x, i: x.at[:, i].get(mode="fill", fill_value=0.5), False),
    "at_set": (lambda x, i: x.at[:, i[:2]].set(x[:, :2] * 3), False),
    "at_add": (lambda x, i: x.at[1, i].add(2 * x[0, 0]), False),
    "at_multiply": (lambda x, i: x.at[i[:2] % 2].multiply(3.0), False),
    "at_min": (lambda x, i: x.at[..., i].min(0.5), False),
    "at_max": (lambda x, i: x.at[0, :, i].max(1.0), False),
    "sort": (lambda x, i: tnp.sort(x * tnp.cos(x * 9), axis=1), False),
    "sort_descending": (
        lambda x, i: tnp.sort(x * tnp.cos(x * 9), axis=None, descending=True),
        False,
    ),
}

VALUES: list[Any] = [tnp.asarray(X), tnp.asarray(IDX)]

# Functions whose results are integers (no derivative): checked separately.
INTEGER_CASES: dict[str, F] = {
    "argsort": lambda x, i: tnp.argsort(x * tnp.cos(x * 9), axis=1),
    "argsort_descending": lambda x, i: tnp.argsort(-x, axis=None, descending=True),
}

_EQUATION = re.compile(r"^\s*(v\S+( weak)?, )*v\S+( weak)? = (lax\.[\w-]+|full)\(")


def _body(program: Any) -> list[str]:
    lines = str(program).splitlines()
    return [ln for ln in lines[1:] if not ln.strip().startswith("return")]


def test_the_cases_cover_the_converted_functions() -> None:
    source = inspect.getsource(sys.modules[__name__])
    spelled = {"_getitem": "x[", "_gather": ".get(", "_scatter": ".add("}
    for name in ON_LAX - {"broadcast_shapes"}:  # (no array argument)
        assert spelled.get(name, f"tnp.{name}(") in source, name


@pytest.mark.parametrize("name", [*CASES, *INTEGER_CASES])
def test_jit_records_only_primitives(name: str) -> None:
    fn = CASES[name][0] if name in CASES else INTEGER_CASES[name]
    program = tl.jit(fn).program(*VALUES)
    body = _body(program)
    assert body, str(program)
    for line in body:
        # Elementwise arithmetic in the cases themselves (x * 2) is recorded
        # by its own plan; everything else is a primitive.
        if re.match(r"^\s*v\S+ = (multiply|add|cos|negative|remainder)\(", line):
            continue
        assert _EQUATION.match(line), f"{name}: {line}\n{program}"


@pytest.mark.parametrize("name", [*CASES, *INTEGER_CASES])
def test_every_path_agrees(name: str) -> None:
    fn = CASES[name][0] if name in CASES else INTEGER_CASES[name]
    eager = fn(*VALUES)
    for other in (tl.jit(fn)(*VALUES), tl.jit(fn)(*VALUES)):
        assert (other.dtype, other.weak_type) == (eager.dtype, eager.weak_type)
        np.testing.assert_array_equal(np.asarray(other), np.asarray(eager))
    shaped = tl.eval_shape(fn, *VALUES)
    assert (shaped.shape, shaped.dtype) == (eager.shape, eager.dtype)


@pytest.mark.skipif(primitive.FAST_BIND, reason="C binds without Primitive.bind")
@pytest.mark.parametrize("name", [*CASES, *INTEGER_CASES])
def test_eagerly_binds_primitives_and_views(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eagerly, each function binds primitives; reshaping and permuting the
    axes of an Array give, as in NumPy, views of its memory (which never
    changes)."""
    fn, view = CASES.get(name, (INTEGER_CASES.get(name), False))
    assert fn is not None
    bound: list[str] = []
    original = Primitive.bind

    def bind(self: Primitive, *args: Any, **params: Any) -> Any:
        bound.append(self.name)
        return original(self, *args, **params)

    monkeypatch.setattr(Primitive, "bind", bind)
    x, i = VALUES
    out = fn(x, i)
    assert bound, name
    if view and name != "reshape_F":
        # The primitives' eager results: NumPy's views where one exists.
        assert np.shares_memory(np.asarray(out), np.asarray(x))


def _moved_from(fn: F, i: Any) -> np.ndarray[Any, Any]:
    """For each element of ``fn(x, i)``, the number of the element of ``x``
    it is (-1 for the values it makes: fills, scalars, sums...)."""
    numbers = tnp.asarray(np.arange(X.size, dtype=np.float32).reshape(X.shape) + 1)
    try:
        out = np.asarray(fn(numbers, i)).astype(np.int64) - 1
    except TypeError:
        return np.array([])
    return out


# The functions that only move (or copy, or fill) elements of x.
MOVING = [
    n
    for n in CASES
    if not n.startswith(("at_", "sort", "concatenate", "stack", "compress"))
    and n not in ("take_fill", "at_get")
]


@pytest.mark.parametrize("name", MOVING)
def test_gradients_move_the_weights_back(name: str) -> None:
    fn = CASES[name][0]
    x, i = VALUES
    out = fn(x, i)
    w = np.arange(1, out.size + 1, dtype=np.float32).reshape(out.shape)
    weights = tnp.asarray(w)

    def loss(x: Any, i: Any) -> Any:
        return tnp.sum(fn(x, i) * weights)

    moved = _moved_from(fn, i)
    want = np.zeros(X.size, np.float32)
    np.add.at(want, moved.reshape(-1), w.reshape(-1))
    want = want.reshape(X.shape)
    for g in (tl.grad(loss)(x, i), tl.jit(tl.grad(loss))(x, i)):
        np.testing.assert_array_equal(np.asarray(g), want)


def test_gradients_of_joins_updates_and_sorts() -> None:
    x, i = VALUES
    ones = tnp.ones_like(x)
    # concatenate: x and 2 * x[:1]
    g = tl.grad(lambda x: tnp.sum(tnp.concatenate([x, x[:1] * 2])))(x)
    np.testing.assert_array_equal(np.asarray(g)[0], 3 * np.ones((3, 4)))
    np.testing.assert_array_equal(np.asarray(g)[1], np.ones((3, 4)))
    # .at[].set: the overwritten elements get nothing, the values their weight.
    y = tnp.asarray(np.float32(2.0))
    g_x, g_y = tl.grad(lambda x, y: tnp.sum(x.at[0, 1].set(y) * 3), argnums=(0, 1))(
        x, y
    )
    want = 3 * np.ones(X.shape, np.float32)
    want[0, 1] = 0
    np.testing.assert_array_equal(np.asarray(g_x), want)
    assert float(g_y) == 3 * 4
    # .at[].add with a traced index, under jit: the values' gradient counts
    # the positions they are added at.
    step = tl.jit(tl.grad(lambda y, i: tnp.sum(ones.at[1, :, i].add(y) ** 2)))
    got = float(step(y, i))
    want_y = float(tl.grad(lambda y: tnp.sum(ones.at[1, :, i].add(y) ** 2))(y))
    assert got == want_y
    assert got > 0
    # sort: each element's gradient is its weight where it lands.
    v = tnp.asarray(np.float32([3.0, 1.0, 2.0]))
    g = tl.grad(lambda v: tnp.sum(tnp.sort(v) * tnp.asarray([1.0, 10.0, 100.0])))(v)
    np.testing.assert_array_equal(np.asarray(g), [100.0, 1.0, 10.0])


def test_out_of_bounds_indices_raise_on_every_path() -> None:
    x = tnp.asarray(X)
    bad = tnp.asarray(np.int32([0, 4]))
    message = "index 4 is out of bounds for axis 2 with size 4"
    with pytest.raises(IndexError, match=message):
        x[:, :, bad]
    with pytest.raises(IndexError, match=message):
        tl.jit(lambda x, i: x[:, :, i])(x, bad)
    with pytest.raises(IndexError, match=message):
        tl.grad(lambda x, i: tnp.sum(x[:, :, i]))(x, bad)
    with pytest.raises(IndexError, match="take: " + message):
        tl.jit(lambda x, i: tnp.take(x, i, axis=2))(x, bad)
    with pytest.raises(IndexError, match=r"x.at\[...\].add: " + message):
        tl.jit(lambda x, i: x.at[:, :, i].add(1.0))(x, bad)
    # Known indices out of bounds raise while tracing.
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0"):
        tl.jit(lambda x: x[5])(x)


def test_check_index_primitive() -> None:
    """``check_index``: indices along an axis, as the mode says; integers
    without a derivative; one equation in programs."""
    i = arr([0, -1, 3, 9], "int8")
    for mode, want in (("clip", [0, 2, 2, 2]), ("wrap", [0, 2, 0, 0])):
        out = check_index(i, IndexCheck(0, 3, mode == "clip", mode, "", ""))
        assert out.dtype == np.dtype("int32")
        np.testing.assert_array_equal(np.asarray(out), want)
    filled = check_index(i, IndexCheck(0, 3, True, "fill", "", ""))
    np.testing.assert_array_equal(np.asarray(filled), [0, 2, 3, 3])
    with pytest.raises(IndexError, match="f: index 3 is out of bounds for axis 1 .*!"):
        check_index(i, IndexCheck(1, 3, True, "raise", "f: ", "!"))
    check = IndexCheck(0, 10, True, "raise", "", "")
    program = str(tl.jit(lambda i: check_index(i, check)).program(i))
    assert "lax.check_index(" in program
    # Differentiating through an index: it carries no tangent.
    x = tnp.asarray(np.float32([1.0, 2.0, 3.0]))
    primal, tangent = tl.jvp(
        lambda x: x[check_index(i[:2], IndexCheck(0, 3, True, "raise", "", ""))],
        (x,),
        (tnp.ones_like(x),),
    )
    np.testing.assert_array_equal(np.asarray(primal), [1.0, 3.0])
    np.testing.assert_array_equal(np.asarray(tangent), [1.0, 1.0])
