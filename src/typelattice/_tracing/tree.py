"""Pytrees: the one definition of the containers that tracing walks.

A pytree is a value built of *nodes* holding other pytrees, down to
*leaves*. The nodes, as in JAX:

- tuples and lists, their items in order;
- dicts, their values in the order of their sorted keys, so that
  ``{'a': x, 'b': y}`` and ``{'b': y, 'a': x}`` have one structure (keys
  that do not sort together are refused, as JAX refuses them);
- namedtuples, their fields in order (rebuilt as the same namedtuple);
- ``collections.OrderedDict``, its values in insertion order, and
  ``collections.defaultdict``, as a dict, its ``default_factory`` kept;
- ``None``, a node with no children (not a leaf);
- the classes registered with :func:`register_pytree_node` and its
  relatives (:func:`register_dataclass`, ...), and :class:`Partial`.

Anything else is a leaf. :func:`flatten` gives a value's leaves and its
:class:`PyTreeDef`, which :func:`unflatten` fills with new leaves; a
PyTreeDef is hashable and compares equal for equal structures, so it can be
part of a cache key (jit's). Every module that looks through containers
(the arguments and results of jit and eval_shape, grad's inputs, layers'
variables, optimiser states) does it with these functions, so they all
agree on what a container is. ``typelattice.tree_util`` and
``typelattice.tree`` are this module's public names, JAX's.

This is a small walker of our own rather than ``optree``: the measured
flatten and unflatten of typical trees are as fast (benchmarks/bench_tree.py)
and a dependency would be a third-party package on every jit call's path
for no new behaviour.

>>> leaves, treedef = flatten({'b': [1, None], 'a': (2, 3)})
>>> leaves
[2, 3, 1]
>>> unflatten(treedef, ['x', 'y', 'z'])
{'a': ('x', 'y'), 'b': ['z', None]}
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Final, NamedTuple, TypeVar, cast, overload

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "flatten",
    "flatten_call",
    "flatten_with_path",
    "keystr",
    "leaves",
    "leaves_with_path",
    "map_with_path",
    "reduce",
    "register_dataclass",
    "register_node",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "structure",
    "transpose",
    "tree_all",
    "tree_map",
    "unflatten",
    "unregister_node",
]

_T = TypeVar("_T")
_TypeT = TypeVar("_TypeT", bound=type)

# A structure, internally: None for a leaf, else a tuple (kind, meta,
# children): the node's class (None for the value None), what rebuilds it
# besides its children (a dict's keys, a registered class's auxiliary
# data), and the children's structures. Plain tuples: cheap to build, hash
# and compare on every jit call that flattens its arguments.
_Node = tuple[Any, Any, tuple[Any, ...]] | None

_NONE_NODE: Final = (None, None, ())


# -- keys: the steps of a path from the root to a leaf ----------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The step to the ``idx``-th item of a tuple or a list.

    >>> str(SequenceKey(0)), SequenceKey(0)
    ('[0]', SequenceKey(idx=0))
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The step to the value of ``key`` in a dict (any dict kind).

    >>> str(DictKey('a')), DictKey('a')
    ("['a']", DictKey(key='a'))
    """

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The step to the attribute ``name`` (a namedtuple's or a dataclass's
    field).

    >>> str(GetAttrKey('x')), GetAttrKey('x')
    ('.x', GetAttrKey(name='x'))
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The step to the ``key``-th child of a registered node that gives no
    keys of its own.

    >>> str(FlattenedIndexKey(1)), FlattenedIndexKey(1)
    ('[<flat index 1>]', FlattenedIndexKey(key=1))
    """

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | Any
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as a string: the indexing that reaches its leaf.

    Args:
      keys: a path, as :func:`flatten_with_path` gives.
      simple: write each step as its bare key, index or name.
      separator: written between the steps.

    Returns:
      The string (``''`` for the empty path, the root).

    >>> keystr((DictKey('a'), SequenceKey(0), GetAttrKey('x')))
    "['a'][0].x"
    >>> keystr((DictKey('a'), SequenceKey(0)), simple=True, separator='/')
    'a/0'
    """
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(_bare(k)) for k in keys)


def _bare(key: Any) -> Any:
    if isinstance(key, SequenceKey):
        return key.idx
    if isinstance(key, DictKey | FlattenedIndexKey):
        return key.key
    if isinstance(key, GetAttrKey):
        return key.name
    return key


# -- the registry of node classes -------------------------------------------------


class _Registration(NamedTuple):
    """How a registered class is taken apart and rebuilt."""

    # value -> (children, meta), meta hashable: what rebuilds the value
    # besides its children.
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    # (meta, children) -> value.
    unflatten: Callable[[Any, Iterable[Any]], Any]
    # value -> ([(key, child), ...], meta); None: FlattenedIndexKey(i).
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None
    # (meta, number of children) -> the children's keys, when the
    # structure alone decides them (for messages from a PyTreeDef).
    keys: Callable[[Any, int], list[Any]] | None


_NODES: dict[type, _Registration] = {}

_BUILTIN: Final = (tuple, list, dict, type(None))


