"""The building blocks of optimisers, as optax names them: transformations
that scale, clip, accumulate or decay the updates (``scale_by_adam``,
``trace``, ``clip_by_global_norm``, ``add_decayed_weights``...), each a
:class:`GradientTransformation` that :func:`chain` composes.

Dtypes, as in ``_transform.py`` (the rule is read there): a state made from
the parameters has each parameter's dtype (or the ``mu_dtype`` /
``accumulator_dtype`` asked for) and keeps it at every step. An update and
the state leaf it meets are computed in the dtype of their promotion: a
gradient narrower than the state is converted up first (a bfloat16
gradient of a float32 moment is accumulated in float32), a state narrower
than the gradient is scaled in its dtype and then promoted (optax's
order), and the new state is converted back to the state's dtype by the
checked conversion: a value it cannot hold raises OverflowError, where optax's
``astype`` gives inf. With gradients of the parameters' dtypes (what a
model's ``grad`` gives), every dtype and value is optax's. Python-float
hyperparameters are weak, so they take the updates' dtype; array
hyperparameters (from :func:`inject_hyperparams`) are converted to it.

The update functions use only ``typelattice.numpy`` and branch only on what
is static, so they run under ``typelattice.jit``.
"""

# The optimisers' modules share the helpers of _transform.py (trees,
# checked conversions, counts) and of each other.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.optim._combine import EmptyState, MaskOrFn, identity, masked
from typelattice.optim._schedules import Schedule
from typelattice.optim._transform import (
    GradientTransformation,
    _abs_sq,
    _check,
    _check_adam,
    _checked,
    _flatten,
    _float_params,
    _increment,
    _inexact,
    _join,
    _new_count,
    _Params,
)
from typelattice.typing import Array, DTypeLike

__all__ = [
    "AddDecayedWeightsState",
    "ClipByGlobalNormState",
    "ClipState",
    "EmaState",
    "FactoredState",
    "ScaleByAdamState",
    "ScaleByLionState",
    "ScaleByRStdDevState",
    "ScaleByRmsState",
    "ScaleByRssState",
    "ScaleByScheduleState",
    "ScaleState",
    "TraceState",
    "WeightDecaySchedule",
    "add_decayed_weights",
    "clip",
    "clip_by_block_rms",
    "clip_by_global_norm",
    "ema",
    "global_norm",
    "scale",
    "scale_by_adam",
    "scale_by_factored_rms",
    "scale_by_learning_rate",
    "scale_by_lion",
    "scale_by_param_block_rms",
    "scale_by_rms",
    "scale_by_rss",
    "scale_by_schedule",
    "scale_by_stddev",
    "scale_by_trust_ratio",
    "trace",
]

# The states that are empty, under optax's names.
ScaleState = EmptyState
ClipState = EmptyState
ClipByGlobalNormState = EmptyState
AddDecayedWeightsState = EmptyState

_NO_PARAMS = "{} needs the parameters: call opt.update(grads, state, params)"


# -- hyperparameters ----------------------------------------------------------------


def _check_schedule_or_number(
    value: object, name: str, where: str, low: float | None = None
) -> None:
    if not callable(value):
        _check(value, name, where, low)


def _hp(value: Any, dtype: np.dtype[Any], name: str, where: str) -> Any:
    """A hyperparameter for arithmetic in ``dtype``: a Python number as it
    is (weak, it takes the array's dtype); an array converted (checked)."""
    if not isinstance(value, Array):
        return value
    fix = f"Fix: give a {name} that fits in {dtype}."
    return _checked(value, dtype, f"{where} ({name} in {dtype})", fix)


def _dtype_or_none(dtype: DTypeLike | None) -> np.dtype[Any] | None:
    return None if dtype is None else tl.canonicalize_dtype(dtype)


# -- leaves -------------------------------------------------------------------------


def _updates(updates: Any, where: str) -> _Params:
    """The updates, flattened: TypeError for a leaf that is not floating
    or complex."""
    flat = _flatten(updates)
    for i, u in enumerate(flat.leaves):
        if not _inexact(u.dtype):
            raise TypeError(
                f"{where}: {flat.at(i, 'updates')} is {u.dtype}; gradients and "
                "updates are floating or complex arrays"
            )
    return flat


def _like(state_tree: Any, flat: _Params, name: str, where: str) -> list[Array]:
    """The leaves of a state tree, which must be like the updates."""
    got = _flatten(state_tree)
    if got.treedef != flat.treedef:
        raise ValueError(
            f"{where}: the updates have structure {flat.treedef}, but the "
            f"state's {name} has structure {got.treedef}; give updates of the "
            "same tree as the parameters given to init"
        )
    for i, (u, s) in enumerate(zip(flat.leaves, got.leaves, strict=True)):
        if u.shape != s.shape:
            raise ValueError(
                f"{where}: {flat.at(i, 'updates')} has shape {u.shape}, but its "
                f"state has shape {s.shape}"
            )
        if tl.isdtype(u.dtype, "complex floating") and not tl.isdtype(
            s.dtype, "complex floating"
        ):
            raise TypeError(
                f"{where}: {flat.at(i, 'updates')} is {u.dtype}, but its "
                f"parameter is {s.dtype}; give real values "
                "(typelattice.numpy.real(x))"
            )
    return got.leaves


def _params_like(params: Any, flat: _Params, where: str) -> list[Array]:
    if params is None:
        raise ValueError(_NO_PARAMS.format(where))
    p = _float_params(params, where)
    if p.treedef != flat.treedef:
        raise ValueError(
            f"{where}: the parameters have structure {p.treedef}, but the "
            f"updates have structure {flat.treedef}"
        )
    return p.leaves


