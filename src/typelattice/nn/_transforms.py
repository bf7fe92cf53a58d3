"""Lifted transforms of modules: ``jit``, ``map_variables``, ``scan``,
``vmap`` and ``checkpoint``, as Flax linen's.

A lifted transform runs a module's method on its variables passed as
values: the bound module's variables (the subtree at its path, per
collection) and fresh keys for its random streams go in; a copy of the
module, bound at the root of a run of its own, runs the method there; the
collections that run could change come out and are written back at the
module's path. ``jit`` traces that run with :func:`typelattice.jit`;
``map_variables`` passes the variables through a function on the way in
(and out).

Each takes a Module class (the result is a subclass named ``Jit<Class>``,
``Map_variables<Class>``, ``Scan<Class>``..., as in Flax, whose methods are
transformed) or a function whose first argument is a module (a method, as
a decorator).

``scan``, ``vmap`` and ``checkpoint`` say what each collection is to the
transformation (Flax linen's vocabulary):

- *broadcast*: the same value at every step or batch element (the
  parameters of a recurrent cell, shared over time);
- *axes*: one slice per step or element, stacked along an axis (the
  parameters of an ensemble made by ``vmap``);
- *carry* (``scan`` only): updated from step to step, like the carry.

Random streams are *split* (a different key per step or element) or
shared. Nothing here computes: the values are computed by the
transformations of :mod:`typelattice` (``lax.scan``, ``vmap``,
``checkpoint``) on the same primitives as every other call.
"""

# The lifted run is part of the Module machinery and uses its private parts.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

from typelattice import lax, random
from typelattice._tracing import batching, tree
from typelattice._tracing import remat as checkpointing
from typelattice._tracing.jit import jit as _jit
from typelattice.nn._module import (
    _STACK,
    Module,
    _copy_dicts,
    _Run,
    _Scope,
    _unbound_copy,
    _wrap_method,
)
from typelattice.numpy import moveaxis

__all__ = ["broadcast", "checkpoint", "jit", "map_variables", "remat", "scan", "vmap"]

Target = TypeVar("Target")
T = TypeVar("T")

#: A collection or random stream filter (Flax's ``CollectionFilter``): a
#: name, names, True (all) or False (none).
Filter = bool | str | Sequence[str]


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
    for collection, subtree in updates.items():
        if not scope.run.mutable(collection):
            continue
        if not subtree and scope.lookup(collection) is None:
            continue  # (nothing made: no empty dicts in the variables)
        node = scope.store(collection)
        node.clear()
        node.update(subtree)


