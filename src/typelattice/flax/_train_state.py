"""TrainState: parameters, optimiser and step in one pytree (the home of
``typelattice.flax.training.train_state``, as Flax's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typelattice import optim
from typelattice.flax import _struct as struct

__all__ = ["TrainState"]


class TrainState(struct.PyTreeNode):
    """The state of a training loop with one optimiser, as Flax's
    ``flax.training.train_state.TrainState``: a struct dataclass whose
    pytree fields are ``step``, ``params`` and ``opt_state``, and whose
    static fields are ``apply_fn`` and ``tx``, so it passes through ``jit``
    and ``grad`` as an argument and as a result. Subclass it to carry more
    (``batch_stats``, a dropout key).

    Attributes:
      step: the number of ``apply_gradients`` calls so far (0 at first).
      apply_fn: usually the model's ``apply``.
      params: the parameters that ``tx`` updates.
      tx: the optimiser, a :class:`typelattice.optim.GradientTransformation`
        (``typelattice.optim.adam(1e-3)``).
      opt_state: ``tx``'s state.

    >>> import typelattice
    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn, optim, random
    >>> model = nn.Dense(1)
    >>> x, y = tnp.ones((4, 2)), tnp.zeros((4, 1))
    >>> params = model.init(random.key(0), x)['params']
    >>> state = TrainState.create(apply_fn=model.apply, params=params,
    ...                           tx=optim.sgd(0.1))
    >>> def loss(params):
    ...     return ((state.apply_fn({'params': params}, x) - y) ** 2).mean()
    >>> @typelattice.jit
    ... def train_step(state):
    ...     return state.apply_gradients(grads=typelattice.grad(loss)(state.params))
    >>> new = train_step(state)
    >>> int(new.step), bool(loss(new.params) < loss(state.params))
    (1, True)
    """

    step: Any
    apply_fn: Callable[..., Any] = struct.field(pytree_node=False)
    params: Any = struct.field(pytree_node=True)
    tx: optim.GradientTransformation = struct.field(pytree_node=False)
    opt_state: Any = struct.field(pytree_node=True)

    def apply_gradients(self, *, grads: Any, **kwargs: Any) -> TrainState:
        """One optimiser step: ``step`` + 1, ``params`` and ``opt_state``
        updated by ``tx`` with ``grads``, and the fields in ``kwargs``
        replaced.

        Args:
          grads: gradients of the structure of ``params``.
          **kwargs: other fields to replace (``batch_stats=...``).

        Returns:
          The new state (``self`` is unchanged).

        >>> import typelattice.numpy as tnp
        >>> from typelattice import optim
        >>> s = TrainState.create(apply_fn=None, params=tnp.ones(2),
        ...                       tx=optim.sgd(0.5))
        >>> new = s.apply_gradients(grads=tnp.ones(2))
        >>> new.step, new.params
        (1, Array([0.5, 0.5], dtype=float32))
        """
        updates, opt_state = self.tx.update(grads, self.opt_state, self.params)
        params = optim.apply_updates(self.params, updates)
        return self.replace(
            step=self.step + 1, params=params, opt_state=opt_state, **kwargs
        )

    @classmethod
    def create(
        cls,
        *,
        apply_fn: Callable[..., Any],
        params: Any,
        tx: optim.GradientTransformation,
        **kwargs: Any,
    ) -> Any:
        """A state at step 0, with ``tx.init(params)`` as its ``opt_state``.

        Args:
          apply_fn: the model's ``apply`` (or any function kept as static).
          params: the parameters.
          tx: the optimiser.
          **kwargs: the fields of a subclass.

        Returns:
          The state (of ``cls``).

        >>> import typelattice.numpy as tnp
        >>> from typelattice import optim
        >>> s = TrainState.create(apply_fn=None, params={'w': tnp.zeros(2)},
        ...                       tx=optim.adam(1e-3))
        >>> s.step, s.opt_state.count
        (0, Array(0, dtype=int32))
        """
        return cls(
            step=0,
            apply_fn=apply_fn,
            params=params,
            tx=tx,
            opt_state=tx.init(params),
            **kwargs,
        )
