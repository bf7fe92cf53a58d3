"""A backend whose arrays Arrays hold natively, for the tests: the module
contract of ``typelattice._backends`` (docs/backends.md) written over NumPy.

Its arrays are :class:`Box` es (a NumPy array and a device name, ``'box:0'``
or ``'box:1'``), so every path that would take one for a NumPy array, or
compute on NumPy behind the backend's back, fails loudly: NumPy cannot
convert a Box (it has no ``__array__``). Every primitive is computed by the
NumPy backend's implementation on the boxes' arrays, and the result boxed
on the operands' device. The tests register it under the name ``'boxed'``
(:func:`register`); nothing in the package knows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import typelattice.lax
import typelattice.numpy  # noqa: F401 (every primitive defined)
from typelattice._backends import LIBRARIES, MODULES, NUMPY, Backend
from typelattice._lax._primitive import PRIMITIVES, Primitive

NAME = "boxed"
DEVICES = ("box:0", "box:1")

del typelattice


class Box:
    """A NumPy array on a device of the boxed backend."""

    __slots__ = ("device", "value")

    def __init__(self, value: np.ndarray[Any, Any], device: str) -> None:
        self.value = value
        self.device = device

    def __repr__(self) -> str:
        return f"Box({self.value!r}, device={self.device!r})"

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.value.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def owns(x: object) -> bool:
    return type(x) is Box


def _box(x: Any) -> Box:
    if type(x) is not Box:
        raise TypeError(f"the boxed backend got {x!r:.80}, not one of its arrays")
    return x


def dtype_of(x: Any) -> np.dtype[Any]:
    return _box(x).value.dtype


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in _box(x).value.shape)


def device_of(x: Any) -> str:
    return _box(x).device


def _device(device: str | None) -> str:
    if device is None:
        return DEVICES[0]
    if device not in DEVICES:
        raise ValueError(f"the boxed backend has devices {DEVICES}, not {device!r}")
    return device


def from_numpy(a: np.ndarray[Any, Any], device: str | None = None) -> Box:
    return Box(np.asarray(a), _device(device))


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    return _box(x).value


def copy(x: Any) -> Box:
    return Box(_box(x).value.copy(), _box(x).device)


def put(x: Any, device: str) -> Box:
    return Box(_box(x).value.copy(), _device(device))


def _implementation(prim: Primitive) -> Callable[..., Any]:
    impl = NUMPY.impl(prim)
    several = prim.multiple_results

    def boxed(*operands: Any, **params: Any) -> Any:
        boxes = [_box(x) for x in operands]
        device = boxes[0].device if boxes else DEVICES[0]
        if any(b.device != device for b in boxes):
            raise AssertionError("the core gave operands of two devices")
        out = impl(*[b.value for b in boxes], **params)
        if several:
            return tuple(Box(np.asarray(v), device) for v in out)
        return Box(np.asarray(out), device)

    boxed.__name__ = f"boxed_{prim.name}"
    return boxed


class BoxedBackend(Backend):
    """Every primitive by the NumPy backend's implementation, on boxes
    (a primitive defined after the backend was made too)."""

    __slots__ = ()

    def implements(self, prim: Primitive) -> bool:
        return super().implements(prim) or NUMPY.implements(prim)

    def impl(self, prim: Primitive) -> Callable[..., Any]:
        if not super().implements(prim) and NUMPY.implements(prim):
            self.def_impl(prim, _implementation(prim))
        return super().impl(prim)


BACKEND = BoxedBackend(NAME, from_numpy=from_numpy, to_numpy=to_numpy)
for _prim in PRIMITIVES.values():
    if NUMPY.implements(_prim):
        BACKEND.def_impl(_prim, _implementation(_prim))


def register() -> None:
    """Make the boxed backend known to the package (by name, and its
    arrays by their module), as the real backends are."""
    MODULES[NAME] = __name__
    LIBRARIES[Box.__module__.partition(".")[0]] = NAME