def _to(x: Array, dtype: np.dtype[Any], what: str, where: str) -> Array:
    """``x`` in ``dtype`` (strong), checked: OverflowError for a value it
    cannot hold."""
    fix = (
        f"Fix: keep the state in {x.dtype} (params in {x.dtype} before init, or "
        "a wider mu_dtype/accumulator_dtype), or make the gradients smaller."
    )
    return _checked(x, dtype, f"{where} ({what} stored in {dtype})", fix)


def _moment(
    g: Array, m: Array, decay: Any, order: int, where: str
) -> tuple[Array, Array]:
    """``(1 - decay) * g**order + decay * m`` (``|g|²`` for order 2), as
    optax's update_moment: the new moment in the dtype of ``g`` and ``m``
    joined, and stored (in ``m``'s dtype)."""
    # The gradient goes up to the join first (a bfloat16 gradient of a
    # float32 moment is accumulated in float32); a moment narrower than the
    # gradient (a mu_dtype asked for) is scaled in its dtype, then joined,
    # as optax's arithmetic promotes.
    dt = _join(g.dtype, m.dtype)
    g = _to(g, dt, "updates", where)
    x = g if order == 1 else _abs_sq(g)
    scaled = _hp(decay, m.dtype, "decay", where) * m
    # (x is real for a complex gradient's |g|²; a complex moment stays so.)
    x = _to(x, _join(x.dtype, dt), "updates", where)
    new = (1 - _hp(decay, x.dtype, "decay", where)) * x + _to(
        scaled, x.dtype, "moment", where
    )
    return new, _to(new, m.dtype, "moment", where)


def _bias_correction(m: Array, decay: Any, count: Array) -> Array:
    # 1 - decay**count is computed in the default float dtype (a Python
    # decay is weak, count int32), then converted to m's dtype, as optax.
    correction: Array = tnp.asarray(1 - decay**count)
    return m / correction.astype(m.dtype)


def _state_zeros(flat: _Params, dtype: np.dtype[Any] | None, fill: float = 0.0) -> Any:
    leaves = [
        tnp.full(p.shape, fill, p.dtype if dtype is None else dtype)
        for p in flat.leaves
    ]
    return flat.treedef.unflatten(leaves)


def _empty_init(params: Any) -> EmptyState:
    """The ``init`` of a transformation without state."""
    del params
    return EmptyState()


def _leafwise(
    flat: _Params,
    fn: Callable[..., tuple[Array, ...]],
    *states: list[Array],
    n: int,
) -> list[Any]:
    """``fn`` applied to each update leaf and its leaves of ``states``; its
    ``n`` results, column by column, as trees like the updates."""
    rows = [fn(*leaves) for leaves in zip(flat.leaves, *states, strict=True)]
    return [flat.treedef.unflatten([r[i] for r in rows]) for i in range(n)]


# -- scaling ------------------------------------------------------------------------


def scale(step_size: Any) -> GradientTransformation:
    """Multiply the updates by ``step_size``.

    Args:
      step_size: a finite number (or a scalar array).

    Returns:
      The transformation; its state is :class:`EmptyState`.

    Raises:
      ValueError: ``step_size`` is not finite.

    >>> import typelattice.numpy as tnp
    >>> scale(-0.5).update({'w': tnp.ones(2, 'float16')}, EmptyState())[0]
    {'w': Array([-0.5, -0.5], dtype=float16)}
    """
    where = "scale"
    _check(step_size, "step_size", where)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, where)
        out = [_hp(step_size, u.dtype, "step_size", where) * u for u in flat.leaves]
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


