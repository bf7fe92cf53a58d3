"""optax's names for :mod:`typelattice.optim`, so that a program written for
optax runs with ``import typelattice.optax as optax``.

Every name here is the object of the same name in ``typelattice.optim``,
except :func:`adam`, :func:`adamw` and :func:`sgd`: these are built as
optax builds them, as chains, so that their states have optax's structure
(``(ScaleByAdamState(count, mu, nu), EmptyState())`` for ``adam``) and an
optimiser state saved by a Flax program restores here, and the reverse.
Their updates equal those of ``typelattice.optim.adam``, ``adamw`` and
``sgd``, whose states are one record. See docs/optim.md for the
optimisers, their dtypes and where they differ from optax's.

>>> import typelattice.numpy as tnp
>>> import typelattice.optax as optax
>>> tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
>>> params = {'w': tnp.zeros(2)}
>>> opt_state = tx.init(params)
>>> updates, opt_state = tx.update({'w': tnp.ones(2)}, opt_state, params)
>>> optax.apply_updates(params, updates)['w'].round(4)
Array([-0.001, -0.001], dtype=float32)
>>> type(opt_state[1][0]).__name__, type(opt_state[1][1]).__name__
('ScaleByAdamState', 'EmptyState')
"""

from collections.abc import Callable as _Callable
from typing import Any as _Any

from typelattice import optim as _optim
from typelattice.optim import *  # noqa: F403
from typelattice.optim import __all__ as __all__
from typelattice.typing import DTypeLike as _DTypeLike


def adam(  # type: ignore[no-redef]
    learning_rate: float | _optim.Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: _DTypeLike | None = None,
    *,
    nesterov: bool = False,
) -> _optim.GradientTransformation:
    """Adam as optax builds it: ``chain(scale_by_adam(...),
    scale_by_learning_rate(learning_rate))``; the updates of
    ``typelattice.optim.adam`` with optax's state structure.

    Args:
      learning_rate: a float or a schedule.
      b1: the decay of the gradients' average.
      b2: the decay of the squared gradients' average.
      eps: added to the root of the second moment.
      eps_root: added to the second moment under the root.
      mu_dtype: the dtype of the first moment; None for each parameter's.
      nesterov: use Nesterov's momentum.

    Returns:
      The optimiser.

    >>> import typelattice.numpy as tnp
    >>> state = adam(0.1).init({'w': tnp.zeros(2)})
    >>> [type(s).__name__ for s in state]
    ['ScaleByAdamState', 'EmptyState']
    """
    return _optim.chain(
        _optim.scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
        _optim.scale_by_learning_rate(learning_rate),
    )


def adamw(  # type: ignore[no-redef]
    learning_rate: float | _optim.Schedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: _DTypeLike | None = None,
    weight_decay: float | _optim.Schedule = 1e-4,
    mask: _Any | _Callable[[_Any], _Any] | None = None,
    *,
    nesterov: bool = False,
) -> _optim.GradientTransformation:
    """AdamW as optax builds it: ``chain(scale_by_adam(...),
    add_decayed_weights(weight_decay, mask),
    scale_by_learning_rate(learning_rate))``; the updates of
    ``typelattice.optim.adamw`` with optax's state structure.

    Args:
      learning_rate: a float or a schedule.
      b1: the decay of the gradients' average.
      b2: the decay of the squared gradients' average.
      eps: added to the root of the second moment.
      eps_root: added to the second moment under the root.
      mu_dtype: the dtype of the first moment; None for each parameter's.
      weight_decay: a number (0 or more) or a schedule.
      mask: which parameters decay (a tree of booleans, or a function of
        the parameters giving one); None for all.
      nesterov: use Nesterov's momentum.

    Returns:
      The optimiser.

    >>> import typelattice.numpy as tnp
    >>> len(adamw(0.1).init({'w': tnp.zeros(2)}))
    3
    """
    return _optim.chain(
        _optim.scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
        _optim.add_decayed_weights(weight_decay, mask),
        _optim.scale_by_learning_rate(learning_rate),
    )


def sgd(  # type: ignore[no-redef]
    learning_rate: float | _optim.Schedule,
    momentum: float | None = None,
    nesterov: bool = False,
    accumulator_dtype: _DTypeLike | None = None,
) -> _optim.GradientTransformation:
    """SGD as optax builds it: ``chain(trace(momentum, ...) or identity(),
    scale_by_learning_rate(learning_rate))``; the updates of
    ``typelattice.optim.sgd`` with optax's state structure.

    Args:
      learning_rate: a float or a schedule.
      momentum: the decay of the trace; None for no momentum.
      nesterov: use Nesterov's momentum.
      accumulator_dtype: the dtype of the trace; None for each parameter's.

    Returns:
      The optimiser.

    >>> import typelattice.numpy as tnp
    >>> [type(s).__name__ for s in sgd(0.1, 0.9).init({'w': tnp.zeros(2)})]
    ['TraceState', 'EmptyState']
    """
    first = (
        _optim.identity()
        if momentum is None
        else _optim.trace(
            momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype
        )
    )
    return _optim.chain(first, _optim.scale_by_learning_rate(learning_rate))
