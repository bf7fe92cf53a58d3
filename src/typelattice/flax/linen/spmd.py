"""``typelattice.flax.linen.spmd``: the logical partitioning names of
Flax's ``flax.linen.spmd`` (the objects of :mod:`typelattice.nn`).

>>> from typelattice.flax.linen import spmd
>>> from typelattice import nn
>>> spmd.LogicallyPartitioned is nn.LogicallyPartitioned
True
"""

from typelattice.nn._meta import (
    LogicallyPartitioned,
    get_logical_axis_rules,
    logical_axis_rules,
    logical_to_mesh_axes,
    logical_to_mesh_sharding,
    set_logical_axis_rules,
    with_logical_partitioning,
)

__all__ = [
    "LogicallyPartitioned",
    "get_logical_axis_rules",
    "logical_axis_rules",
    "logical_to_mesh_axes",
    "logical_to_mesh_sharding",
    "set_logical_axis_rules",
    "with_logical_partitioning",
]
