"""Transformations that wrap another: apply_if_finite (skip non-finite
steps), MultiSteps (accumulate gradients over several steps) and
inject_hyperparams (hyperparameters in the state, to read or change).

optax chooses between the inner update and skipping it with ``lax.cond``;
here both are computed and ``where`` picks, leaf by leaf: the same values,
one program under ``jit``, no branch on a traced value.
"""

# The optimisers' modules share the helpers of _transform.py (trees,
# checked conversions, counts) and of each other.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing import tree
from typelattice.optim._scaling import _to, _updates
from typelattice.optim._transform import (
    GradientTransformation,
    _float_params,
    _increment,
    _join,
    _new_count,
)
from typelattice.typing import Array, DTypeLike

__all__ = [
    "ApplyIfFiniteState",
    "InjectHyperparamsState",
    "InjectStatefulHyperparamsState",
    "MultiSteps",
    "MultiStepsState",
    "WrappedScheduleState",
    "apply_if_finite",
    "inject_hyperparams",
]


def _select(keep: Array, new: Any, old: Any) -> Any:
    """``new`` where ``keep`` (a bool scalar), else ``old``, leaf by leaf, in
    the dtypes of ``old`` (two trees of the same structure)."""
    new_leaves, treedef = tree.flatten(new)
    old_leaves, old_def = tree.flatten(old)
    if treedef != old_def:
        raise ValueError(
            f"the inner transformation changed the structure of its state from "
            f"{old_def} to {treedef}"
        )
    out: list[Array] = []
    for n, o in zip(new_leaves, old_leaves, strict=True):
        o = tnp.asarray(o)
        out.append(tnp.where(keep, tnp.asarray(n).astype(o.dtype), o))
    return treedef.unflatten(out)


def _zeros(value: Any) -> Any:
    def zeros(x: Any) -> Array:
        a = tnp.asarray(x)
        return tnp.zeros(a.shape, a.dtype)

    return tree.tree_map(zeros, value)


class ApplyIfFiniteState(NamedTuple):
    """The state of :func:`apply_if_finite`.

    Attributes:
      notfinite_count: the number of non-finite steps in a row, int32.
      last_finite: whether the last step's updates were all finite.
      total_notfinite: the number of non-finite steps in all, int32.
      inner_state: the inner transformation's state.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> state = apply_if_finite(optim.sgd(0.1), 3).init(tnp.zeros(1))
    >>> state.notfinite_count, state.last_finite
    (Array(0, dtype=int32), Array(True, dtype=bool))
    """

    notfinite_count: Array
    last_finite: Array
    total_notfinite: Array
    inner_state: Any


def apply_if_finite(
    inner: GradientTransformation, max_consecutive_errors: int
) -> GradientTransformation:
    """``inner``, but a step whose updates hold a NaN or an infinity gives
    zero updates and leaves the inner state as it was, unless it is more than
    ``max_consecutive_errors`` such steps in a row (then it is applied).

    Args:
      inner: the transformation.
      max_consecutive_errors: how many non-finite steps in a row are
        skipped (0 or more).

    Returns:
      The transformation; its state is an :class:`ApplyIfFiniteState`.

    Raises:
      ValueError: ``max_consecutive_errors`` is negative.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = apply_if_finite(optim.sgd(0.1), max_consecutive_errors=2)
    >>> state = opt.init(tnp.zeros(2))
    >>> updates, state = opt.update(tnp.asarray([1.0, tnp.nan]), state)
    >>> updates, state.total_notfinite, state.last_finite
    (Array([0., 0.], dtype=float32), Array(1, dtype=int32), Array(False, dtype=bool))
    """
    where = "apply_if_finite"
    if isinstance(max_consecutive_errors, bool) or not isinstance(  # pyright: ignore[reportUnnecessaryIsInstance]
        max_consecutive_errors, int | np.integer
    ):
        raise TypeError(
            f"{where}: max_consecutive_errors must be an int, not "
            f"{max_consecutive_errors!r}"
        )
    if max_consecutive_errors < 0:
        raise ValueError(
            f"{where}: max_consecutive_errors = {max_consecutive_errors} is "
            "negative; give 0 or more"
        )

    def init(params: Any) -> ApplyIfFiniteState:
        zero = _new_count()
        return ApplyIfFiniteState(zero, tnp.asarray(True), zero, inner.init(params))

    def update(
        updates: Any, state: ApplyIfFiniteState, params: Any = None
    ) -> tuple[Any, Any]:
        flat = _updates(updates, f"{where}'s update")
        finite = tnp.asarray(True)
        for u in flat.leaves:
            finite = tnp.logical_and(finite, tnp.all(tnp.isfinite(u)))
        notfinite = tnp.where(finite, 0, _increment(state.notfinite_count))
        apply = tnp.logical_or(finite, notfinite > max_consecutive_errors)
        new_updates, new_inner = inner.update(updates, state.inner_state, params)
        out = _select(apply, new_updates, _zeros(new_updates))
        kept = _select(apply, new_inner, state.inner_state)
        total = tnp.where(
            finite, state.total_notfinite, _increment(state.total_notfinite)
        )
        return out, ApplyIfFiniteState(notfinite, finite, total, kept)

    return GradientTransformation(init, update)