class ScaleByScheduleState(NamedTuple):
    """The state of :func:`scale_by_schedule`.

    Attributes:
      count: the number of updates made, an int32 scalar.

    >>> import typelattice.numpy as tnp
    >>> scale_by_schedule(lambda count: 0.1).init(tnp.zeros(2))
    ScaleByScheduleState(count=Array(0, dtype=int32))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """Multiply the updates by ``step_size_fn(count)``, ``count`` the number of
    updates made before (0 at the first).

    The schedule's value is converted to each update's dtype (checked), as
    optax's ``jnp.array(step_size, dtype=g.dtype)``.

    Args:
      step_size_fn: the schedule, ``count -> value``.

    Returns:
      The transformation; its state is a :class:`ScaleByScheduleState`.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> t = scale_by_schedule(optim.linear_schedule(1.0, 0.0, 4))
    >>> state = t.init(tnp.zeros(1))
    >>> for _ in range(2):
    ...     u, state = t.update(tnp.ones(1), state)
    >>> u, state.count
    (Array([0.75], dtype=float32), Array(2, dtype=int32))
    """
    where = "scale_by_schedule"
    if not callable(step_size_fn):
        raise TypeError(
            f"{where}: step_size_fn must be a schedule (count -> value), not "
            f"{step_size_fn!r}; for a constant, use scale({step_size_fn!r})"
        )

    def init(params: Any) -> ScaleByScheduleState:
        del params
        return ScaleByScheduleState(_new_count())

    def update(
        updates: Any, state: ScaleByScheduleState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, where)
        value = tnp.asarray(step_size_fn(state.count))
        into = f"{where} (the schedule's value)"
        out: list[Array] = []
        for u in flat.leaves:
            fix = f"Fix: give a schedule whose values fit in {u.dtype}."
            out.append(_checked(value, u.dtype, into, fix) * u)
        return flat.treedef.unflatten(out), ScaleByScheduleState(
            _increment(state.count)
        )

    return GradientTransformation(init, update)


def scale_by_learning_rate(
    learning_rate: float | Schedule | None, *, flip_sign: bool = True
) -> GradientTransformation:
    """Multiply the updates by ``-learning_rate`` (``learning_rate`` with
    ``flip_sign=False``): the last step of a chain that descends.

    Args:
      learning_rate: a number, a schedule (``count -> value``), or None
        (the identity).
      flip_sign: negate the learning rate (descent).

    Returns:
      The transformation: :func:`scale` for a number (state
      :class:`EmptyState`), :func:`scale_by_schedule` for a schedule.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_learning_rate(0.1)
    >>> t.update(tnp.asarray([1.0, 2.0]), t.init(None))[0]
    Array([-0.1, -0.2], dtype=float32)
    """
    if learning_rate is None:
        return identity()
    sign = -1 if flip_sign else 1
    if callable(learning_rate):
        lr = learning_rate
        return scale_by_schedule(lambda count: sign * tnp.asarray(lr(count)))
    _check(learning_rate, "learning_rate", "scale_by_learning_rate")
    return scale(sign * learning_rate)


# -- momentum and moving averages --------------------------------------------------


class TraceState(NamedTuple):
    """The state of :func:`trace`.

    Attributes:
      trace: the momentum, a tree like the parameters.

    >>> import typelattice.numpy as tnp
    >>> trace(0.9).init({'w': tnp.zeros(2, 'float16')})
    TraceState(trace={'w': Array([0., 0.], dtype=float16)})
    """

    trace: Any


def trace(
    decay: float,
    nesterov: bool = False,
    accumulator_dtype: DTypeLike | None = None,
) -> GradientTransformation:
    """Momentum: keep ``t = g + decay * t`` and give ``t`` (``g + decay * t``
    with ``nesterov``).

    Args:
      decay: the momentum's decay, in ``[0, 1]``.
      nesterov: use Nesterov's momentum.
      accumulator_dtype: the dtype of the trace; None for each parameter's.

    Returns:
      The transformation; its state is a :class:`TraceState`.

    Raises:
      ValueError: ``decay`` is not finite or out of range.

    >>> import typelattice.numpy as tnp
    >>> t = trace(0.5)
    >>> state = t.init(tnp.zeros(1))
    >>> for _ in range(2):
    ...     u, state = t.update(tnp.ones(1), state)
    >>> u
    Array([1.5], dtype=float32)
    """
    where = "trace"
    _check(decay, "decay", where, 0.0, 1.0)
    acc = _dtype_or_none(accumulator_dtype)

    def init(params: Any) -> TraceState:
        return TraceState(_state_zeros(_float_params(params, f"{where}'s init"), acc))

    def update(updates: Any, state: TraceState, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, f"{where}'s update")
        traces = _like(state.trace, flat, "trace", f"{where}'s update")

        def leaf(g: Array, t: Array) -> tuple[Array, Array]:
            # (As _moment: the gradient up to the join, the trace scaled
            # in its dtype.)
            dt = _join(g.dtype, t.dtype)
            g = _to(g, dt, "updates", where)
            scaled = _hp(decay, t.dtype, "decay", where) * t
            new = g + _to(scaled, dt, "trace", where)
            step = g + _hp(decay, dt, "decay", where) * new if nesterov else new
            return step, _to(new, t.dtype, "trace", where)

        out, kept = _leafwise(flat, leaf, traces, n=2)
        return out, TraceState(kept)

    return GradientTransformation(init, update)


class EmaState(NamedTuple):
    """The state of :func:`ema`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      ema: the moving average, a tree like the parameters.

    >>> import typelattice.numpy as tnp
    >>> ema(0.9).init(tnp.zeros(1))
    EmaState(count=Array(0, dtype=int32), ema=Array([0.], dtype=float32))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    ema: Any


def ema(
    decay: float, debias: bool = True, accumulator_dtype: DTypeLike | None = None
) -> GradientTransformation:
    """The exponential moving average of the updates, ``(1 - decay) * g +
    decay * ema``, divided by ``1 - decay**t`` with ``debias``.

    Args:
      decay: the decay, in ``[0, 1]``.
      debias: correct the bias towards the zeros it starts from.
      accumulator_dtype: the dtype of the average; None for each
        parameter's.

    Returns:
      The transformation; its state is an :class:`EmaState`.

    >>> import typelattice.numpy as tnp
    >>> t = ema(0.5, debias=False)
    >>> t.update(tnp.ones(1), t.init(tnp.zeros(1)))[0]
    Array([0.5], dtype=float32)
    """
    where = "ema"
    _check(decay, "decay", where, 0.0, 1.0)
    acc = _dtype_or_none(accumulator_dtype)

    def init(params: Any) -> EmaState:
        flat = _float_params(params, f"{where}'s init")
        return EmaState(_new_count(), _state_zeros(flat, acc))

    def update(updates: Any, state: EmaState, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, f"{where}'s update")
        olds = _like(state.ema, flat, "ema", f"{where}'s update")
        count = _increment(state.count)

        def leaf(g: Array, m: Array) -> tuple[Array, Array]:
            new, stored = _moment(g, m, decay, 1, where)
            return _bias_correction(new, decay, count) if debias else new, stored

        out, kept = _leafwise(flat, leaf, olds, n=2)
        return out, EmaState(count, kept)

    return GradientTransformation(init, update)


