"""Shape rules are attached where each function is defined, and they match
the namespace one to one.

Every function of ``typelattice.numpy`` that takes arrays accepts tracers:
the elementwise ones (made from an ``Op``) and those written with
``typelattice.lax`` (marked ``lax_function``) by binding primitives, every
other one by the shape rule given with ``@traced(rule)`` at its definition
(ufunc methods where they are made). No registered rule may name nothing: each
traced function is the one its module holds under its name (so calls reach
the traced version), and something uses it.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import re
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import pytest

import typelattice
import typelattice.numpy as tnp
from support import ON_LAX
from test_on_lax import WRITTEN_ON_LAX
from typelattice._tracing import abstract
from typelattice._tracing.trace import TRACED, traced
from typelattice.numpy import _array_methods

UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")
SOURCES = pathlib.Path(typelattice.__file__).parent


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
    """Elementwise (an ``Op`` behind it), written with ``typelattice.lax``
    (marked ``_lax``), or given a shape rule."""
    return (
        hasattr(fn, "_op")
        or getattr(fn, "_lax", False)
        or callable(getattr(fn, "_rule", None))
    )


def without_rules(functions: dict[str, Any]) -> list[str]:
    """The names of functions that accept arrays but not tracers: neither
    elementwise, nor written with lax, nor given a shape rule (the programs
    of functions written on lax are checked by test_on_lax.py,
    test_shape_on_lax.py and test_elementwise_one_path.py)."""
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


def _referenced_names(paths: Iterable[pathlib.Path]) -> set[str]:
    """Every name used (loaded, an attribute, imported) in these sources."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name)
    return names


def naming_nothing(
    registered: Iterable[Callable[..., Any]],
    namespace: ModuleType,
    referenced: set[str],
) -> list[str]:
    """The traced functions whose rule reaches no caller: not what their
    module holds under their name (shadowed or renamed), or used nowhere
    (neither exported nor referenced)."""
    lost = []
    for fn in registered:
        qualname = fn.__qualname__
        if "." in qualname:  # a ufunc method: tnp.<name>.<method>
            holder, method = qualname.split(".", 1)
            if getattr(getattr(namespace, holder, None), method, None) is not fn:
                lost.append(qualname)
            continue
        module = sys.modules[fn.__module__]
        if getattr(module, fn.__name__, None) is not fn:
            lost.append(f"{fn.__module__}.{qualname}")
        elif fn.__name__ not in namespace.__all__ and fn.__name__ not in referenced:
            lost.append(f"{fn.__module__}.{qualname}")
    return sorted(lost)


# -- the namespace ---------------------------------------------------------------


def test_every_namespace_function_has_a_rule() -> None:
    functions = _namespace_functions(tnp)
    assert {"sum", "reshape", "concatenate", "zeros", "add", "where"} <= set(functions)
    assert without_rules(functions) == []


def test_every_function_arrays_call_has_a_rule() -> None:
    entry_points = _array_entry_points()
    assert {"_shape._getitem", "_shape._scatter", "_reductions.sum"} <= set(
        entry_points
    )
    assert without_rules(entry_points) == []


def test_no_rule_names_nothing() -> None:
    # The functions still recorded whole (value-dependent shapes...): fewer
    # as more of the namespace is written on lax.
    assert TRACED
    referenced = _referenced_names(SOURCES.rglob("*.py"))
    assert naming_nothing(TRACED, tnp, referenced) == []


def test_rules_are_the_abstract_rules() -> None:
    """Each rule is one of the shape rules of _tracing.abstract (or made by
    one of its rule factories there): no rule is written elsewhere."""
    for fn in TRACED:
        for rule in (fn._rule, fn._creation):  # type: ignore[attr-defined]
            if rule is not None:
                assert rule.__module__ == abstract.__name__, fn.__qualname__


def test_creation_rules_only_on_creation_functions() -> None:
    with_creation = {
        fn.__name__
        for fn in TRACED
        if fn._creation is not None  # type: ignore[attr-defined]
    }
    # (zeros, full, eye, arange, linspace and the other creation functions
    # are written on lax: they broadcast a scalar or bind iota, which
    # eval_shape records without allocating.)
    assert with_creation == set()


# -- the checks catch what they look for -----------------------------------------


def test_the_checks_catch_a_function_without_a_rule() -> None:
    def bare(a: Any) -> Any:
        return a

    @traced(abstract.full_size)
    def ruled(a: Any) -> Any:
        return a

    TRACED.remove(ruled)
    assert without_rules({"bare": bare, "ruled": ruled, "add": tnp.add}) == ["bare"]


def test_the_checks_catch_a_rule_naming_nothing() -> None:
    fake = ModuleType("typelattice_fake_namespace")
    fake.__all__ = ["exported"]  # type: ignore[attr-defined]
    sys.modules[fake.__name__] = fake
    try:
        made = []
        for name in ("exported", "shadowed", "unused", "used"):

            def fn(a: Any) -> Any:
                return a

            fn.__name__ = fn.__qualname__ = name
            fn.__module__ = fake.__name__
            made.append(traced(abstract.full_size)(fn))
            TRACED.remove(made[-1])
            setattr(fake, name, made[-1])
        fake.shadowed = lambda a: a  # type: ignore[attr-defined]
        lost = naming_nothing(made, fake, referenced={"used"})
    finally:
        del sys.modules[fake.__name__]
    assert lost == [f"{fake.__name__}.shadowed", f"{fake.__name__}.unused"]


def test_traced_refuses_a_missing_rule() -> None:
    with pytest.raises(TypeError, match="rule"):
        traced(None)  # type: ignore[arg-type]
