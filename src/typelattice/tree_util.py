"""``typelattice.tree_util``: pytrees, as ``jax.tree_util``.

A pytree is a value built of nodes (tuples, lists, dicts, namedtuples,
``None``, ``collections.OrderedDict`` and ``defaultdict``, registered
classes and dataclasses) down to leaves (anything else). ``jit``, ``grad``,
the layers and the optimisers all walk their arguments with these
functions (see docs/tracing.md, "Pytrees").

>>> from typelattice import tree_util
>>> leaves, treedef = tree_util.tree_flatten({'b': [1, None], 'a': (2, 3)})
>>> leaves, treedef
([2, 3, 1], PyTreeDef({'a': (*, *), 'b': [*, None]}))
>>> tree_util.tree_map(lambda x, y: x + y, (1, [2]), (10, [20]))
(11, [22])
"""

from typelattice._tracing.tree import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    tree_all,
    tree_map,
)
from typelattice._tracing.tree import flatten as tree_flatten
from typelattice._tracing.tree import flatten_with_path as tree_flatten_with_path
from typelattice._tracing.tree import leaves as tree_leaves
from typelattice._tracing.tree import leaves_with_path as tree_leaves_with_path
from typelattice._tracing.tree import map_with_path as tree_map_with_path
from typelattice._tracing.tree import reduce as tree_reduce
from typelattice._tracing.tree import structure as tree_structure
from typelattice._tracing.tree import transpose as tree_transpose
from typelattice._tracing.tree import unflatten as tree_unflatten

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
]
