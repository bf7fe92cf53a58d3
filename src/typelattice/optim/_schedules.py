"""Learning-rate schedules: functions of the step count (an int32 array,
traced under jit) giving the learning rate, with optax's signatures."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import typelattice.numpy as tnp

__all__ = [
    "Schedule",
    "constant_schedule",
    "cosine_decay_schedule",
    "exponential_decay",
]

#: A schedule: the step count (an int32 array) to a learning rate.
Schedule = Callable[[Any], Any]


def constant_schedule(value: float) -> Schedule:
    """The same learning rate at every step.

    Args:
      value: the learning rate.

    Returns:
      A schedule.

    >>> import typelattice.numpy as tnp
    >>> constant_schedule(0.1)(tnp.int32(5))
    0.1
    """

    def schedule(count: Any) -> Any:
        return value

    return schedule


def exponential_decay(
    init_value: float,
    transition_steps: int,
    decay_rate: float,
    transition_begin: int = 0,
    staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """``init_value * decay_rate ** ((count - transition_begin) /
    transition_steps)``, constant before ``transition_begin``.

    Args:
      init_value: the learning rate at first.
      transition_steps: the steps over which it is multiplied by
        ``decay_rate`` once (positive).
      decay_rate: the factor per ``transition_steps``.
      transition_begin: the step where decay begins.
      staircase: decay in steps (an integer exponent).
      end_value: a bound the rate does not pass (a floor when decaying).

    Returns:
      A schedule.

    Raises:
      ValueError: ``transition_steps`` is not positive.

    >>> import typelattice.numpy as tnp
    >>> float(exponential_decay(1.0, 10, 0.5)(tnp.int32(20)))
    0.25
    """
    if transition_steps <= 0:
        raise ValueError(
            f"exponential_decay: transition_steps must be positive, got "
            f"{transition_steps}"
        )

    def schedule(count: Any) -> Any:
        steps = tnp.maximum(tnp.asarray(count) - transition_begin, 0)
        exponent = steps / transition_steps
        if staircase:
            exponent = tnp.floor(exponent)
        value = init_value * tnp.power(decay_rate, exponent)
        if end_value is not None:
            bound = tnp.maximum if decay_rate < 1 else tnp.minimum
            value = bound(value, end_value)
        return value

    return schedule


def cosine_decay_schedule(
    init_value: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0
) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over
    ``decay_steps``, then constant.

    Args:
      init_value: the learning rate at first.
      decay_steps: the steps of the decay (positive).
      alpha: the final rate, as a fraction of ``init_value``.
      exponent: the power of the cosine factor.

    Returns:
      A schedule.

    Raises:
      ValueError: ``decay_steps`` is not positive.

    >>> import typelattice.numpy as tnp
    >>> round(float(cosine_decay_schedule(1.0, 10)(tnp.int32(5))), 6)
    0.5
    """
    if decay_steps <= 0:
        raise ValueError(
            f"cosine_decay_schedule: decay_steps must be positive, got {decay_steps}"
        )

    def schedule(count: Any) -> Any:
        done = tnp.minimum(tnp.asarray(count), decay_steps) / decay_steps
        cosine = (0.5 * (1 + tnp.cos(math.pi * done))) ** exponent
        return init_value * ((1 - alpha) * cosine + alpha)

    return schedule
