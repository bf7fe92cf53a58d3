"""The optimisers (sgd, adam, adamw) and apply_updates.

An optimiser is a pair of pure functions, as in optax: ``init(params)``
makes the state, ``update(grads, state, params)`` gives the updates and the
next state; :func:`apply_updates` adds the updates to the parameters. The
formulas, and the order of their operations, are optax's (its ``chain`` of
``trace`` or ``scale_by_adam``, ``add_decayed_weights`` and
``scale_by_learning_rate``), so float32 results agree with optax's to a few
ulps.

Dtypes (mixed precision): the state (momentum, first and second moments)
has each parameter's dtype, whatever the gradient's; a gradient is converted
to its parameter's dtype before it is used (a bfloat16 gradient of a
float32 parameter is accumulated in float32), by the namespace's checked
conversion: a value the parameter's dtype cannot hold raises OverflowError
naming the gradient and the parameter, where optax's astype gives inf; the
updates have the parameter's dtype; the step count is an int32 scalar.
Everything made here is strong (never weakly typed). Python-float
hyperparameters are weak, so they take the parameter's dtype. optax instead
lets the state's dtype follow promotion with the gradient's (a float32
gradient turns a bfloat16 parameter's momentum into float32).

The update functions use only ``typelattice.numpy`` operations and branch
only on what is static (structures, dtypes, shapes, hyperparameters), so
they run under ``typelattice.jit``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice._tracing import tree
from typelattice.numpy._creation import convert_to
from typelattice.optim._schedules import Schedule
from typelattice.typing import Array, DTypeLike

__all__ = [
    "AdamState",
    "GradientTransformation",
    "SgdState",
    "adam",
    "adamw",
    "apply_updates",
    "sgd",
]

_COUNT_DTYPE = np.dtype("int32")
_COUNT_MAX = int(np.iinfo(_COUNT_DTYPE).max)


class _Init(Protocol):
    def __call__(self, params: Any) -> Any: ...


class _Update(Protocol):
    def __call__(
        self, updates: Any, state: Any, params: Any = None
    ) -> tuple[Any, Any]: ...


class GradientTransformation(NamedTuple):
    """An optimiser: the pair of functions that make and advance its state.

    ``state = init(params)``; ``updates, state = update(grads, state,
    params)``; then ``params = apply_updates(params, updates)``. Both are
    pure: they return new trees and change nothing they are given.

    Attributes:
      init: ``params -> state``.
      update: ``(grads, state, params=None) -> (updates, state)``.

    >>> import typelattice.numpy as tnp
    >>> opt = sgd(0.5)
    >>> params = {'w': tnp.ones(2)}
    >>> state = opt.init(params)
    >>> updates, state = opt.update({'w': tnp.ones(2)}, state, params)
    >>> apply_updates(params, updates)
    {'w': Array([0.5, 0.5], dtype=float32)}
    """

    init: _Init
    update: _Update


class SgdState(NamedTuple):
    """The state of :func:`sgd`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      trace: the momentum, a tree like the parameters (each leaf of its
        parameter's dtype); ``None`` without momentum.

    >>> import typelattice.numpy as tnp
    >>> sgd(0.1, momentum=0.9).init({'w': tnp.zeros(2, 'bfloat16')})
    SgdState(count=Array(0, dtype=int32), trace={'w': Array([0, 0], dtype=bfloat16)})
    """

    # (count, as optax's states name it, hides tuple.count.)
    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    trace: Any


class AdamState(NamedTuple):
    """The state of :func:`adam` and :func:`adamw`.

    Attributes:
      count: the number of updates made, an int32 scalar.
      mu: the moving average of the gradients (first moment), a tree like
        the parameters, each leaf of its parameter's dtype.
      nu: the moving average of the squared gradients (second moment),
        likewise.

    >>> import typelattice.numpy as tnp
    >>> state = adam(1e-3).init([tnp.zeros(2)])
    >>> state.count
    Array(0, dtype=int32)
    >>> state.mu, state.nu
    ([Array([0., 0.], dtype=float32)], [Array([0., 0.], dtype=float32)])
    """

    count: Array  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]
    mu: Any
    nu: Any


# -- trees of parameters ---------------------------------------------------------


class _Params(NamedTuple):
    """A tree of arrays (parameters, gradients, a state's moments),
    flattened: the leaves as Arrays, and the structure."""

    leaves: list[Array]
    treedef: tree.PyTreeDef

    def at(self, i: int, name: str = "params") -> str:
        """``params['w'][0]``: where leaf ``i`` is, for messages."""
        return name + self.treedef.paths()[i]


def _flatten(value: Any) -> _Params:
    leaves, treedef = tree.flatten(value)
    # (Arrays as they are: under jit, asarray would record a copy each.)
    arrays = [x if isinstance(x, Array) else tnp.asarray(x) for x in leaves]
    return _Params(arrays, treedef)


def _float_params(params: Any, where: str) -> _Params:
    """The parameters, flattened; TypeError for a leaf that is not floating
    or complex (an optimiser has nothing to add to an integer)."""
    flat = _flatten(params)
    for i, p in enumerate(flat.leaves):
        if not _inexact(p.dtype):
            raise TypeError(
                f"{where}: the parameter {flat.at(i)} is {p.dtype}; optimisers "
                "update floating and complex parameters only: leave it out of "
                f"the tree, or convert it with .astype('float32')"
            )
    return flat


def _same_structure(
    got: tree.PyTreeDef, want: tree.PyTreeDef, what: str, against: str, where: str
) -> None:
    if got != want:
        raise ValueError(
            f"{where}: the {what} have structure {got}, but the {against} have "
            f"structure {want}; give {what} of the same tree as the parameters "
            "given to init"
        )


def _grads_like(grads: Any, like: _Params, against: str, where: str) -> list[Array]:
    """The gradients, flattened, each converted to the dtype of its leaf of
    ``like`` (the parameters, or a state tree of their dtypes): ValueError
    for another structure or shape."""
    flat = _flatten(grads)
    _same_structure(flat.treedef, like.treedef, "gradients", against, where)
    return [_convert(flat, i, "grads", p, where) for i, p in enumerate(like.leaves)]


def _convert(flat: _Params, i: int, name: str, like: Array, where: str) -> Array:
    """Leaf ``i`` of ``flat`` (gradients or updates, ``name`` in messages)
    in the dtype of ``like`` (its parameter, or a state leaf of its dtype),
    strong."""
    x = flat.leaves[i]
    if x.shape != like.shape:
        raise ValueError(
            f"{where}: {flat.at(i, name)} has shape {x.shape}, but its "
            f"parameter has shape {like.shape}"
        )
    if not _inexact(x.dtype):
        raise TypeError(
            f"{where}: {flat.at(i, name)} is {x.dtype}; gradients and updates "
            "are floating or complex arrays"
        )
    if tl.isdtype(x.dtype, "complex floating") and not tl.isdtype(
        like.dtype, "complex floating"
    ):
        raise TypeError(
            f"{where}: {flat.at(i, name)} is {x.dtype}, but its parameter is "
            f"{like.dtype}; give real values (typelattice.numpy.real(x))"
        )
    into = f"{where} ({flat.at(i, name)} converted to the dtype of {flat.at(i)})"
    return _checked(x, like.dtype, into, _fix(x, like, flat.at(i), name))


def _fix(x: Array, like: Array, param: str, name: str) -> str:
    """What to do about gradients (``name`` ``'grads'``) or updates that
    the dtype of the parameter ``param`` cannot hold: a wider parameter
    (``x``'s dtype holds them), or smaller values."""
    wide = x.dtype.name
    keep = f"keep {param} in {wide} (.astype('{wide}') before init)"
    if name == "grads":
        smaller = "scale the loss down"
        if tl.isdtype(like.dtype, "real floating"):
            top = float(tl.finfo(like.dtype).max)
            smaller += (
                f", or clip the gradients into {like.dtype}'s range first "
                f"(typelattice.numpy.clip(g, {-top}, {top}))"
            )
    else:
        smaller = "or make the updates smaller (a smaller learning rate, "
        smaller += "clipped gradients)"
    return f"Fix: {keep}, {smaller}."


def _inexact(dtype: np.dtype[Any]) -> bool:
    return tl.isdtype(dtype, ("real floating", "complex floating"))


def _strong(x: Array) -> Array:
    """``x`` as a strong Array (itself when it is one)."""
    return x.astype(x.dtype) if x.weak_type else x


def _checked(x: Array, dtype: np.dtype[Any], where: str, fix: str) -> Array:
    """``x`` as a strong Array of ``dtype`` (itself when it is one), by the
    namespace's checked conversion: a value ``dtype`` cannot hold (a finite
    float that would become inf) raises OverflowError, at run time under
    jit too. Note: optax converts with astype, which gives inf; we raise
    (docs/semantics.md, "Data safety")."""
    if x.dtype == dtype and not x.weak_type:
        return x
    return convert_to(x, dtype, where, fix)


def _hyper(value: Any, dtype: np.dtype[Any], where: str) -> Any:
    """A hyperparameter for arithmetic in ``dtype``: a Python number as it is
    (weak, it takes the array's dtype); an Array (from inject_hyperparams)
    converted to ``dtype``, checked, so it does not promote the state."""
    if not isinstance(value, Array):
        return value
    fix = f"Fix: give hyperparameters that fit in {dtype}."
    return _checked(value, dtype, f"{where} (a hyperparameter in {dtype})", fix)


def _join(*dtypes: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype leaves of these dtypes meet in: their promotion in the
    standard lattice (so strict mode, which refuses float32 with bfloat16,
    does not stop a bfloat16 gradient of a float32 state)."""
    if all(d == dtypes[0] for d in dtypes):
        return dtypes[0]
    with tl.dtype_promotion("standard"):
        return tl.result_type(*dtypes)


def _stored(x: Array, dtype: np.dtype[Any], where: str) -> Array:
    """A new state leaf ``x`` back in its state's ``dtype`` (checked)."""
    fix = (
        f"Fix: keep the state in {x.dtype} (a wider mu_dtype or "
        "accumulator_dtype), or make the gradients smaller."
    )
    return _checked(x, dtype, f"{where} (the state stored in {dtype})", fix)


def _as(x: Array, dtype: np.dtype[Any]) -> Array:
    """``x`` in ``dtype``, a wider or equal one (itself when it is)."""
    return x if x.dtype == dtype else x.astype(dtype)


def _zeros_like(flat: _Params, dtype: np.dtype[Any] | None = None) -> Any:
    return flat.treedef.unflatten(
        [tnp.zeros(p.shape, p.dtype if dtype is None else dtype) for p in flat.leaves]
    )


def _check_params(params: Any, like: _Params, against: str, where: str) -> _Params:
    """The parameters given to update, flattened and checked against the
    structure of the state (or the gradients)."""
    flat = _float_params(params, where)
    _same_structure(flat.treedef, like.treedef, "parameters", against, where)
    return flat


# -- steps, counts and learning rates ----------------------------------------------


def _increment(count: Array) -> Array:
    # Stays at the largest int32 instead of wrapping to a negative count
    # (as optax's safe_increment).
    return tnp.where(count < _COUNT_MAX, count + 1, _COUNT_MAX)


def _new_count() -> Array:
    return tnp.zeros((), _COUNT_DTYPE)


def _number(value: object, name: str, where: str) -> float | None:
    """``value`` as a float when it is a Python number (None for an Array,
    whose value may not be known yet under jit); TypeError otherwise."""
    if isinstance(value, Array):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{where}: {name} must be a number, not {value!r}")
    return float(value)  # pyright: ignore[reportUnknownArgumentType]


def _check(
    value: object,
    name: str,
    where: str,
    low: float | None = None,
    high: float | None = None,
    *,
    open_low: bool = False,
    open_high: bool = False,
) -> None:
    """ValueError naming ``value`` when it is not finite or out of
    ``[low, high]`` (open ends where asked); an Array passes unchecked."""
    v = _number(value, name, where)
    if v is None:
        return
    bad = not math.isfinite(v)
    if low is not None:
        bad = bad or v < low or (open_low and v == low)
    if high is not None:
        bad = bad or v > high or (open_high and v == high)
    if bad:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        span = ("(" if open_low or low is None else "[") + f"{lo}, {hi}"
        span += ")" if open_high or high is None else "]"
        raise ValueError(
            f"{where}: {name} = {value!r} is not a finite number in {span}; "
            f"give {name} in that range"
        )


def _check_learning_rate(learning_rate: object, where: str) -> None:
    if callable(learning_rate) or isinstance(learning_rate, Array):
        # (An Array: a hyperparameter injected by inject_hyperparams, whose
        # value may be unknown under jit.)
        return
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, int | float):
        raise TypeError(
            f"{where}: learning_rate must be a float or a schedule "
            f"(count -> value), not {learning_rate!r}"
        )
    if not math.isfinite(learning_rate):
        raise ValueError(
            f"{where}: learning_rate = {learning_rate!r} is not finite; give a "
            "finite float (or a schedule)"
        )


def _scale_by_learning_rate(
    updates: list[Array], learning_rate: float | Schedule, count: Array, where: str
) -> list[Array]:
    """``-learning_rate * u`` for each update, in the update's dtype. A
    schedule is read at ``count``, the number of updates made before this
    one (0 for the first), as optax's ``scale_by_schedule``."""
    if isinstance(learning_rate, Array):
        into = f"{where} (the learning rate)"
        fix = "Fix: give a learning rate that fits in the parameters' dtype."
        return [-_checked(learning_rate, u.dtype, into, fix) * u for u in updates]
    if not callable(learning_rate):
        step = -learning_rate  # weak: the update's dtype
        return [step * u for u in updates]
    value = tnp.asarray(learning_rate(count))
    into = f"{where} (the learning rate schedule's value)"
    out: list[Array] = []
    for u in updates:
        fix = f"Fix: give a schedule whose values fit in {u.dtype}."
        out.append(-_checked(value, u.dtype, into, fix) * u)
    return out


def _leaves_of(state_tree: Any, treedef: tree.PyTreeDef, name: str, where: str) -> Any:
    """The leaves of a state tree that must have ``treedef``."""
    leaves, got = tree.flatten(state_tree)
    _same_structure(got, treedef, f"state's {name}", "state's mu", where)
    return leaves


# -- SGD ----------------------------------------------------------------------------


def sgd(
    learning_rate: float | Schedule,
    momentum: float | None = None,
    nesterov: bool = False,
    accumulator_dtype: DTypeLike | None = None,
) -> GradientTransformation:
    """Stochastic gradient descent, with momentum optionally (optax.sgd).

    Without momentum the update is ``-learning_rate * g``. With momentum
    ``m``, the state keeps ``t = g + m * t`` and the update is
    ``-learning_rate * t``, or ``-learning_rate * (g + m * t)`` with
    ``nesterov``.

    Args:
      learning_rate: a float, or a schedule (``count -> value``, as
        :func:`exponential_decay` makes) read with the number of updates
        made before.
      momentum: the decay of the momentum; ``None`` for none (and no state
        but the count).
      nesterov: use Nesterov's momentum.
      accumulator_dtype: the dtype of the momentum; None for each
        parameter's.

    Returns:
      The optimiser. Its updates have each parameter's dtype when
      ``update`` is given the parameters or there is momentum (whose
      state has their dtypes); without either, the gradients' dtypes
      (:func:`apply_updates` converts them).

    >>> import typelattice.numpy as tnp
    >>> opt = sgd(0.1, momentum=0.9)
    >>> params = tnp.asarray([1.0, 2.0])
    >>> state = opt.init(params)
    >>> for _ in range(2):
    ...     updates, state = opt.update(tnp.asarray([1.0, -1.0]), state, params)
    ...     params = apply_updates(params, updates)
    >>> params
    Array([0.71, 2.29], dtype=float32)
    """
    _check_learning_rate(learning_rate, "sgd")
    if momentum is not None:
        _check(momentum, "momentum", "sgd", 0.0, 1.0)
    where = "sgd's update"
    acc = (
        None if accumulator_dtype is None else tl.canonicalize_dtype(accumulator_dtype)
    )

    def init(params: Any) -> SgdState:
        flat = _float_params(params, "sgd's init")
        trace = None if momentum is None else _zeros_like(flat, acc)
        return SgdState(_new_count(), trace)

    def update(updates: Any, state: SgdState, params: Any = None) -> tuple[Any, Any]:
        if state.trace is None:
            if params is None:  # (nothing tells the parameters' dtypes)
                flat = _flatten(updates)
                grads = [
                    _convert(flat, i, "grads", g, where)
                    for i, g in enumerate(flat.leaves)
                ]
                treedef = flat.treedef
            else:
                like = _float_params(params, where)
                grads = _grads_like(updates, like, "parameters", where)
                treedef = like.treedef
            trace = None
            out = grads
        else:
            assert momentum is not None
            traced = _flatten(state.trace)
            treedef = traced.treedef
            if params is not None:
                _check_params(params, traced, "state's trace", where)
            if acc is None:
                grads = _grads_like(updates, traced, "state's trace", where)
            else:
                # An accumulator_dtype: the gradients go to the parameters'
                # dtypes (their own without params), then meet the trace in
                # the join, which is stored back in accumulator_dtype.
                like = traced if params is None else _float_params(params, where)
                flat = _flatten(updates)
                _same_structure(flat.treedef, treedef, "gradients", "trace", where)
                grads = [
                    _convert(flat, i, "grads", g if params is None else p, where)
                    for i, (g, p) in enumerate(
                        zip(flat.leaves, like.leaves, strict=True)
                    )
                ]
            ms = [_hyper(momentum, t.dtype, where) for t in traced.leaves]
            new: list[Array] = []
            kept: list[Array] = []
            for g, m, t in zip(grads, ms, traced.leaves, strict=True):
                dt = _join(g.dtype, t.dtype)
                gd = g if g.dtype == dt else g.astype(dt)
                mt = m * t  # (in the trace's dtype, then joined, as optax)
                new.append(gd + (mt if mt.dtype == dt else mt.astype(dt)))
                kept.append(_stored(new[-1], t.dtype, where))
            trace = treedef.unflatten(kept)
            if nesterov:
                out = [
                    (g if g.dtype == n.dtype else g.astype(n.dtype)) + m * n
                    for g, m, n in zip(grads, ms, new, strict=True)
                ]
            else:
                out = new
        out = _scale_by_learning_rate(out, learning_rate, state.count, where)
        return treedef.unflatten(out), SgdState(_increment(state.count), trace)

    return GradientTransformation(init, update)


# -- Adam ---------------------------------------------------------------------------


def _abs_sq(g: Array) -> Array:
    """``|g|²``: ``g * g`` for real ``g``; ``re² + im²`` (real) for complex."""
    if tl.isdtype(g.dtype, "complex floating"):
        return tnp.real(tnp.conj(g) * g)
    return g * g


def _bias_corrected(m: Array, decay: float, count: Array) -> Array:
    # 1 - decay**count is computed in the default float dtype (decay is a
    # weak Python float, count an int32), then converted, as optax does.
    return m / (1 - decay**count).astype(m.dtype)


def _adam_update(
    grads: list[Array],
    count: Array,
    mu_leaves: list[Array],
    nu_leaves: list[Array],
    b1: float,
    b2: float,
    eps: float,
    eps_root: float,
    nesterov: bool,
) -> tuple[list[Array], list[Array], list[Array], Array]:
    """optax's scale_by_adam on flat lists: the directions (before the
    learning rate), the new moments and the new count (``count`` is the
    number of updates made before)."""
    where = "adam's update"

    def h(value: Any, like: Array) -> Any:
        return _hyper(value, like.dtype, where)

    mu: list[Array] = []
    mu_kept: list[Array] = []
    for g, m in zip(grads, mu_leaves, strict=True):
        # A mu_dtype other than the gradient's: computed in their join,
        # stored in mu_dtype (optax's tree.cast).
        dt = _join(g.dtype, m.dtype)
        # (b1 * m in mu's dtype, then joined, as optax's arithmetic.)
        gd = g if g.dtype == dt else g.astype(dt)
        bm = h(b1, m) * m
        new = (1 - h(b1, gd)) * gd + (bm if bm.dtype == dt else bm.astype(dt))
        mu.append(new)
        mu_kept.append(_stored(new, m.dtype, where))
    nu = [
        (1 - h(b2, v)) * _abs_sq(g) + h(b2, v) * v
        for g, v in zip(grads, nu_leaves, strict=True)
    ]
    count = _increment(count)
    if nesterov:
        after = _increment(count)
        mu_hat = [
            h(b1, m) * _bias_corrected(m, b1, after)
            + (1 - h(b1, m)) * _bias_corrected(g, b1, count)
            for m, g in zip(mu, grads, strict=True)
        ]
    else:
        mu_hat = [_bias_corrected(m, b1, count) for m in mu]
    nu_hat = [_bias_corrected(v, b2, count) for v in nu]
    out: list[Array] = []
    for m, v in zip(mu_hat, nu_hat, strict=True):
        # The denominator in nu's dtype, the quotient in the join (as
        # optax's promotion; written out for strict mode).
        den = tnp.sqrt(v + h(eps_root, v)) + h(eps, v)
        dt = _join(m.dtype, den.dtype)
        out.append(_as(m, dt) / _as(den, dt))
    return out, mu_kept, nu, count


def _mask_leaves(
    mask: Any | Callable[[Any], Any], params: Any, like: _Params, where: str
) -> list[bool]:
    """The mask of weight decay, one bool per parameter."""
    tree_ = mask(params) if callable(mask) else mask
    flags, treedef = tree.flatten(tree_)
    _same_structure(treedef, like.treedef, "mask's leaves", "parameters", where)
    for i, flag in enumerate(flags):
        if not isinstance(flag, bool | np.bool_):
            raise TypeError(
                f"{where}: the mask's leaves must be True or False (static), but "
                f"mask{like.treedef.paths()[i]} is {flag!r}"
            )
    return [bool(f) for f in flags]


def _check_adam(b1: float, b2: float, eps: float, eps_root: float, where: str) -> None:
    """Adam's hyperparameters: the decays in ``[0, 1]``, the epsilons 0 or
    more, all finite."""
    _check(b1, "b1", where, 0.0, 1.0)
    _check(b2, "b2", where, 0.0, 1.0)
    _check(eps, "eps", where, 0.0)
    _check(eps_root, "eps_root", where, 0.0)


def _adam_like(
    name: str,
    learning_rate: float | Schedule,
    b1: float,
    b2: float,
    eps: float,
    eps_root: float,
    nesterov: bool,
    decay: tuple[float | Schedule, Any] | None,
    mu_dtype: Any = None,
) -> GradientTransformation:
    """adam, or adamw when ``decay`` is ``(weight_decay, mask)``."""
    _check_learning_rate(learning_rate, name)
    _check_adam(b1, b2, eps, eps_root, name)
    if decay is not None:
        if not callable(decay[0]):
            _check(decay[0], "weight_decay", name, 0.0)
    where = f"{name}'s update"
    mu_dt = None if mu_dtype is None else tl.canonicalize_dtype(mu_dtype)

    def init(params: Any) -> AdamState:
        flat = _float_params(params, f"{name}'s init")
        return AdamState(_new_count(), _zeros_like(flat, mu_dt), _zeros_like(flat))

    def update(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, Any]:
        if decay is not None and params is None:
            raise ValueError(
                f"{where} needs the parameters for the weight decay: call "
                "opt.update(grads, state, params)"
            )
        moments = _flatten(state.mu)
        treedef = moments.treedef
        nu_leaves = _leaves_of(state.nu, treedef, "nu", where)
        flat_params = (
            None
            if params is None
            else _check_params(params, moments, "state's mu", where)
        )
        # (The gradients go to nu's dtype, the parameters'; mu may have
        # another, mu_dtype.)
        grads = _grads_like(updates, _Params(nu_leaves, treedef), "state's mu", where)
        out, mu, nu, count = _adam_update(
            grads,
            state.count,
            moments.leaves,
            nu_leaves,
            b1,
            b2,
            eps,
            eps_root,
            nesterov,
        )
        if decay is not None:
            assert flat_params is not None
            given, mask = decay
            # A schedule is read at the number of updates made before (as
            # optax's add_decayed_weights), then taken in each parameter's
            # dtype.
            weight_decay: Any = (
                tnp.asarray(given(state.count)) if callable(given) else given
            )
            keep = (
                [True] * len(out)
                if mask is None
                else _mask_leaves(mask, params, flat_params, where)
            )
            if isinstance(weight_decay, Array) or weight_decay != 0:
                out = [
                    u + _hyper(weight_decay, p.dtype, where) * p if use else u
                    for u, p, use in zip(out, flat_params.leaves, keep, strict=True)
                ]
        out = _scale_by_learning_rate(out, learning_rate, state.count, where)
        new_state = AdamState(count, treedef.unflatten(mu), treedef.unflatten(nu))
        return treedef.unflatten(out), new_state

    return GradientTransformation(init, update)


def adam(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: DTypeLike | None = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """Adam (optax.adam).

    The state keeps moving averages of the gradients, ``mu = (1 - b1) * g +
    b1 * mu``, and of their squares, ``nu = (1 - b2) * |g|² + b2 * nu``; the
    update is ``-learning_rate * mu_hat / (sqrt(nu_hat + eps_root) + eps)``,
    where ``mu_hat`` and ``nu_hat`` are divided by ``1 - b1**t`` and
    ``1 - b2**t`` at step ``t`` (bias correction).

    Args:
      learning_rate: a float, or a schedule (``count -> value``) read with
        the number of updates made before.
      b1: the decay of the first moment.
      b2: the decay of the second moment.
      eps: added to the denominator.
      eps_root: added to ``nu_hat`` under the square root.
      mu_dtype: the dtype of the first moment; None for each parameter's.
      nesterov: use Nesterov's momentum (NAdam).

    Returns:
      The optimiser; its state is an :class:`AdamState`.

    >>> import typelattice.numpy as tnp
    >>> opt = adam(0.1)
    >>> params = {'w': tnp.asarray([1.0, -1.0])}
    >>> state = opt.init(params)
    >>> grads = {'w': tnp.asarray([0.5, -2.0], dtype='bfloat16')}
    >>> updates, state = opt.update(grads, state, params)
    >>> updates['w'].round(4), state.mu['w'].dtype
    (Array([-0.1,  0.1], dtype=float32), dtype('float32'))
    """
    return _adam_like(
        "adam", learning_rate, b1, b2, eps, eps_root, nesterov, None, mu_dtype
    )


def adamw(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: DTypeLike | None = None,
    weight_decay: float | Schedule = 1e-4,
    mask: Any | Callable[[Any], Any] | None = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """Adam with decoupled weight decay (optax.adamw).

    As :func:`adam`, with ``weight_decay * p`` added to each direction
    before the learning rate: the update is ``-learning_rate * (mu_hat /
    (sqrt(nu_hat + eps_root) + eps) + weight_decay * p)``. ``update`` needs
    the parameters.

    Args:
      learning_rate: a float, or a schedule (``count -> value``) read with
        the number of updates made before.
      b1: the decay of the first moment.
      b2: the decay of the second moment.
      eps: added to the denominator.
      eps_root: added to ``nu_hat`` under the square root.
      mu_dtype: the dtype of the first moment; None for each parameter's.
      weight_decay: the factor of the parameters added (0 or more), or a
        schedule of it.
      mask: which parameters decay: a tree like the parameters with
        ``True`` or ``False`` leaves, or a function ``params -> such a
        tree``; ``None`` for all.
      nesterov: use Nesterov's momentum.

    Returns:
      The optimiser; its state is an :class:`AdamState`.

    >>> import typelattice.numpy as tnp
    >>> params = {'bias': tnp.ones(2), 'kernel': tnp.ones(2)}
    >>> opt = adamw(0.1, weight_decay=0.5, mask={'bias': False, 'kernel': True})
    >>> state = opt.init(params)
    >>> grads = {'bias': tnp.ones(2), 'kernel': tnp.ones(2)}
    >>> updates, state = opt.update(grads, state, params)
    >>> updates['bias'].round(4), updates['kernel'].round(4)
    (Array([-0.1, -0.1], dtype=float32), Array([-0.15, -0.15], dtype=float32))
    """
    return _adam_like(
        "adamw",
        learning_rate,
        b1,
        b2,
        eps,
        eps_root,
        nesterov,
        (weight_decay, mask),
        mu_dtype,
    )


# -- applying updates -------------------------------------------------------------


def apply_updates(params: Any, updates: Any) -> Any:
    """The parameters plus the updates, leaf by leaf, each in its
    parameter's dtype.

    Each update is converted to its parameter's dtype first, so the sum has
    that dtype in every promotion mode; the results are strong arrays. The
    inputs are left as they are.

    Args:
      params: a tree of arrays.
      updates: a tree of the same structure and shapes.

    Returns:
      The new parameters, a tree of the same structure.

    Raises:
      ValueError: the trees' structures or shapes differ.
      TypeError: a parameter is not floating or complex, or an update is
        complex for a real parameter.
      OverflowError: an update holds a value its parameter's dtype cannot
        hold (a float32 update of -1e5 for a float16 parameter).

    >>> import typelattice.numpy as tnp
    >>> params = {'w': tnp.ones(2, 'bfloat16')}
    >>> apply_updates(params, {'w': tnp.asarray([0.25, -0.5])})
    {'w': Array([1.25, 0.5], dtype=bfloat16)}
    """
    where = "apply_updates"
    flat = _float_params(params, where)
    ups = _flatten(updates)
    _same_structure(ups.treedef, flat.treedef, "updates", "parameters", where)
    out = [
        _strong(p) + _convert(ups, i, "updates", p, where)
        for i, p in enumerate(flat.leaves)
    ]
    return flat.treedef.unflatten(out)
