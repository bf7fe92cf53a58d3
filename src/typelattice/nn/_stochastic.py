"""Dropout, as Flax linen's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typelattice.numpy as tnp
from typelattice import random
from typelattice.nn import _dtypes
from typelattice.nn._module import Module, compact, merge_param
from typelattice.numpy import Array

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability ``rate`` in training, scaling the
    kept ones by ``1 / (1 - rate)``; the identity when deterministic.

    Attributes:
      rate: the probability of dropping an element.
      broadcast_dims: axes sharing one mask (for example the time axis).
      deterministic: no dropout (may be given at call time instead).
      rng_collection: the random stream read (``rngs={'dropout': key}``).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Dropout(rate=0.5)
    >>> y = layer.apply({}, tnp.ones(1000), deterministic=False,
    ...                 rngs={'dropout': random.key(0)})
    >>> sorted(set(y.tolist())), 400 < int((y == 0).sum()) < 600
    ([0.0, 2.0], True)
    """

    rate: float
    broadcast_dims: Sequence[int] = ()
    deterministic: bool | None = None
    rng_collection: str = "dropout"

    @compact
    def __call__(
        self, inputs: Any, deterministic: bool | None = None, rng: Array | None = None
    ) -> Array:
        """Apply dropout.

        Args:
          inputs: the input.
          deterministic: as the attribute (give it in one place).
          rng: a key to use instead of the module's stream.

        Returns:
          The input with elements dropped and the rest rescaled, or the
          input itself when deterministic.

        >>> from typelattice import nn
        >>> import typelattice.numpy as tnp
        >>> nn.Dropout(0.5).apply({}, tnp.ones(3), deterministic=True)
        Array([1., 1., 1.], dtype=float32)
        """
        x = _dtypes.as_input(inputs)
        if merge_param("deterministic", self.deterministic, deterministic):
            return x
        if self.rate == 0.0:
            return x
        if self.rate == 1.0:
            return tnp.zeros_like(x)
        keep = 1.0 - self.rate
        key = self.make_rng(self.rng_collection) if rng is None else rng
        shape = list(x.shape)
        for axis in self.broadcast_dims:
            shape[axis] = 1
        mask = tnp.broadcast_to(random.bernoulli(key, keep, tuple(shape)), x.shape)
        return tnp.where(mask, x / keep, tnp.zeros_like(x))