class ScaleByAdamState(NamedTuple):
    """The state of :func:`scale_by_adam`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      mu: the first moment, a tree like the parameters (of ``mu_dtype``
        when one is given).
      nu: the second moment, a tree like the parameters.

    >>> import typelattice.numpy as tnp
    >>> state = scale_by_adam().init(tnp.zeros(1, 'bfloat16'))
    >>> state.count, state.mu, state.nu
    (Array(0, dtype=int32), Array([0], dtype=bfloat16), Array([0], dtype=bfloat16))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    mu: Any
    nu: Any


def scale_by_adam(
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: DTypeLike | None = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """Adam's scaling: ``mu_hat / (sqrt(nu_hat + eps_root) + eps)`` (see
    :func:`adam`, which is this and the learning rate).

    Args:
      b1: the decay of the first moment, in ``[0, 1]``.
      b2: the decay of the second moment, in ``[0, 1]``.
      eps: added to the denominator (0 or more).
      eps_root: added under the square root (0 or more).
      mu_dtype: the dtype of the first moment; None for each parameter's.
      nesterov: use Nesterov's momentum.

    Returns:
      The transformation; its state is a :class:`ScaleByAdamState`.

    Raises:
      ValueError: a hyperparameter is not finite or out of range.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_adam(mu_dtype='bfloat16')
    >>> state = t.init({'w': tnp.zeros(2)})
    >>> u, state = t.update({'w': tnp.asarray([0.5, -2.0])}, state)
    >>> u['w'].round(4), state.mu['w'].dtype, state.nu['w'].dtype
    (Array([ 1., -1.], dtype=float32), dtype(bfloat16), dtype('float32'))
    """
    where = "scale_by_adam"
    _check_adam(b1, b2, eps, eps_root, where)
    mu_dt = _dtype_or_none(mu_dtype)

    def init(params: Any) -> ScaleByAdamState:
        flat = _float_params(params, f"{where}'s init")
        return ScaleByAdamState(
            _new_count(), _state_zeros(flat, mu_dt), _state_zeros(flat, None)
        )

    def update(
        updates: Any, state: ScaleByAdamState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        at = f"{where}'s update"
        flat = _updates(updates, at)
        mus = _like(state.mu, flat, "mu", at)
        nus = _like(state.nu, flat, "nu", at)
        count = _increment(state.count)

        def leaf(g: Array, m: Array, v: Array) -> tuple[Array, Array, Array]:
            mu, mu_s = _moment(g, m, b1, 1, at)
            nu, nu_s = _moment(g, v, b2, 2, at)
            if nesterov:
                d1 = _hp(b1, mu.dtype, "b1", at)
                mu_hat = d1 * _bias_correction(mu, b1, _increment(count)) + (
                    1 - d1
                ) * _bias_correction(_to(g, mu.dtype, "updates", at), b1, count)
            else:
                mu_hat = _bias_correction(mu, b1, count)
            nu_hat = _bias_correction(nu, b2, count)
            # The denominator in nu's dtype, the quotient in the join.
            v_dt = nu_hat.dtype
            e, er = _hp(eps, v_dt, "eps", at), _hp(eps_root, v_dt, "eps_root", at)
            den = tnp.sqrt(nu_hat + er) + e
            dt = _join(mu_hat.dtype, den.dtype)
            step = _to(mu_hat, dt, "mu", at) / _to(den, dt, "nu", at)
            return step, mu_s, nu_s

        out, mu_kept, nu_kept = _leafwise(flat, leaf, mus, nus, n=3)
        return out, ScaleByAdamState(count, mu_kept, nu_kept)

    return GradientTransformation(init, update)


class ScaleByRmsState(NamedTuple):
    """The state of :func:`scale_by_rms`.

    Attributes:
      nu: the moving average of the squared updates.

    >>> import typelattice.numpy as tnp
    >>> scale_by_rms(initial_scale=1.0).init(tnp.zeros(1))
    ScaleByRmsState(nu=Array([1.], dtype=float32))
    """

    nu: Any


def scale_by_rms(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0
) -> GradientTransformation:
    """Divide by the root of the moving average of the squared updates:
    ``g / sqrt(nu + eps)`` with ``nu = (1 - decay) * g² + decay * nu``.

    Args:
      decay: the decay of the average, in ``[0, 1]``.
      eps: added under the square root (0 or more).
      initial_scale: the average's first value (0 or more).

    Returns:
      The transformation; its state is a :class:`ScaleByRmsState`.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_rms(decay=0.75)
    >>> t.update(tnp.asarray([2.0]), t.init(tnp.zeros(1)))[0]
    Array([2.], dtype=float32)
    """
    where = "scale_by_rms"
    _check(decay, "decay", where, 0.0, 1.0)
    _check(eps, "eps", where, 0.0)
    _check(initial_scale, "initial_scale", where, 0.0)

    def init(params: Any) -> ScaleByRmsState:
        flat = _float_params(params, f"{where}'s init")
        return ScaleByRmsState(_state_zeros(flat, None, initial_scale))

    def update(
        updates: Any, state: ScaleByRmsState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        at = f"{where}'s update"
        flat = _updates(updates, at)
        nus = _like(state.nu, flat, "nu", at)

        def leaf(g: Array, v: Array) -> tuple[Array, Array]:
            nu, nu_s = _moment(g, v, decay, 2, at)
            e = _hp(eps, nu.dtype, "eps", at)
            return tnp.reciprocal(tnp.sqrt(nu + e)) * g, nu_s

        out, kept = _leafwise(flat, leaf, nus, n=2)
        return out, ScaleByRmsState(kept)

    return GradientTransformation(init, update)


class ScaleByRStdDevState(NamedTuple):
    """The state of :func:`scale_by_stddev`.

    Attributes:
      mu: the moving average of the updates.
      nu: the moving average of their squares.

    >>> import typelattice.numpy as tnp
    >>> scale_by_stddev().init(tnp.zeros(1))
    ScaleByRStdDevState(mu=Array([0.], dtype=float32), nu=Array([0.], dtype=float32))
    """

    mu: Any
    nu: Any


def scale_by_stddev(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0
) -> GradientTransformation:
    """Divide by the moving standard deviation of the updates (centred
    RMSProp): ``g / sqrt(nu - mu² + eps)``.

    Args:
      decay: the decay of the averages, in ``[0, 1]``.
      eps: added under the square root (0 or more).
      initial_scale: the first value of the average of squares (0 or more).

    Returns:
      The transformation; its state is a :class:`ScaleByRStdDevState`.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_stddev(decay=0.5)
    >>> t.update(tnp.asarray([2.0]), t.init(tnp.zeros(1)))[0]
    Array([2.], dtype=float32)
    """
    where = "scale_by_stddev"
    _check(decay, "decay", where, 0.0, 1.0)
    _check(eps, "eps", where, 0.0)
    _check(initial_scale, "initial_scale", where, 0.0)

    def init(params: Any) -> ScaleByRStdDevState:
        flat = _float_params(params, f"{where}'s init")
        return ScaleByRStdDevState(
            _state_zeros(flat, None), _state_zeros(flat, None, initial_scale)
        )

    def update(
        updates: Any, state: ScaleByRStdDevState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        at = f"{where}'s update"
        flat = _updates(updates, at)
        mus = _like(state.mu, flat, "mu", at)
        nus = _like(state.nu, flat, "nu", at)

        def leaf(g: Array, m: Array, v: Array) -> tuple[Array, Array, Array]:
            mu, mu_s = _moment(g, m, decay, 1, at)
            nu, nu_s = _moment(g, v, decay, 2, at)
            e = _hp(eps, nu.dtype, "eps", at)
            return tnp.reciprocal(tnp.sqrt(nu - _abs_sq(mu) + e)) * g, mu_s, nu_s

        out, mu_kept, nu_kept = _leafwise(flat, leaf, mus, nus, n=3)
        return out, ScaleByRStdDevState(mu_kept, nu_kept)

    return GradientTransformation(init, update)


class ScaleByRssState(NamedTuple):
    """The state of :func:`scale_by_rss`.

    Attributes:
      sum_of_squares: the sum of the squared updates so far.

    >>> import typelattice.numpy as tnp
    >>> scale_by_rss().init(tnp.zeros(1))
    ScaleByRssState(sum_of_squares=Array([0.1], dtype=float32))
    """

    sum_of_squares: Any


def scale_by_rss(
    initial_accumulator_value: float = 0.1, eps: float = 1e-7
) -> GradientTransformation:
    """Divide by the root of the sum of the squared updates so far (Adagrad's
    scaling): ``g / sqrt(s + eps)``, 0 where ``s`` is 0.

    Args:
      initial_accumulator_value: the sum's first value (0 or more).
      eps: added under the square root (0 or more).

    Returns:
      The transformation; its state is a :class:`ScaleByRssState`.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_rss(initial_accumulator_value=0.0, eps=0.0)
    >>> t.update(tnp.asarray([3.0, 0.0]), t.init(tnp.zeros(2)))[0]
    Array([1., 0.], dtype=float32)
    """
    where = "scale_by_rss"
    _check(initial_accumulator_value, "initial_accumulator_value", where, 0.0)
    _check(eps, "eps", where, 0.0)

    def init(params: Any) -> ScaleByRssState:
        flat = _float_params(params, f"{where}'s init")
        return ScaleByRssState(_state_zeros(flat, None, initial_accumulator_value))

    def update(
        updates: Any, state: ScaleByRssState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        at = f"{where}'s update"
        flat = _updates(updates, at)
        sums = _like(state.sum_of_squares, flat, "sum_of_squares", at)

        def leaf(g: Array, s: Array) -> tuple[Array, Array]:
            dt = _join(g.dtype, s.dtype)
            g = _to(g, dt, "updates", at)
            new = _abs_sq(g) + _to(s, dt, "sum_of_squares", at).real
            inv = tnp.where(
                new > 0,
                tnp.reciprocal(tnp.sqrt(new + _hp(eps, new.dtype, "eps", at))),
                0.0,
            )
            return inv * g, _to(new, s.dtype, "sum_of_squares", at)

        out, kept = _leafwise(flat, leaf, sums, n=2)
        return out, ScaleByRssState(kept)

    return GradientTransformation(init, update)


class ScaleByLionState(NamedTuple):
    """The state of :func:`scale_by_lion`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      mu: the momentum, a tree like the parameters (of ``mu_dtype`` when one
        is given).

    >>> import typelattice.numpy as tnp
    >>> scale_by_lion().init(tnp.zeros(1))
    ScaleByLionState(count=Array(0, dtype=int32), mu=Array([0.], dtype=float32))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    mu: Any