def _register(cls: type, registration: _Registration) -> None:
    if cls in _BUILTIN or cls in _NODES:
        raise ValueError(
            f"{cls.__name__} is a pytree node already: register a class once "
            "(a class registered in a test can be unregistered with "
            "typelattice._tracing.tree.unregister_node)"
        )
    _NODES[cls] = registration


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]]
    | None = None,
) -> None:
    """Make instances of ``nodetype`` nodes of every pytree, as
    ``jax.tree_util.register_pytree_node``.

    Args:
      nodetype: the class (exactly; subclasses are not included).
      flatten_func: ``value -> (children, aux_data)``; ``aux_data``
        hashable, compared for equality: what rebuilds the value besides its
        children (it is part of the structure).
      unflatten_func: ``(aux_data, children) -> value``.
      flatten_with_keys_func: ``value -> (((key, child), ...), aux_data)``,
        the keys of the children's paths; without it, the paths say
        ``FlattenedIndexKey(i)``.

    Raises:
      ValueError: ``nodetype`` is a node already (a builtin container or
        registered before).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                      lambda _, c: Pair(*c))
    >>> leaves(Pair(1, [2]))
    [1, 2]
    >>> unregister_node(Pair)  # (the example's class leaves the registry)
    """
    _register(
        nodetype,
        _Registration(flatten_func, unflatten_func, flatten_with_keys_func, None),
    )