class MultiStepsState(NamedTuple):
    """The state of :class:`MultiSteps`.

    Attributes:
      mini_step: the steps accumulated since the last update, int32.
      gradient_step: the updates made, int32.
      inner_opt_state: the inner optimiser's state.
      acc_grads: the accumulated gradients (of ``accumulator_dtype``).
      skip_state: empty (optax's is for a skip function).

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> state = MultiSteps(optim.sgd(0.1), 4).init(tnp.zeros(1, 'bfloat16'))
    >>> state.mini_step, state.acc_grads
    (Array(0, dtype=int32), Array([0.], dtype=float32))
    """

    mini_step: Array
    gradient_step: Array
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


class MultiSteps:
    """Accumulate gradients over ``every_k_schedule`` steps, then update.

    Between updates the updates are zeros; at every ``k``-th step the inner
    optimiser gets the mean (or sum) of the ``k`` gradients, converted to
    the gradients' dtype.

    Args:
      opt: the inner optimiser.
      every_k_schedule: ``k``, an int (1 or more) or a function of the
        number of updates made giving it.
      use_grad_mean: average the gradients (else sum them).
      accumulator_dtype: the dtype of the accumulated gradients.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = MultiSteps(optim.sgd(1.0), every_k_schedule=2)
    >>> state = opt.init(tnp.zeros(1))
    >>> u, state = opt.update(tnp.asarray([1.0]), state)
    >>> u
    Array([0.], dtype=float32)
    >>> u, state = opt.update(tnp.asarray([3.0]), state)
    >>> u, state.gradient_step
    (Array([-2.], dtype=float32), Array(1, dtype=int32))
    """

    def __init__(
        self,
        opt: GradientTransformation,
        every_k_schedule: int | Callable[[Any], Any],
        use_grad_mean: bool = True,
        accumulator_dtype: DTypeLike = "float32",
    ) -> None:
        if not callable(every_k_schedule):
            k = every_k_schedule
            bad = isinstance(k, bool) or not isinstance(k, int | np.integer)  # pyright: ignore[reportUnnecessaryIsInstance]
            if bad or k < 1:
                raise ValueError(
                    f"MultiSteps: every_k_schedule = {k!r} must be an int of 1 or "
                    "more (or a function of the step giving one)"
                )
        self._opt = opt
        self._every_k = every_k_schedule
        self._use_grad_mean = use_grad_mean
        self._acc_dtype = tl.canonicalize_dtype(accumulator_dtype)

    @property
    def inner_opt(self) -> GradientTransformation:
        """The wrapped optimiser."""
        return self._opt

    def init(self, params: Any) -> MultiStepsState:
        """The state: counts at 0, zero accumulated gradients and the inner
        optimiser's state.

        Args:
          params: the parameters.

        Returns:
          The state.

        >>> import typelattice.numpy as tnp
        >>> from typelattice import optim
        >>> MultiSteps(optim.sgd(0.1), 2).init(tnp.zeros(1)).gradient_step
        Array(0, dtype=int32)
        """
        flat = _float_params(params, "MultiSteps's init")
        acc = flat.treedef.unflatten(
            [tnp.zeros(p.shape, self._acc_dtype) for p in flat.leaves]
        )
        return MultiStepsState(_new_count(), _new_count(), self._opt.init(params), acc)

    def update(
        self, updates: Any, state: MultiStepsState, params: Any = None
    ) -> tuple[Any, MultiStepsState]:
        """Accumulate ``updates``; at the ``k``-th step, update.

        Args:
          updates: the gradients.
          state: the state.
          params: the parameters (for an inner optimiser that needs them).

        Returns:
          The updates (zeros but at the ``k``-th step) and the new state.

        >>> import typelattice.numpy as tnp
        >>> from typelattice import optim
        >>> opt = MultiSteps(optim.sgd(1.0), 2, use_grad_mean=False)
        >>> state = opt.init(tnp.zeros(1))
        >>> _, state = opt.update(tnp.ones(1), state)
        >>> opt.update(tnp.ones(1), state)[0]
        Array([-2.], dtype=float32)
        """
        where = "MultiSteps's update"
        k = (
            self._every_k(state.gradient_step)
            if callable(self._every_k)
            else self._every_k
        )
        flat = _updates(updates, where)
        accs, acc_def = tree.flatten(state.acc_grads)
        if acc_def != flat.treedef:
            raise ValueError(
                f"{where}: the updates have structure {flat.treedef}, but the "
                f"accumulated gradients have structure {acc_def}"
            )
        new_acc: list[Array] = []
        for g, a in zip(flat.leaves, accs, strict=True):
            dt = _join(g.dtype, a.dtype)
            g, a = _to(g, dt, "updates", where), _to(a, dt, "accumulated", where)
            if self._use_grad_mean:
                new_acc.append(a + (g - a) / (state.mini_step + 1).astype(dt))
            else:
                new_acc.append(g + a)
        grads = flat.treedef.unflatten(
            [
                _to(a, g.dtype, "updates", where)
                for a, g in zip(new_acc, flat.leaves, strict=True)
            ]
        )
        final, new_inner = self._opt.update(grads, state.inner_opt_state, params)
        emit = state.mini_step == (k - 1)
        step = tnp.where(emit, _increment(state.gradient_step), state.gradient_step)
        mini = tnp.where(emit, 0, _increment(state.mini_step))
        acc = flat.treedef.unflatten(
            [
                tnp.where(
                    emit, tnp.zeros((), self._acc_dtype), a.astype(self._acc_dtype)
                )
                for a in new_acc
            ]
        )
        out = _select(emit, final, _zeros(final))
        inner = _select(emit, new_inner, state.inner_opt_state)
        return out, MultiStepsState(mini, step, inner, acc, state.skip_state)

    def has_updated(self, state: MultiStepsState) -> Array:
        """Whether the last call of ``update`` updated (a bool scalar).

        Args:
          state: the state ``update`` gave.

        Returns:
          True after the ``k``-th step.

        >>> import typelattice.numpy as tnp
        >>> from typelattice import optim
        >>> opt = MultiSteps(optim.sgd(1.0), 2)
        >>> _, state = opt.update(tnp.ones(1), opt.init(tnp.zeros(1)))
        >>> opt.has_updated(state)
        Array(False, dtype=bool)
        """
        return tnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformation:
        """This wrapper as a :class:`GradientTransformation`.

        Returns:
          ``GradientTransformation(self.init, self.update)``.

        >>> from typelattice import optim
        >>> tx = MultiSteps(optim.sgd(1.0), 2).gradient_transformation()
        >>> isinstance(tx, optim.GradientTransformation)
        True
        """
        return GradientTransformation(self.init, self.update)


