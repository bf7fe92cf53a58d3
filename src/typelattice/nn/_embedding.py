"""Embed: a lookup table of vectors, indexed by integers, as Flax linen's.

Dtypes: the table is stored in ``param_dtype``; lookups return ``dtype`` if
given, else the table's dtype; ``attend`` promotes the query and the table
(as Dense does its input and kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.nn import _dtypes, initializers
from typelattice.nn._module import Module
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = ["Embed"]

# Flax's default: unit variance per entry.
default_embed_init = initializers.variance_scaling(1.0, "fan_in", "normal", out_axis=0)


class Embed(Module):
    """A table of ``num_embeddings`` vectors of size ``features``.

    Attributes:
      num_embeddings: the number of rows (the vocabulary size).
      features: the size of each vector.
      dtype: the lookups' dtype (default: the table's).
      param_dtype: the table's dtype.
      embedding_init: initialiser of the ``(num_embeddings, features)``
        table.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Embed(num_embeddings=10, features=4)
    >>> tokens = tnp.asarray([[1, 5, 2]])
    >>> variables = layer.init(random.key(0), tokens)
    >>> layer.apply(variables, tokens).shape
    (1, 3, 4)
    >>> layer.apply(variables, tnp.ones((1, 4)), method='attend').shape
    (1, 10)
    """

    num_embeddings: int
    features: int
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    embedding_init: initializers.Initializer = default_embed_init

    def setup(self) -> None:
        """Create the table ``embedding``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> v = nn.Embed(3, 2).init(random.key(0), tnp.asarray([0]))
        >>> v['params']['embedding'].shape
        (3, 2)
        """
        # Modules are frozen to type checkers; setup() may assign.
        self.embedding: Array = self.param(  # pyright: ignore[reportAttributeAccessIssue]
            "embedding",
            self.embedding_init,
            (self.num_embeddings, self.features),
            self.param_dtype,
        )

    def __call__(self, inputs: Any) -> Array:
        """Look up rows of the table.

        Args:
          inputs: integer indices, any shape.

        Returns:
          ``(*inputs.shape, features)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Embed(4, 2, dtype='bfloat16')
        >>> tokens = tnp.asarray([3])
        >>> layer.apply(layer.init(random.key(0), tokens), tokens).dtype
        dtype(bfloat16)
        """
        x = _dtypes.as_input(inputs)
        if not tl.isdtype(x.dtype, "integral"):
            raise ValueError(
                f"Embed takes integer indices, not {x.dtype.name}: pass "
                "x.astype('int32') if the values are whole numbers"
            )
        table = self.embedding
        if self.dtype is not None:
            table = _dtypes.cast(
                table, _dtypes.compute_dtype(table, dtype=self.dtype, where="Embed")
            )
        return tnp.take(table, x, axis=0)

    def attend(self, query: Any) -> Array:
        """Score a query against every row: ``query @ embedding.T`` (the
        output layer of a model with tied embeddings).

        Args:
          query: ``(..., features)``.

        Returns:
          ``(..., num_embeddings)``, in the promotion of the query and the
          table (or ``dtype``).

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Embed(5, 3)
        >>> v = layer.init(random.key(0), tnp.asarray([0]))
        >>> layer.apply(v, tnp.ones(3, dtype='bfloat16'), method='attend').dtype
        dtype('float32')
        """
        q, table = _dtypes.promote(
            _dtypes.as_input(query),
            self.embedding,
            dtype=self.dtype,
            where="Embed.attend",
        )
        assert q is not None and table is not None
        return tnp.matmul(q, table.T)
