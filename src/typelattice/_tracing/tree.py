"""Pytrees: the one definition of the containers that tracing walks.

A pytree is a value built of *nodes* holding other pytrees, down to
*leaves*. The nodes, as in JAX:

- tuples and lists, their items in order;
- dicts, their values in the order of their sorted keys (insertion order
  when the keys cannot be sorted), so that ``{'a': x, 'b': y}`` and
  ``{'b': y, 'a': x}`` have one structure;
- namedtuples, their fields in order (rebuilt as the same namedtuple);
- ``None``, a node with no children (not a leaf);
- the classes given to :func:`register_node`.

Anything else is a leaf. :func:`flatten` gives a value's leaves and its
:class:`TreeDef`, which :func:`unflatten` fills with new leaves; a TreeDef
is hashable and compares equal for equal structures, so it can be part of a
cache key (jit's). Every module that looks through containers (the
arguments and results of jit and eval_shape, a recorded call's arguments,
the stand-ins of abstract evaluation) does it with these functions, so they
all agree on what a container is.

This is a small walker of our own rather than ``optree``: the package needs
flatten, unflatten and map over the builtin containers only, and a
dependency would be a third-party package on every jit call's path for no
new behaviour.

>>> leaves, treedef = flatten({'b': [1, None], 'a': (2, 3)})
>>> leaves
[2, 3, 1]
>>> unflatten(treedef, ['x', 'y', 'z'])
{'a': ('x', 'y'), 'b': ['z', None]}
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Final

__all__ = [
    "TreeDef",
    "flatten",
    "flatten_call",
    "leaves",
    "register_node",
    "tree_map",
    "unflatten",
    "unregister_node",
]

# A structure, internally: None for a leaf, else a tuple (kind, meta,
# children): the node's class (None for the value None), what rebuilds it
# besides its children (a dict's keys, a registered class's auxiliary
# data), and the children's structures. Plain tuples: cheap to build, hash
# and compare on every jit call that flattens its arguments.
_Node = tuple[Any, Any, tuple[Any, ...]] | None

# Registered node classes: the class, then (flatten, unflatten), where
# flatten(value) -> (children, meta) and unflatten(meta, children) -> value.
_NODES: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]], Any]] = {}

_NONE_NODE: Final = (None, None, ())


def register_node(
    cls: type,
    flatten_node: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_node: Callable[[Any, list[Any]], Any],
) -> None:
    """Make instances of ``cls`` nodes of every pytree.

    Args:
      cls: the class (exactly; subclasses are not included).
      flatten_node: ``value -> (children, meta)``, ``meta`` hashable: what
        rebuilds the value besides its children.
      unflatten_node: ``(meta, children) -> value``.

    Raises:
      ValueError: ``cls`` is a node already (a builtin container or
        registered before).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> flatten(Pair(1, [2]))[0]
    [1, 2]
    >>> unregister_node(Pair)  # (the example's class leaves the registry)
    """
    if cls in (tuple, list, dict, type(None)) or cls in _NODES:
        raise ValueError(f"{cls.__name__} is a pytree node already")
    _NODES[cls] = (flatten_node, unflatten_node)


def unregister_node(cls: type) -> None:
    """Make ``cls`` a leaf class again (undoes :func:`register_node`).

    Args:
      cls: a class given to :func:`register_node`.

    Raises:
      KeyError: ``cls`` is not registered.

    >>> unregister_node(int)
    Traceback (most recent call last):
    KeyError: <class 'int'>
    """
    del _NODES[cls]


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    if len(d) < 2:
        return tuple(d)
    try:
        return tuple(sorted(d))
    except TypeError:  # keys of types that do not compare: as inserted
        return tuple(d)


def _flatten(obj: Any, out: list[Any]) -> _Node:
    t = obj.__class__
    if t is tuple or t is list:
        return (t, None, _children(obj, out))
    if t is dict:
        keys = _sorted_keys(obj)
        return (dict, keys, _children([obj[k] for k in keys], out))
    if obj is None:
        return _NONE_NODE
    if _NODES:
        registered = _NODES.get(t)
        if registered is not None:
            children, meta = registered[0](obj)
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
            or (_NODES and t in _NODES)
        ):
            nodes.append(_flatten(x, out))
        else:
            out.append(x)
            nodes.append(None)
    return tuple(nodes)


def _collect(obj: Any, out: list[Any]) -> None:
    """The leaves of ``obj`` appended to ``out`` (:func:`_flatten` without
    the structure)."""
    t = obj.__class__
    if t is tuple or t is list:
        for x in obj:
            _collect(x, out)
    elif t is dict:
        for k in _sorted_keys(obj):
            _collect(obj[k], out)
    elif obj is None:
        return
    elif _NODES and t in _NODES:
        for x in _NODES[t][0](obj)[0]:
            _collect(x, out)
    elif isinstance(obj, tuple) and hasattr(t, "_fields"):  # a namedtuple
        for x in obj:  # pyright: ignore[reportUnknownVariableType]
            _collect(x, out)
    else:
        out.append(obj)


def _build(node: _Node, it: Iterator[Any]) -> Any:
    if node is None:
        return next(it)
    kind, meta, children = node
    if kind is None:
        return None
    items = [next(it) if child is None else _build(child, it) for child in children]
    if kind is tuple:
        return tuple(items)
    if kind is list:
        return items
    if kind is dict:
        return dict(zip(meta, items, strict=True))
    registered = _NODES.get(kind)
    if registered is not None:
        return registered[1](meta, items)
    return kind(*items)  # a namedtuple


def _count(node: _Node) -> int:
    if node is None:
        return 1
    return sum(_count(child) for child in node[2])


class TreeDef:
    """The structure of a pytree: its nodes, without the leaves.

    Hashable; equal for equal structures (same node classes, dict keys and
    registered metadata, leaves in the same places).

    Attributes:
      num_leaves: how many leaves fill it.

    >>> _, a = flatten((1, {'k': 2}))
    >>> _, b = flatten(('x', {'k': 'y'}))
    >>> a == b, a.num_leaves
    (True, 2)
    >>> a
    TreeDef((*, {'k': *}))
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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeDef):
            return NotImplemented
        return self._node == other._node

    def __hash__(self) -> int:
        return hash(self._node)

    def __repr__(self) -> str:
        return f"TreeDef({_show(self._node)})"

    def paths(self) -> list[str]:
        """Where each leaf is, in order: the indexing that reaches it from
        the root, for messages (``''`` for a tree that is one leaf).

        Returns:
          One string per leaf: ``['key']`` for a dict's item, ``[i]`` for
          the i-th item of a tuple, a list or a registered node, ``.name``
          for a namedtuple's field.

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
            return f"{constant(registered[1])}({constant(meta)}, [{', '.join(parts)}])"
        return f"{constant(kind)}({', '.join(parts)})"  # a namedtuple

    try:
        source = f"lambda l: {expr(node, 0)}"
    except RecursionError:
        return None
    built: Callable[[Sequence[Any]], Any] = eval(source, scope)
    return built


def _paths(node: _Node, prefix: str, out: list[str]) -> None:
    if node is None:
        out.append(prefix)
        return
    kind, meta, children = node
    if kind is dict:
        steps = [f"[{k!r}]" for k in meta]
    elif kind is tuple or kind is list or kind in _NODES:
        steps = [f"[{i}]" for i in range(len(children))]
    else:  # a namedtuple (None has no children)
        steps = [f".{name}" for name in getattr(kind, "_fields", ())]
    for step, child in zip(steps, children, strict=True):
        _paths(child, prefix + step, out)


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
        return (
            "{"
            + ", ".join(f"{k!r}: {s}" for k, s in zip(meta, shown, strict=True))
            + "}"
        )
    return f"{kind.__name__}({', '.join(shown)})"


def flatten(obj: Any) -> tuple[list[Any], TreeDef]:
    """The leaves of ``obj``, in order, and its structure.

    Args:
      obj: any value (a leaf is a tree of one leaf).

    Returns:
      ``(leaves, treedef)``; ``unflatten(treedef, leaves)`` rebuilds ``obj``.

    >>> flatten([1, (2, None), {'z': 3, 'y': 4}])[0]
    [1, 2, 4, 3]
    """
    out: list[Any] = []
    node = _flatten(obj, out)
    return out, TreeDef(node, len(out))


# Per call signature (the number of positional arguments, then the keyword
# names as given), when every argument is a leaf: the structure of
# ``(args, kwargs)`` and the keyword names in the order of its leaves.
_CALLS: dict[tuple[Any, ...], tuple[TreeDef, tuple[Any, ...]]] = {}


def flatten_call(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], TreeDef]:
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


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` holding ``leaves``.

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


def leaves(obj: Any) -> list[Any]:
    """The leaves of ``obj``, in order.

    Args:
      obj: any value.

    Returns:
      The list of its leaves (``[obj]`` for a leaf, ``[]`` for ``None``).

    >>> leaves(((1, 2), None, [3]))
    [1, 2, 3]
    """
    out: list[Any] = []
    _collect(obj, out)
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


def tree_map(fn: Callable[[Any], Any], obj: Any) -> Any:
    """``obj`` with every leaf ``x`` replaced by ``fn(x)``, in the same
    structure.

    Args:
      fn: applied to each leaf, in order.
      obj: any value.

    Returns:
      The new tree (dicts with their keys in sorted order, as
      :func:`unflatten` builds them).

    >>> tree_map(lambda x: x * 10, {'b': (1, 2), 'a': [3, None]})
    {'a': [30, None], 'b': (10, 20)}
    """
    return _map(obj, fn)
