"""Boxed variables and their partition metadata, as Flax's ``flax.core.meta``
(``nn.meta``): on one device, the boxes and specs are kept and returned as
Flax's, and nothing is sharded."""

from typelattice.nn._meta import (
    PARTITION_NAME,
    AxisMetadata,
    LogicallyPartitioned,
    Partitioned,
    PartitionSpec,
    add_axis,
    get_partition_spec,
    is_axis_metadata,
    map_axis_meta,
    remove_axis,
    replace_boxed,
    unbox,
    with_partitioning,
)

__all__ = [
    "PARTITION_NAME",
    "AxisMetadata",
    "LogicallyPartitioned",
    "PartitionSpec",
    "Partitioned",
    "add_axis",
    "get_partition_spec",
    "is_axis_metadata",
    "map_axis_meta",
    "remove_axis",
    "replace_boxed",
    "unbox",
    "with_partitioning",
]