def register_node(
    cls: type,
    flatten_node: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_node: Callable[[Any, Iterable[Any]], Any],
) -> None:
    """:func:`register_pytree_node` without keys (the older name).

    Args:
      cls: the class.
      flatten_node: ``value -> (children, meta)``.
      unflatten_node: ``(meta, children) -> value``.

    >>> class Single:
    ...     def __init__(self, a):
    ...         self.a = a
    >>> register_node(Single, lambda s: ((s.a,), None), lambda _, c: Single(*c))
    >>> leaves([Single(1), 2])
    [1, 2]
    >>> unregister_node(Single)
    """
    register_pytree_node(cls, flatten_node, unflatten_node)


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Register ``nodetype`` with the keys of its children's paths, as
    ``jax.tree_util.register_pytree_with_keys``.

    Args:
      nodetype: the class.
      flatten_with_keys: ``value -> (((key, child), ...), aux_data)``.
      unflatten_func: ``(aux_data, children) -> value``.
      flatten_func: ``value -> (children, aux_data)``, a quicker flatten
        for the walks that need no keys (by default, ``flatten_with_keys``
        with the keys dropped).

    Raises:
      ValueError: ``nodetype`` is a node already.

    >>> class Box:
    ...     def __init__(self, v):
    ...         self.v = v
    >>> register_pytree_with_keys(
    ...     Box, lambda b: (((GetAttrKey('v'), b.v),), None), lambda _, c: Box(*c))
    >>> [keystr(p) for p, _ in flatten_with_path([Box(1)])[0]]
    ['[0].v']
    >>> unregister_node(Box)
    """

    def dropping_keys(value: Any) -> tuple[list[Any], Any]:
        pairs, meta = flatten_with_keys(value)
        return [child for _, child in pairs], meta

    register_pytree_node(
        nodetype, flatten_func or dropping_keys, unflatten_func, flatten_with_keys
    )


def register_pytree_node_class(cls: _TypeT) -> _TypeT:
    """Register a class by its ``tree_flatten`` method and ``tree_unflatten``
    classmethod (a decorator), as ``jax.tree_util.register_pytree_node_class``.

    Args:
      cls: a class with ``tree_flatten(self) -> (children, aux_data)`` and
        ``tree_unflatten(cls, aux_data, children)``.

    Returns:
      ``cls``.

    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, scale):
    ...         self.x, self.scale = x, scale
    ...     def tree_flatten(self):
    ...         return (self.x,), self.scale
    ...     @classmethod
    ...     def tree_unflatten(cls, scale, children):
    ...         return cls(*children, scale)
    >>> structure(Scaled(1.0, 2))
    PyTreeDef(CustomNode(Scaled[2], [*]))
    >>> unregister_node(Scaled)
    """
    node: Any = cls
    register_pytree_node(cls, node.tree_flatten, node.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: _TypeT) -> _TypeT:
    """Register a class by its ``tree_flatten_with_keys`` method and
    ``tree_unflatten`` classmethod (and ``tree_flatten`` if it has one), as
    ``jax.tree_util.register_pytree_with_keys_class``.

    Args:
      cls: the class.

    Returns:
      ``cls``.

    >>> @register_pytree_with_keys_class
    ... class Named:
    ...     def __init__(self, w):
    ...         self.w = w
    ...     def tree_flatten_with_keys(self):
    ...         return ((GetAttrKey('w'), self.w),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, _, children):
    ...         return cls(*children)
    >>> keystr(flatten_with_path(Named(3))[0][0][0])
    '.w'
    >>> unregister_node(Named)
    """
    node: Any = cls
    register_pytree_with_keys(
        cls,
        node.tree_flatten_with_keys,
        node.tree_unflatten,
        getattr(node, "tree_flatten", None),
    )
    return cls


def _is_dataclass(cls: Any) -> bool:
    return dataclasses.is_dataclass(cls)  # (a bool: no narrowing of cls)


def register_dataclass(
    nodetype: _TypeT,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> _TypeT:
    """Register a dataclass: its data fields are children, its meta fields
    part of the structure, as ``jax.tree_util.register_dataclass``.

    Without ``data_fields`` and ``meta_fields``, they are read from the
    dataclass's fields: those declared with
    ``dataclasses.field(metadata=dict(static=True))`` are meta fields, the
    others data fields (those with ``init=False`` are left to the class's
    ``__init__``, not in the tree).

    Args:
      nodetype: the class (usable as a decorator).
      data_fields: the names of the fields that hold pytrees.
      meta_fields: the names of the fields that hold hashable constants
        (functions, settings), compared for equality as the structure is.
      drop_fields: fields that ``__init__`` takes but the tree leaves out
        (the rebuilt value gets their defaults).

    Returns:
      ``nodetype``.

    Raises:
      TypeError: one of the field lists given without the other, or the
        fields inferred from a class that is not a dataclass.
      ValueError: the lists miss a field that ``__init__`` takes.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class State:
    ...     step: int
    ...     params: dict
    ...     apply_fn: object = dataclasses.field(metadata=dict(static=True))
    >>> flatten(State(0, {'w': 1.0}, print))[0]
    [0, 1.0]
    >>> unregister_node(State)
    """
    cls: Any = nodetype  # (a type, checked for a dataclass below)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: give both data_fields and meta_fields, or "
                f"neither; got data_fields={data_fields!r}, "
                f"meta_fields={meta_fields!r}"
            )
        if not _is_dataclass(cls):
            raise TypeError(
                f"register_dataclass: {cls!r} is not a dataclass; give its "
                "data_fields and meta_fields"
            )
        fields = [
            f for f in dataclasses.fields(cls) if f.init and f.name not in drop_fields
        ]
        data_fields = [f.name for f in fields if not f.metadata.get("static")]
        meta_fields = [f.name for f in fields if f.metadata.get("static")]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if _is_dataclass(cls):
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        missing = sorted(init - {*data, *meta, *drop_fields})
        if missing:
            raise ValueError(
                f"register_dataclass: {cls.__name__} takes the fields "
                f"{missing} that are in neither data_fields nor meta_fields; "
                "add each to one of them (or to drop_fields, if it has a default)"
            )

    def flatten_dc(x: Any) -> tuple[list[Any], tuple[Any, ...]]:
        return [getattr(x, n) for n in data], tuple([getattr(x, n) for n in meta])

    def flatten_dc_keys(x: Any) -> tuple[list[tuple[Any, Any]], tuple[Any, ...]]:
        pairs = [(GetAttrKey(n), getattr(x, n)) for n in data]
        return pairs, tuple([getattr(x, n) for n in meta])

    def unflatten_dc(aux: tuple[Any, ...], children: Iterable[Any]) -> Any:
        return cls(
            **dict(zip(data, children, strict=True)),
            **dict(zip(meta, aux, strict=True)),
        )

    def keys_dc(meta: Any, n: int) -> list[Any]:
        return [GetAttrKey(name) for name in data]

    _register(
        nodetype, _Registration(flatten_dc, unflatten_dc, flatten_dc_keys, keys_dc)
    )
    return nodetype


def unregister_node(cls: type) -> None:
    """Make ``cls`` a leaf class again (undoes the registrations above).

    Args:
      cls: a registered class.

    Raises:
      KeyError: ``cls`` is not registered.

    >>> unregister_node(int)
    Traceback (most recent call last):
    KeyError: <class 'int'>
    """
    del _NODES[cls]


# The dict kinds of the collections module, registered as JAX has them.
def _flatten_ordered(d: collections.OrderedDict[Any, Any]) -> tuple[list[Any], Any]:
    return list(d.values()), tuple(d)


def _unflatten_ordered(keys: tuple[Any, ...], values: Iterable[Any]) -> Any:
    return collections.OrderedDict(zip(keys, values, strict=True))


def _flatten_default(d: collections.defaultdict[Any, Any]) -> tuple[list[Any], Any]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _unflatten_default(meta: tuple[Any, Any], values: Iterable[Any]) -> Any:
    factory, keys = meta
    return collections.defaultdict(factory, zip(keys, values, strict=True))


def _ordered_with_keys(
    d: collections.OrderedDict[Any, Any],
) -> tuple[list[tuple[Any, Any]], Any]:
    return [(DictKey(k), v) for k, v in d.items()], tuple(d)


def _default_with_keys(
    d: collections.defaultdict[Any, Any],
) -> tuple[list[tuple[Any, Any]], Any]:
    values, meta = _flatten_default(d)
    return [(DictKey(k), v) for k, v in zip(meta[1], values, strict=True)], meta


def _ordered_keys(keys: tuple[Any, ...], n: int) -> list[Any]:
    return [DictKey(k) for k in keys]


def _default_keys(meta: tuple[Any, tuple[Any, ...]], n: int) -> list[Any]:
    return [DictKey(k) for k in meta[1]]


_NODES[collections.OrderedDict] = _Registration(
    _flatten_ordered, _unflatten_ordered, _ordered_with_keys, _ordered_keys
)
_NODES[collections.defaultdict] = _Registration(
    _flatten_default, _unflatten_default, _default_with_keys, _default_keys
)


class Partial(functools.partial[_T]):
    """``functools.partial`` as a pytree: its arguments are children, its
    function part of the structure, as ``jax.tree_util.Partial``; so a
    function with bound arrays can be an argument or a result of ``jit``.

    >>> p = Partial(divmod, 7)
    >>> p(2), leaves(p)
    ((3, 1), [7])
    """


def _flatten_partial(p: Partial[Any]) -> tuple[list[Any], Any]:
    return [p.args, p.keywords], p.func


def _unflatten_partial(func: Any, children: Iterable[Any]) -> Partial[Any]:
    args, keywords = children
    return Partial(func, *args, **keywords)


_NODES[Partial] = _Registration(_flatten_partial, _unflatten_partial, None, None)


# -- flatten ----------------------------------------------------------------------


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    if len(d) < 2:
        return tuple(d)
    try:
        return tuple(sorted(d))
    except TypeError:
        kinds = sorted({type(k).__name__ for k in d})
        raise ValueError(
            f"the keys of a dict in a pytree must sort together (its values are "
            f"ordered by sorted key, as JAX orders them), but {list(d)} mix "
            f"{', '.join(kinds)}: use keys of one type, or a "
            "collections.OrderedDict, whose values keep their order"
        ) from None


def _is_namedtuple(t: Any) -> bool:
    fields = getattr(t, "_fields", None)
    return fields is not None and isinstance(t, type) and issubclass(t, tuple)


def _flatten(obj: Any, out: list[Any]) -> _Node:
    t = obj.__class__
    if t is tuple or t is list:
        return (t, None, _children(obj, out))
    if t is dict:
        try:
            keys = tuple(sorted(obj))
        except TypeError:
            keys = _sorted_keys(obj)  # (raises, naming the keys)
        return (dict, keys, _children(map(obj.__getitem__, keys), out))
    if obj is None:
        return _NONE_NODE
    registered = _NODES.get(t)
    if registered is not None:
        children, meta = registered.flatten(obj)
        return (t, meta, _children(children, out))
    if isinstance(obj, tuple) and hasattr(t, "_fields"):  # a namedtuple
        return (t, None, _children(obj, out))  # pyright: ignore[reportUnknownArgumentType]
    out.append(obj)
    return None


def _children(items: Iterable[Any], out: list[Any]) -> tuple[_Node, ...]:
    """The structures of a node's children, their leaves appended to
    ``out``. Most children are leaves: those are handled here, without a
    call of :func:`_flatten` each."""
    nodes: list[_Node] = []
    for x in items:
        t = x.__class__
        if (
            t is list
            or t is dict
            or x is None
            or isinstance(x, tuple)  # (tuples and namedtuples)
            or t in _NODES
        ):
            nodes.append(_flatten(x, out))
        else:
            out.append(x)
            nodes.append(None)
    return tuple(nodes)


def _collect(obj: Any, out: list[Any]) -> None:
    """The leaves of ``obj`` appended to ``out`` (:func:`_flatten` without
    the structure); as in :func:`_children`, leaves are appended without a
    call each."""
    t = obj.__class__
    items: Iterable[Any]
    if t is tuple or t is list:
        items = obj
    elif t is dict:
        items = [obj[k] for k in _sorted_keys(obj)]
    elif obj is None:
        return
    elif t in _NODES:
        items = _NODES[t].flatten(obj)[0]
    elif isinstance(obj, tuple) and hasattr(t, "_fields"):  # a namedtuple
        items = cast("Iterable[Any]", obj)
    else:
        out.append(obj)
        return
    for x in items:
        tx = x.__class__
        if (
            tx is list
            or tx is dict
            or x is None
            or isinstance(x, tuple)
            or tx in _NODES
        ):
            _collect(x, out)
        else:
            out.append(x)


def _open(obj: Any, with_keys: bool) -> tuple[Any, Any, list[Any], list[Any]] | None:
    """``(kind, meta, children, keys)`` of a node (``keys`` empty unless
    ``with_keys``), None for a leaf: the general walk, for ``is_leaf``, key
    paths and matching trees against a structure."""
    t = obj.__class__
    keys: list[Any]
    if t is tuple or t is list:
        items = list(obj)
        keys = [SequenceKey(i) for i in range(len(items))] if with_keys else []
        return t, None, items, keys
    if t is dict:
        names = _sorted_keys(obj)
        keys = [DictKey(k) for k in names] if with_keys else []
        return dict, names, [obj[k] for k in names], keys
    if obj is None:
        return None, None, [], []
    registered = _NODES.get(t)
    if registered is not None:
        if with_keys and registered.flatten_with_keys is not None:
            pairs, meta = registered.flatten_with_keys(obj)
            pairs = list(pairs)
            return t, meta, [c for _, c in pairs], [k for k, _ in pairs]
        children, meta = registered.flatten(obj)
        items = list(children)
        keys = [FlattenedIndexKey(i) for i in range(len(items))] if with_keys else []
        return t, meta, items, keys
    if _is_namedtuple(t):
        keys = [GetAttrKey(n) for n in t._fields] if with_keys else []  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        return t, None, list(obj), keys  # pyright: ignore[reportUnknownArgumentType]
    return None


def _walk(
    obj: Any,
    is_leaf: Callable[[Any], bool] | None,
    out: list[Any],
    paths: list[KeyPath] | None,
    prefix: KeyPath,
) -> _Node:
    """:func:`_flatten` with ``is_leaf`` and, when ``paths`` is a list, the
    key path of each leaf appended to it."""
    opened = (
        None if is_leaf is not None and is_leaf(obj) else _open(obj, paths is not None)
    )
    if opened is None:
        out.append(obj)
        if paths is not None:
            paths.append(prefix)
        return None
    kind, meta, children, keys = opened
    if kind is None:
        return _NONE_NODE
    if paths is None:
        nodes = tuple([_walk(c, is_leaf, out, None, prefix) for c in children])
    else:
        nodes = tuple(
            [
                _walk(c, is_leaf, out, paths, (*prefix, k))
                for c, k in zip(children, keys, strict=True)
            ]
        )
    return (kind, meta, nodes)


def flatten(
    obj: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``obj``, in order, and its structure, as
    ``jax.tree_util.tree_flatten``.

    Args:
      obj: any value (a leaf is a tree of one leaf).
      is_leaf: called on each subtree before it is opened: True makes it a
        leaf (None: only the non-nodes are leaves).

    Returns:
      ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` rebuilds ``obj``.

    >>> flatten([1, (2, None), {'z': 3, 'y': 4}])[0]
    [1, 2, 4, 3]
    >>> flatten([1, (2, None)], is_leaf=lambda x: isinstance(x, tuple))[0]
    [1, (2, None)]
    """
    out: list[Any] = []
    if is_leaf is None:
        node = _flatten(obj, out)
    else:
        node = _walk(obj, is_leaf, out, None, ())
    return out, PyTreeDef(node, len(out))