def scale_by_lion(
    b1: float = 0.9, b2: float = 0.99, mu_dtype: DTypeLike | None = None
) -> GradientTransformation:
    """Lion's scaling: ``sign((1 - b1) * g + b1 * mu)``, with the momentum
    ``mu = (1 - b2) * g + b2 * mu``.

    Args:
      b1: the interpolation of the direction, in ``[0, 1]``.
      b2: the decay of the momentum, in ``[0, 1]``.
      mu_dtype: the momentum's dtype; None for each parameter's.

    Returns:
      The transformation; its state is a :class:`ScaleByLionState`.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_lion()
    >>> t.update(tnp.asarray([0.25, -3.0, 0.0]), t.init(tnp.zeros(3)))[0]
    Array([ 1., -1.,  0.], dtype=float32)
    """
    where = "scale_by_lion"
    _check(b1, "b1", where, 0.0, 1.0)
    _check(b2, "b2", where, 0.0, 1.0)
    mu_dt = _dtype_or_none(mu_dtype)

    def init(params: Any) -> ScaleByLionState:
        flat = _float_params(params, f"{where}'s init")
        return ScaleByLionState(_new_count(), _state_zeros(flat, mu_dt))

    def update(
        updates: Any, state: ScaleByLionState, params: Any = None
    ) -> tuple[Any, Any]:
        del params
        at = f"{where}'s update"
        flat = _updates(updates, at)
        mus = _like(state.mu, flat, "mu", at)

        def leaf(g: Array, m: Array) -> tuple[Array, Array]:
            dt = _join(g.dtype, m.dtype)
            gg, mm = _to(g, dt, "updates", at), _to(m, dt, "mu", at)
            d1 = _hp(b1, dt, "b1", at)
            return tnp.sign((1.0 - d1) * gg + d1 * mm), _moment(g, m, b2, 1, at)[1]

        out, kept = _leafwise(flat, leaf, mus, n=2)
        return out, ScaleByLionState(_increment(state.count), kept)

    return GradientTransformation(init, update)


