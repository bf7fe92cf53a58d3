"""Lifted transforms of modules: ``jit`` and ``map_variables``, as Flax
linen's.

A lifted transform runs a module's method on its variables passed as
values: the bound module's variables (the subtree at its path, per
collection) and fresh keys for its random streams go in; a copy of the
module, bound at the root of a run of its own, runs the method there; the
collections that run could change come out and are written back at the
module's path. ``jit`` traces that run with :func:`typelattice.jit`;
``map_variables`` passes the variables through a function on the way in
(and out).

Both take a Module class (the result is a subclass named ``Jit<Class>``
or ``Map_variables<Class>``, as in Flax, whose methods are transformed) or
a function whose first argument is a module (a method, as a decorator).
"""

# The lifted run is part of the Module machinery and uses its private parts.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

from typelattice._tracing.jit import jit as _jit
from typelattice.nn._module import (
    _STACK,
    Module,
    _copy_dicts,
    _has_module,
    _Run,
    _Scope,
    _wrap_method,
)

__all__ = ["jit", "map_variables"]

Target = TypeVar("Target")


def _filter(spec: Any, what: str) -> Callable[[str], bool]:
    """A collection (or random stream) filter as Flax writes it: True for
    all, False for none, a name, or names."""
    if spec is True:
        return lambda _: True
    if spec is False or spec is None:
        return lambda _: False
    if isinstance(spec, str):
        return lambda name: name == spec
    if isinstance(spec, Iterable):
        names = frozenset(cast(Iterable[str], spec))
        return names.__contains__
    raise TypeError(
        f"{what}={spec!r} is not a collection filter: pass True (all), "
        "False (none), a name, or a list of names"
    )


def _unbound(module: Module) -> Module:
    """A copy of ``module`` that belongs to no run, its submodule fields
    copied the same way, to be bound afresh in a lifted run."""
    changes = {
        f.name: _unbound_tree(getattr(module, f.name))
        for f in dataclasses.fields(module)
        if _has_module(getattr(module, f.name))
    }
    # (A module made while a @compact method runs would become its child:
    # the copy is made with no parent.)
    _STACK.append((module, False))
    try:
        return dataclasses.replace(module, **changes)
    finally:
        _STACK.pop()


def _unbound_tree(value: Any) -> Any:
    if isinstance(value, Module):
        return _unbound(value)
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        items = [_unbound_tree(v) for v in seq]
        return items if isinstance(seq, list) else tuple(items)
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {k: _unbound_tree(v) for k, v in mapping.items()}
    return value


def _scope_of(module: Module, transform: str) -> _Scope:
    scope = module._bound_scope()
    if scope is None:
        raise ValueError(
            f"a method transformed by nn.{transform} runs only while its "
            "module runs under init or apply: call model.init(key, x) or "
            "model.apply(variables, x)"
        )
    return scope


def _variables_at(scope: _Scope, keep: Callable[[str], bool]) -> dict[str, Any]:
    """The module's variables: each kept collection's subtree at its path."""
    found: dict[str, Any] = {}
    for collection in scope.run.variables:
        if keep(collection):
            node = scope.lookup(collection)
            if node is not None:
                found[collection] = _copy_dicts(node)
    return found


def _keys_at(scope: _Scope, keep: Callable[[str], bool]) -> dict[str, Any]:
    """A fresh key of each kept random stream, drawn at the module's path."""
    return {
        stream: scope.run.make_rng(stream, scope.path)
        for stream in scope.run.rngs
        if keep(stream)
    }


def _write_back(scope: _Scope, updates: Mapping[str, Any]) -> None:
    """Store the lifted run's collections at the module's path."""
    for collection, tree in updates.items():
        if not scope.run.mutable(collection):
            continue
        if not tree and scope.lookup(collection) is None:
            continue  # (nothing made: no empty dicts in the variables)
        node = scope.store(collection)
        node.clear()
        node.update(tree)


