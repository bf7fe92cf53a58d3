"""``typelattice.flax.training.common_utils``: as Flax's, on one device.

>>> from typelattice.flax.training import common_utils
>>> common_utils.onehot([1], 2)
Array([[0., 1.]], dtype=float32)
"""

from typelattice.flax._common_utils import (
    get_metrics,
    onehot,
    shard,
    shard_prng_key,
    stack_forest,
)

__all__ = ["get_metrics", "onehot", "shard", "shard_prng_key", "stack_forest"]