# -- weight decay, clipping, norms --------------------------------------------------


class WeightDecaySchedule(NamedTuple):
    """The state of :func:`add_decayed_weights` with a scheduled decay.

    Attributes:
      count: the number of updates made, an int32 scalar.

    >>> import typelattice.numpy as tnp
    >>> add_decayed_weights(lambda count: 0.1).init(tnp.zeros(1))
    WeightDecaySchedule(count=Array(0, dtype=int32))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]


def add_decayed_weights(
    weight_decay: float | Schedule = 0.0, mask: MaskOrFn | None = None
) -> GradientTransformation:
    """Add ``weight_decay * param`` to each update (decoupled weight decay).

    A scheduled decay is read at the number of updates made before and
    converted to each parameter's dtype (optax multiplies by it in float32,
    which turns a bfloat16 parameter's update into float32).

    Args:
      weight_decay: a number (0 or more) or a schedule.
      mask: which parameters decay: a tree like the parameters with
        ``True``/``False`` leaves, or a function of the parameters giving
        one; None for all.

    Returns:
      The transformation; its state is :class:`EmptyState`
      (:class:`WeightDecaySchedule` with a schedule, in a ``MaskedState``
      with a mask). ``update`` needs the parameters.

    Raises:
      ValueError: ``weight_decay`` is negative or not finite; ``update``
        without the parameters.

    >>> import typelattice.numpy as tnp
    >>> t = add_decayed_weights(0.5)
    >>> params = tnp.asarray([2.0])
    >>> t.update(tnp.asarray([1.0]), t.init(params), params)[0]
    Array([2.], dtype=float32)
    """
    where = "add_decayed_weights"
    _check_schedule_or_number(weight_decay, "weight_decay", where, 0.0)

    def init(params: Any) -> EmptyState | WeightDecaySchedule:
        del params
        if callable(weight_decay):
            return WeightDecaySchedule(_new_count())
        return EmptyState()

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        at = f"{where}'s update"
        flat = _updates(updates, at)
        ps = _params_like(params, flat, at)
        if callable(weight_decay):
            value: Any = tnp.asarray(weight_decay(state.count))
            new_state: Any = WeightDecaySchedule(_increment(state.count))
        else:
            if not isinstance(weight_decay, Array) and weight_decay == 0:
                return updates, state
            value, new_state = weight_decay, state
        out: list[Array] = []
        for g, p in zip(flat.leaves, ps, strict=True):
            dt = _join(g.dtype, p.dtype)
            s = _hp(value, p.dtype, "weight_decay", at)
            out.append(_to(g, dt, "updates", at) + _to(s * p, dt, "decay", at))
        return flat.treedef.unflatten(out), new_state

    t = GradientTransformation(init, update)
    return t if mask is None else masked(t, mask)


def clip(max_delta: float) -> GradientTransformation:
    """Clip each update into ``[-max_delta, max_delta]``.

    Args:
      max_delta: the bound (0 or more).

    Returns:
      The transformation; its state is :class:`EmptyState`.

    >>> import typelattice.numpy as tnp
    >>> clip(1.0).update(tnp.asarray([-3.0, 0.5, 2.0]), EmptyState())[0]
    Array([-1. ,  0.5,  1. ], dtype=float32)
    """
    where = "clip"
    _check(max_delta, "max_delta", where, 0.0)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, where)
        out: list[Array] = []
        for u in flat.leaves:
            d = _hp(max_delta, u.dtype, "max_delta", where)
            out.append(tnp.clip(u, -d, d))
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


def global_norm(updates: Any) -> Array:
    """The L2 norm of all the leaves together, ``sqrt(sum(|x|²))``.

    Each leaf's sum of squares is in its dtype; the sums are added in the
    order of the leaves (their dtypes promoted), as optax's ``tree.norm``.

    Args:
      updates: a tree of floating or complex arrays.

    Returns:
      A scalar, real.

    >>> import typelattice.numpy as tnp
    >>> global_norm({'a': tnp.asarray([3.0]), 'b': tnp.asarray([[4.0]])})
    Array(5., dtype=float32)
    """
    flat = _updates(updates, "global_norm")
    total: Any = 0
    for u in flat.leaves:
        if tl.isdtype(u.dtype, "complex floating"):
            sq = tnp.square(tnp.real(u)) + tnp.square(tnp.imag(u))
        else:
            sq = tnp.square(u)
        total = total + tnp.sum(sq)
    return tnp.sqrt(tnp.asarray(total))


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scale all the updates down together so that their :func:`global_norm`
    is at most ``max_norm``.

    Args:
      max_norm: the largest norm (more than 0).

    Returns:
      The transformation; its state is :class:`EmptyState`.

    >>> import typelattice.numpy as tnp
    >>> clip_by_global_norm(1.0).update([tnp.asarray([3.0, 4.0])], EmptyState())[0]
    [Array([0.6, 0.8], dtype=float32)]
    """
    where = "clip_by_global_norm"
    _check(max_norm, "max_norm", where, 0.0, open_low=True)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, where)
        if not flat.leaves:
            return updates, state
        norm = global_norm(updates)
        keep = norm < _hp(max_norm, norm.dtype, "max_norm", where)
        out: list[Array] = []
        for u in flat.leaves:
            m = _hp(max_norm, u.dtype, "max_norm", where)
            out.append(tnp.where(keep, u, u / norm.astype(u.dtype) * m))
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


