"""The implementations generic over a NumPy-compatible namespace
(``typelattice._backends._xp``), run here on NumPy and on a namespace that
records what it is asked: the library's own ufunc where it is the whole
implementation, the NumPy backend's implementation elsewhere, the host for
what the library cannot compute."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import typelattice.numpy as tnp
from typelattice._backends import Backend, _xp, use
from typelattice._lax._primitive import PRIMITIVES


class Recorded:
    """NumPy as a namespace whose ufuncs record their calls by name."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.module = types.ModuleType("recorded")
        for name in ("add", "sin", "multiply"):
            setattr(self.module, name, self._recording(name))

    def _recording(self, name: str) -> Any:
        def ufunc(*operands: Any) -> Any:
            self.calls.append(name)
            return getattr(np, name)(*operands)

        return ufunc


def test_every_primitive_is_registered() -> None:
    backend = _xp.register(Backend("xp-numpy"), np)
    assert all(backend.implements(p) for p in PRIMITIVES.values())


def test_the_librarys_ufunc_where_it_is_the_whole_implementation() -> None:
    rec = Recorded()
    backend = _xp.register(Backend("recorded"), rec.module)
    add = backend.impl(PRIMITIVES["add"])
    sin = backend.impl(PRIMITIVES["sin"])
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(add(x, x), x + x)
    np.testing.assert_array_equal(sin(x), np.sin(x))
    assert rec.calls == ["add", "sin"]
    # float16's sine is computed in float32 and rounded, as XLA: the
    # NumPy backend's implementation, not the library's float16 ufunc.
    h = np.array([1.0, 2.0], np.float16)
    got = sin(h)
    assert got.dtype == np.float16 and rec.calls == ["add", "sin"]
    np.testing.assert_array_equal(got, np.sin(h.astype(np.float32)).astype(np.float16))
    # Parameters (a checked conversion, a power): the implementation.
    pow_ = backend.impl(PRIMITIVES["integer_pow"])
    np.testing.assert_array_equal(pow_(x, y=3), x**3)
    assert rec.calls == ["add", "sin"]


def test_primitives_on_the_host_convert_both_ways() -> None:
    moved: list[str] = []

    def to_host(x: Any) -> Any:
        moved.append("host")
        return np.asarray(x)

    def to_device(x: Any) -> Any:
        moved.append("device")
        return np.asarray(x)

    backend = _xp.register(
        Backend("hosted"),
        types.ModuleType("library"),
        to_host=to_host,
        to_device=to_device,
        host=frozenset({"sort"}),
    )
    sort = backend.impl(PRIMITIVES["sort"])
    (out,) = sort(np.array([3, 1, 2], np.int8), dimension=0, is_stable=True, num_keys=1)
    np.testing.assert_array_equal(out, [1, 2, 3])
    assert moved == ["host", "device"]


def test_the_namespace_through_the_backend_matches_numpy() -> None:
    backend = _xp.register(Backend("xp-numpy"), np)
    x = tnp.arange(6, dtype="int32").reshape(2, 3)
    want = tnp.cumsum(tnp.sin(x * 0.5), axis=1).astype("bfloat16")
    with use(backend):
        got = tnp.cumsum(tnp.sin(x * 0.5), axis=1).astype("bfloat16")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_support_table_from_declarations() -> None:
    backend = _xp.register(Backend("xp-numpy"), np)
    table = _xp.support_table(
        backend, {"int4": "no int4 here"}, frozenset({"sort", "while"})
    )
    assert set(table) == set(PRIMITIVES)
    assert table["sin"]["float32"] == "yes"
    assert table["sin"]["int4"] == "no: no int4 here"
    assert table["while"]["float32"] == "emulated: computed on the host"
    with pytest.raises(KeyError):
        table["sin"]["not a dtype"]
