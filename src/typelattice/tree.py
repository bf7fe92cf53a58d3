"""``typelattice.tree``: the pytree functions under JAX's short names, as
``jax.tree`` (``typelattice.tree.map`` is ``tree_util.tree_map``, ...).

>>> import typelattice as tl
>>> tl.tree.map(lambda x: x * 2, {'a': 1, 'b': (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> tl.tree.structure([1, None])
PyTreeDef([*, None])
"""

from typelattice._tracing.tree import (
    flatten,
    flatten_with_path,
    leaves,
    leaves_with_path,
    map_with_path,
    reduce,
    structure,
    transpose,
    unflatten,
)
from typelattice._tracing.tree import tree_all as all
from typelattice._tracing.tree import tree_map as map

__all__ = [
    "all",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "structure",
    "transpose",
    "unflatten",
]
