"""``typelattice.flax.linen.partitioning``: the axis-rule names of Flax's
``flax.linen.partitioning`` (``axis_rules`` is
:func:`typelattice.nn.logical_axis_rules`).

>>> from typelattice.flax.linen import partitioning
>>> with partitioning.axis_rules([('mlp', 'model')]):
...     partitioning.get_axis_rules()
(('mlp', 'model'),)
"""

from typelattice.nn._meta import LogicallyPartitioned, logical_to_mesh_axes
from typelattice.nn._meta import get_logical_axis_rules as get_axis_rules
from typelattice.nn._meta import logical_axis_rules as axis_rules
from typelattice.nn._meta import set_logical_axis_rules as set_axis_rules

__all__ = [
    "LogicallyPartitioned",
    "axis_rules",
    "get_axis_rules",
    "logical_to_mesh_axes",
    "set_axis_rules",
]
