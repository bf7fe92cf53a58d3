"""Boxed variables: values that carry how their axes would be partitioned.

Flax linen lets an initialiser return its parameter in a box
(``nn.with_partitioning(init, ('embed', 'mlp'))``): ``init`` returns the
boxes in the variables, a module reading the parameter (``self.param``) gets
the raw array, and ``nn.get_partition_spec`` reads the names back to shard
the parameters across devices.

typelattice runs on one device: the boxes, their names and the specs are
kept and returned exactly as Flax's, so that the same programs run and the
same specs come out, but nothing is sharded (``unbox`` returns the value
unconstrained, a ``mesh`` is only stored). A box is a pytree node whose one
child is its value, so boxed variables pass through ``jit``, ``grad`` and the
optimisers as arrays do, their names kept in the structure.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
from collections.abc import Callable, Generator, Sequence
from typing import Any, Generic, TypeVar, cast

from typelattice import _sharding
from typelattice._sharding import PartitionSpec
from typelattice._tracing import tree

__all__ = [
    "PARTITION_NAME",
    "AxisMetadata",
    "LogicallyPartitioned",
    "Partitioned",
    "PartitionSpec",
    "add_axis",
    "get_logical_axis_rules",
    "get_partition_spec",
    "is_axis_metadata",
    "logical_axis_rules",
    "logical_to_mesh_axes",
    "logical_to_mesh_sharding",
    "map_axis_meta",
    "remove_axis",
    "replace_boxed",
    "set_logical_axis_rules",
    "unbox",
    "with_logical_partitioning",
    "with_partitioning",
]

A = TypeVar("A")
B = TypeVar("B")

# The key of a lifted transform's metadata that names the axis it adds
# (nn.vmap/nn.scan's metadata_params={nn.PARTITION_NAME: 'layers'}).
PARTITION_NAME = "partition_name"

#: Logical axis rules: pairs ``(logical name, mesh axis or axes or None)``.
LogicalRules = Sequence[tuple[str, str | tuple[str, ...] | None]]


class AxisMetadata(Generic[A], metaclass=abc.ABCMeta):
    """A box around a variable's value that carries metadata about its axes
    (Flax's ``meta.AxisMetadata``). Modules read the value through
    :meth:`unbox`; code that changes the value keeps the box with
    :meth:`replace_boxed`."""

    @abc.abstractmethod
    def unbox(self) -> A:
        """The value in the box.

        Returns:
          The value.
        """

    @abc.abstractmethod
    def replace_boxed(self, val: B) -> AxisMetadata[B]:
        """The same box around another value.

        Args:
          val: the new value.

        Returns:
          A box of this kind with the same metadata.
        """

    @abc.abstractmethod
    def add_axis(self, index: int, params: dict[Any, Any]) -> AxisMetadata[A]:
        """The box of the value with an axis inserted at ``index`` (a lifted
        vmap or scan stacks the value).

        Args:
          index: where the axis goes.
          params: the transform's ``metadata_params``.

        Returns:
          The box with the axis's metadata added.
        """

    @abc.abstractmethod
    def remove_axis(self, index: int, params: dict[Any, Any]) -> AxisMetadata[A]:
        """The box of the value without the axis at ``index``.

        Args:
          index: the axis removed.
          params: the transform's ``metadata_params``.

        Returns:
          The box with the axis's metadata removed.
        """


def box_of(x: object) -> AxisMetadata[Any] | None:
    """``x`` when it is a box, else None."""
    # (isinstance knows no type argument: the value's is Any)
    return x if isinstance(x, AxisMetadata) else None  # pyright: ignore[reportUnknownVariableType]


def partitioned(x: object) -> Partitioned[Any] | None:
    """``x`` when it is a :class:`Partitioned` box, else None."""
    return x if isinstance(x, Partitioned) else None  # pyright: ignore[reportUnknownVariableType]


def _partition_name(box: Partitioned[Any], params: dict[Any, Any]) -> Any:
    if PARTITION_NAME not in params:
        raise ValueError(
            f"a lifted transform adds an axis to a partitioned variable (names "
            f"{box.names}) without naming it. Pass metadata_params="
            "{nn.PARTITION_NAME: 'layers'} to the transform"
        )
    return params[PARTITION_NAME]


@dataclasses.dataclass(frozen=True, eq=False)
class Partitioned(AxisMetadata[A]):
    """A value boxed with one partition name per axis (Flax's
    ``nn.Partitioned``). On one device nothing is sharded: ``unbox`` returns
    the value as it is.

    Attributes:
      value: the boxed value (an array).
      names: one mesh axis name (or None) per axis of the value.
      mesh: the mesh the names refer to (kept, unused).

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> box = nn.Partitioned(tnp.ones((2, 3)), ('data', None))
    >>> box.unbox().shape, box.get_partition_spec()
    ((2, 3), PartitionSpec('data', None))
    """

    value: A
    names: tuple[Any, ...]
    mesh: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))

    def unbox(self, apply_constraint: bool = True) -> A:
        """The value (no sharding constraint applies on one device).

        Args:
          apply_constraint: accepted as Flax's; there is nothing to apply.

        Returns:
          The value.

        >>> from typelattice import nn
        >>> nn.Partitioned(1.0, ()).unbox()
        1.0
        """
        del apply_constraint
        return self.value

    def replace_boxed(self, val: B) -> Partitioned[B]:
        """The same names around ``val``.

        Args:
          val: the new value.

        Returns:
          A box of this class with the same names and mesh.

        >>> from typelattice import nn
        >>> nn.Partitioned(1.0, ()).replace_boxed(2.0).value
        2.0
        """
        return dataclasses.replace(self, value=val)  # type: ignore[return-value, arg-type]

    def add_axis(self, index: int, params: dict[Any, Any]) -> Partitioned[A]:
        """The names with the transform's axis name inserted at ``index``.

        Args:
          index: where the axis goes.
          params: the transform's ``metadata_params``, with
            ``PARTITION_NAME``.

        Returns:
          The box with the new names.

        >>> from typelattice import nn
        >>> box = nn.Partitioned(0.0, ('embed',))
        >>> box.add_axis(0, {nn.PARTITION_NAME: 'layers'}).names
        ('layers', 'embed')
        """
        names = list(self.names)
        while len(names) < index:
            names.append(None)
        names.insert(index, _partition_name(self, params))
        return dataclasses.replace(self, names=tuple(names))

    def remove_axis(self, index: int, params: dict[Any, Any]) -> Partitioned[A]:
        """The names without the transform's axis at ``index``.

        Args:
          index: the axis removed.
          params: the transform's ``metadata_params``, with
            ``PARTITION_NAME``.

        Returns:
          The box with the remaining names.

        Raises:
          ValueError: the axis at ``index`` has another name.

        >>> from typelattice import nn
        >>> box = nn.Partitioned(0.0, ('layers', 'embed'))
        >>> box.remove_axis(0, {nn.PARTITION_NAME: 'layers'}).names
        ('embed',)
        """
        name = _partition_name(self, params)
        names = list(self.names)
        if index >= len(names) or names[index] != name:
            raise ValueError(
                f"the axis {index} of a partitioned variable with names "
                f"{self.names} is not named {name!r}: pass the axis the "
                "transform added"
            )
        del names[index]
        return dataclasses.replace(self, names=tuple(names))

    def get_partition_spec(self) -> PartitionSpec:
        """The names as a partition spec.

        Returns:
          ``PartitionSpec(*names)``.

        >>> from typelattice import nn
        >>> nn.Partitioned(0.0, (None, 'mlp')).get_partition_spec()
        PartitionSpec(None, 'mlp')
        """
        return PartitionSpec(*self.names)

    def __eq__(self, other: object) -> bool:
        # (The values are arrays: compared by identity, as Flax's boxes.)
        if other.__class__ is not self.__class__:
            return NotImplemented
        box = partitioned(other)
        assert box is not None
        return self._meta() == box._meta() and self.value is box.value

    def __hash__(self) -> int:
        return hash((type(self), self._meta(), id(self.value)))

    def _meta(self) -> tuple[Any, ...]:
        return (self.names, self.mesh)

    def _rebuilt(self, meta: tuple[Any, ...], value: Any) -> Partitioned[Any]:
        return type(self)(value, *meta)


@dataclasses.dataclass(frozen=True, eq=False)
class LogicallyPartitioned(Partitioned[A]):
    """A value boxed with logical axis names (``'embed'``, ``'mlp'``),
    turned into mesh axes by logical axis rules (Flax's
    ``nn.LogicallyPartitioned``).

    Attributes:
      value: the boxed value.
      names: one logical name (or None) per axis.
      mesh: kept, unused.
      rules: the logical axis rules for these names (default: those of
        :func:`logical_axis_rules` in effect).

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> box = nn.LogicallyPartitioned(tnp.ones((2, 3)), ('embed', 'mlp'))
    >>> nn.logical_to_mesh_axes(box.names, [('mlp', 'model')])
    PartitionSpec(None, 'model')
    """

    rules: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rules is not None:
            object.__setattr__(self, "rules", _as_rules(self.rules))

    def _meta(self) -> tuple[Any, ...]:
        return (self.names, self.mesh, self.rules)


def _flatten_box(box: Partitioned[Any]) -> tuple[tuple[Any], tuple[Any, ...]]:
    return (box.value,), box._meta()  # pyright: ignore[reportPrivateUsage]


def _register(cls: type[Partitioned[Any]]) -> None:
    tree.register_pytree_with_keys(
        cls,
        lambda box: (((tree.GetAttrKey("value"), box.value),), box._meta()),  # pyright: ignore[reportPrivateUsage]
        lambda meta, children: cls(*children, *meta),
        _flatten_box,
    )


_register(Partitioned)
_register(LogicallyPartitioned)


def is_axis_metadata(val: Any) -> bool:
    """Whether ``val`` is a box (an :class:`AxisMetadata`).

    Args:
      val: any value.

    Returns:
      True for a box.

    >>> from typelattice import nn
    >>> nn.meta.is_axis_metadata(nn.Partitioned(1.0, ())), nn.meta.is_axis_metadata(1.0)
    (True, False)
    """
    return isinstance(val, AxisMetadata)


def map_axis_meta(fn: Callable[[AxisMetadata[Any]], Any], tree_: Any) -> Any:
    """``tree_`` with every box ``b`` replaced by ``fn(b)``.

    Args:
      fn: applied to each box.
      tree_: a pytree.

    Returns:
      The mapped tree; its other leaves as they were.

    >>> from typelattice import nn
    >>> nn.meta.map_axis_meta(lambda b: b.names, [nn.Partitioned(1.0, ('a',)), 2])
    [('a',), 2]
    """

    def mapped(x: Any) -> Any:
        box = box_of(x)
        return x if box is None else fn(box)

    return tree.tree_map(
        mapped,
        tree_,
        is_leaf=is_axis_metadata,
    )


def add_axis(tree_: Any, index: int, params: dict[Any, Any]) -> Any:
    """Every box of ``tree_`` with an axis added (:meth:`AxisMetadata.add_axis`).

    Args:
      tree_: a pytree.
      index: where the axis goes.
      params: the transform's ``metadata_params``.

    Returns:
      The tree with the boxes changed.

    >>> from typelattice import nn
    >>> stack = {nn.PARTITION_NAME: 'l'}
    >>> t = nn.meta.add_axis({'w': nn.Partitioned(0.0, ('a',))}, 0, stack)
    >>> t['w'].names
    ('l', 'a')
    """
    return map_axis_meta(lambda x: x.add_axis(index, params), tree_)


def remove_axis(tree_: Any, index: int, params: dict[Any, Any]) -> Any:
    """Every box of ``tree_`` with an axis removed.

    Args:
      tree_: a pytree.
      index: the axis removed.
      params: the transform's ``metadata_params``.

    Returns:
      The tree with the boxes changed.

    >>> from typelattice import nn
    >>> stack = {nn.PARTITION_NAME: 'l'}
    >>> t = nn.meta.remove_axis([nn.Partitioned(0.0, ('l', 'a'))], 0, stack)
    >>> t[0].names
    ('a',)
    """
    return map_axis_meta(lambda x: x.remove_axis(index, params), tree_)


def unbox(tree_: Any) -> Any:
    """``tree_`` with every box replaced by its value (Flax's ``nn.unbox``,
    ``nn.meta.unbox``): what optimisers and plain array code take.

    Args:
      tree_: a pytree, e.g. the variables that ``init`` returned.

    Returns:
      The same tree without boxes.

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> nn.unbox({'w': nn.Partitioned(tnp.zeros(2), ('mlp',))})
    {'w': Array([0., 0.], dtype=float32)}
    """
    return map_axis_meta(lambda x: unbox(x.unbox()), tree_)


def replace_boxed(tree_: Any, updates: Any) -> Any:
    """The boxes of ``tree_`` around the values of ``updates`` (a tree of
    ``tree_``'s structure without boxes).

    Args:
      tree_: a pytree with boxes.
      updates: the new values, unboxed.

    Returns:
      ``updates`` with ``tree_``'s boxes around its values.

    >>> from typelattice import nn
    >>> t = nn.meta.replace_boxed({'w': nn.Partitioned(0.0, ('a',))}, {'w': 5.0})
    >>> t['w'].value, t['w'].names
    (5.0, ('a',))
    """

    def update(old: Any, new: Any) -> Any:
        box = box_of(old)
        if box is not None:
            return box.replace_boxed(replace_boxed(box.unbox(), new))
        return new

    return tree.tree_map(update, tree_, updates, is_leaf=is_axis_metadata)


def with_partitioning(
    fn: Callable[..., Any], names: Sequence[Any], mesh: Any = None
) -> Callable[..., Partitioned[Any]]:
    """An initialiser that boxes ``fn``'s result with partition ``names``
    (Flax's ``nn.with_partitioning``).

    Args:
      fn: the initialiser (``nn.initializers.lecun_normal()``).
      names: one mesh axis name (or None) per axis of the parameter.
      mesh: kept in the box, unused (nothing is sharded).

    Returns:
      The boxing initialiser.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Dense(3, kernel_init=nn.with_partitioning(
    ...     nn.initializers.lecun_normal(), (None, 'model')))
    >>> variables = layer.init(random.key(0), tnp.ones((1, 2)))
    >>> nn.get_partition_spec(variables)['params']['kernel']
    PartitionSpec(None, 'model')
    """

    @functools.wraps(fn)
    def init(*args: Any, **kwargs: Any) -> Partitioned[Any]:
        return Partitioned(fn(*args, **kwargs), tuple(names), mesh)

    return init


def with_logical_partitioning(
    fn: Callable[..., Any],
    names: Sequence[Any],
    mesh: Any = None,
    rules: Any = None,
) -> Callable[..., LogicallyPartitioned[Any]]:
    """An initialiser that boxes ``fn``'s result with logical axis ``names``
    (Flax's ``nn.with_logical_partitioning``).

    Args:
      fn: the initialiser.
      names: one logical name (or None) per axis of the parameter.
      mesh: kept in the box, unused.
      rules: logical axis rules kept in the box.

    Returns:
      The boxing initialiser.

    >>> from typelattice import nn, random
    >>> init = nn.with_logical_partitioning(nn.initializers.zeros, ('embed',))
    >>> init(random.key(0), (2,)).names
    ('embed',)
    """

    @functools.wraps(fn)
    def init(*args: Any, **kwargs: Any) -> LogicallyPartitioned[Any]:
        return LogicallyPartitioned(fn(*args, **kwargs), tuple(names), mesh, rules)

    return init


def get_partition_spec(tree_: Any) -> Any:
    """The partition spec of every variable of ``tree_``: the box's names,
    an empty spec for an unboxed array, None for other leaves (Flax's
    ``nn.get_partition_spec``).

    Args:
      tree_: variables, boxed or not.

    Returns:
      A tree of :class:`PartitionSpec` of ``tree_``'s structure.

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> nn.get_partition_spec({'a': nn.Partitioned(tnp.ones(2), ('x',)),
    ...                        'b': tnp.ones(2)})
    {'a': PartitionSpec('x',), 'b': PartitionSpec()}
    """

    def spec(x: Any) -> PartitionSpec | None:
        box = partitioned(x)
        if box is not None:
            return box.get_partition_spec()
        if hasattr(x, "shape"):
            return PartitionSpec()
        return None

    return tree.tree_map(spec, tree_, is_leaf=lambda x: isinstance(x, Partitioned))


# The logical axis rules in effect (set_logical_axis_rules, logical_axis_rules).
_RULES: list[tuple[tuple[str, Any], ...]] = [()]


def _as_rules(rules: Any) -> tuple[tuple[str, Any], ...]:
    if not isinstance(rules, tuple | list):
        raise TypeError(
            f"logical axis rules must be a list of (logical name, mesh axis) "
            f"pairs, not {type(rules).__name__}: pass [('batch', 'data'), ...]"
        )
    out: list[tuple[str, Any]] = []
    for rule in rules:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(rule, tuple | list) or len(rule) != 2:  # pyright: ignore[reportUnknownArgumentType]
            raise TypeError(
                f"the logical axis rule {rule!r} is not a pair (logical name, "
                "mesh axis or None)"
            )
        pair: tuple[Any, ...] = tuple(cast(Sequence[Any], rule))
        name, mesh_axes = pair
        if isinstance(mesh_axes, list):
            axes: list[Any] = mesh_axes  # pyright: ignore[reportUnknownVariableType]
            mesh_axes = tuple(axes)
        out.append((name, mesh_axes))
    return tuple(out)


def set_logical_axis_rules(rules: LogicalRules) -> None:
    """Set the logical axis rules in effect (Flax's
    ``nn.set_logical_axis_rules``).

    Args:
      rules: pairs ``(logical name, mesh axis or None)``, in priority order.

    >>> from typelattice import nn
    >>> nn.set_logical_axis_rules([('batch', 'data')])
    >>> nn.get_logical_axis_rules()
    (('batch', 'data'),)
    >>> nn.set_logical_axis_rules(())
    """
    _RULES[-1] = _as_rules(rules)


def get_logical_axis_rules() -> tuple[tuple[str, Any], ...]:
    """The logical axis rules in effect.

    Returns:
      The pairs, empty when none are set.

    >>> from typelattice import nn
    >>> nn.get_logical_axis_rules()
    ()
    """
    return _RULES[-1]


@contextlib.contextmanager
def logical_axis_rules(rules: LogicalRules) -> Generator[None]:
    """Use ``rules`` as the logical axis rules inside a ``with`` block.

    Args:
      rules: pairs ``(logical name, mesh axis or None)``.

    Returns:
      A context manager; the previous rules are back after the block.

    >>> from typelattice import nn
    >>> with nn.logical_axis_rules([('mlp', 'model')]):
    ...     nn.logical_to_mesh_axes(('embed', 'mlp'))
    PartitionSpec(None, 'model')
    """
    _RULES.append(_as_rules(rules))
    try:
        yield
    finally:
        _RULES.pop()


def _leaves_of(x: Any) -> set[Any]:
    if isinstance(x, tuple):
        items: tuple[Any, ...] = x  # pyright: ignore[reportUnknownVariableType]
        return set(items)
    return {x}


def logical_to_mesh_axes(
    array_dim_names: Sequence[str | None] | None, rules: LogicalRules | None = None
) -> PartitionSpec | None:
    """The mesh axes of an array's logical axis names: each rule, in order,
    gives its mesh axis to the axis of that logical name unless that axis
    has one already or the mesh axis is taken (Flax's
    ``nn.logical_to_mesh_axes``). Axes no rule names are None.

    Args:
      array_dim_names: one logical name (or None) per axis; None for none.
      rules: the rules (default: those in effect).

    Returns:
      The spec, or None for ``array_dim_names=None``.

    Raises:
      ValueError: a logical name appears twice.

    >>> from typelattice import nn
    >>> rules = [('batch', 'X'), ('features', 'X'), ('heads', 'Y'), ('batch', 'Z')]
    >>> nn.logical_to_mesh_axes(('batch', 'length', 'heads', 'features'), rules)
    PartitionSpec('X', None, 'Y', None)
    """
    if array_dim_names is None:
        return None
    names = list(array_dim_names)
    given = _as_rules(rules) if rules is not None else get_logical_axis_rules()
    repeated = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
    if repeated:
        raise ValueError(
            f"the logical axis names {tuple(names)} name {repeated} more than "
            "once: give each axis its own name"
        )
    assigned: list[Any] = [None] * len(names)
    done = [not isinstance(n, str) for n in names]
    for logical, mesh_axes in given:
        if logical not in names:
            continue
        pos = names.index(logical)
        taken: set[Any] = set()
        for a in assigned:
            taken |= _leaves_of(a) - {None}
        if not done[pos] and not (_leaves_of(mesh_axes) - {None}) & taken:
            assigned[pos] = mesh_axes
            done[pos] = True
    return PartitionSpec(*assigned)


def logical_to_mesh_sharding(
    specs: Any, mesh: _sharding.Mesh, rules: LogicalRules | None = None
) -> Any:
    """The shardings of a tree of logical PartitionSpecs (Flax's
    ``nn.logical_to_mesh_sharding``): each spec's logical names mapped to
    mesh axes by ``rules`` (:func:`logical_to_mesh_axes`), as a
    ``NamedSharding`` on ``mesh``.

    Args:
      specs: a pytree with logical PartitionSpecs as leaves (as
        :func:`get_partition_spec` returns).
      mesh: a :class:`typelattice.sharding.Mesh`.
      rules: the logical axis rules (default: those in effect).

    Returns:
      The tree with a ``NamedSharding`` for each spec.

    Raises:
      TypeError: ``mesh`` is not a Mesh.
      ValueError: a rule maps a name to an axis the mesh lacks.

    >>> import numpy as np, typelattice as tl
    >>> from typelattice import nn
    >>> from typelattice.sharding import Mesh, PartitionSpec
    >>> mesh = Mesh(np.array(tl.devices()).reshape(1, 1), ('data', 'model'))
    >>> out = nn.logical_to_mesh_sharding(
    ...     {'w': PartitionSpec('embed', 'mlp')}, mesh, [('mlp', 'model')])
    >>> out['w'].spec
    PartitionSpec(None, 'model')
    """
    if not isinstance(mesh, _sharding.Mesh):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"logical_to_mesh_sharding: expected a Mesh, got {mesh!r:.60}")

    def one(spec: Any) -> Any:
        axes = logical_to_mesh_axes(spec, rules)
        return _sharding.NamedSharding(
            mesh, axes if axes is not None else PartitionSpec()
        )

    return tree.tree_map(one, specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
