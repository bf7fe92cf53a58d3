"""Array's operators and methods: declared on the abstract Array, computed
by one table that typelattice.numpy sets on the concrete array and the
tracers."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._array import ArrayImpl
from typelattice._basearray import Array
from typelattice._tracing.ad import JVPTracer, LinearTracer
from typelattice._tracing.tracer import JitTracer, Placeholder, Tracer
from typelattice.numpy._array_methods import ARRAY_CLASSES, ARRAY_METHODS

CLASSES = [ArrayImpl, Placeholder, Tracer, JitTracer, JVPTracer, LinearTracer]


def _parameters(fn: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(fn, property):
        fn = fn.fget
    return [
        (p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
    ]


@pytest.mark.parametrize("name", sorted(ARRAY_METHODS))
def test_each_entry_is_declared_with_its_signature(name: str) -> None:
    declared = vars(Array)[name]
    implemented = vars(Tracer)[name]  # as set, Python operators included
    assert type(declared) is type(implemented)
    assert _parameters(implemented) == _parameters(declared)
    assert implemented.__doc__ == declared.__doc__


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_array_class_has_every_entry(cls: type) -> None:
    for name in ARRAY_METHODS:
        assert getattr(cls, name) is not getattr(Array, name), name


def test_the_table_is_set_on_the_array_and_tracer_bases() -> None:
    assert all(issubclass(cls, Array) for cls in ARRAY_CLASSES)
    assert {JVPTracer.__base__, LinearTracer.__base__} <= set(ARRAY_CLASSES)


def test_help_shows_the_declared_documentation() -> None:
    x = tnp.asarray([1, 2], dtype="int8")
    assert x.sum.__doc__ == Array.sum.__doc__
    assert "Sum of elements" in (x.sum.__doc__ or "")
    assert type(x).T.__doc__ == Array.T.__doc__


def test_tracers_compute_with_the_table() -> None:
    def f(a: Array) -> Array:
        return (a.T @ a).sum() + abs(-a).max() + a.at[0].add(1)[0, 1]

    x = tnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    eager = f(x)
    assert tl.jit(f)(x).tolist() == eager.tolist()
    assert tl.eval_shape(f, x).shape == ()
    assert tl.grad(f)(x).shape == (2, 2)


class _Own(Array):
    """An Array subclass of a user's, which the table is not set on."""

    __slots__ = ()

    @property
    def dtype(self) -> np.dtype[Any]:
        return np.dtype("float32")

    @property
    def shape(self) -> tuple[int, ...]:
        return (2,)


def test_another_array_class_is_told_what_to_define() -> None:
    own = _Own()
    assert own.ndim == 1 and own.size == 2  # from Array itself
    with pytest.raises(NotImplementedError, match=r"_Own.sum .*define sum itself"):
        own.sum()
    with pytest.raises(NotImplementedError, match=r"_Own.__add__"):
        own + 1  # noqa: B018
