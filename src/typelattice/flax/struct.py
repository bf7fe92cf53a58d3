"""``typelattice.flax.struct``: frozen dataclasses that are pytree nodes, as
``flax.struct``.

>>> from typelattice.flax import struct
>>> class Params(struct.PyTreeNode):
...     w: float
...     name: str = struct.field(pytree_node=False, default='w')
>>> import typelattice
>>> typelattice.tree_util.tree_leaves(Params(1.5))
[1.5]
"""

from typelattice.flax._struct import PyTreeNode, dataclass, field

__all__ = ["PyTreeNode", "dataclass", "field"]