class WrappedScheduleState(NamedTuple):
    """The state of a schedule given to :func:`inject_hyperparams`.

    Attributes:
      count: the number of updates made, an int32 scalar.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = inject_hyperparams(optim.sgd)(learning_rate=lambda count: 0.1)
    >>> opt.init(tnp.zeros(1)).hyperparams_states
    {'learning_rate': WrappedScheduleState(count=Array(0, dtype=int32))}
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]


class InjectStatefulHyperparamsState(NamedTuple):
    """The state of :func:`inject_hyperparams`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      hyperparams: name -> the value used at the last step (a scalar array;
        replace it in the state to change the hyperparameter).
      hyperparams_states: name -> the state of each scheduled one.
      inner_state: the inner optimiser's state.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> state = inject_hyperparams(optim.adam)(0.1).init(tnp.zeros(1, 'bfloat16'))
    >>> state.hyperparams['learning_rate'], state.hyperparams['b1']
    (Array(0.100098, dtype=bfloat16), Array(0.898438, dtype=bfloat16))
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    hyperparams: dict[str, Any]
    hyperparams_states: dict[str, Any]
    inner_state: Any


InjectHyperparamsState = InjectStatefulHyperparamsState


def inject_hyperparams(
    inner_factory: Callable[..., GradientTransformation],
    static_args: str | Iterable[str] = (),
    hyperparam_dtype: DTypeLike | None = None,
) -> Callable[..., GradientTransformation]:
    """Wrap an optimiser's factory so that its numeric hyperparameters live
    in the state, where they can be read and changed between steps.

    ``inject_hyperparams(adam)(learning_rate=0.1)`` is adam whose state has
    ``hyperparams['learning_rate']``; a hyperparameter given as a schedule
    is evaluated at each step and its value stored there. The factory is
    called again at each update with the stored values (arrays).

    Args:
      inner_factory: an optimiser's factory, such as :func:`adam`.
      static_args: names of arguments kept as they are (not in the state).
      hyperparam_dtype: the dtype of the float hyperparameters; None for
        the highest dtype of the parameters.

    Returns:
      The wrapped factory, with ``inner_factory``'s signature.

    Raises:
      ValueError: ``static_args`` names an argument the factory does not
        have.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import optim
    >>> opt = inject_hyperparams(optim.sgd)(learning_rate=0.1)
    >>> state = opt.init(tnp.zeros(1))
    >>> state.hyperparams['learning_rate']
    Array(0.1, dtype=float32)
    >>> state = state._replace(hyperparams={'learning_rate': tnp.asarray(0.5)})
    >>> opt.update(tnp.ones(1), state)[0]
    Array([-0.5], dtype=float32)
    """
    static = {static_args} if isinstance(static_args, str) else set(static_args)
    signature = inspect.signature(inner_factory)
    if not static <= set(signature.parameters):
        raise ValueError(
            f"inject_hyperparams: static_args {sorted(static)} must name "
            f"arguments of {getattr(inner_factory, '__name__', inner_factory)}, "
            f"whose arguments are {list(signature.parameters)}"
        )
    fixed_dtype = (
        None if hyperparam_dtype is None else tl.canonicalize_dtype(hyperparam_dtype)
    )

    @functools.wraps(inner_factory)
    def wrapped(*args: Any, **kwargs: Any) -> GradientTransformation:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        scheduled: dict[str, Callable[[Any], Any]] = {}
        numeric: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            if name in static or isinstance(value, bool):
                other[name] = value
            elif callable(value):
                scheduled[name] = value
            elif isinstance(value, int | float | np.number | Array):
                numeric[name] = value
            else:
                other[name] = value

        def dtype_of(params: Any) -> np.dtype[Any]:
            if fixed_dtype is not None:
                return fixed_dtype
            leaves = [tnp.asarray(x).dtype for x in tree.leaves(params)]
            return _join(*leaves) if leaves else tl.canonicalize_dtype(float)

        def floats(value: Any, dtype: np.dtype[Any]) -> Any:
            # As optax: a strong array stays as it is; a float (or a weak
            # array) goes to the hyperparameters' dtype (checked here).
            if isinstance(value, Array) and not value.weak_type:
                return value
            x = tnp.asarray(value)
            if tl.isdtype(x.dtype, "real floating"):
                return _to(x, dtype, "a hyperparameter", "inject_hyperparams")
            return x

        def init(params: Any) -> InjectStatefulHyperparamsState:
            dtype = dtype_of(params)
            hps = {k: floats(v, dtype) for k, v in numeric.items()}
            states = {k: WrappedScheduleState(_new_count()) for k in scheduled}
            for k, f in scheduled.items():
                hps[k] = floats(f(states[k].count), dtype)
            inner = inner_factory(**other, **hps).init(params)
            return InjectStatefulHyperparamsState(_new_count(), hps, states, inner)

        def update(
            updates: Any, state: InjectStatefulHyperparamsState, params: Any = None
        ) -> tuple[Any, Any]:
            dtype = dtype_of(params if params is not None else updates)
            hps = {k: floats(v, dtype) for k, v in state.hyperparams.items()}
            for k, f in scheduled.items():
                hps[k] = floats(f(state.hyperparams_states[k].count), dtype)
            states = {
                k: WrappedScheduleState(_increment(s.count))
                for k, s in state.hyperparams_states.items()
            }
            new_updates, inner = inner_factory(**other, **hps).update(
                updates, state.inner_state, params
            )
            return new_updates, InjectStatefulHyperparamsState(
                _increment(state.count), hps, states, inner
            )

        return GradientTransformation(init, update)

    return wrapped
