"""Primitive implementations for any NumPy-compatible array library.

A library whose arrays follow NumPy's protocols (``__array_ufunc__`` and
``__array_function__``: a NumPy ufunc or function given its arrays computes
with the library and returns its arrays), such as CuPy, runs most of the
NumPy backend's own implementations unchanged: ``np.sin(x)`` on a CuPy array
is ``cupy.sin(x)``, on the device. So one implementation serves every such
library, and its answers, casts and data-safety errors are the NumPy
backend's by construction; :func:`register` installs them for a namespace
``xp`` (the library's module, e.g. ``cupy``; ``numpy`` itself in the tests).

Two things cannot go through the protocols, and are computed on the host,
exactly (the operands copied to NumPy, the NumPy implementation, the result
copied back):

- the control flow primitives, whose sub-programs run on NumPy values;
- the primitives named in :data:`ON_HOST` (their NumPy implementations make
  NumPy arrays of their own, which the protocols cannot carry).

A dtype the library lacks is declared once per backend (its ``MISSING``
literal, dtype name -> reason); :func:`support_table` derives the support
table from these declarations and the registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final

import numpy as np

# (loaded for their primitives: lax and the namespace define them all)
import typelattice.lax  # noqa: F401  # pyright: ignore[reportUnusedImport]
import typelattice.numpy  # noqa: F401  # pyright: ignore[reportUnusedImport]
from typelattice import _dtypes
from typelattice._backends._backend import NUMPY, Backend, use
from typelattice._lax._primitive import PRIMITIVES
from typelattice._tracing.primitive import ShapedArray

__all__ = ["CONTROL", "ON_HOST", "on_host", "primitives", "register", "support_table"]

#: The control flow primitives: their sub-programs take NumPy values.
CONTROL: Final = frozenset({"cond", "while", "scan"})

#: The primitives computed on the host for a namespace other than NumPy,
#: besides the control flow: their NumPy implementations build NumPy arrays
#: of their own (``np.asarray`` of a result, ``np.empty``, constants made
#: with ``np.array``), call functions of SciPy-like vectorized Python
#: scalars, or use ufunc methods CuPy lacks (``maximum.accumulate``,
#: ``bitwise_and.reduce``, ``add.at``, ``reduce(initial=)``). Measured with
#: CuPy 14.2 on an H200: every other primitive ran the recorded JAX examples
#: of lax and the namespace on the device, through the protocols.
ON_HOST: Final = frozenset(
    {
        *CONTROL,
        *"""argmax argmin bitcast_convert_type clz complex convert_element_type
        cummax cummin cumprod cumsum div dot_general erf erf_inv erfc gather iota
        lgamma nextafter pad pow reduce_and reduce_max reduce_min reduce_or
        reduce_xor scatter-add scatter-max scatter-min scatter-mul sort""".split(),
    }
)


def primitives() -> Mapping[str, Any]:
    """Every primitive (lax and the namespace, loaded above, define them)."""
    return PRIMITIVES


def on_host(
    impl: Callable[..., Any],
    to_host: Callable[[Any], Any],
    to_device: Callable[[Any], Any],
    several: bool,
) -> Callable[..., Any]:
    """``impl`` (the NumPy backend's) on a device's arrays: the operands
    copied to the host, the result copied back. Exact: the values are the
    NumPy backend's. The NumPy backend computes inside (a sub-program of a
    control flow primitive binds primitives)."""

    def computed(*operands: Any, **params: Any) -> Any:
        values = [to_host(x) for x in operands]
        with use(NUMPY):
            out = impl(*values, **params)
        if several:
            return tuple(to_device(v) for v in out)
        return to_device(out)

    computed.__name__ = f"on_host_{getattr(impl, '__name__', 'impl')}"
    return computed


def register(
    backend: Backend,
    xp: ModuleType,
    *,
    to_host: Callable[[Any], Any] | None = None,
    to_device: Callable[[Any], Any] | None = None,
    host: frozenset[str] = ON_HOST,
) -> Backend:
    """Give ``backend`` an implementation of every primitive on ``xp``'s
    arrays.

    Args:
      backend: the backend to fill.
      xp: the array library's namespace (``numpy``, ``cupy``).
      to_host: a device array to a NumPy array (default the backend's
        ``to_numpy``).
      to_device: a NumPy array to a device array (default the backend's
        ``from_numpy``).
      host: the primitives computed on the host when ``xp`` is not NumPy
        (the control flow primitives always are).

    Returns:
      ``backend``.

    >>> import numpy as np
    >>> from typelattice import lax
    >>> b = register(Backend("xp-numpy"), np)
    >>> from typelattice._lax._elementwise import add_p
    >>> b.implements(add_p)
    True
    """
    to_host = to_host or backend.to_numpy
    to_device = to_device or backend.from_numpy
    for name, prim in primitives().items():
        impl = NUMPY.impl(prim)
        rule = NUMPY.fast.get(prim)
        if name in CONTROL or (xp.__name__ != "numpy" and name in host):
            impl = on_host(impl, to_host, to_device, prim.multiple_results)
        elif rule is not None and not prim.multiple_results:
            impl = _by_ufunc(impl, rule, xp)
        backend.def_impl(prim, impl)
    return backend


def _by_ufunc(
    impl: Callable[..., Any], rule: Callable[..., Any], xp: ModuleType
) -> Callable[..., Any]:
    """``impl``, calling ``xp``'s ufunc itself for operands of the dtypes
    where the NumPy backend's fast rule says that ufunc is the whole
    implementation (the operands' own dtype, no widening, no checks): the
    implementation's layers cost more than a small operation on a GPU.

    Sound as the fast rule is: its answers are the implementation's, and
    ``xp``'s ufunc of the same name computes the same function (the
    implementation calls it too, through ``__array_ufunc__``). Fast rules of
    elementwise primitives read the operands' dtypes only; the choice is
    kept per tuple of dtypes, for calls without parameters.
    """
    chosen: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def pick(dtypes: tuple[Any, ...]) -> Callable[..., Any]:
        found = rule(*[ShapedArray((), np.dtype(dt), False) for dt in dtypes])
        if type(found) is np.ufunc:
            own = getattr(xp, found.__name__, None)
            if own is not None:
                return own  # type: ignore[no-any-return]
        return impl

    def computed(*operands: Any, **params: Any) -> Any:
        if params:
            return impl(*operands, **params)
        key = tuple([x.dtype for x in operands])
        fn = chosen.get(key)
        if fn is None:
            fn = chosen[key] = pick(key)
        return fn(*operands)

    computed.__name__ = f"by_ufunc_{getattr(impl, '__name__', 'impl')}"
    return computed


def support_table(
    backend: Backend,
    missing: Mapping[str, str],
    host: frozenset[str] = ON_HOST,
) -> dict[str, dict[str, str]]:
    """Primitive name -> dtype name -> 'yes', 'emulated: ...' or 'no: ...',
    derived from ``backend``'s registrations, the primitives it computes
    on the host (``host``) and its missing dtypes (``missing``, dtype name
    -> reason).

    >>> import numpy as np
    >>> b = register(Backend("xp-numpy"), np)
    >>> table = support_table(b, {"bfloat16": "no bfloat16"}, frozenset({"sort"}))
    >>> table["add"]["float32"], table["add"]["bfloat16"]
    ('yes', 'no: no bfloat16')
    >>> table["sort"]["int8"]
    'emulated: computed on the host'
    """
    names = [d.name for d in _dtypes.ALL_DTYPES]
    table: dict[str, dict[str, str]] = {}
    for name, prim in sorted(primitives().items()):
        if not backend.implements(prim):
            table[name] = dict.fromkeys(names, "no: not implemented")
            continue
        row: dict[str, str] = {}
        for dt in names:
            if dt in missing:
                row[dt] = f"no: {missing[dt]}"
            elif name in host:
                row[dt] = "emulated: computed on the host"
            else:
                row[dt] = "yes"
        table[name] = row
    return table
