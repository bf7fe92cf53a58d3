"""optax's names for :mod:`typelattice.optim`, so that a program written for
optax runs with ``import typelattice.optax as optax``.

Every name here is the object of the same name in ``typelattice.optim``
(``optax.adam is typelattice.optim.adam``); see docs/optim.md for the
optimisers, their dtypes and where they differ from optax's.

>>> import typelattice.numpy as tnp
>>> import typelattice.optax as optax
>>> tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
>>> params = {'w': tnp.zeros(2)}
>>> opt_state = tx.init(params)
>>> updates, opt_state = tx.update({'w': tnp.ones(2)}, opt_state, params)
>>> optax.apply_updates(params, updates)['w'].round(4)
Array([-0.001, -0.001], dtype=float32)
"""

from typelattice.optim import *  # noqa: F403
from typelattice.optim import __all__ as __all__
