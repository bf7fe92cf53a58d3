"""Struct dataclasses: frozen dataclasses that are pytree nodes (the home of
``typelattice.flax.struct``, as Flax's ``flax.struct``).

A struct dataclass's fields are the children of its node, except those
declared ``field(pytree_node=False)``: those are part of the tree's
structure (functions, settings), passed through ``jit``, ``grad`` and
``vmap`` unchanged and compared for equality as structures are. Its state
dict (``typelattice.flax.serialization``) holds the pytree fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

from typelattice._tracing import tree
from typelattice.flax import _serialization as serialization

__all__ = ["PyTreeNode", "dataclass", "field"]

_T = TypeVar("_T")


def field(
    pytree_node: bool = True, *, metadata: dict[str, Any] | None = None, **kwargs: Any
) -> Any:
    """A dataclass field; ``pytree_node=False`` makes it static (part of the
    tree's structure, not a child).

    Args:
      pytree_node: whether the field holds a pytree (arrays that transforms
        trace); False for functions and settings.
      metadata: more metadata for the field.
      **kwargs: as for ``dataclasses.field`` (``default``,
        ``default_factory``, ``kw_only``, ...).

    Returns:
      The field, for a class body.

    >>> @dataclass
    ... class Scaled:
    ...     x: object
    ...     scale: float = field(pytree_node=False, default=2.0)
    >>> from typelattice import tree_util
    >>> tree_util.tree_leaves(Scaled(1.0))
    [1.0]
    """
    return dataclasses.field(
        metadata={**(metadata or {}), "pytree_node": pytree_node}, **kwargs
    )


@overload
def dataclass(clz: type[_T], **kwargs: Any) -> type[_T]: ...


@overload
def dataclass(**kwargs: Any) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,), frozen_default=True)
def dataclass(
    clz: type[_T] | None = None, **kwargs: Any
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """Make ``clz`` a frozen dataclass registered as a pytree node, with a
    ``replace(**fields)`` method, as Flax's ``struct.dataclass``.

    The fields are the node's children, in their order, except those
    declared with ``field(pytree_node=False)``. The keyword arguments go to
    ``dataclasses.dataclass`` (``frozen=True`` unless given; ``kw_only``
    and the others as there). Decorating a struct dataclass again returns
    it unchanged.

    Args:
      clz: the class (or None, to take keyword arguments first:
        ``@dataclass(kw_only=True)``).
      **kwargs: ``dataclasses.dataclass``'s arguments.

    Returns:
      The class (or a decorator).

    >>> import typelattice
    >>> import typelattice.numpy as tnp
    >>> @dataclass
    ... class Model:
    ...     w: object
    ...     apply_fn: object = field(pytree_node=False)
    >>> m = Model(tnp.asarray(3.0), lambda w, x: w * x)
    >>> typelattice.grad(lambda m: m.apply_fn(m.w, 2.0))(m).w
    Array(2., dtype=float32, weak_type=True)
    >>> m.replace(w=tnp.ones(2)).w
    Array([1., 1.], dtype=float32)
    """
    if clz is None:

        def decorate(cls: type[_T]) -> type[_T]:
            return dataclass(cls, **kwargs)

        return decorate
    if "_flax_dataclass" in clz.__dict__:
        return clz
    kwargs.setdefault("frozen", True)
    data_clz: Any = dataclasses.dataclass(**kwargs)(clz)
    fields = dataclasses.fields(data_clz)
    data_fields = [f.name for f in fields if f.metadata.get("pytree_node", True)]
    meta_fields = [f.name for f in fields if not f.metadata.get("pytree_node", True)]

    def replace(self: Any, **updates: Any) -> Any:
        """A copy with the fields ``updates`` names replaced.

        Args:
          **updates: the new field values.

        Returns:
          The copy (``self`` is unchanged).

        >>> @dataclass
        ... class Pair:
        ...     a: int
        ...     b: int
        >>> Pair(1, 2).replace(b=3)
        Pair(a=1, b=3)
        """
        return dataclasses.replace(self, **updates)

    data_clz.replace = replace
    tree.register_dataclass(data_clz, data_fields, meta_fields)

    def to_state(x: Any) -> dict[str, Any]:
        return {n: serialization.to_state_dict(getattr(x, n)) for n in data_fields}

    def from_state(x: Any, state: Any) -> Any:
        saved = serialization._expect_dict(  # pyright: ignore[reportPrivateUsage]
            state, data_clz.__name__
        )
        if set(saved) != set(data_fields):
            raise serialization._keys_differ(  # pyright: ignore[reportPrivateUsage]
                set(data_fields), set(saved)
            )
        return x.replace(
            **{
                n: serialization.from_state_dict(getattr(x, n), saved[n], name=n)
                for n in data_fields
            }
        )

    serialization.register_serialization_state(data_clz, to_state, from_state)
    data_clz._flax_dataclass = True
    result: type[_T] = data_clz
    return result


_N = TypeVar("_N", bound="PyTreeNode")


@dataclass_transform(field_specifiers=(field,), frozen_default=True)
class PyTreeNode:
    """A base class whose subclasses are struct dataclasses (see
    :func:`dataclass`); class keyword arguments go to the dataclass.

    Args:
      *args: the fields, in their order (of a subclass).
      **kwargs: the fields by name.

    >>> class Point(PyTreeNode):
    ...     x: float
    ...     y: float
    >>> p = Point(1.0, 2.0)
    >>> p.replace(y=5.0)
    Point(x=1.0, y=5.0)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__()
        dataclass(cls, **kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # (Replaced by the dataclass's __init__ in each subclass.)
        raise TypeError("PyTreeNode is a base class: subclass it with fields")

    def replace(self: _N, **overrides: Any) -> _N:
        """A copy with the fields ``overrides`` names replaced (set on each
        subclass).

        Args:
          **overrides: the new field values.

        Returns:
          The copy.

        >>> class Pair(PyTreeNode):
        ...     a: int
        ...     b: int
        >>> Pair(1, 2).replace(b=3)
        Pair(a=1, b=3)
        """
        raise TypeError("PyTreeNode is a base class: subclass it with fields")
