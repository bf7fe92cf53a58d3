"""Every function of ``typelattice.numpy`` that takes arrays is written on
its primitives: elementwise (made from an ``Op``) or written with
``typelattice.lax`` (marked ``lax_function``), so tracers of every kind
reach it by binding primitives. Nothing is recorded whole: no shape rules,
no second implementation under tracing.
"""

from __future__ import annotations

import inspect
import re
import sys
from types import ModuleType
from typing import Any

import typelattice.numpy as tnp
from support import ON_LAX
from test_on_lax import WRITTEN_ON_LAX
from typelattice._tracing import trace
from typelattice.numpy import _array_methods

UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")


def _namespace_functions(namespace: ModuleType) -> dict[str, Any]:
    """The public functions the namespace's own modules define (the dtype
    helpers it re-exports, ``finfo``, ``result_type``..., take no arrays;
    the scalar types, ``tnp.int8(x)``, are objects that call ``asarray``).
    The elementwise functions made in C carry ``__wrapped__``."""
    found: dict[str, Any] = {}
    for name in namespace.__all__:
        value = getattr(namespace, name)
        module = str(getattr(value, "__module__", ""))
        ours = module.split(".")[:2] == namespace.__name__.split(".")
        function = inspect.isroutine(value) or hasattr(value, "__wrapped__")
        if function and ours:
            found[name] = value
    return found


def _array_entry_points() -> dict[str, Any]:
    """The namespace functions Array's methods (the table of
    ``typelattice.numpy._array_methods``) call by their modules' names
    (``_shape._getitem``...), private ones included."""
    source = inspect.getsource(_array_methods)
    found: dict[str, Any] = {}
    for module, name in set(re.findall(r"\b(_[a-z]+)\.(\w+)\(", source)):
        if module in ("_creation", "_linalg", "_reductions", "_shape", "_ufuncs"):
            found[f"{module}.{name}"] = getattr(
                sys.modules[f"typelattice.numpy.{module}"], name
            )
    return found


def _takes_tracers(fn: Any) -> bool:
    """Elementwise (an ``Op`` behind it) or written with ``typelattice.lax``
    (marked ``_lax``)."""
    return hasattr(fn, "_op") or getattr(fn, "_lax", False)


def not_on_lax(functions: dict[str, Any]) -> list[str]:
    """The names of functions that accept arrays but are neither
    elementwise nor written with lax (the programs of functions written on
    lax are checked by test_on_lax.py, test_shape_on_lax.py,
    test_elementwise_one_path.py and test_jaxpr_namespace.py)."""
    missing = []
    for name, fn in functions.items():
        if name.split(".")[-1] in ON_LAX or fn in WRITTEN_ON_LAX:
            continue
        if not _takes_tracers(fn):
            missing.append(name)
        for method in UFUNC_METHODS if hasattr(fn, "_op") else ():
            found = getattr(fn, method, None)
            if found is not None and not _takes_tracers(found):
                missing.append(f"{name}.{method}")
    return sorted(missing)


# -- the namespace ---------------------------------------------------------------


def test_every_namespace_function_is_on_lax() -> None:
    functions = _namespace_functions(tnp)
    assert {"sum", "reshape", "concatenate", "zeros", "add", "where"} <= set(functions)
    assert not_on_lax(functions) == []


def test_every_function_arrays_call_is_on_lax() -> None:
    entry_points = _array_entry_points()
    assert {"_shape._getitem", "_shape._scatter", "_reductions.sum"} <= set(
        entry_points
    )
    assert not_on_lax(entry_points) == []


# -- the checks catch what they look for -----------------------------------------


def test_the_checks_catch_a_function_not_on_lax() -> None:
    def bare(a: Any) -> Any:
        return a

    def marked(a: Any) -> Any:
        return a

    marked._lax = True  # type: ignore[attr-defined]
    assert not_on_lax({"bare": bare, "marked": marked, "add": tnp.add}) == ["bare"]


def test_nothing_is_recorded_whole() -> None:
    """The machinery that recorded a namespace call as one equation, run
    again on placeholders, is gone: a program holds primitives only."""
    for name in ("Call", "traced", "TRACED", "lowering", "LOWERINGS"):
        assert not hasattr(trace, name), name
