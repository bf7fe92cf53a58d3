"""``typelattice.flax.training.checkpoints``: Flax's single-file checkpoints,
in local files.

>>> from typelattice.flax.training import checkpoints
>>> checkpoints.natural_sort(['ckpt_10', 'ckpt_9'])
['ckpt_9', 'ckpt_10']
"""

from typelattice.flax._checkpoints import (
    InvalidCheckpointError,
    available_steps,
    latest_checkpoint,
    natural_sort,
    restore_checkpoint,
    save_checkpoint,
)

__all__ = [
    "InvalidCheckpointError",
    "available_steps",
    "latest_checkpoint",
    "natural_sort",
    "restore_checkpoint",
    "save_checkpoint",
]
