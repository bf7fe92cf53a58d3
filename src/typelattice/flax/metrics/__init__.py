"""``typelattice.flax.metrics``: Flax's ``flax.metrics``, for ported programs.

Its one module, :mod:`typelattice.flax.metrics.tensorboard`, writes
TensorBoard event files; it loads on first use and needs the ``tensorboard``
package only when a :class:`~typelattice.flax.metrics.tensorboard.SummaryWriter`
is made.

>>> from typelattice.flax.metrics import tensorboard
>>> tensorboard.SummaryWriter.__name__
'SummaryWriter'
"""

import importlib as _importlib

_SUBMODULES: frozenset[str] = frozenset({"tensorboard"})


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return _importlib.import_module(f"typelattice.flax.metrics.{name}")
    raise AttributeError(f"module 'typelattice.flax.metrics' has no attribute {name!r}")


__all__: list[str] = []
