"""``typelattice.optim``: optimisers in the init/update style of optax.

An optimiser is a :class:`GradientTransformation`: ``init(params)`` makes its
state, ``update(grads, state, params)`` turns gradients into updates and the
next state, and :func:`apply_updates` adds updates to parameters.

Mixed precision: the state (momentum, Adam's moments) has each parameter's
dtype, whatever the gradient's: float32 parameters trained with bfloat16
gradients keep float32 moments, and their updates are float32. Parameters,
gradients and states are pytrees (nested dicts, lists, tuples, namedtuples)
of arrays; every function works under ``typelattice.jit``.

>>> import typelattice as tl, typelattice.numpy as tnp
>>> from typelattice import optim
>>> params = {'w': tnp.ones(3, dtype='float32')}
>>> opt = optim.sgd(0.1, momentum=0.9)
>>> state = opt.init(params)
>>> grads = tl.grad(lambda p: tnp.sum(p['w'] ** 2))(params)
>>> updates, state = opt.update(grads, state, params)
>>> optim.apply_updates(params, updates)
{'w': Array([0.8, 0.8, 0.8], dtype=float32)}
"""

from typelattice.optim._schedules import (
    Schedule,
    constant_schedule,
    cosine_decay_schedule,
    exponential_decay,
)
from typelattice.optim._transform import (
    AdamState,
    GradientTransformation,
    SgdState,
    adam,
    adamw,
    apply_updates,
    sgd,
)

__all__ = [
    "AdamState",
    "GradientTransformation",
    "Schedule",
    "SgdState",
    "adam",
    "adamw",
    "apply_updates",
    "constant_schedule",
    "cosine_decay_schedule",
    "exponential_decay",
    "sgd",
]
