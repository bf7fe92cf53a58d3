"""Rematerialisation, as ``jax.ad_checkpoint``: :func:`checkpoint` (alias
``remat``) and its policies.

>>> import typelattice as tl
>>> from typelattice.ad_checkpoint import checkpoint
>>> checkpoint is tl.checkpoint
True
"""

from typelattice._policies import checkpoint_policies
from typelattice._tracing.remat import checkpoint, checkpoint_name, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