def clip_by_block_rms(threshold: float) -> GradientTransformation:
    """Scale each update down so that its root mean square is at most
    ``threshold``: ``u / max(1, rms(u) / threshold)``.

    Args:
      threshold: the largest root mean square (more than 0).

    Returns:
      The transformation; its state is :class:`EmptyState`.

    >>> import typelattice.numpy as tnp
    >>> clip_by_block_rms(1.0).update(tnp.asarray([3.0, 3.0]), EmptyState())[0]
    Array([1., 1.], dtype=float32)
    """
    where = "clip_by_block_rms"
    _check(threshold, "threshold", where, 0.0, open_low=True)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        flat = _updates(updates, where)
        out: list[Array] = []
        for u in flat.leaves:
            rms = tnp.sqrt(tnp.mean(_abs_sq(u)))
            t = _hp(threshold, rms.dtype, "threshold", where)
            out.append(u / tnp.maximum(1.0, rms / t))
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


def _safe_norm(x: Array, min_norm: Any) -> Array:
    """``max(||x||, min_norm)``, with a gradient that is finite at 0 (as
    optax's numerics.safe_norm)."""
    norm = tnp.sqrt(tnp.sum(_abs_sq(x)))
    small = norm <= min_norm
    x = tnp.where(small, tnp.ones_like(x), x)
    return tnp.where(small, min_norm, tnp.sqrt(tnp.sum(_abs_sq(x))))


def _safe_rms(x: Array, min_rms: Any) -> Array:
    rms = tnp.sqrt(tnp.mean(_abs_sq(x)))
    small = rms <= min_rms
    x = tnp.where(small, tnp.ones_like(x), x)
    return tnp.where(small, min_rms, tnp.sqrt(tnp.mean(_abs_sq(x))))


def scale_by_trust_ratio(
    min_norm: float = 0.0, trust_coefficient: float = 1.0, eps: float = 0.0
) -> GradientTransformation:
    """Scale each update by the trust ratio ``trust_coefficient * ||p|| /
    (||u|| + eps)`` (LAMB, LARS); 1 where either norm is 0.

    Args:
      min_norm: the smallest norm taken (0 or more).
      trust_coefficient: a factor of the ratio.
      eps: added to the update's norm (0 or more).

    Returns:
      The transformation; its state is :class:`EmptyState`. ``update``
      needs the parameters.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_trust_ratio()
    >>> p = tnp.asarray([3.0, 4.0])
    >>> t.update(tnp.asarray([0.0, 1.0]), t.init(p), p)[0]
    Array([0., 5.], dtype=float32)
    """
    where = "scale_by_trust_ratio"
    _check(min_norm, "min_norm", where, 0.0)
    _check(trust_coefficient, "trust_coefficient", where)
    _check(eps, "eps", where, 0.0)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        at = f"{where}'s update"
        flat = _updates(updates, at)
        ps = _params_like(params, flat, at)
        out: list[Array] = []
        for u, p in zip(flat.leaves, ps, strict=True):
            p_norm = _safe_norm(p, _hp(min_norm, p.dtype, "min_norm", at))
            u_norm = _safe_norm(u, _hp(min_norm, u.dtype, "min_norm", at))
            dt = _join(p_norm.dtype, u_norm.dtype)
            p_norm, u_norm = p_norm.astype(dt), u_norm.astype(dt)
            ratio = (
                _hp(trust_coefficient, dt, "trust_coefficient", at)
                * p_norm
                / (u_norm + _hp(eps, dt, "eps", at))
            )
            zero = tnp.logical_or(p_norm == 0.0, u_norm == 0.0)
            safe = tnp.where(zero, tnp.asarray(1.0, p.dtype), ratio)
            out.append(u * safe)
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


def scale_by_param_block_rms(min_scale: float = 1e-3) -> GradientTransformation:
    """Multiply each update by its parameter's root mean square (at least
    ``min_scale``), as Adafactor.

    Args:
      min_scale: the smallest factor (0 or more).

    Returns:
      The transformation; its state is :class:`EmptyState`. ``update``
      needs the parameters.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_param_block_rms()
    >>> p = tnp.asarray([2.0, -2.0])
    >>> t.update(tnp.ones(2), t.init(p), p)[0]
    Array([2., 2.], dtype=float32)
    """
    where = "scale_by_param_block_rms"
    _check(min_scale, "min_scale", where, 0.0)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        at = f"{where}'s update"
        flat = _updates(updates, at)
        ps = _params_like(params, flat, at)
        out = [
            u * _safe_rms(p, _hp(min_scale, p.dtype, "min_scale", at))
            for u, p in zip(flat.leaves, ps, strict=True)
        ]
        return flat.treedef.unflatten(out), state

    return GradientTransformation(_empty_init, update)


# -- Adafactor's factored second moment --------------------------------------------


