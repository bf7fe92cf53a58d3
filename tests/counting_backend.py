"""A second backend, for the tests: every primitive is computed by the NumPy
backend's implementation, and every call is counted.

Its arrays are :class:`Boxed` NumPy arrays, so that the conversions at the
backend's edges are proven too: an implementation given a NumPy array, or a
result that is not converted back, fails loudly instead of passing by
accident. It has no fast rules: its results come from the implementations
alone, so comparing them with the NumPy backend's (which uses its fast
rules) also checks that each fast rule answers as its implementation does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from typelattice._backends import NUMPY, Backend
from typelattice._lax._primitive import PRIMITIVES, Primitive


class Boxed:
    """A NumPy array as the counting backend holds it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Boxed({self.value!r})"


def _unbox(x: Any) -> Any:
    if type(x) is not Boxed:
        raise TypeError(f"the counting backend got {x!r:.80}, not one of its arrays")
    return x.value


class CountingBackend(Backend):
    """Every primitive defined so far, by the NumPy backend's implementation;
    ``calls`` counts the calls per primitive name.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> from typelattice._backends import use
    >>> counting = CountingBackend()
    >>> x = tnp.ones(3)
    >>> with use(counting):
    ...     lax.add(x, 2.0)
    Array([3., 3., 3.], dtype=float32)
    >>> counting.calls
    Counter({'add': 1})
    """

    __slots__ = ("calls",)

    calls: Counter[str]

    def __init__(self) -> None:
        super().__init__("counting", from_numpy=Boxed, to_numpy=_unbox)
        self.calls = Counter()
        for prim in PRIMITIVES.values():
            self.def_impl(prim, self._counted(prim, NUMPY.impl(prim)))

    def implements(self, prim: Primitive) -> bool:
        return super().implements(prim) or NUMPY.implements(prim)

    def impl(self, prim: Primitive) -> Callable[..., Any]:
        """``prim``'s implementation: the NumPy backend's, counted (that of a
        primitive defined after this backend was made too, as a module
        imported later defines it)."""
        if not super().implements(prim) and NUMPY.implements(prim):
            self.def_impl(prim, self._counted(prim, NUMPY.impl(prim)))
        return super().impl(prim)

    def _counted(self, prim: Primitive, impl: Callable[..., Any]) -> Callable[..., Any]:
        calls, name, several = self.calls, prim.name, prim.multiple_results

        def counted(*operands: Any, **params: Any) -> Any:
            calls[name] += 1
            out = impl(*[_unbox(x) for x in operands], **params)
            if several:
                return tuple(Boxed(v) for v in out)
            return Boxed(out)

        counted.__name__ = f"counted_{name}"
        return counted

    def total(self) -> int:
        """The calls of every primitive."""
        return sum(self.calls.values())
