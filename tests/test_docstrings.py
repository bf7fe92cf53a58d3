"""Every public callable is documented: a docstring with Args, Returns and an
example, and the examples run.

The public API is what ``__all__`` of ``typelattice``, ``typelattice.numpy``,
``typelattice.random``, ``typelattice.nn.initializers``, ``typelattice.optim``
and ``typelattice.typing`` lists: functions (the elementwise ones, made from
data, included), classes with their public methods and properties, and the
classes of public objects (``config``, the scalar types). Also reached from
there: ``x.at[idx]``'s updates and the ufunc methods (``tnp.add.reduce``).

The rules:
- a function or method has a docstring with a ``>>>`` example; ``Args:``
  when it takes a parameter (``self`` aside); ``Returns:`` unless it is
  annotated ``-> None`` or ``-> NoReturn``;
- a class has a docstring with an example; ``Args:`` or ``Attributes:`` when
  users construct it with arguments (exceptions, warnings and protocols
  aside);
- a property has a docstring.

``--doctest-modules`` runs most examples where they are written, but not
all: it skips the methods of classes shown under another module's name
(``Lattice``'s, whose ``__module__`` is ``typelattice``) and the ufunc
methods made at import. Every example found here is run here too, so none
is left out whatever the build.
"""

from __future__ import annotations

import dataclasses
import doctest
import inspect
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import typelattice
import typelattice.experimental.mesh_utils
import typelattice.flax.core
import typelattice.flax.metrics.tensorboard
import typelattice.flax.serialization
import typelattice.flax.struct
import typelattice.flax.training.checkpoints
import typelattice.flax.training.common_utils
import typelattice.flax.training.dynamic_scale
import typelattice.flax.training.train_state
import typelattice.nn
import typelattice.nn.initializers
import typelattice.numpy as tnp
import typelattice.optim
import typelattice.random
import typelattice.sharding
import typelattice.typing

MODULES = (
    typelattice,
    typelattice.numpy,
    typelattice.random,
    typelattice.nn,
    typelattice.nn.initializers,
    typelattice.optim,
    typelattice.typing,
    typelattice.sharding,
    typelattice.experimental.mesh_utils,
    typelattice.flax.core,
    typelattice.flax.metrics.tensorboard,
    typelattice.flax.serialization,
    typelattice.flax.struct,
    typelattice.flax.training.checkpoints,
    typelattice.flax.training.dynamic_scale,
    typelattice.flax.training.common_utils,
    typelattice.flax.training.train_state,
)


def _ours(obj: object) -> bool:
    return str(getattr(obj, "__module__", "")).startswith("typelattice")


def _is_function(obj: object) -> bool:
    # C functions (the elementwise ones, result_type) carry __wrapped__.
    return inspect.isroutine(obj) or (callable(obj) and hasattr(obj, "__wrapped__"))


def _members(cls: type) -> Iterator[tuple[str, object]]:
    """Public methods and properties of ``cls`` and its typelattice bases."""
    seen: set[str] = set()
    for base in cls.__mro__:
        if not _ours(base):
            continue
        # A dataclass field's default (a layer's kernel_init) is a value,
        # not a member.
        fields = (
            {f.name for f in dataclasses.fields(base)}
            if dataclasses.is_dataclass(base)
            else set()
        )
        for name, value in vars(base).items():
            if name.startswith("_") or name in seen or name in fields:
                continue
            seen.add(name)
            if isinstance(value, staticmethod | classmethod):
                yield name, value.__func__
            elif isinstance(value, property) or inspect.isfunction(value):
                yield name, value


def public_objects() -> dict[str, object]:
    """Every documented object of the public API, by a readable name."""
    found: dict[str, object] = {}
    ids: set[int] = set()

    def add(name: str, obj: object) -> None:
        if id(obj) in ids:
            return
        ids.add(id(obj))
        found[name] = obj
        if isinstance(obj, type):
            for member, value in _members(obj):
                add(f"{name}.{member}", value)

    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type):
                if _ours(obj):
                    add(f"{module.__name__}.{name}", obj)
            elif _is_function(obj):
                add(f"{module.__name__}.{name}", obj)
                if isinstance(obj, tnp.ufunc):
                    for method in ("reduce", "accumulate", "outer", "at", "reduceat"):
                        add(f"{module.__name__}.{name}.{method}", getattr(obj, method))
            elif _ours(type(obj)):  # config, tnp.int8: their class
                add(f"{type(obj).__module__}.{type(obj).__name__}", type(obj))
    ref = type(tnp.zeros(2).at[0])
    add(f"{ref.__module__}.{ref.__name__}", ref)
    return found