def _run_inside(
    module: Module,
    fn: Callable[..., Any],
    run: _Run,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> Any:
    """``fn(copy of module, *args, **kwargs)`` with the copy bound at the
    root of ``run``."""
    bound = _unbound_copy(module)
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
                    _unbound_copy(module),
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


# -- scan, vmap and checkpoint ------------------------------------------------------


class _Broadcast:
    """``nn.broadcast``: an ``in_axes`` entry of :func:`scan` for an argument
    given whole to every step instead of sliced.

    >>> from typelattice import nn
    >>> nn.broadcast
    broadcast
    """

    _instance: _Broadcast | None = None

    def __new__(cls) -> _Broadcast:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "broadcast"


broadcast: Final = _Broadcast()


def _matches(filt: Any, name: str) -> bool:
    return _filter(filt, "filter")(name)


def _axis_of(mapping: Mapping[Any, T], name: str) -> T | None:
    """The entry of ``mapping`` (filters to values) that names ``name``."""
    for filt, value in mapping.items():
        if _matches(filt, name):
            return value
    return None


class _Lifted:
    """One call of a module under scan, vmap or checkpoint: the module's
    variables and keys at its path, and a pure function running a copy of
    it on given ones."""

    def __init__(self, module: Module, cls: type[Module] | None, what: str) -> None:
        self.scope = _scope_of(module, what)
        self.run = self.scope.run
        if cls is not None and type(module) is not cls:
            # The lifted class's copy would run the lifted method again:
            # the copy is of the class lifted.
            _STACK.append((module, False))
            try:
                module = cls(
                    **{
                        f.name: getattr(module, f.name)
                        for f in dataclasses.fields(module)
                        if f.init
                    }
                )
            finally:
                _STACK.pop()
        self.module = module
        self.variables = _variables_at(self.scope, _everything)

    def keys(self) -> dict[str, Any]:
        """A fresh key per random stream of the run, for this call."""
        return _keys_at(self.scope, _everything)

    def split_keys(
        self, splits: Mapping[Any, bool], n: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Fresh keys for this call: ``n`` stacked keys for each stream that
        ``splits`` splits, one for each other stream."""
        keys = self.keys()
        split: dict[str, Any] = {
            s: random.split(k, n) for s, k in keys.items() if _axis_of(splits, s)
        }
        return split, {s: k for s, k in keys.items() if s not in split}

    def call(
        self,
        fun: Callable[..., Any],
        variables: Mapping[str, Any],
        keys: Mapping[str, Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
    ) -> tuple[Any, dict[str, Any]]:
        """``fun(copy, *args, **kwargs)`` on ``variables`` and ``keys``: its
        output and the variables after it (every collection)."""
        run = _Run(variables, self.run.mutable, keys, self.run.initializing)
        out = _run_inside(self.module, fun, run, tuple(args), kwargs)
        return out, run.variables

    def write_back(self, variables: Mapping[str, Any]) -> None:
        """Store the collections that the run may change."""
        _write_back(self.scope, variables)


def _everything(name: str) -> bool:
    del name
    return True


#: What a lifted call does: (the call, the function, its args, its kwargs).
_Transform = Callable[
    [_Lifted, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any
]


def _no_setup(self: Module) -> None:
    """A lifted class declares nothing itself: the class lifted runs its
    setup inside the transformation, in the copy."""
    del self


def _lift(
    target: Any, name: str, transform: _Transform, methods: Sequence[str] | None
) -> Any:
    """``target`` (a Module class, a method, or a function whose first
    argument is a module) with its calls run through ``transform``."""
    base = target if isinstance(target, type) and issubclass(target, Module) else None

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(module: Module, *args: Any, **kwargs: Any) -> Any:
            return transform(_Lifted(module, base, name), fn, args, kwargs)

        return call

    lifted = _transform_target(target, wrap, name.capitalize(), methods)
    if base is not None:
        lifted.setup = _no_setup
    return lifted


def _lengths(in_axes: Sequence[Any], args: Sequence[Any]) -> set[int]:
    sizes: set[int] = set()
    for axis, arg in zip(in_axes, args, strict=True):
        if axis is broadcast or axis is None:
            continue
        for leaf in tree.leaves(arg):
            sizes.add(int(leaf.shape[axis]))
    return sizes


def _per_argument(axes: Any, n: int, what: str) -> list[Any]:
    if isinstance(axes, list | tuple):
        seq = list(cast(Sequence[Any], axes))
        if len(seq) != n:
            raise ValueError(
                f"nn.{what}: in_axes has {len(seq)} entries for {n} arguments; "
                "give one per argument (or one int for all)"
            )
        return seq
    return [axes] * n


def _moved(value: Any, source: int, dest: int) -> Any:
    if source == dest:
        return value
    return tree.tree_map(lambda x: moveaxis(x, source, dest), value)


# -- scan -------------------------------------------------------------------------


def scan(
    target: Any,
    variable_axes: Mapping[Any, int] | None = None,
    variable_broadcast: Filter = False,
    variable_carry: Filter = False,
    split_rngs: Mapping[Any, bool] | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    length: int | None = None,
    reverse: bool = False,
    unroll: int = 1,
    methods: Sequence[str] | None = None,
) -> Any:
    """A module (class, method or function of a module) run over a sequence
    with :func:`typelattice.lax.scan`, as Flax linen's ``nn.scan``.

    The lifted call is ``(carry, *xs) -> (carry, ys)``: each ``xs``
    argument is sliced along its ``in_axes`` entry (or given whole with
    :data:`broadcast`), each step's ``ys`` are stacked along ``out_axes``.

    Args:
      target: a Module class, or a function ``fn(module, carry, *xs)``.
      variable_axes: collections with one slice per step (``{'params': 0}``
        for parameters not shared between steps).
      variable_broadcast: collections shared by every step (``'params'``
        for a recurrent cell); created once, on the first step's inputs,
        under ``init``.
      variable_carry: collections updated from step to step.
      split_rngs: per random stream, whether each step draws from its own
        key (``{'dropout': True}``) or all share one.
      in_axes: the axis of each ``xs`` argument to scan over, or
        :data:`broadcast`.
      out_axes: the axis of the stacked ``ys``.
      length: the number of steps, when no argument is scanned over.
      reverse: scan from the last step to the first.
      unroll: steps per loop iteration (speed only).
      methods: the methods of a class to lift (default ``__call__``).

    Returns:
      The lifted class or function.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class Step(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, h, x):
    ...         h = nn.tanh(nn.Dense(4)(h) + x)
    ...         return h, h
    >>> Scanned = nn.scan(Step, variable_broadcast='params',
    ...                   split_rngs={'params': False})
    >>> xs = tnp.ones((5, 4))
    >>> variables = Scanned().init(random.key(0), tnp.zeros(4), xs)
    >>> variables['params']['Dense_0']['kernel'].shape
    (4, 4)
    >>> h, ys = Scanned().apply(variables, tnp.zeros(4), xs)
    >>> ys.shape
    (5, 4)
    """
    axes = dict(variable_axes or {})
    splits = dict(split_rngs or {})

    def transform(
        lifted: _Lifted,
        fun: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        if not args:
            raise TypeError("nn.scan: the lifted call takes (carry, *xs)")
        carry, xs = args[0], list(args[1:])
        xs_axes = _per_argument(in_axes, len(xs), "scan")
        sizes = _lengths(xs_axes, xs)
        if len(sizes) > 1:
            raise ValueError(
                f"nn.scan: the scanned arguments have different lengths "
                f"{sorted(sizes)} along their in_axes; give arguments of one "
                "length"
            )
        if sizes:
            steps = sizes.pop()
            if length is not None and length != steps:
                raise ValueError(
                    f"nn.scan: length={length} but the scanned arguments have "
                    f"length {steps}"
                )
        elif length is None:
            raise ValueError(
                "nn.scan: no argument is scanned over; give length= (the "
                "number of steps)"
            )
        else:
            steps = length
        sliced = [
            x if a is broadcast else _moved(x, a, 0)
            for x, a in zip(xs, xs_axes, strict=True)
        ]
        split_keys, shared_keys = lifted.split_keys(splits, steps)

        variables = lifted.variables

        def kind(collection: str) -> str:
            if _axis_of(axes, collection) is not None:
                return "axes"
            if _matches(variable_carry, collection):
                return "carry"
            return "broadcast"  # (read-only unless named: Flax's default)

        def step_inputs(i: int | None) -> list[Any]:
            return [
                x if a is broadcast or i is None else x[i]
                for x, a in zip(sliced, xs_axes, strict=True)
            ]

        if lifted.run.initializing and _needs_first_step(variables, variable_broadcast):
            # Shared variables are made once, from the first step's inputs
            # (they must not depend on the loop's values: Flax's rule).
            first_keys = {**shared_keys, **{s: k[0] for s, k in split_keys.items()}}
            index = steps - 1 if reverse else 0
            _, made = lifted.call(
                fun, variables, first_keys, [carry, *step_inputs(index)], kwargs
            )
            for collection, subtree in made.items():
                if kind(collection) == "broadcast" and collection not in variables:
                    variables[collection] = subtree

        fixed = {c: t for c, t in variables.items() if kind(c) == "broadcast"}
        carried = {c: t for c, t in variables.items() if kind(c) == "carry"}
        stacked = {
            c: _moved(t, cast(int, _axis_of(axes, c)), 0)
            for c, t in variables.items()
            if kind(c) == "axes"
        }
        scanned = [
            x for x, a in zip(sliced, xs_axes, strict=True) if a is not broadcast
        ]

        def body(state: Any, per_step: Any) -> Any:
            user_carry, carry_vars = state
            step_xs, step_vars, step_keys = per_step
            it = iter(step_xs)
            step_args = [
                x if a is broadcast else next(it)
                for x, a in zip(sliced, xs_axes, strict=True)
            ]
            out, after = lifted.call(
                fun,
                {**fixed, **carry_vars, **step_vars},
                {**shared_keys, **step_keys},
                [user_carry, *step_args],
                kwargs,
            )
            try:
                new_carry, ys = out
            except (TypeError, ValueError):
                raise TypeError(
                    "nn.scan: the scanned function must return (carry, ys); "
                    f"it returned {type(out).__name__}"
                ) from None
            carry_after = {c: after.get(c, {}) for c in carry_vars}
            made = {c: t for c, t in after.items() if kind(c) == "axes"}
            return (new_carry, carry_after), (ys, made)

        (carry_out, carry_vars_out), (ys, made) = lax.scan(
            body,
            (carry, carried),
            (scanned, stacked, split_keys),
            length=steps,
            reverse=reverse,
            unroll=unroll,
        )
        ys_axes = out_axes
        if ys_axes != 0:
            ys = _moved(ys, 0, ys_axes)
        updated = dict(fixed)
        updated.update(carry_vars_out)
        for c, t in made.items():
            updated[c] = _moved(t, 0, cast(int, _axis_of(axes, c)))
        lifted.write_back(updated)
        return carry_out, ys

    return _lift(target, "scan", transform, methods)


def _needs_first_step(variables: Mapping[str, Any], shared: Filter) -> bool:
    """Whether a shared collection has no variables yet (under init)."""
    if shared is False:
        return False
    if shared is True:
        return not variables
    names = [shared] if isinstance(shared, str) else list(shared)
    return any(not variables.get(n) for n in names)


# -- vmap -------------------------------------------------------------------------


def vmap(
    target: Any,
    variable_axes: Mapping[Any, int | None] | None = None,
    split_rngs: Mapping[Any, bool] | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    axis_name: str | None = None,
    methods: Sequence[str] | None = None,
) -> Any:
    """A module (class, method or function of a module) vectorised with
    :func:`typelattice.vmap`, as Flax linen's ``nn.vmap``.

    Args:
      target: a Module class, or a function ``fn(module, *args)``.
      variable_axes: per collection, the axis its variables are stacked
        along (``{'params': 0}``: one set of parameters per element, an
        ensemble), or None to share them (the default for collections not
        named).
      split_rngs: per random stream, whether each element draws from its
        own key (``{'params': True}`` with ``variable_axes={'params': 0}``
        so that the members are initialised differently).
      in_axes: as :func:`typelattice.vmap`'s, for the call's arguments.
      out_axes: as :func:`typelattice.vmap`'s, for its output.
      axis_size: the batch size, when no argument is mapped.
      axis_name: a name for collectives (``lax.pmean(x, name)``).
      methods: the methods of a class to lift (default ``__call__``).

    Returns:
      The lifted class or function.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> Ensemble = nn.vmap(nn.Dense, variable_axes={'params': 0},
    ...                    split_rngs={'params': True}, in_axes=None,
    ...                    axis_size=3)
    >>> variables = Ensemble(2).init(random.key(0), tnp.ones((1, 4)))
    >>> variables['params']['kernel'].shape
    (3, 4, 2)
    >>> Ensemble(2).apply(variables, tnp.ones((1, 4))).shape
    (3, 1, 2)
    """
    axes = dict(variable_axes or {})
    splits = dict(split_rngs or {})

    def transform(
        lifted: _Lifted,
        fun: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        arg_axes = _per_argument(in_axes, len(args), "vmap")
        sizes = _lengths(arg_axes, args)
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(
                "nn.vmap: "
                + (
                    f"the mapped arguments have different sizes {sorted(sizes)}"
                    if sizes
                    else "no argument is mapped; give axis_size="
                )
            )
        size = sizes.pop()
        split_keys, shared_keys = lifted.split_keys(splits, size)
        variables = lifted.variables
        mapped = {c: t for c, t in variables.items() if _axis_of(axes, c) is not None}
        fixed = {c: t for c, t in variables.items() if c not in mapped}

        # The mapped collections come out grouped by the entry of
        # variable_axes that names them, each group stacked along its axis:
        # under init they are made inside, so their names are not known
        # before the call, but the groups are.
        groups = [(filt, axis) for filt, axis in axes.items() if axis is not None]

        def body(
            mapped_vars: dict[str, Any], keys_each: dict[str, Any], *call_args: Any
        ) -> Any:
            out, after = lifted.call(
                fun,
                {**fixed, **mapped_vars},
                {**shared_keys, **keys_each},
                call_args,
                kwargs,
            )
            grouped: list[dict[str, Any]] = [{} for _ in groups]
            shared: dict[str, Any] = {}
            for c, t in after.items():
                for i, (filt, _) in enumerate(groups):
                    if _matches(filt, c):
                        grouped[i][c] = t
                        break
                else:
                    shared[c] = t
            return out, tuple(grouped), shared

        vmapped = batching.vmap(
            body,
            in_axes=(
                {c: _axis_of(axes, c) for c in mapped},
                {s: 0 for s in split_keys},
                *arg_axes,
            ),
            out_axes=(out_axes, tuple(axis for _, axis in groups), None),
            axis_size=size,
            axis_name=axis_name,
        )
        out, grouped_after, fixed_after = vmapped(mapped, split_keys, *args)
        updated = dict(fixed_after)
        for group in grouped_after:
            updated.update(group)
        lifted.write_back(updated)
        return out

    return _lift(target, "vmap", transform, methods)


# -- checkpoint -------------------------------------------------------------------


def checkpoint(
    target: Any,
    variables: Filter = True,
    rngs: Filter = True,
    concrete: bool = False,
    prevent_cse: bool = True,
    static_argnums: int | tuple[int, ...] = (),
    policy: Callable[..., bool] | None = None,
    methods: Sequence[str] | None = None,
) -> Any:
    """A module (class, method or function of a module) whose activations
    are recomputed in the backward pass instead of kept, with
    :func:`typelattice.checkpoint`, as Flax linen's ``nn.checkpoint``
    (alias ``nn.remat``).

    Args:
      target: a Module class, or a function ``fn(module, *args)``.
      variables: the collections lifted (all by default).
      rngs: the random streams lifted (all by default).
      concrete: accepted for Flax's signature; must be False.
      prevent_cse: as :func:`typelattice.checkpoint`'s.
      static_argnums: arguments of the call (``self`` is 0) that are
        Python values rather than arrays.
      policy: which intermediate values may be kept
        (:data:`typelattice.checkpoint_policies`).
      methods: the methods of a class to lift (default ``__call__``).

    Returns:
      The lifted class or function.

    >>> import typelattice as tl
    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> RematDense = nn.remat(nn.Dense)
    >>> layer = RematDense(3)
    >>> variables = layer.init(random.key(0), tnp.ones((2, 4)))
    >>> loss = lambda v: layer.apply(v, tnp.ones((2, 4))).sum()
    >>> tl.grad(loss)(variables)['params']['kernel'].shape
    (4, 3)
    """
    del variables, rngs  # every collection and stream is lifted
    if concrete:
        raise ValueError(
            "nn.checkpoint(concrete=True) is not supported: Python control "
            "flow on traced values cannot be checkpointed; use lax.cond or "
            "numpy.where inside the module"
        )
    statics = (static_argnums,) if isinstance(static_argnums, int) else static_argnums

    def transform(
        lifted: _Lifted,
        fun: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        keys = lifted.keys()
        # (self is argument 0 of the lifted method: its arguments shift by 1)
        static = tuple(n + 1 for n in statics if n > 0)

        def body(variables_in: dict[str, Any], *call_args: Any) -> Any:
            return lifted.call(fun, variables_in, keys, call_args, kwargs)

        out, after = checkpointing.checkpoint(
            body, prevent_cse=prevent_cse, policy=policy, static_argnums=static
        )(lifted.variables, *args)
        lifted.write_back(after)
        return out

    return _lift(target, "checkpoint", transform, methods)


remat = checkpoint
