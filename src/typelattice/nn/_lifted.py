"""Lifted transformations: ``scan``, ``vmap`` and ``checkpoint`` of modules.

A transformation such as :func:`typelattice.lax.scan` takes functions of
arrays; a module's parameters live in the variables of the ``init`` or
``apply`` that runs it. Lifting a module makes the module a function of
arrays for the time of one call: its variables (the subtrees at its path,
by collection) and its random keys become arguments, a copy of the module
runs on them in a run of its own, and the variables it returns are written
back. The transformation then decides what each collection is to it (Flax
linen's vocabulary):

- *broadcast*: the same value at every step or batch element (the
  parameters of a recurrent cell, shared over time);
- *axes*: one slice per step or element, stacked along an axis (the
  parameters of an ensemble made by ``vmap``);
- *carry* (``scan`` only): updated from step to step, like the carry.

Random streams are *split* (a different key per step or element) or
shared. A lifted module class is named after the transformation and the
class (``ScanLSTMCell``), as in Flax, so its parameters are found under
``ScanLSTMCell_0``.

Nothing here computes: the values are computed by the transformations of
:mod:`typelattice` themselves, on the same primitives as every other call.
"""

# The lifting reads the module system's run and scope, which are private to
# the nn package.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

from typelattice import lax, random
from typelattice._tracing import batching, tree
from typelattice._tracing import remat as checkpointing
from typelattice.nn import _module
from typelattice.nn._module import Module, _Run, _Scope
from typelattice.numpy import moveaxis

__all__ = ["broadcast", "checkpoint", "remat", "scan", "vmap"]

T = TypeVar("T")

#: A collection filter (Flax's ``CollectionFilter``): a name, a list of
#: names, True (all) or False (none).
Filter = bool | str | Sequence[str]


class _Broadcast:
    """``nn.broadcast``: an ``in_axes`` entry of :func:`scan` for an argument
    given whole to every step instead of sliced."""

    _instance: _Broadcast | None = None

    def __new__(cls) -> _Broadcast:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "broadcast"


broadcast: Final = _Broadcast()


def _matches(filt: Filter, name: str) -> bool:
    if filt is True or filt is False:
        return filt
    if isinstance(filt, str):
        return filt == name
    return name in filt


def _axis_of(mapping: Mapping[Any, T], name: str) -> T | None:
    """The entry of ``mapping`` (filters to values) that names ``name``."""
    for filt, value in mapping.items():
        if _matches(filt, name):
            return value
    return None


# -- running a module as a function of its variables ---------------------------------


def _unbound(value: Any) -> Any:
    """``value`` (a field of a bound module) with its modules as unbound
    copies, so that the copy of the module running inside a transformation
    binds them to its own run."""
    if isinstance(value, Module):
        fields = {
            f.name: _unbound(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.init
        }
        return type(value)(**fields)
    if isinstance(value, list | tuple):
        items = [_unbound(v) for v in cast(Sequence[Any], value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _unbound(v) for k, v in value.items()}
    return value


class _Lifted:
    """One call of a module under a transformation: the module's variables
    and keys at its path, and a pure function running a copy of it on
    given ones."""

    def __init__(self, module: Module, cls: type[Module], what: str) -> None:
        scope = module._bound_scope()
        if scope is None:
            raise ValueError(
                f"nn.{what} of {type(module).__name__} can only run while the "
                "module runs under init or apply: call model.init(key, x) or "
                "model.apply(variables, x)"
            )
        self.scope: _Scope = scope
        self.run: _Run = scope.run
        # The copy runs at the root of a run of its own: no parent, no name.
        _module._STACK.append((module, False))
        try:
            fields = {
                f.name: _unbound(getattr(module, f.name))
                for f in dataclasses.fields(module)
                if f.init and f.name != "name"
            }
            self.inner = cls(**fields)
        finally:
            _module._STACK.pop()
        self.variables: dict[str, Any] = {}
        for collection in self.run.variables:
            found = scope.lookup(collection)
            if found is not None:
                self.variables[collection] = _module._copy_dicts(found)

    def keys(self) -> dict[str, Any]:
        """A fresh key per random stream of the run, for this call."""
        return {
            stream: self.run.make_rng(stream, self.scope.path)
            for stream in self.run.rngs
        }

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
        _module._STACK.append((self.inner, False))
        try:
            out = self.inner._run(run, fun, tuple(args), dict(kwargs))
        finally:
            _module._STACK.pop()
        return out, run.variables

    def write_back(self, variables: Mapping[str, Any]) -> None:
        """Store the collections that the run may change."""
        for collection, subtree in variables.items():
            if not self.run.mutable(collection):
                continue
            if not subtree and collection not in self.variables:
                continue
            node = self.scope.store(collection)
            node.clear()
            node.update(subtree)


#: What a lifted call does: (the call, the function, its args, its kwargs).
_Transform = Callable[
    [_Lifted, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any
]


def _lift(
    target: Any,
    name: str,
    transform: Callable[
        [_Lifted, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any
    ],
    methods: Sequence[str] | None,
) -> Any:
    """``target`` (a Module class, a method, or a function whose first
    argument is a module) with its calls run through ``transform``."""

    def lifted_method(fun: Callable[..., Any], cls: type[Module] | None) -> Any:
        @functools.wraps(fun)
        def call(module: Module, *args: Any, **kwargs: Any) -> Any:
            lifted = _Lifted(module, cls or type(module), name)
            return transform(lifted, fun, args, kwargs)

        return call

    if isinstance(target, type) and issubclass(target, Module):
        names = ["__call__"] if methods is None else list(methods)
        attrs: dict[str, Any] = {
            m: lifted_method(getattr(target, m), target) for m in names
        }

        # The target's setup runs inside the transformation, in the copy;
        # the lifted module itself declares nothing.
        def setup(self: Module) -> None:
            del self

        attrs["setup"] = setup
        attrs["__module__"] = target.__module__
        return type(name.capitalize() + target.__name__, (target,), attrs)
    if callable(target):
        return lifted_method(target, None)
    raise TypeError(
        f"nn.{name} lifts a Module class, a module method or a function whose "
        f"first argument is a module; got {target!r}"
    )


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
        keys = lifted.keys()
        split_keys = {
            s: random.split(k, steps) for s, k in keys.items() if _axis_of(splits, s)
        }
        shared_keys = {s: k for s, k in keys.items() if s not in split_keys}

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
        keys = lifted.keys()
        split_keys = {
            s: random.split(k, size) for s, k in keys.items() if _axis_of(splits, s)
        }
        shared_keys = {s: k for s, k in keys.items() if s not in split_keys}
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


remat: Final = checkpoint
