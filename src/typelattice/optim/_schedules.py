"""Learning-rate schedules: functions from the step count to a value.

A schedule is called with the optimiser's step count (an int32 Array, a
tracer under ``jit``) or a Python int, and computes with
``typelattice.numpy`` only: no Python branch on the count, so the same
function runs eagerly and traced. The values follow promotion: an int32
count is converted to the default float dtype (float32, float64 under
``enable_x64``) first, so the values have that dtype, strong, and the
schedules run under ``dtype_promotion('strict')`` too; the optimisers
convert the value to each parameter's dtype.

The formulas and signatures are optax's. Where optax logs a message and
falls back to a constant schedule for a setting its documentation calls
invalid (``transition_steps <= 0`` or ``decay_rate == 0`` for
:func:`exponential_decay`), these raise ``ValueError`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.typing import Array, ArrayLike

__all__ = [
    "Schedule",
    "constant_schedule",
    "cosine_decay_schedule",
    "exponential_decay",
    "join_schedules",
    "linear_schedule",
    "piecewise_constant_schedule",
    "polynomial_schedule",
    "warmup_cosine_decay_schedule",
]

# What an optimiser accepts as a schedule: the count in, a scalar out.
Schedule: TypeAlias = Callable[[ArrayLike], ArrayLike]


def constant_schedule(value: float) -> Schedule:
    """A schedule that always gives ``value``.

    Args:
      value: the value.

    Returns:
      The schedule, ``count -> value``.

    >>> constant_schedule(0.1)(100)
    0.1
    """

    def schedule(count: ArrayLike) -> ArrayLike:
        del count
        return value

    return schedule


def linear_schedule(
    init_value: float,
    end_value: float,
    transition_steps: int,
    transition_begin: int = 0,
) -> Schedule:
    """From ``init_value`` to ``end_value`` in a straight line.

    ``init_value`` until ``transition_begin``, then a linear change over
    ``transition_steps`` steps, then ``end_value``.

    Args:
      init_value: the value at the start.
      end_value: the value after ``transition_begin + transition_steps``.
      transition_steps: how many steps the change takes; with 0 or fewer,
        the schedule stays at ``init_value`` (as optax's).
      transition_begin: how many steps to hold ``init_value`` first
        (0 or more).

    Returns:
      The schedule.

    Raises:
      ValueError: ``transition_begin`` is negative.

    >>> schedule = linear_schedule(1.0, 0.5, transition_steps=10)
    >>> [round(float(schedule(n)), 3) for n in (0, 5, 10, 20)]
    [1.0, 0.75, 0.5, 0.5]
    """
    return _transition(
        init_value,
        end_value,
        None,
        transition_steps,
        transition_begin,
        "linear_schedule",
    )


def _transition(
    init_value: float,
    end_value: float,
    power: float | None,
    transition_steps: int,
    transition_begin: int,
    where: str,
) -> Schedule:
    """``(init_value - end_value) * frac**power + end_value``, ``frac`` going
    from 1 to 0 over the transition (``power`` None: a straight line, ``frac``
    not raised to any power)."""
    _check_begin(transition_begin, where)
    if transition_steps <= 0:
        return constant_schedule(init_value)

    def schedule(count: ArrayLike) -> Array:
        steps = tnp.clip(_float(count) - transition_begin, 0, transition_steps)
        frac = 1 - steps / transition_steps
        if power is not None:
            frac = frac**power
        return (init_value - end_value) * frac + end_value

    return schedule


def exponential_decay(
    init_value: float,
    transition_steps: int,
    decay_rate: float,
    transition_begin: int = 0,
    staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)``.

    ``init_value`` until ``transition_begin``, then an exponential change.

    Args:
      init_value: the value at the start.
      transition_steps: the number of steps over which the value is
        multiplied by ``decay_rate`` (positive).
      decay_rate: the factor per ``transition_steps`` steps (not zero).
      transition_begin: how many steps to hold ``init_value`` first
        (0 or more).
      staircase: change the value only every ``transition_steps`` steps
        (the exponent rounded down).
      end_value: a bound the value does not pass: a lower bound when
        ``decay_rate < 1``, else an upper bound.

    Returns:
      The schedule.

    Raises:
      ValueError: ``transition_steps`` is not positive, ``decay_rate`` is
        zero or ``transition_begin`` is negative.

    >>> schedule = exponential_decay(1.0, transition_steps=10, decay_rate=0.5)
    >>> [round(float(schedule(n)), 3) for n in (0, 10, 20)]
    [1.0, 0.5, 0.25]
    >>> stairs = exponential_decay(1.0, 10, 0.5, staircase=True, end_value=0.375)
    >>> [round(float(stairs(n)), 3) for n in (9, 10, 25)]
    [1.0, 0.5, 0.375]
    """
    if transition_steps <= 0:
        raise ValueError(
            f"exponential_decay needs a positive transition_steps, not "
            f"{transition_steps!r}; for a value that does not change, use "
            f"constant_schedule({init_value!r})"
        )
    if decay_rate == 0:
        raise ValueError(
            "exponential_decay needs a nonzero decay_rate; for a value that "
            f"does not change, use constant_schedule({init_value!r})"
        )
    _check_begin(transition_begin, "exponential_decay")
    clip = tnp.maximum if decay_rate < 1.0 else tnp.minimum

    def schedule(count: ArrayLike) -> Array:
        steps = _float(count) - transition_begin
        exponent = steps / transition_steps
        if staircase:
            exponent = tnp.floor(exponent)
        value = tnp.where(
            steps <= 0, init_value, init_value * tnp.power(decay_rate, exponent)
        )
        return value if end_value is None else clip(value, end_value)

    return schedule


def cosine_decay_schedule(
    init_value: float,
    decay_steps: int,
    alpha: float = 0.0,
    exponent: float = 1.0,
) -> Schedule:
    """Half a cosine from ``init_value`` down to ``alpha * init_value``.

    ``init_value * ((1 - alpha) * c ** exponent + alpha)`` with
    ``c = (1 + cos(pi * min(count, decay_steps) / decay_steps)) / 2``.

    Args:
      init_value: the value at the start.
      decay_steps: how many steps the decay takes (positive); the value
        stays at ``alpha * init_value`` after.
      alpha: the final value, as a fraction of ``init_value``.
      exponent: the power the cosine factor is raised to.

    Returns:
      The schedule.

    Raises:
      ValueError: ``decay_steps`` is not positive.

    >>> schedule = cosine_decay_schedule(1.0, decay_steps=10, alpha=0.1)
    >>> [round(float(schedule(n)), 3) for n in (0, 5, 10, 20)]
    [1.0, 0.55, 0.1, 0.1]
    """
    if not decay_steps > 0:
        raise ValueError(
            f"cosine_decay_schedule needs a positive decay_steps, not {decay_steps!r}"
        )

    def schedule(count: ArrayLike) -> Array:
        done = tnp.minimum(_float(count), decay_steps)
        cosine = 0.5 * (1 + tnp.cos(tnp.pi * done / decay_steps))
        return init_value * ((1 - alpha) * cosine**exponent + alpha)

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float,
    peak_value: float,
    warmup_steps: int,
    decay_steps: int,
    end_value: float = 0.0,
    exponent: float = 1.0,
) -> Schedule:
    """A linear warm-up to ``peak_value``, then a cosine decay to
    ``end_value``.

    Args:
      init_value: the value at the start.
      peak_value: the value at the end of the warm-up.
      warmup_steps: the length of the warm-up.
      decay_steps: the length of the whole schedule, warm-up included (more
        than ``warmup_steps``).
      end_value: the value after ``decay_steps``.
      exponent: the power the cosine factor is raised to (see
        :func:`cosine_decay_schedule`).

    Returns:
      The schedule.

    Raises:
      ValueError: ``decay_steps`` is not more than ``warmup_steps``.

    >>> schedule = warmup_cosine_decay_schedule(0.0, 1.0, 10, 110, end_value=0.1)
    >>> [round(float(schedule(n)), 3) for n in (0, 5, 10, 60, 110)]
    [0.0, 0.5, 1.0, 0.55, 0.1]
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    warmup = linear_schedule(init_value, peak_value, warmup_steps)
    decay = cosine_decay_schedule(
        peak_value, decay_steps - warmup_steps, alpha, exponent
    )

    def schedule(count: ArrayLike) -> Array:
        count = _float(count)
        return tnp.where(
            count < warmup_steps, warmup(count), decay(count - warmup_steps)
        )

    return schedule


def _check_begin(transition_begin: int, name: str) -> None:
    if transition_begin < 0:
        raise ValueError(
            f"{name} needs a transition_begin of 0 or more, not {transition_begin!r}"
        )


def _float(count: ArrayLike) -> Array:
    """The count as a strong array of the default float dtype (exact below
    2**24 steps in float32)."""
    return tnp.asarray(count).astype(tl.canonicalize_dtype(float))


def polynomial_schedule(
    init_value: float,
    end_value: float,
    power: float,
    transition_steps: int,
    transition_begin: int = 0,
) -> Schedule:
    """From ``init_value`` to ``end_value`` along a polynomial:
    ``(init_value - end_value) * (1 - t / transition_steps) ** power +
    end_value``, ``t`` the steps since ``transition_begin`` (clipped to
    ``[0, transition_steps]``).

    Args:
      init_value: the value at the start.
      end_value: the value after ``transition_begin + transition_steps``.
      power: the exponent.
      transition_steps: how many steps the change takes; with 0 or fewer,
        the schedule stays at ``init_value`` (as optax's).
      transition_begin: how many steps to hold ``init_value`` first
        (0 or more).

    Returns:
      The schedule.

    Raises:
      ValueError: ``transition_begin`` is negative.

    >>> schedule = polynomial_schedule(1.0, 0.0, power=2, transition_steps=10)
    >>> [round(float(schedule(n)), 3) for n in (0, 5, 10, 20)]
    [1.0, 0.25, 0.0, 0.0]
    """
    return _transition(
        init_value,
        end_value,
        power,
        transition_steps,
        transition_begin,
        "polynomial_schedule",
    )


def piecewise_constant_schedule(
    init_value: float, boundaries_and_scales: dict[int, float] | None = None
) -> Schedule:
    """``init_value``, multiplied by ``scale`` from each step ``boundary`` of
    ``boundaries_and_scales`` on (the scales accumulate).

    Args:
      init_value: the value at the start.
      boundaries_and_scales: ``{boundary: scale}``, scales 0 or more.

    Returns:
      The schedule.

    Raises:
      ValueError: a scale is negative or not finite.

    >>> schedule = piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1})
    >>> [round(float(schedule(n)), 3) for n in (0, 2, 3, 4)]
    [1.0, 0.5, 0.5, 0.05]
    """
    pieces = sorted((boundaries_and_scales or {}).items())
    for boundary, scale in pieces:
        if not (scale >= 0.0 and scale < float("inf")):
            raise ValueError(
                "piecewise_constant_schedule needs finite scales of 0 or more, "
                f"but the scale at {boundary!r} is {scale!r}"
            )

    def schedule(count: ArrayLike) -> ArrayLike:
        if not pieces:
            return init_value
        c = _float(count)
        value: Any = init_value
        for boundary, scale in pieces:
            # 1 before the boundary, 0 from it on.
            before = tnp.maximum(0.0, tnp.sign(boundary - c))
            value = value * before + (1 - before) * scale * value
        return tnp.asarray(value)

    return schedule


def join_schedules(
    schedules: Sequence[Schedule], boundaries: Sequence[int]
) -> Schedule:
    """Schedules one after the other: ``schedules[i + 1]`` from the step
    ``boundaries[i]`` on, called with the steps since that boundary.

    Args:
      schedules: the schedules, one more than the boundaries.
      boundaries: the steps where each next schedule starts, increasing.

    Returns:
      The schedule.

    Raises:
      ValueError: there is not one boundary fewer than schedules.

    >>> warmup = linear_schedule(0.0, 1.0, transition_steps=4)
    >>> decay = linear_schedule(1.0, 0.0, transition_steps=8)
    >>> schedule = join_schedules([warmup, decay], [4])
    >>> [round(float(schedule(n)), 3) for n in (0, 2, 4, 8, 12)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    parts = list(schedules)
    bounds = list(boundaries)
    if len(parts) != len(bounds) + 1:
        raise ValueError(
            f"join_schedules needs one boundary fewer than schedules, but got "
            f"{len(parts)} schedules and boundaries {bounds!r}"
        )

    def schedule(count: ArrayLike) -> Array:
        c = tnp.asarray(count)
        out = tnp.asarray(parts[0](c))
        for boundary, part in zip(bounds, parts[1:], strict=True):
            out = tnp.where(c < boundary, out, part(c - boundary))
        return out

    return schedule