def flatten_with_path(
    obj: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """The leaves of ``obj`` with their key paths, and its structure, as
    ``jax.tree_util.tree_flatten_with_path``.

    Args:
      obj: any value.
      is_leaf: as in :func:`flatten`.

    Returns:
      ``([(path, leaf), ...], treedef)``; a path is a tuple of keys
      (:class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`,
      :class:`FlattenedIndexKey`), written as indexing by :func:`keystr`.

    >>> pairs, _ = flatten_with_path({'b': [5]})
    >>> pairs
    [((DictKey(key='b'), SequenceKey(idx=0)), 5)]
    """
    out: list[Any] = []
    paths: list[KeyPath] = []
    node = _walk(obj, is_leaf, out, paths, ())
    return list(zip(paths, out, strict=True)), PyTreeDef(node, len(out))


def leaves_with_path(
    obj: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[KeyPath, Any]]:
    """The ``(path, leaf)`` pairs of :func:`flatten_with_path`.

    Args:
      obj: any value.
      is_leaf: as in :func:`flatten`.

    Returns:
      The list of pairs, in leaf order.

    >>> [(keystr(p), x) for p, x in leaves_with_path((1, {'k': 2}))]
    [('[0]', 1), ("[1]['k']", 2)]
    """
    return flatten_with_path(obj, is_leaf)[0]


def _build(node: _Node, it: Iterator[Any]) -> Any:
    if node is None:
        return next(it)
    kind, meta, children = node
    if kind is None:
        return None
    n = len(children)
    if children.count(None) == n:  # (leaves only: at C speed)
        if kind is dict:
            return dict(zip(meta, itertools.islice(it, n), strict=True))
        items = list(itertools.islice(it, n))
    else:
        items = [next(it) if c is None else _build(c, it) for c in children]
    if kind is tuple:
        return tuple(items)
    if kind is list:
        return items
    if kind is dict:
        return dict(zip(meta, items, strict=True))
    registered = _NODES.get(kind)
    if registered is not None:
        return registered.unflatten(meta, items)
    return kind(*items)  # a namedtuple


def _count(node: _Node) -> int:
    if node is None:
        return 1
    return sum(_count(child) for child in node[2])


def _count_nodes(node: _Node) -> int:
    if node is None:
        return 1
    return 1 + sum(_count_nodes(child) for child in node[2])


class PyTreeDef:
    """The structure of a pytree: its nodes, without the leaves (JAX's
    ``PyTreeDef``).

    Hashable; equal for equal structures (same node classes, dict keys and
    registered metadata, leaves in the same places).

    Attributes:
      num_leaves: how many leaves fill it.

    >>> _, a = flatten((1, {'k': 2}))
    >>> _, b = flatten(('x', {'k': 'y'}))
    >>> a == b, a.num_leaves, a.num_nodes
    (True, 2, 4)
    >>> a
    PyTreeDef((*, {'k': *}))
    """

    __slots__ = ("_builder", "_node", "_uses", "num_leaves")

    _node: _Node
    num_leaves: int

    def __init__(self, node: _Node, num_leaves: int | None = None) -> None:
        self._node = node
        self.num_leaves = _count(node) if num_leaves is None else num_leaves
        # Unflattened again and again (jit's results, a recorded call's
        # arguments on every run), a structure is compiled to one Python
        # expression of its leaves: after _COMPILE_AFTER uses, so that the
        # structures used a few times (while tracing) cost no compilation.
        self._uses = 0
        self._builder: Callable[[Sequence[Any]], Any] | None = None

    @property
    def is_leaf(self) -> bool:
        """Whether the whole tree is one leaf."""
        return self._node is None

    @property
    def num_nodes(self) -> int:
        """How many nodes it has, leaves and ``None`` included."""
        return _count_nodes(self._node)

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children.

        Returns:
          One PyTreeDef per child (none for a leaf or ``None``).

        >>> structure({'a': (1, 2), 'b': 3}).children()
        [PyTreeDef((*, *)), PyTreeDef(*)]
        """
        if self._node is None:
            return []
        return [PyTreeDef(child) for child in self._node[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """The root's class and metadata (a dict's keys, a registered
        class's auxiliary data); None for a leaf.

        >>> structure({'b': 1, 'a': 2}).node_data()
        (<class 'dict'>, ('a', 'b'))
        """
        if self._node is None:
            return None
        kind, meta, _ = self._node
        return (type(None) if kind is None else kind), meta

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._node == other._node

    def __hash__(self) -> int:
        return hash(self._node)

    def __repr__(self) -> str:
        return f"PyTreeDef({_show(self._node)})"

    def paths(self) -> list[str]:
        """Where each leaf is, in order: the indexing that reaches it from
        the root (:func:`keystr` of its path), for messages (``''`` for a
        tree that is one leaf).

        Returns:
          One string per leaf: ``['key']`` for a dict's item, ``[i]`` for
          the i-th item of a tuple or a list, ``.name`` for a field.

        >>> flatten({'b': [1, 2], 'a': (3,)})[1].paths()
        ["['a'][0]", "['b'][0]", "['b'][1]"]
        """
        out: list[str] = []
        _paths(self._node, "", out)
        return out

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The tree of this structure holding ``leaves`` (see :func:`unflatten`).

        Args:
          leaves: as many leaves as it has, in order.

        Returns:
          The tree.

        Raises:
          ValueError: too few or too many leaves.

        >>> flatten([1, 2])[1].unflatten('ab')
        ['a', 'b']
        """
        values: list[Any] = leaves if type(leaves) is list else list(leaves)  # pyright: ignore[reportUnknownVariableType]
        if len(values) != self.num_leaves:
            fewer = "fewer" if len(values) < self.num_leaves else "more"
            raise ValueError(f"{self} has {self.num_leaves} leaves; {fewer} were given")
        builder = self._builder
        if builder is not None:
            return builder(values)
        self._uses += 1
        if self._uses > _COMPILE_AFTER:
            self._builder = _compile(self._node)
            if self._builder is not None:
                return self._builder(values)
        return _build(self._node, iter(values))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` where this structure has its leaves:
        ``tree`` must have this structure, or one that has it as a prefix.

        Args:
          tree: a pytree.

        Returns:
          One subtree per leaf of this structure, in order.

        Raises:
          ValueError: ``tree`` does not have this structure as a prefix
            (the message says where they differ).

        >>> structure((0, 0)).flatten_up_to((1, [2, 3]))
        [1, [2, 3]]
        """
        out: list[Any] = []
        problem = _up_to(self._node, tree, out, ())
        if problem is not None:
            where, detail = problem
            raise ValueError(
                f"the tree does not have the structure {self}: at "
                f"{keystr(where) or 'the root'}, {detail}"
            )
        return out


# Compiling costs about as much as 30 builds by _build: worth it for a
# structure built many times.
_COMPILE_AFTER: Final = 16
# Deeper structures are built by _build (Python's parser limits nesting).
_MAX_COMPILED_DEPTH: Final = 40


def _compile(node: _Node) -> Callable[[Sequence[Any]], Any] | None:
    """``lambda l: <the tree of structure node with leaves l[0], l[1]...>``,
    compiled; None for a structure too deep to compile."""
    scope: dict[str, Any] = {}
    leaf_numbers = itertools.count()

    def constant(value: Any) -> str:
        name = f"c{len(scope)}"
        scope[name] = value
        return name

    def expr(node: _Node, depth: int) -> str:
        if depth > _MAX_COMPILED_DEPTH:
            raise RecursionError
        if node is None:
            return f"l[{next(leaf_numbers)}]"
        kind, meta, children = node
        if kind is None:
            return "None"
        parts = [expr(child, depth + 1) for child in children]
        if kind is tuple:
            return "(" + "".join(f"{p}, " for p in parts) + ")"
        if kind is list:
            return f"[{', '.join(parts)}]"
        if kind is dict:
            pairs = zip(meta, parts, strict=True)
            return "{" + ", ".join(f"{constant(k)}: {p}" for k, p in pairs) + "}"
        registered = _NODES.get(kind)
        if registered is not None:
            build = constant(registered.unflatten)
            return f"{build}({constant(meta)}, [{', '.join(parts)}])"
        return f"{constant(kind)}({', '.join(parts)})"  # a namedtuple

    try:
        source = f"lambda l: {expr(node, 0)}"
    except RecursionError:
        return None
    built: Callable[[Sequence[Any]], Any] = eval(source, scope)
    return built


def _node_keys(kind: Any, meta: Any, n: int) -> list[Any]:
    """The keys of a node's children, from its structure alone."""
    if kind is dict:
        return [DictKey(k) for k in meta]
    if kind is tuple or kind is list:
        return [SequenceKey(i) for i in range(n)]
    registered = _NODES.get(kind)
    if registered is not None:
        if registered.keys is not None:
            return registered.keys(meta, n)
        return [FlattenedIndexKey(i) for i in range(n)]
    return [GetAttrKey(name) for name in getattr(kind, "_fields", ())]


def _paths(node: _Node, prefix: str, out: list[str]) -> None:
    if node is None:
        out.append(prefix)
        return
    kind, meta, children = node
    keys = _node_keys(kind, meta, len(children))
    for key, child in zip(keys, children, strict=True):
        _paths(child, prefix + str(key), out)


def _show(node: _Node) -> str:
    if node is None:
        return "*"
    kind, meta, children = node
    if kind is None:
        return "None"
    shown = [_show(c) for c in children]
    if kind is tuple:
        return f"({shown[0]},)" if len(shown) == 1 else f"({', '.join(shown)})"
    if kind is list:
        return f"[{', '.join(shown)}]"
    if kind is dict:
        pairs = zip(meta, shown, strict=True)
        return "{" + ", ".join(f"{k!r}: {s}" for k, s in pairs) + "}"
    head = (
        f"namedtuple[{kind.__name__}]"
        if _is_namedtuple(kind)
        else f"{kind.__name__}[{meta}]"
    )
    return f"CustomNode({head}, [{', '.join(shown)}])"


def _describe(kind: Any, meta: Any, n: int) -> str:
    if kind is None:
        return "None"
    if kind is dict or kind in (collections.OrderedDict, collections.defaultdict):
        keys = meta[1] if kind is collections.defaultdict else meta
        return f"a {kind.__name__} with keys {list(keys)}"
    if kind is tuple or kind is list:
        return f"a {kind.__name__} of length {n}"
    return f"a {kind.__name__} node with metadata {meta!r} and {n} children"


def _up_to(
    node: _Node, tree: Any, out: list[Any], where: KeyPath
) -> tuple[KeyPath, str] | None:
    """The subtrees of ``tree`` at the leaves of ``node`` appended to
    ``out``; the first difference ``(path, what)`` if ``tree`` does not
    have ``node`` as a prefix."""
    if node is None:
        out.append(tree)
        return None
    kind, meta, children = node
    opened = _open(tree, True)
    want = _describe(kind, meta, len(children))
    if opened is None:
        return where, f"expected {want}, got the leaf {tree!r}"
    got_kind, got_meta, got_children, keys = opened
    if got_kind is not kind or got_meta != meta or len(got_children) != len(children):
        got = _describe(got_kind, got_meta, len(got_children))
        return where, f"expected {want}, got {got}"
    for child, value, key in zip(children, got_children, keys, strict=True):
        problem = _up_to(child, value, out, (*where, key))
        if problem is not None:
            return problem
    return None


def structure(obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``obj``, as ``jax.tree_util.tree_structure``.

    Args:
      obj: any value.
      is_leaf: as in :func:`flatten`.

    Returns:
      Its PyTreeDef.

    >>> structure([1, None, {'a': 2}])
    PyTreeDef([*, None, {'a': *}])
    """
    return flatten(obj, is_leaf)[1]


# Per call signature (the number of positional arguments, then the keyword
# names as given), when every argument is a leaf: the structure of
# ``(args, kwargs)`` and the keyword names in the order of its leaves.
_CALLS: dict[tuple[Any, ...], tuple[PyTreeDef, tuple[Any, ...]]] = {}


def flatten_call(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], PyTreeDef]:
    """``flatten((args, kwargs))``: the same, quicker for the common call
    whose arguments are all leaves (its structure remembered).

    >>> flatten_call((1, 2), {'b': 3, 'a': 4}) == flatten(((1, 2), {'b': 3, 'a': 4}))
    True
    """
    scratch: list[Any] = []
    for node in (*_children(args, scratch), *_children(kwargs.values(), scratch)):
        if node is not None:  # (a container among the arguments)
            return flatten((args, kwargs))
    key = (len(args), *kwargs)
    found = _CALLS.get(key)
    if found is None:
        leaves, treedef = flatten((args, kwargs))
        if len(_CALLS) >= 1024:
            _CALLS.clear()
        _CALLS[key] = (treedef, _sorted_keys(kwargs))
        return leaves, treedef
    treedef, names = found
    return [*args, *[kwargs[k] for k in names]], treedef


def unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` holding ``leaves``, as
    ``jax.tree_util.tree_unflatten``.

    Args:
      treedef: a structure from :func:`flatten`.
      leaves: as many leaves as it has, in order.

    Returns:
      The tree (new containers; the leaves as given).

    Raises:
      ValueError: too few or too many leaves.

    >>> _, treedef = flatten({'a': 1, 'b': [2]})
    >>> unflatten(treedef, [10, 20])
    {'a': 10, 'b': [20]}
    """
    return treedef.unflatten(leaves)


def leaves(obj: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``obj``, in order, as ``jax.tree_util.tree_leaves``.

    Args:
      obj: any value.
      is_leaf: as in :func:`flatten`.

    Returns:
      The list of its leaves (``[obj]`` for a leaf, ``[]`` for ``None``).

    >>> leaves(((1, 2), None, [3]))
    [1, 2, 3]
    >>> leaves([None, 1], is_leaf=lambda x: x is None)
    [None, 1]
    """
    out: list[Any] = []
    if is_leaf is None:
        _collect(obj, out)
    else:
        _walk(obj, is_leaf, out, None, ())
    return out


def _map(obj: Any, fn: Callable[[Any], Any]) -> Any:
    t = obj.__class__
    if t is tuple:
        return tuple([_map(x, fn) for x in obj])
    if t is list:
        return [_map(x, fn) for x in obj]
    if t is dict:
        return {k: _map(obj[k], fn) for k in _sorted_keys(obj)}
    if obj is None:
        return None
    if t in _NODES or (isinstance(obj, tuple) and hasattr(t, "_fields")):
        items, treedef = flatten(obj)
        return unflatten(treedef, [fn(x) for x in items])
    return fn(obj)


def _matched(treedef: PyTreeDef, rest: tuple[Any, ...], where: str) -> list[list[Any]]:
    """Each of ``rest`` flattened up to ``treedef``; ValueError naming both
    structures when one does not match."""
    flat: list[list[Any]] = []
    for i, other in enumerate(rest, start=2):
        found: list[Any] = []
        problem = _up_to(treedef._node, other, found, ())  # pyright: ignore[reportPrivateUsage]
        if problem is not None:
            path, detail = problem
            raise ValueError(
                f"{where}: the trees have different structures: the first is "
                f"{treedef} and tree {i} is {structure(other)}; at "
                f"{keystr(path) or 'the root'}, {detail}. Give trees of the first "
                "tree's structure (or with it as a prefix)"
            )
        flat.append(found)
    return flat


# (Two signatures, so that a checker infers a one-argument lambda's type.)
@overload
def tree_map(
    fn: Callable[[Any], Any], obj: Any, *, is_leaf: Callable[[Any], bool] | None = None
) -> Any: ...
@overload
def tree_map(
    fn: Callable[..., Any],
    obj: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any: ...
def tree_map(
    fn: Callable[..., Any],
    obj: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``obj`` with every leaf ``x`` replaced by ``fn(x, *ys)``, the ``ys``
    the subtrees of ``rest`` at the same place, as
    ``jax.tree_util.tree_map``.

    Args:
      fn: applied to each leaf (and the matching subtrees of ``rest``).
      obj: any value: its structure is the result's.
      *rest: trees with ``obj``'s structure, or with it as a prefix.
      is_leaf: as in :func:`flatten` (applied to ``obj``).

    Returns:
      The new tree (dicts with their keys in sorted order, as
      :func:`unflatten` builds them).

    Raises:
      ValueError: a tree of ``rest`` does not match ``obj``'s structure.

    >>> tree_map(lambda x: x * 10, {'b': (1, 2), 'a': [3, None]})
    {'a': [30, None], 'b': (10, 20)}
    >>> tree_map(lambda x, y: x + y, (1, 2), (10, 20))
    (11, 22)
    """
    if not rest and is_leaf is None:
        return _map(obj, fn)
    flat, treedef = flatten(obj, is_leaf)
    others = _matched(treedef, rest, "tree_map")
    return treedef.unflatten([fn(*xs) for xs in zip(flat, *others, strict=True)])


def map_with_path(
    fn: Callable[..., Any],
    obj: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """:func:`tree_map` with each leaf's key path given first, as
    ``jax.tree_util.tree_map_with_path``.

    Args:
      fn: called as ``fn(path, x, *ys)``.
      obj: any value.
      *rest: trees with ``obj``'s structure, or with it as a prefix.
      is_leaf: as in :func:`flatten`.

    Returns:
      The new tree.

    >>> map_with_path(lambda p, x: keystr(p), {'a': [0, 0]})
    {'a': ["['a'][0]", "['a'][1]"]}
    """
    pairs, treedef = flatten_with_path(obj, is_leaf)
    others = _matched(treedef, rest, "tree_map_with_path")
    return treedef.unflatten(
        [fn(p, x, *ys) for (p, x), *ys in zip(pairs, *others, strict=True)]
    )


_NO_INITIALIZER: Final = object()


def reduce(
    function: Callable[[Any, Any], Any],
    obj: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """The leaves of ``obj`` combined by ``function``, left to right, as
    ``jax.tree_util.tree_reduce``.

    Args:
      function: ``(accumulated, leaf) -> accumulated``.
      obj: any value.
      initializer: the start (without it, the first leaf).
      is_leaf: as in :func:`flatten`.

    Returns:
      The result of ``functools.reduce`` over the leaves.

    Raises:
      TypeError: no leaves and no initializer.

    >>> reduce(lambda a, b: a + b, {'x': 1, 'y': [2, 3]})
    6
    """
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves(obj, is_leaf))
    return functools.reduce(function, leaves(obj, is_leaf), initializer)


def tree_all(obj: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``obj`` is true, as ``jax.tree_util.tree_all``.

    Args:
      obj: any value.
      is_leaf: as in :func:`flatten`.

    Returns:
      ``all(leaves(obj))`` (True for a tree without leaves).

    >>> tree_all([1, True, None]), tree_all({'a': 0})
    (True, False)
    """
    return all(leaves(obj, is_leaf))


def transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, obj: Any
) -> Any:
    """A tree of structure outer-of-inner turned into inner-of-outer, as
    ``jax.tree_util.tree_transpose``.

    Args:
      outer_treedef: the structure of ``obj``'s outer level.
      inner_treedef: the structure of each of its subtrees at the outer
        leaves (None: the first such subtree's structure).
      obj: the tree.

    Returns:
      The tree of structure ``inner_treedef`` whose leaves are trees of
      structure ``outer_treedef``.

    Raises:
      ValueError: ``obj`` does not have the structure outer-of-inner.

    >>> transpose(structure([0, 0]), structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    outer = outer_treedef.flatten_up_to(obj)
    if inner_treedef is None:
        inner_treedef = structure(outer[0]) if outer else structure(None)
    columns = [inner_treedef.flatten_up_to(x) for x in outer]
    rows = zip(*columns, strict=True) if columns else [()] * inner_treedef.num_leaves
    return inner_treedef.unflatten([outer_treedef.unflatten(row) for row in rows])