PUBLIC = public_objects()


def _takes_arguments(fn: Callable[..., Any]) -> bool:
    params = list(inspect.signature(fn).parameters)
    return bool(params) and params != ["self"] and params != ["cls"]


def _returns_value(fn: Callable[..., Any]) -> bool:
    annotation = inspect.signature(fn).return_annotation
    return annotation not in (None, "None", "NoReturn")


def _user_constructed(cls: type) -> bool:
    if issubclass(cls, BaseException) or getattr(cls, "_is_protocol", False):
        return False
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    return any(p.kind is not p.VAR_KEYWORD for p in params.values())


def _doc(obj: object) -> str:
    """The docstring of ``obj`` itself (a class's own, not a base's)."""
    if isinstance(obj, type):
        return str(obj.__dict__.get("__doc__") or "")
    return str(obj.__doc__ or "")


def problems(obj: object) -> list[str]:
    """What the docstring of ``obj`` lacks, by the rules above."""
    if isinstance(obj, property):
        return [] if (obj.__doc__ or "").strip() else ["no docstring"]
    doc = inspect.cleandoc(_doc(obj))
    if not doc:
        return ["no docstring"]
    missing = [] if ">>>" in doc else ["no >>> example"]
    if isinstance(obj, type):
        if _user_constructed(obj) and "Args:" not in doc and "Attributes:" not in doc:
            missing.append("no Args: or Attributes: section")
        return missing
    assert callable(obj)
    if _takes_arguments(obj) and "Args:" not in doc:
        missing.append("no Args: section")
    if _returns_value(obj) and "Returns:" not in doc:
        missing.append("no Returns: section")
    return missing


def test_the_walk_finds_the_api() -> None:
    # A walk that found nothing would pass every rule.
    for name in (
        "typelattice.result_type",
        "typelattice.numpy.add",
        "typelattice.numpy.sqrt",
        "typelattice.numpy.add.reduce",
        "typelattice.Lattice",
        "typelattice.Lattice.join",
        "typelattice.Array.sum",
        "typelattice.Array.dtype",
        "typelattice._config.Config",
        "typelattice._config.Config.update",
        "typelattice.numpy.ScalarType",
        "typelattice.typing.is_dtype_like",
        "typelattice.random.uniform",
        "typelattice.nn.initializers.lecun_normal",
        "typelattice.optim.adamw",
        "typelattice.optim.AdamState",
    ):
        assert name in PUBLIC, name
    ref = type(tnp.zeros(2).at[0])
    assert f"{ref.__module__}.{ref.__name__}.set" in PUBLIC
    assert len(PUBLIC) > 250


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_documented(name: str) -> None:
    assert problems(PUBLIC[name]) == []


def test_the_rules_catch_what_is_missing() -> None:
    def bare(x: int) -> int:
        return x

    def no_args(x: int) -> int:
        """Twice x.

        Returns:
          The double.

        >>> no_args(2)
        4
        """
        return 2 * x

    class Point:
        """A point."""

        def __init__(self, x: int) -> None:
            self.x = x

    assert problems(bare) == ["no docstring"]
    assert problems(no_args) == ["no Args: section"]
    assert problems(Point) == ["no >>> example", "no Args: or Attributes: section"]


def _globals_of(obj: object) -> dict[str, Any]:
    """The names an example sees: its module's, as under --doctest-modules."""
    fn = obj.fget if isinstance(obj, property) else obj
    fn = inspect.unwrap(fn)  # type: ignore[arg-type]
    module = sys.modules[getattr(fn, "__module__", None) or "typelattice"]
    return dict(getattr(fn, "__globals__", vars(module)))


def _examples() -> dict[str, object]:
    """The objects with examples, one per docstring (the ufunc methods of
    every function share one text)."""
    by_text: dict[str, tuple[str, object]] = {}
    for name, obj in sorted(PUBLIC.items()):
        if ">>>" in _doc(obj):
            by_text.setdefault(_doc(obj), (name, obj))
    return dict(by_text.values())


EXAMPLES = _examples()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_run(name: str) -> None:
    obj = EXAMPLES[name]
    parser = doctest.DocTestParser()
    test = parser.get_doctest(_doc(obj), _globals_of(obj), name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{name}: {result.failed} example(s) failed (above)"
