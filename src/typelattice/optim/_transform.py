"""SGD (with momentum and Nesterov's variant), Adam and AdamW, as optax
defines them, keeping the state in each parameter's dtype."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, cast

import numpy as np

import typelattice.numpy as tnp
from typelattice import _dtypes
from typelattice._tracing import tree
from typelattice.optim._schedules import Schedule

__all__ = [
    "AdamState",
    "GradientTransformation",
    "SgdState",
    "adam",
    "adamw",
    "apply_updates",
    "sgd",
]


class GradientTransformation(NamedTuple):
    """An optimiser: ``state = init(params)``; ``updates, state =
    update(grads, state, params)``.

    Attributes:
      init: params -> state.
      update: (grads, state, params=None) -> (updates, state).

    >>> import typelattice.numpy as tnp
    >>> opt = sgd(0.5)
    >>> params = [tnp.ones(2, dtype='float32')]
    >>> opt.update([tnp.ones(2, dtype='float32')], opt.init(params))[0]
    [Array([-0.5, -0.5], dtype=float32)]
    """

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class SgdState(NamedTuple):
    """The state of :func:`sgd`.

    Attributes:
      count: the steps taken, an int32 array.
      momentum: the momentum per parameter (None without momentum).

    >>> import typelattice.numpy as tnp
    >>> sgd(0.1, momentum=0.9).init([tnp.ones(2, dtype='bfloat16')])
    SgdState(count=Array(0, dtype=int32), momentum=[Array([0, 0], dtype=bfloat16)])
    """

    count: Any
    momentum: Any


class AdamState(NamedTuple):
    """The state of :func:`adam` and :func:`adamw`.

    Attributes:
      count: the steps taken, an int32 array.
      mu: the first moment per parameter, in the parameter's dtype.
      nu: the second moment per parameter, in the parameter's real dtype.

    >>> import typelattice.numpy as tnp
    >>> adam(0.1).init(tnp.ones(1, dtype='complex64')).nu.dtype
    dtype('float32')
    """

    count: Any
    mu: Any
    nu: Any


def _paths(obj: Any, prefix: str = "") -> list[str]:
    """The paths of a pytree's leaves, in the order of :func:`tree.flatten`
    (``['w']``, ``[0]['b']``), for messages."""
    leaves, treedef = tree.flatten(obj)
    numbered = treedef.unflatten(list(range(len(leaves))))
    found: dict[int, str] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, int) and not isinstance(node, bool):
            found[node] = path or "(the parameters)"
            return
        items: list[tuple[str, Any]] = []
        if isinstance(node, dict):
            mapping: dict[Any, Any] = node  # pyright: ignore[reportUnknownVariableType]
            items = [(f"[{k!r}]", v) for k, v in mapping.items()]
        elif isinstance(node, tuple | list):
            seq = cast("tuple[Any, ...]", node)
            fields: Any = getattr(seq, "_fields", None)
            if fields is not None:
                items = [(f".{k}", v) for k, v in zip(fields, seq, strict=True)]
            else:
                items = [(f"[{i}]", v) for i, v in enumerate(seq)]
        for label, child in items:
            walk(child, path + label)

    walk(numbered, prefix)
    return [found.get(i, f"leaf {i}") for i in range(len(leaves))]


def _flat_params(params: Any, where: str) -> tuple[list[Any], tree.TreeDef]:
    """The parameters' leaves (checked: floating or complex arrays)."""
    leaves, treedef = tree.flatten(params)
    for leaf, path in zip(leaves, _paths(params), strict=True):
        dt = getattr(leaf, "dtype", None)
        if dt is None or _dtypes.kind_of(np.dtype(dt)) not in "fc":
            shown = "a Python value" if dt is None else f"dtype {dt}"
            raise TypeError(
                f"{where}: parameter {path} has {shown}; optimisers update arrays "
                "of floating or complex dtypes. Keep integer values out of the "
                "parameters (or convert them: p.astype('float32'))."
            )
    return leaves, treedef


def _matching(grads: Any, treedef: tree.TreeDef, where: str, what: str) -> list[Any]:
    leaves, got = tree.flatten(grads)
    if got != treedef:
        raise ValueError(
            f"{where}: the {what} have the structure {got}, the optimiser's "
            f"state {treedef}; they must be equal (the gradients of the same "
            "parameters)"
        )
    return leaves


