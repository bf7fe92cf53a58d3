"""Composing gradient transformations: chain, masked, multi_transform, and
the transformations that keep no state (identity, set_to_zero).

A transformation here is the :class:`GradientTransformation` of
``_transform.py``: ``init(params) -> state`` and ``update(updates, state,
params=None) -> (updates, state)``. The composites call their parts with
the same ``params`` and thread the updates through them, so a chain is
itself a transformation and nests (optax's ``chain`` and ``partition``).

Masks and labels are static (Python values, as a tree like the
parameters, or a function of the parameters giving one): which parameter
goes where decides the structure of the states, which must not depend on
values computed under ``jit``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, NamedTuple, TypeAlias, cast

import numpy as np

import typelattice.numpy as tnp
from typelattice._tracing import tree
from typelattice.optim._transform import GradientTransformation
from typelattice.typing import Array

__all__ = [
    "EmptyState",
    "MaskedNode",
    "MaskedState",
    "MultiTransformState",
    "OptState",
    "Params",
    "Updates",
    "chain",
    "identity",
    "masked",
    "multi_transform",
    "set_to_zero",
]

# The names optax's signatures use: trees of arrays (nested dicts, lists,
# tuples, namedtuples), and a state of any such tree.
Params: TypeAlias = Any
Updates: TypeAlias = Any
OptState: TypeAlias = Any


class EmptyState(NamedTuple):
    """The state of a transformation that keeps none: an empty tuple (a tree
    with no leaves).

    >>> import typelattice.numpy as tnp
    >>> identity().init({'w': tnp.zeros(2)})
    EmptyState()
    """


def _init_empty(params: Any) -> EmptyState:
    del params
    return EmptyState()


def identity() -> GradientTransformation:
    """The transformation that gives the updates back unchanged.

    Returns:
      The transformation; its state is :class:`EmptyState`.

    >>> import typelattice.numpy as tnp
    >>> updates, _ = identity().update({'w': tnp.ones(2)}, EmptyState())
    >>> updates
    {'w': Array([1., 1.], dtype=float32)}
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        return updates, state

    return GradientTransformation(_init_empty, update)


