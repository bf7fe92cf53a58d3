"""More optimisers, each optax's chain of the transformations in
``_scaling.py`` (so their states are the tuples of the parts' states, as
optax's): rmsprop, adagrad, adafactor, lamb and lion."""

# The optimisers' modules share the helpers of _transform.py (trees,
# checked conversions, counts) and of each other.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from typing import Any

from typelattice.optim._combine import MaskOrFn, chain, identity
from typelattice.optim._scaling import (
    add_decayed_weights,
    clip_by_block_rms,
    ema,
    scale,
    scale_by_adam,
    scale_by_factored_rms,
    scale_by_learning_rate,
    scale_by_lion,
    scale_by_param_block_rms,
    scale_by_rms,
    scale_by_rss,
    scale_by_stddev,
    scale_by_trust_ratio,
    trace,
)
from typelattice.optim._schedules import Schedule
from typelattice.optim._transform import (
    GradientTransformation,
    _check,
    _check_learning_rate,
)
from typelattice.typing import DTypeLike

__all__ = ["adafactor", "adagrad", "lamb", "lion", "rmsprop"]


def rmsprop(
    learning_rate: float | Schedule,
    decay: float = 0.9,
    eps: float = 1e-8,
    initial_scale: float = 0.0,
    centered: bool = False,
    momentum: float | None = None,
    nesterov: bool = False,
) -> GradientTransformation:
    """RMSProp (optax.rmsprop): ``-learning_rate * g / sqrt(nu + eps)``, ``nu``
    the moving average of ``g²`` (minus the squared average of ``g`` with
    ``centered``), then momentum if asked.

    Args:
      learning_rate: a number or a schedule.
      decay: the decay of the averages, in ``[0, 1]``.
      eps: added under the square root.
      initial_scale: the first value of the average of squares.
      centered: divide by the standard deviation instead.
      momentum: the decay of a momentum applied last; None for none.
      nesterov: use Nesterov's momentum.

    Returns:
      The optimiser: ``chain(scale_by_rms (or scale_by_stddev),
      scale_by_learning_rate, trace or identity)``.

    >>> import typelattice.numpy as tnp
    >>> opt = rmsprop(0.1, decay=0.75)
    >>> opt.update(tnp.asarray([2.0]), opt.init(tnp.zeros(1)))[0]
    Array([-0.2], dtype=float32)
    """
    _check_learning_rate(learning_rate, "rmsprop")
    first = (
        scale_by_stddev(decay, eps, initial_scale)
        if centered
        else scale_by_rms(decay, eps, initial_scale)
    )
    return chain(
        first,
        scale_by_learning_rate(learning_rate),
        identity() if momentum is None else trace(momentum, nesterov),
    )


def adagrad(
    learning_rate: float | Schedule,
    initial_accumulator_value: float = 0.1,
    eps: float = 1e-7,
) -> GradientTransformation:
    """Adagrad (optax.adagrad): ``-learning_rate * g / sqrt(s + eps)``, ``s``
    the sum of all ``g²`` so far.

    Args:
      learning_rate: a number or a schedule.
      initial_accumulator_value: the sum's first value.
      eps: added under the square root.

    Returns:
      The optimiser: ``chain(scale_by_rss, scale_by_learning_rate)``.

    >>> import typelattice.numpy as tnp
    >>> opt = adagrad(1.0, initial_accumulator_value=0.0, eps=0.0)
    >>> opt.update(tnp.asarray([-4.0]), opt.init(tnp.zeros(1)))[0]
    Array([1.], dtype=float32)
    """
    _check_learning_rate(learning_rate, "adagrad")
    return chain(
        scale_by_rss(initial_accumulator_value, eps),
        scale_by_learning_rate(learning_rate),
    )