def _zeros(p: Any, real: bool = False) -> Any:
    dt = np.dtype(p.dtype)
    if real and _dtypes.kind_of(dt) == "c":
        dt = np.dtype(np.float64 if dt == np.complex128 else np.float32)
    return tnp.zeros(p.shape, dt)


def _rate(learning_rate: float | Schedule, count: Any) -> Any:
    return learning_rate(count) if callable(learning_rate) else learning_rate


def _increment(count: Any) -> Any:
    """``count + 1``, saturating below int32's maximum."""
    return tnp.minimum(count, np.iinfo(np.int32).max - 1) + 1


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates``, each leaf in its parameter's dtype.

    Args:
      params: a pytree of arrays.
      updates: a pytree of the same structure.

    Returns:
      The new parameters (new arrays; the inputs are unchanged).

    Raises:
      ValueError: the structures differ.

    >>> import typelattice.numpy as tnp
    >>> apply_updates({'w': tnp.ones(2, dtype='bfloat16')}, {'w': tnp.full(2, 0.5)})
    {'w': Array([1.5, 1.5], dtype=bfloat16)}
    """
    leaves, treedef = tree.flatten(params)
    steps = _matching(updates, treedef, "apply_updates", "updates")
    return treedef.unflatten(
        [(p + u).astype(p.dtype) for p, u in zip(leaves, steps, strict=True)]
    )


def sgd(
    learning_rate: float | Schedule,
    momentum: float | None = None,
    nesterov: bool = False,
) -> GradientTransformation:
    """Stochastic gradient descent, with momentum (optax's ``trace``) when
    ``momentum`` is given.

    Args:
      learning_rate: a rate, or a schedule of the step count.
      momentum: the decay of the momentum (None: no momentum).
      nesterov: Nesterov's variant (``g + momentum * m``).

    Returns:
      The optimiser; its state is an :class:`SgdState`.

    >>> import typelattice.numpy as tnp
    >>> opt = sgd(0.1, momentum=0.9)
    >>> p = tnp.ones(2, dtype='float32')
    >>> u, s = opt.update(tnp.ones(2, dtype='bfloat16'), opt.init(p))
    >>> u.dtype, s.momentum.dtype      # the parameter's dtype
    (dtype('float32'), dtype('float32'))
    """

    def init(params: Any) -> SgdState:
        leaves, treedef = _flat_params(params, "sgd.init")
        trace = (
            None if momentum is None else treedef.unflatten([_zeros(p) for p in leaves])
        )
        return SgdState(tnp.zeros((), "int32"), trace)

    def update(grads: Any, state: SgdState, params: Any = None) -> tuple[Any, SgdState]:
        del params
        lr = _rate(learning_rate, state.count)
        if state.momentum is None:
            leaves, treedef = tree.flatten(grads)
            steps = [-lr * g for g in leaves]
            return treedef.unflatten(steps), SgdState(_increment(state.count), None)
        moments, treedef = tree.flatten(state.momentum)
        gs = _matching(grads, treedef, "sgd.update", "gradients")
        new: list[Any] = []
        updates: list[Any] = []
        for g, m in zip(gs, moments, strict=True):
            g = g.astype(m.dtype)
            t = g + momentum * m
            new.append(t)
            updates.append(-lr * (g + momentum * t if nesterov else t))
        state = SgdState(_increment(state.count), treedef.unflatten(new))
        return treedef.unflatten(updates), state

    return GradientTransformation(init, update)


def _adam(
    name: str,
    learning_rate: float | Schedule,
    b1: float,
    b2: float,
    eps: float,
    eps_root: float,
    weight_decay: float,
    mask: Any,
) -> GradientTransformation:
    def init(params: Any) -> AdamState:
        leaves, treedef = _flat_params(params, f"{name}.init")
        return AdamState(
            tnp.zeros((), "int32"),
            treedef.unflatten([_zeros(p) for p in leaves]),
            treedef.unflatten([_zeros(p, real=True) for p in leaves]),
        )

    def update(
        grads: Any, state: AdamState, params: Any = None
    ) -> tuple[Any, AdamState]:
        mus, treedef = tree.flatten(state.mu)
        nus = tree.leaves(state.nu)
        gs = _matching(grads, treedef, f"{name}.update", "gradients")
        decayed: list[Any] = [None] * len(mus)
        if weight_decay:
            if params is None:
                raise ValueError(
                    f"{name}.update needs the parameters for weight decay: call "
                    "update(grads, state, params)"
                )
            ps = _matching(params, treedef, f"{name}.update", "parameters")
            keep = (
                [True] * len(ps)
                if mask is None
                else _mask_leaves(mask, params, treedef)
            )
            decayed = [p if k else None for p, k in zip(ps, keep, strict=True)]
        lr = _rate(learning_rate, state.count)
        count = _increment(state.count)
        fix1 = 1 - tnp.power(b1, count)
        fix2 = 1 - tnp.power(b2, count)
        new_mu: list[Any] = []
        new_nu: list[Any] = []
        updates: list[Any] = []
        for g, m, v, p in zip(gs, mus, nus, decayed, strict=True):
            g = g.astype(m.dtype)
            m = b1 * m + (1 - b1) * g
            square = (
                tnp.real(g * tnp.conj(g)) if _dtypes.kind_of(g.dtype) == "c" else g * g
            )
            v = b2 * v + (1 - b2) * square.astype(v.dtype)
            step = (m / fix1) / (tnp.sqrt(v / fix2 + eps_root) + eps)
            if p is not None:
                step = step + weight_decay * p
            new_mu.append(m)
            new_nu.append(v)
            updates.append((-lr * step).astype(m.dtype))
        state = AdamState(count, treedef.unflatten(new_mu), treedef.unflatten(new_nu))
        return treedef.unflatten(updates), state

    return GradientTransformation(init, update)


def _mask_leaves(mask: Any, params: Any, treedef: tree.TreeDef) -> list[bool]:
    """The mask as one bool per parameter (a pytree of bools, or a function
    of the parameters giving one)."""
    given = mask(params) if callable(mask) else mask
    leaves, got = tree.flatten(given)
    if got != treedef:
        raise ValueError(
            f"adamw: the mask has the structure {got}, the parameters {treedef}; "
            "give one bool per parameter"
        )
    return [bool(k) for k in leaves]


def adam(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
) -> GradientTransformation:
    """Adam: bias-corrected moments of the gradients, as optax's.

    Args:
      learning_rate: a rate, or a schedule of the step count.
      b1: the decay of the first moment.
      b2: the decay of the second moment.
      eps: added to the root of the second moment.
      eps_root: added to the second moment before the root.

    Returns:
      The optimiser; its state is an :class:`AdamState` whose moments have
      the parameters' dtypes.

    >>> import typelattice.numpy as tnp
    >>> opt = adam(0.1)
    >>> p = {'w': tnp.zeros(2, dtype='float32')}
    >>> u, s = opt.update({'w': tnp.asarray([1.0, -2.0])}, opt.init(p))
    >>> tnp.round(u['w'], 4)      # the first step is -lr * sign(g)
    Array([-0.1,  0.1], dtype=float32)
    """
    return _adam("adam", learning_rate, b1, b2, eps, eps_root, 0.0, None)


def adamw(
    learning_rate: float | Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    weight_decay: float = 1e-4,
    mask: Any = None,
) -> GradientTransformation:
    """Adam with decoupled weight decay (``weight_decay * params`` added to
    each step before the learning rate scales it), as optax's.

    Args:
      learning_rate: a rate, or a schedule of the step count.
      b1: the decay of the first moment.
      b2: the decay of the second moment.
      eps: added to the root of the second moment.
      eps_root: added to the second moment before the root.
      weight_decay: the decay rate.
      mask: which parameters decay: a pytree of bools of the parameters'
        structure, or a function of the parameters giving one.

    Returns:
      The optimiser; ``update`` needs the parameters.

    >>> import typelattice.numpy as tnp
    >>> opt = adamw(0.1, weight_decay=0.5)
    >>> p = tnp.ones(2, dtype='float32')
    >>> u, _ = opt.update(tnp.zeros(2, dtype='float32'), opt.init(p), p)
    >>> u
    Array([-0.05, -0.05], dtype=float32)
    """
    return _adam("adamw", learning_rate, b1, b2, eps, eps_root, weight_decay, mask)
