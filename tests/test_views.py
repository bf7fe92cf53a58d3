"""Results of view-like primitives view their operand's memory.

An Array's memory never changes, so eagerly a slice, a reshape, a transpose
(...) of an Array may share it, as NumPy's views do, instead of copying it.
What must hold for that: no result ever shares memory with a NumPy array its
caller can still write to, what NumPy is handed is read-only or a copy, and
no compiled program writes into a buffer that a live result views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.lax as lax
import typelattice.numpy as tnp

F32 = np.dtype(np.float32)

# (name, function of one 2x3x4 float32 operand): results that NumPy gives
# as views of the operand.
VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("lax.slice", lambda a: lax.slice(a, (0, 1, 0), (2, 3, 4))),
    ("lax.reshape", lambda a: lax.reshape(a, (6, 4))),
    ("lax.transpose", lambda a: lax.transpose(a, (2, 0, 1))),
    ("lax.expand_dims", lambda a: lax.expand_dims(a, (0,))),
    ("lax.squeeze", lambda a: lax.squeeze(lax.expand_dims(a, (0,)), (0,))),
    (
        "lax.broadcast_in_dim",
        lambda a: lax.broadcast_in_dim(a, (5, 2, 3, 4), (1, 2, 3)),
    ),
    ("lax.convert_element_type", lambda a: lax.convert_element_type(a, F32)),
    ("lax.rev", lambda a: lax.rev(a, (1,))),
    ("tnp.reshape", lambda a: tnp.reshape(a, (4, 6))),
    ("tnp.transpose", lambda a: tnp.transpose(a)),
    ("tnp.moveaxis", lambda a: tnp.moveaxis(a, 0, -1)),
    ("tnp.expand_dims", lambda a: tnp.expand_dims(a, 1)),
    ("tnp.squeeze", lambda a: tnp.squeeze(tnp.expand_dims(a, 0))),
    ("tnp.ravel", lambda a: tnp.ravel(a)),
    ("tnp.broadcast_to", lambda a: tnp.broadcast_to(a, (2, 2, 3, 4))),
    ("basic indexing", lambda a: tnp.asarray(a)[1:, None, ::2, 1]),
    ("method .T", lambda a: tnp.asarray(a).T),
]
IDS = [name for name, _ in VIEWS]


def numpy_operand() -> np.ndarray[Any, Any]:
    return np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("fn", [f for _, f in VIEWS], ids=IDS)
def test_a_view_of_an_array_is_its_memory_and_its_values(
    fn: Callable[[Any], Any],
) -> None:
    raw = numpy_operand()
    x = tnp.asarray(raw)
    expected = np.asarray(fn(raw)).copy()
    out = fn(x)
    assert isinstance(out, tnp.Array)
    np.testing.assert_array_equal(np.asarray(out), expected)
    # Eagerly the result shares the Array's memory (nothing copied)...
    assert np.shares_memory(np.asarray(out), np.asarray(x))
    # ...which neither can hand out writable.
    for a in (out, x):
        exported = np.asarray(a)
        assert not exported.flags.writeable
        with pytest.raises(ValueError):
            exported.flags.writeable = True


@pytest.mark.parametrize("fn", [f for _, f in VIEWS], ids=IDS)
def test_a_view_never_shares_a_callers_numpy_array(fn: Callable[[Any], Any]) -> None:
    raw = numpy_operand()
    out = fn(raw)
    before = np.asarray(out).copy()
    assert not np.shares_memory(np.asarray(out), raw)
    raw[...] = -1  # the caller writes to its array
    np.testing.assert_array_equal(np.asarray(out), before)


@pytest.mark.parametrize("fn", [f for _, f in VIEWS], ids=IDS)
def test_a_jitted_view_never_shares_a_callers_numpy_array(
    fn: Callable[[Any], Any],
) -> None:
    raw = numpy_operand()
    out = tl.jit(fn)(raw)
    before = np.asarray(out).copy()
    assert not np.shares_memory(np.asarray(out), raw)
    raw[...] = -1
    np.testing.assert_array_equal(np.asarray(out), before)


def test_an_array_made_of_a_numpy_array_keeps_its_values() -> None:
    raw = numpy_operand()
    x = tnp.asarray(raw)
    view = x[0]
    raw[...] = -1
    np.testing.assert_array_equal(np.asarray(view), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(x), np.arange(24).reshape(2, 3, 4))


def test_a_copy_handed_out_is_writable_and_its_own() -> None:
    x = tnp.arange(6.0).reshape(2, 3)
    view = x.T
    mine = np.array(view)  # a copy: writable, changes nothing
    mine[...] = 7
    np.testing.assert_array_equal(np.asarray(view), [[0, 3], [1, 4], [2, 5]])
    np.testing.assert_array_equal(np.asarray(x), [[0, 1, 2], [3, 4, 5]])


# Large enough for a compiled program to compute into a dying temporary.
N = 128 * 1024


def test_jit_never_writes_into_a_buffer_a_live_result_views() -> None:
    def f(x: Any) -> Any:
        t = x * 2  # a temporary of the program
        v = t[1:]  # a view of it, returned
        w = tnp.reshape(t, (2, N // 2))[0]  # a view of a view, returned
        u = -t  # t dies here: its buffer must not take u
        return v, w, u + 1

    x = tnp.arange(N, dtype=tnp.float32)
    v, w, u = tl.jit(f)(x)
    expected = np.arange(N, dtype=np.float32) * 2
    np.testing.assert_array_equal(np.asarray(v), expected[1:])
    np.testing.assert_array_equal(np.asarray(w), expected[: N // 2])
    np.testing.assert_array_equal(np.asarray(u), 1 - expected)


def test_jit_never_writes_into_a_viewed_input() -> None:
    def f(x: Any) -> Any:
        v = tnp.reshape(x, (2, N // 2))
        return v, tnp.sin(x) * 3

    x = tnp.arange(N, dtype=tnp.float32)
    v, _ = tl.jit(f)(x)
    np.testing.assert_array_equal(
        np.asarray(v), np.arange(N, dtype=np.float32).reshape(2, N // 2)
    )
    np.testing.assert_array_equal(np.asarray(x), np.arange(N, dtype=np.float32))


def test_an_eager_temporary_viewed_elsewhere_keeps_its_values() -> None:
    views: list[Any] = []

    def keep(a: Any) -> Any:
        views.append(a[1:])
        return a

    x = tnp.arange(N, dtype=tnp.float32)
    # The operand of the negation is a temporary whose memory a live view
    # holds: the negation must go to new memory.
    u = -keep(x * 2)
    v = keep(x + 1) * 3
    expected = np.arange(N, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(views[0]), (expected * 2)[1:])
    np.testing.assert_array_equal(np.asarray(views[1]), (expected + 1)[1:])
    np.testing.assert_array_equal(np.asarray(u), -expected * 2)
    np.testing.assert_array_equal(np.asarray(v), (expected + 1) * 3)


# Elementwise functions compute from a caller's NumPy array without copying
# it first; those that give their operand back (an identity for the dtype,
# a conversion to the same dtype) must still not return its memory.
IDENTITIES: list[tuple[str, Callable[[Any], Any], str]] = [
    ("positive", tnp.positive, "float32"),
    ("real", tnp.real, "float32"),
    ("conj", tnp.conj, "float32"),
    ("floor-int", tnp.floor, "int32"),
    ("round-int", tnp.round, "int16"),
    ("trunc-int", tnp.trunc, "uint8"),
    ("add-0-int", lambda a: tnp.add(a, 0), "int32"),
    ("maximum-self", lambda a: tnp.maximum(a, a), "float32"),
    ("astype-same", lambda a: tnp.astype(a, a.dtype), "float32"),
    ("real-complex", tnp.real, "complex64"),
]


@pytest.mark.parametrize(
    ("fn", "dtype"),
    [(f, d) for _, f, d in IDENTITIES],
    ids=[n for n, _, _ in IDENTITIES],
)
def test_an_elementwise_result_never_shares_a_callers_numpy_array(
    fn: Callable[[Any], Any], dtype: str
) -> None:
    raw = np.arange(1, 7).reshape(2, 3).astype(dtype)
    for out in (fn(raw), tl.jit(fn)(raw)):
        before = np.asarray(out).copy()
        assert not np.shares_memory(np.asarray(out), raw)
        raw[...] = 0  # the caller writes to its array
        np.testing.assert_array_equal(np.asarray(out), before)
        raw[...] = np.arange(1, 7).reshape(2, 3).astype(dtype)
