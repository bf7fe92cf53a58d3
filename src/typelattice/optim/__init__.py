"""typelattice.optim: optimisers in optax's style, with a dtype rule for
mixed precision.

An optimiser is a :class:`GradientTransformation`: ``state =
opt.init(params)``, then ``updates, state = opt.update(grads, state,
params)`` and ``params = apply_updates(params, updates)`` at each step.
Parameters, gradients and states are pytrees (nested dicts, lists, tuples,
namedtuples) of arrays; every function returns new trees. The state and the
updates have each parameter's dtype, whatever the gradient's: a bfloat16
gradient of a float32 parameter is accumulated in float32; the step count is
int32. The update functions run under ``typelattice.jit``. Learning rates
may be schedules (see docs/optim.md).

>>> import typelattice.numpy as tnp
>>> from typelattice import optim
>>> params = {'w': tnp.asarray([1.0, 2.0])}
>>> opt = optim.adam(optim.exponential_decay(0.1, 100, 0.5))
>>> state = opt.init(params)
>>> grads = {'w': tnp.asarray([0.5, -0.5], dtype='bfloat16')}
>>> updates, state = opt.update(grads, state, params)
>>> params = optim.apply_updates(params, updates)
>>> params['w'].round(4), state.nu['w'].dtype, state.count
(Array([0.9, 2.1], dtype=float32), dtype('float32'), Array(1, dtype=int32))
"""

from typelattice.optim._schedules import (
    Schedule,
    constant_schedule,
    cosine_decay_schedule,
    exponential_decay,
    linear_schedule,
    warmup_cosine_decay_schedule,
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
    "linear_schedule",
    "sgd",
    "warmup_cosine_decay_schedule",
]