def _run_inside(
    module: Module,
    fn: Callable[..., Any],
    run: _Run,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> Any:
    """``fn(copy of module, *args, **kwargs)`` with the copy bound at the
    root of ``run``."""
    bound = _unbound(module)
    bound._bind(_Scope(run, ()))
    return _wrap_method(fn)(bound, *args, **kwargs)


def _transform_target(
    target: Any,
    transform: Callable[[Callable[..., Any]], Callable[..., Any]],
    prefix: str,
    methods: Any,
) -> Any:
    """Apply ``transform`` to a function, or to the methods of a Module
    class (a subclass named ``prefix + class name``)."""
    if isinstance(target, type) and issubclass(target, Module):
        names = (
            ["__call__"]
            if methods is None
            else [methods]
            if isinstance(methods, str)
            else list(cast(Iterable[str], methods))
        )
        attrs: dict[str, Any] = {"__module__": target.__module__}
        for name in names:
            original = getattr(target, name)
            attrs[name] = transform(original)
        return type(prefix + target.__name__, (target,), attrs)
    if not isinstance(target, type) and callable(target):
        fn = cast(Callable[..., Any], target)
        return functools.wraps(fn)(transform(fn))
    raise TypeError(
        f"{target!r} is neither a Module class nor a function: transform a "
        "layer class (nn.jit(nn.Dense)) or a method (@nn.jit above def)"
    )


# -- jit ------------------------------------------------------------------------------


class _Unhashable:
    """A static part that cannot be hashed: compared by identity (each
    call traces again)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _static(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return _Unhashable(value)
    return value


def _lifted_body(
    variables: dict[str, Any],
    keys: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    spec: Any,
) -> Any:
    """The traced run of a jitted method: its output and the collections it
    may have changed."""
    if isinstance(spec, _Unhashable):
        spec = spec.value
    module, fn, static_args, static_kwargs, mutable, initializing = spec
    full = list(args)
    for position, value in static_args:
        full[position] = value
    run = _Run(variables, mutable, keys, initializing)
    out = _run_inside(module, fn, run, tuple(full), {**kwargs, **dict(static_kwargs)})
    return out, {c: t for c, t in run.variables.items() if mutable(c)}


_COMPILED = _jit(_lifted_body, static_argnames=("spec",))


def jit(
    target: Target,
    variables: Any = True,
    rngs: Any = True,
    static_argnums: int | Iterable[int] = (),
    static_argnames: str | Iterable[str] = (),
    donate_argnums: int | Iterable[int] = (),
    device: Any = None,
    backend: str | None = None,
    methods: Any = None,
) -> Target:
    """Compile a module's method with :func:`typelattice.jit`, as Flax
    linen's ``nn.jit``: the module's variables and random keys are passed
    to the compiled program as values and the collections it changes come
    back.

    Args:
      target: a Module class (its ``__call__``, or ``methods``, compiled),
        or a function whose first argument is a module (a method).
      variables: the collections passed in (True: all).
      rngs: the random streams passed in (True: all); each gets a fresh
        key per call.
      static_argnums: positions of static arguments, counting the module
        as 0 (as in Flax): they are passed as they are, and each new value
        traces again.
      static_argnames: names of static keyword arguments.
      donate_argnums: accepted for compatibility (nothing is donated).
      device: accepted for compatibility (NumPy runs on the CPU).
      backend: accepted for compatibility.
      methods: the method names to compile, for a class (default
        ``__call__``).

    Returns:
      The class's subclass ``Jit<Class>``, or the compiled function.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class Scaled(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, x, times):
    ...         return nn.Dense(2)(x) * times
    >>> JitScaled = nn.jit(Scaled, static_argnums=2)
    >>> model = JitScaled()
    >>> variables = model.init(random.key(0), tnp.ones((1, 3)), 2)
    >>> sorted(variables['params'])
    ['Dense_0']
    >>> model.apply(variables, tnp.ones((1, 3)), 2).shape
    (1, 2)
    """
    del donate_argnums, device, backend  # (one device: nothing to choose)
    keep_variables = _filter(variables, "variables")
    keep_rngs = _filter(rngs, "rngs")
    positions = (
        (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    )
    names = (
        (static_argnames,)
        if isinstance(static_argnames, str)
        else tuple(static_argnames)
    )

    def transform(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(module: Module, *args: Any, **kwargs: Any) -> Any:
            scope = _scope_of(module, "jit")
            static_args = tuple(
                (p - 1, args[p - 1]) for p in positions if 0 < p <= len(args)
            )
            dynamic = tuple(
                None if any(i == p for p, _ in static_args) else a
                for i, a in enumerate(args)
            )
            static_kwargs = tuple(
                sorted((k, v) for k, v in kwargs.items() if k in names)
            )
            dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in names}
            spec = _static(
                (
                    _unbound(module),
                    fn,
                    static_args,
                    static_kwargs,
                    scope.run.mutable,
                    scope.run.initializing,
                )
            )
            out, updates = _COMPILED(
                _variables_at(scope, keep_variables),
                _keys_at(scope, keep_rngs),
                dynamic,
                dynamic_kwargs,
                spec=spec,
            )
            _write_back(scope, updates)
            return out

        return call

    return cast(Target, _transform_target(target, transform, "Jit", methods))


# -- map_variables ------------------------------------------------------------------


def _same(x: Any) -> Any:
    return x


def map_variables(
    target: Target,
    mapped_collections: Any = True,
    trans_in_fn: Callable[..., Any] = _same,
    trans_out_fn: Callable[..., Any] = _same,
    init: bool = False,
    mutable: bool = False,
    rngs: Any = True,
    variables: Any = True,
    methods: Any = None,
) -> Target:
    """Transform a module's variables on their way in (and out), as Flax
    linen's ``nn.map_variables``: the module sees ``trans_in_fn`` of its
    variables of the mapped collections.

    Args:
      target: a Module class, or a function whose first argument is a
        module.
      mapped_collections: the collections mapped (True: all; a name; names).
      trans_in_fn: takes ``{collection: variables}`` of the mapped
        collections and returns what the module sees.
      trans_out_fn: maps them back, for the variables ``init`` makes (with
        ``init=True``) or the module changes (with ``mutable=True``).
      init: make the variables when they are missing (pass
        ``self.is_initializing()``): the module runs once to make them,
        they go through ``trans_out_fn``, then ``trans_in_fn``.
      mutable: let the module change the mapped collections (written back
        through ``trans_out_fn``).
      rngs: the random streams passed in (True: all).
      variables: the collections passed in (True: all).
      methods: the method names to transform, for a class (default
        ``__call__``).

    Returns:
      The class's subclass ``Map_variables<Class>``, or the function.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> upper = tnp.arange(3)[:, None] <= tnp.arange(3)  # a kernel's upper triangle
    >>> def causal(v):
    ...     return {c: {**p, 'kernel': p['kernel'] * upper} for c, p in v.items()}
    >>> class CausalDense(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         Dense = nn.map_variables(nn.Dense, 'params', causal,
    ...                                  init=self.is_initializing())
    ...         return Dense(3, use_bias=False, kernel_init=nn.initializers.ones)(x)
    >>> x = tnp.ones((1, 3))
    >>> variables = CausalDense().init(random.key(0), x)
    >>> CausalDense().apply(variables, x)  # the kernel's lower triangle is 0
    Array([[1., 2., 3.]], dtype=float32)
    """
    mapped = _filter(mapped_collections, "mapped_collections")
    keep_variables = _filter(variables, "variables")
    keep_rngs = _filter(rngs, "rngs")
    target_out = init or mutable

    def transform(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(module: Module, *args: Any, **kwargs: Any) -> Any:
            scope = _scope_of(module, "map_variables")
            run = scope.run
            given = _variables_at(scope, keep_variables)
            target_vars = {c: given.pop(c) for c in list(given) if mapped(c)}
            keys = _keys_at(scope, keep_rngs)
            if init:
                first = _Run({**given, **target_vars}, run.mutable, keys, True)
                first.initializing = run.initializing
                _run_inside(module, fn, first, args, kwargs)
                made = {c: t for c, t in first.variables.items() if mapped(c)}
                target_vars = trans_out_fn(made)

            def may_write(collection: str) -> bool:
                return run.mutable(collection) and (
                    target_out or not mapped(collection)
                )

            inner = _Run(
                {**given, **trans_in_fn(target_vars)},
                may_write,
                keys,
                run.initializing,
            )
            out = _run_inside(module, fn, inner, args, kwargs)
            updates = {
                c: t
                for c, t in inner.variables.items()
                if may_write(c) and not mapped(c)
            }
            if target_out:
                changed = {c: t for c, t in inner.variables.items() if mapped(c)}
                updates.update(trans_out_fn(changed))
            _write_back(scope, updates)
            return out

        return call

    return cast(Target, _transform_target(target, transform, "Map_variables", methods))