def set_to_zero() -> GradientTransformation:
    """The transformation that gives zeros of the updates' shapes and dtypes
    (to freeze parameters, with :func:`multi_transform` or :func:`masked`).

    Returns:
      The transformation; its state is :class:`EmptyState`.

    >>> import typelattice.numpy as tnp
    >>> updates, _ = set_to_zero().update({'w': tnp.ones(2, 'bfloat16')}, EmptyState())
    >>> updates
    {'w': Array([0, 0], dtype=bfloat16)}
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        return tree.tree_map(_zeros_of, updates), state

    return GradientTransformation(_init_empty, update)


def _zeros_of(x: Any) -> Array:
    x = tnp.asarray(x)
    return tnp.zeros(x.shape, x.dtype)


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """The transformations applied one after the other.

    ``init`` gives the tuple of the parts' states; ``update`` passes the
    updates through each part in order, with the same ``params``.

    Args:
      *transforms: the parts.

    Returns:
      The transformation; its state is a tuple with one state per part.

    Raises:
      ValueError: (from ``update``) the state has not one entry per part.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = chain(optim.clip(1.0), optim.scale(-0.5))
    >>> state = opt.init({'w': tnp.zeros(2)})
    >>> updates, state = opt.update({'w': tnp.asarray([3.0, -0.5])}, state)
    >>> updates
    {'w': Array([-0.5 ,  0.25], dtype=float32)}
    """
    for i, t in enumerate(transforms):
        # (Checked at run time: a port may pass a number or a schedule.)
        if not isinstance(t, GradientTransformation):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"chain: part {i} is {t!r}, not a GradientTransformation (an "
                "optimiser or transformation, such as optim.scale(0.1))"
            )
    parts = tuple(transforms)

    def init(params: Any) -> tuple[Any, ...]:
        return tuple(t.init(params) for t in parts)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        is_tuple = isinstance(state, tuple)
        states = cast(tuple[Any, ...], state) if is_tuple else ()
        if not is_tuple or len(states) != len(parts):
            got = f"{len(states)} parts" if is_tuple else "no tuple"
            kind = type(cast(object, state)).__name__
            raise ValueError(
                f"chain's update: the state must be the tuple of {len(parts)} "
                f"states that chain's init made, not {kind} ({got}); call "
                "opt.init(params) first"
            )
        new: list[Any] = []
        for t, s in zip(parts, states, strict=True):
            updates, s = t.update(updates, s, params)
            new.append(s)
        return updates, tuple(new)

    return GradientTransformation(init, update)


# -- masks -------------------------------------------------------------------


class MaskedNode(NamedTuple):
    """What a masked-out leaf becomes in the trees a masked transformation
    sees: an empty node (no leaves), so its state keeps nothing for it.

    >>> import typelattice.numpy as tnp
    >>> params = {'a': tnp.zeros(1), 'b': tnp.zeros(1)}
    >>> masked(identity(), {'a': False, 'b': True}).init(params)
    MaskedState(inner_state=EmptyState())
    >>> MaskedNode()
    MaskedNode()
    """


class MaskedState(NamedTuple):
    """The state of :func:`masked`.

    Attributes:
      inner_state: the state of the inner transformation, made for the
        masked parameters (the left-out ones are :class:`MaskedNode`).

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> params = {'a': tnp.zeros(1), 'b': tnp.zeros(1)}
    >>> masked(optim.trace(0.9), {'a': False, 'b': True}).init(params).inner_state
    TraceState(trace={'a': MaskedNode(), 'b': Array([0.], dtype=float32)})
    """

    inner_state: Any


MaskOrFn: TypeAlias = Any | Callable[[Any], Any]


def _flags(mask: MaskOrFn, like: Any, where: str) -> list[bool]:
    """The mask as one static bool per leaf of ``like``."""
    given = mask(like) if callable(mask) else mask
    treedef = tree.structure(like)
    flags, mask_def = tree.flatten(given)
    if mask_def != treedef:
        raise ValueError(
            f"{where}: the mask has structure {mask_def}, but the parameters have "
            f"structure {treedef}; give a mask of True/False leaves like the "
            "parameters (or a function of the parameters giving one)"
        )
    paths = treedef.paths()
    for i, f in enumerate(flags):
        if not isinstance(f, bool | np.bool_):
            raise TypeError(
                f"{where}: the mask's leaves must be True or False (static), but "
                f"mask{paths[i]} is {f!r}"
            )
    return [bool(f) for f in flags]


def _mask_tree(value: Any, flags: list[bool]) -> Any:
    leaves, treedef = tree.flatten(value)
    return treedef.unflatten(
        [x if f else MaskedNode() for x, f in zip(leaves, flags, strict=True)]
    )


def masked(inner: GradientTransformation, mask: MaskOrFn) -> GradientTransformation:
    """``inner`` applied to the parameters the mask picks; the others' updates
    pass unchanged.

    Args:
      inner: the transformation.
      mask: a tree like the parameters with ``True`` (transform) or
        ``False`` (leave) leaves, or a function of the parameters (or of
        the updates, in ``update``) giving one.

    Returns:
      The transformation; its state is a :class:`MaskedState`.

    Raises:
      ValueError: the mask's structure is not the parameters'.
      TypeError: a leaf of the mask is not ``True`` or ``False``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = masked(optim.scale(0.0), {'b': False, 'w': True})
    >>> grads = {'b': tnp.ones(1), 'w': tnp.ones(1)}
    >>> opt.update(grads, opt.init(grads))[0]
    {'b': Array([1.], dtype=float32), 'w': Array([0.], dtype=float32)}
    """

    def init(params: Any) -> MaskedState:
        flags = _flags(mask, params, "masked's init")
        return MaskedState(inner.init(_mask_tree(params, flags)))

    def update(updates: Any, state: MaskedState, params: Any = None) -> tuple[Any, Any]:
        flags = _flags(mask, updates, "masked's update")
        new, inner_state = inner.update(
            _mask_tree(updates, flags),
            state.inner_state,
            None if params is None else _mask_tree(params, flags),
        )
        old, treedef = tree.flatten(updates)
        got = tree.flatten(new, is_leaf=lambda x: isinstance(x, MaskedNode))[0]
        out = [n if f else o for n, o, f in zip(got, old, flags, strict=True)]
        return treedef.unflatten(out), MaskedState(inner_state)

    return GradientTransformation(init, update)


class MultiTransformState(NamedTuple):
    """The state of :func:`multi_transform`.

    Attributes:
      inner_states: a dict from each label to the :class:`MaskedState` of
        its transformation.

    >>> import typelattice.numpy as tnp
    >>> opt = multi_transform({'x': identity()}, {'w': 'x'})
    >>> opt.init({'w': tnp.zeros(1)})
    MultiTransformState(inner_states={'x': MaskedState(inner_state=EmptyState())})
    """

    inner_states: Any


def multi_transform(
    transforms: Mapping[Hashable, GradientTransformation],
    param_labels: Any | Callable[[Any], Any],
) -> GradientTransformation:
    """A transformation per group of parameters: each parameter's label
    picks the transformation of its updates.

    Args:
      transforms: label -> transformation.
      param_labels: a tree like the parameters whose leaves are labels, or a
        function of the parameters (or updates) giving one.

    Returns:
      The transformation; its state is a :class:`MultiTransformState`.

    Raises:
      ValueError: a label has no transformation.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = multi_transform(
    ...     {'train': optim.sgd(0.5), 'frozen': optim.set_to_zero()},
    ...     {'b': 'frozen', 'w': 'train'})
    >>> params = {'b': tnp.ones(1), 'w': tnp.ones(1)}
    >>> opt.update(params, opt.init(params), params)[0]
    {'b': Array([0.], dtype=float32), 'w': Array([-0.5], dtype=float32)}
    """
    parts = dict(transforms)

    def labels_of(value: Any, where: str) -> Any:
        labels = param_labels(value) if callable(param_labels) else param_labels
        unknown = {x for x in tree.leaves(labels) if x not in parts}
        if unknown:
            raise ValueError(
                f"{where}: the labels {sorted(unknown, key=repr)} have no "
                f"transformation; the transformations' labels are "
                f"{sorted(parts, key=repr)}"
            )
        return labels

    def mask_of(labels: Any, group: Hashable) -> Any:
        return tree.tree_map(lambda label: label == group, labels)

    def init(params: Any) -> MultiTransformState:
        labels = labels_of(params, "multi_transform's init")
        return MultiTransformState(
            {
                group: masked(t, mask_of(labels, group)).init(params)
                for group, t in parts.items()
            }
        )

    def update(
        updates: Any, state: MultiTransformState, params: Any = None
    ) -> tuple[Any, Any]:
        labels = labels_of(updates, "multi_transform's update")
        new: dict[Hashable, Any] = {}
        for group, t in parts.items():
            updates, new[group] = masked(t, mask_of(labels, group)).update(
                updates, state.inner_states[group], params
            )
        return updates, MultiTransformState(new)

    return GradientTransformation(init, update)