def lamb(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-6,
    eps_root: float = 0.0,
    weight_decay: float | Schedule = 0.0,
    mask: MaskOrFn | None = None,
) -> GradientTransformation:
    """LAMB (optax.lamb): Adam's direction plus weight decay, scaled by the
    trust ratio ``||p|| / ||u||`` per parameter.

    Args:
      learning_rate: a number or a schedule.
      b1: the decay of the first moment.
      b2: the decay of the second moment.
      eps: added to the denominator.
      eps_root: added under the square root.
      weight_decay: the factor of the parameters added.
      mask: which parameters decay (see :func:`add_decayed_weights`).

    Returns:
      The optimiser: ``chain(scale_by_adam, add_decayed_weights,
      scale_by_trust_ratio, scale_by_learning_rate)``. ``update`` needs the
      parameters.

    >>> import typelattice.numpy as tnp
    >>> opt = lamb(0.1)
    >>> p = tnp.asarray([3.0, 4.0])
    >>> opt.update(tnp.asarray([1.0, 1.0]), opt.init(p), p)[0].round(4)
    Array([-0.3536, -0.3536], dtype=float32)
    """
    _check_learning_rate(learning_rate, "lamb")
    return chain(
        scale_by_adam(b1, b2, eps, eps_root),
        add_decayed_weights(weight_decay, mask),
        scale_by_trust_ratio(),
        scale_by_learning_rate(learning_rate),
    )


def lion(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.99,
    mu_dtype: DTypeLike | None = None,
    weight_decay: float | Schedule = 1e-3,
    mask: MaskOrFn | None = None,
) -> GradientTransformation:
    """Lion (optax.lion): the sign of an interpolation of the gradient and a
    momentum, plus weight decay.

    Args:
      learning_rate: a number or a schedule.
      b1: the interpolation of the direction.
      b2: the decay of the momentum.
      mu_dtype: the momentum's dtype; None for each parameter's.
      weight_decay: the factor of the parameters added.
      mask: which parameters decay (see :func:`add_decayed_weights`).

    Returns:
      The optimiser: ``chain(scale_by_lion, add_decayed_weights,
      scale_by_learning_rate)``. ``update`` needs the parameters.

    >>> import typelattice.numpy as tnp
    >>> opt = lion(0.1, weight_decay=0.0)
    >>> p = tnp.zeros(2)
    >>> opt.update(tnp.asarray([0.5, -0.5]), opt.init(p), p)[0]
    Array([-0.1,  0.1], dtype=float32)
    """
    _check_learning_rate(learning_rate, "lion")
    return chain(
        scale_by_lion(b1, b2, mu_dtype),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    )


def adafactor(
    learning_rate: float | Schedule | None = None,
    min_dim_size_to_factor: int = 128,
    decay_rate: float = 0.8,
    decay_offset: int = 0,
    multiply_by_parameter_scale: bool = True,
    clipping_threshold: float | None = 1.0,
    momentum: float | None = None,
    dtype_momentum: DTypeLike = "float32",
    weight_decay_rate: float | Schedule | None = None,
    eps: float = 1e-30,
    factored: bool = True,
    weight_decay_mask: MaskOrFn | None = None,
) -> GradientTransformation:
    """Adafactor (optax.adafactor): a factored second moment for large
    matrices, update clipping, and steps relative to the parameters' scale.

    Args:
      learning_rate: a number, a schedule, or None (no learning rate step).
      min_dim_size_to_factor: the size from which an axis is factored.
      decay_rate: the exponent of the second moment's decay.
      decay_offset: subtracted from the step in the decay.
      multiply_by_parameter_scale: scale by each parameter's root mean
        square.
      clipping_threshold: the largest root mean square of an update; None
        for no clipping.
      momentum: the decay of a momentum; None for none.
      dtype_momentum: the momentum's dtype.
      weight_decay_rate: the factor of the parameters added; None for none.
      eps: added to the squared updates.
      factored: factor large matrices.
      weight_decay_mask: which parameters decay.

    Returns:
      The optimiser, a chain. ``update`` needs the parameters.

    >>> import typelattice.numpy as tnp
    >>> opt = adafactor(0.1)
    >>> p = tnp.ones((2, 2))
    >>> opt.update(tnp.ones((2, 2)), opt.init(p), p)[0]
    Array([[-0.1, -0.1],
           [-0.1, -0.1]], dtype=float32)
    """
    if learning_rate is not None:
        _check_learning_rate(learning_rate, "adafactor")
    if clipping_threshold is not None:
        _check(clipping_threshold, "clipping_threshold", "adafactor", 0.0)
    parts: list[Any] = [
        scale_by_factored_rms(
            factored, decay_rate, decay_offset, min_dim_size_to_factor, eps
        )
    ]
    if clipping_threshold is not None:
        parts.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        parts.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        parts.append(scale_by_param_block_rms())
    if momentum is not None:
        parts.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        parts.append(add_decayed_weights(weight_decay_rate, weight_decay_mask))
    parts.append(scale(-1))
    return chain(*parts)