class FactoredState(NamedTuple):
    """The state of :func:`scale_by_factored_rms`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      v_row: per parameter, the row averages of the squared updates (a
        factored parameter), else a placeholder of shape ``(1,)``.
      v_col: likewise, the column averages.
      v: per parameter, the average of the squared updates (a parameter
        that is not factored), else a placeholder of shape ``(1,)``.

    >>> import typelattice.numpy as tnp
    >>> state = scale_by_factored_rms(min_dim_size_to_factor=2).init(tnp.zeros((2, 4)))
    >>> state.v_row.shape, state.v_col.shape, state.v.shape
    ((2,), (4,), (1,))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    v_row: Any
    v_col: Any
    v: Any


def _factored_dims(
    shape: tuple[int, ...], factored: bool, min_dim_size_to_factor: int
) -> tuple[int, int] | None:
    """The two largest axes (second largest, largest), or None when the
    parameter is not factored (fewer than 2 axes, or small)."""
    if not factored or len(shape) < 2:
        return None
    order = np.argsort(shape, kind="stable")
    if shape[order[-2]] < min_dim_size_to_factor:
        return None
    return int(order[-2]), int(order[-1])


def scale_by_factored_rms(
    factored: bool = True,
    decay_rate: float = 0.8,
    step_offset: int = 0,
    min_dim_size_to_factor: int = 128,
    epsilon: float = 1e-30,
    decay_rate_fn: Callable[[Any, float], Any] | None = None,
) -> GradientTransformation:
    """Adafactor's scaling: divide by the root of a moving average of the
    squared updates, kept for large matrices as row and column averages
    (their outer product, over their mean, estimates it).

    The decay at step ``t`` (from 0) is ``1 - (t - step_offset + 1) **
    -decay_rate``.

    Args:
      factored: factor matrices whose two largest axes are at least
        ``min_dim_size_to_factor``.
      decay_rate: the exponent of the decay.
      step_offset: subtracted from the step.
      min_dim_size_to_factor: the size from which an axis is factored.
      epsilon: added to the squared updates (0 or more).
      decay_rate_fn: ``(step, decay_rate) -> decay``, to replace the
        default.

    Returns:
      The transformation; its state is a :class:`FactoredState`, whose
      leaves have each parameter's dtype.

    >>> import typelattice.numpy as tnp
    >>> t = scale_by_factored_rms(min_dim_size_to_factor=2)
    >>> p = {'w': tnp.ones((2, 3))}
    >>> state = t.init(p)
    >>> state.v_row['w'].shape, state.v_col['w'].shape, state.v['w'].shape
    ((2,), (3,), (1,))
    >>> t.update({'w': tnp.ones((2, 3))}, state, p)[0]['w'].round(3)
    Array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
    """
    where = "scale_by_factored_rms"
    _check(epsilon, "epsilon", where, 0.0)
    _check(decay_rate, "decay_rate", where)

    def decay_of(step: Array) -> Array:
        if decay_rate_fn is not None:
            return tnp.asarray(decay_rate_fn(step, decay_rate))
        t = (step + 1).astype("float32")
        return 1.0 - t ** tnp.asarray(-decay_rate, "float32")

    def init(params: Any) -> FactoredState:
        flat = _float_params(params, f"{where}'s init")
        rows: list[Array] = []
        cols: list[Array] = []
        vs: list[Array] = []
        for p in flat.leaves:
            dims = _factored_dims(p.shape, factored, min_dim_size_to_factor)
            one = tnp.zeros((1,), p.dtype)
            if dims is None:
                rows.append(one)
                cols.append(one)
                vs.append(tnp.zeros(p.shape, p.dtype))
            else:
                d1, d0 = dims
                rows.append(tnp.zeros(p.shape[:d0] + p.shape[d0 + 1 :], p.dtype))
                cols.append(tnp.zeros(p.shape[:d1] + p.shape[d1 + 1 :], p.dtype))
                vs.append(one)
        unflat = flat.treedef.unflatten
        return FactoredState(_new_count(), unflat(rows), unflat(cols), unflat(vs))

    def update(
        updates: Any, state: FactoredState, params: Any = None
    ) -> tuple[Any, Any]:
        at = f"{where}'s update"
        flat = _updates(updates, at)
        ps = _params_like(params, flat, at)
        rows = _leaves_of(state.v_row, flat, "v_row", at)
        cols = _leaves_of(state.v_col, flat, "v_col", at)
        vs = _leaves_of(state.v, flat, "v", at)
        decay = decay_of(state.count - step_offset)
        out: list[Array] = []
        new_rows: list[Array] = []
        new_cols: list[Array] = []
        new_vs: list[Array] = []
        for g, p, r, c, v in zip(flat.leaves, ps, rows, cols, vs, strict=True):
            dtype = p.dtype
            one = tnp.zeros((1,), dtype)
            dims = _factored_dims(p.shape, factored, min_dim_size_to_factor)
            g = _to(g, _join(g.dtype, dtype), "updates", at)
            sq = _abs_sq(g) + _hp(epsilon, g.dtype, "epsilon", at)
            if dims is not None:
                d1, d0 = dims
                # (In the join with the float32 decay, as optax's
                # promotion, written out so that strict mode allows it.)
                dt = _join(decay.dtype, dtype, sq.dtype)
                row = decay.astype(dt) * r.astype(dt) + (1.0 - decay).astype(
                    dt
                ) * tnp.mean(sq, axis=d0).astype(dt)
                col = decay.astype(dt) * c.astype(dt) + (1.0 - decay).astype(
                    dt
                ) * tnp.mean(sq, axis=d1).astype(dt)
                row = _to(row, dtype, "v_row", at)
                col = _to(col, dtype, "v_col", at)
                reduced = d1 - 1 if d1 > d0 else d1
                row_mean = tnp.mean(row, axis=reduced, keepdims=True)
                row_factor = (row / row_mean) ** -0.5
                col_factor = col**-0.5
                u = (
                    g
                    * tnp.expand_dims(row_factor, axis=d0)
                    * tnp.expand_dims(col_factor, axis=d1)
                )
                new_rows.append(row)
                new_cols.append(col)
                new_vs.append(one)
            else:
                dt = _join(decay.dtype, dtype, sq.dtype)
                nv = decay.astype(dt) * v.astype(dt) + (1.0 - decay).astype(
                    dt
                ) * sq.astype(dt)
                nv = _to(nv, dtype, "v", at)
                u = g * nv**-0.5
                new_rows.append(one)
                new_cols.append(one)
                new_vs.append(nv)
            out.append(u)
        unflat = flat.treedef.unflatten
        return unflat(out), FactoredState(
            _increment(state.count), unflat(new_rows), unflat(new_cols), unflat(new_vs)
        )

    return GradientTransformation(init, update)


def _leaves_of(state_tree: Any, flat: _Params, name: str, where: str) -> list[Array]:
    got = _flatten(state_tree)
    if got.treedef != flat.treedef:
        raise ValueError(
            f"{where}: the updates have structure {flat.treedef}, but the "
            f"state's {name} has structure {got.treedef}"
        )
    return got.leaves
