"""Attention: dot_product_attention(_weights) and
MultiHeadDotProductAttention, as Flax linen's.

Dtypes: query, key and value are promoted together (or cast to ``dtype``);
the softmax runs in that dtype unless ``force_fp32_for_softmax`` asks for
float32 (the weights are cast back). Complex input raises TypeError: the
FLIP leaves the softmax of complex scores undefined (Flax computes one).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax, random
from typelattice.nn import _dtypes, initializers
from typelattice.nn._activation import softmax
from typelattice.nn._linear import DenseGeneral, default_kernel_init
from typelattice.nn._module import Module, compact, merge_param
from typelattice.nn._normalization import LayerNorm
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = [
    "combine_masks",
    "MultiHeadDotProductAttention",
    "dot_product_attention",
    "dot_product_attention_weights",
    "make_attention_mask",
    "make_causal_mask",
]


def _real(where: str, *arrays: Array | None) -> None:
    for a in arrays:
        if a is not None and tl.isdtype(a.dtype, "complex floating"):
            raise TypeError(
                f"{where}: attention is not defined for complex input "
                f"({a.dtype.name}): the softmax of complex scores has no "
                "meaning. Attend over real features, for example "
                "concatenate(real(x), imag(x)) on the last axis"
            )


def dot_product_attention_weights(
    query: Any,
    key: Any,
    bias: Any = None,
    mask: Any = None,
    broadcast_dropout: bool = True,
    dropout_rng: Array | None = None,
    dropout_rate: float = 0.0,
    deterministic: bool = False,
    dtype: DTypeLike | None = None,
    precision: Any = None,
    module: Module | None = None,
    force_fp32_for_softmax: bool = False,
) -> Array:
    """The attention weights ``softmax(q·k / sqrt(depth))`` per head.

    Args:
      query: ``(..., q_length, heads, depth)``.
      key: ``(..., kv_length, heads, depth)``.
      bias: added to the scores, broadcastable to ``(..., heads, q_length,
        kv_length)``.
      mask: where False, the score is the dtype's lowest value.
      broadcast_dropout: one dropout mask for the batch and head axes.
      dropout_rng: the dropout key (needed when dropping).
      dropout_rate: the probability of dropping a weight.
      deterministic: no dropout.
      dtype: the compute dtype (default: the promotion of query and key).
      precision: accepted for compatibility.
      module: a module to sow the weights into (after the softmax, before
        dropout): ``'intermediates'/'attention_weights'``, kept when that
        collection is mutable in its ``apply``.
      force_fp32_for_softmax: compute the softmax in float32.

    Returns:
      ``(..., heads, q_length, kv_length)``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> q = tnp.ones((2, 3, 4, 8), dtype='bfloat16')
    >>> w = nn.dot_product_attention_weights(q, q)
    >>> w.shape, w.dtype
    ((2, 4, 3, 3), dtype(bfloat16))
    """
    q, k = _dtypes.as_input(query), _dtypes.as_input(key)
    _real("dot_product_attention_weights", q, k)
    q, k = _dtypes.promote(q, k, dtype=dtype, where="dot_product_attention_weights")
    assert q is not None and k is not None
    compute = q.dtype
    q = q / math.sqrt(q.shape[-1])
    weights = tnp.einsum("...qhd,...khd->...hqk", q, k)
    if bias is not None:
        weights = weights + _dtypes.cast(_dtypes.as_input(bias), compute)
    if mask is not None:
        lowest = tnp.asarray(tl.finfo(compute).min, dtype=compute)
        weights = tnp.where(_dtypes.as_input(mask), weights, lowest)
    if force_fp32_for_softmax and compute != np.dtype("float32"):
        weights = softmax(weights.astype("float32")).astype(compute)
    else:
        weights = softmax(weights)
    if module is not None:
        module.sow("intermediates", "attention_weights", weights)
    if not deterministic and dropout_rate > 0.0:
        if dropout_rng is None:
            raise ValueError(
                "attention dropout needs a key: pass dropout_rng=..., or "
                "deterministic=True"
            )
        keep = 1.0 - dropout_rate
        shape = weights.shape
        if broadcast_dropout:
            shape = (1,) * (k.ndim - 2) + weights.shape[-2:]
        kept = random.bernoulli(dropout_rng, keep, shape)
        weights = weights * (kept.astype(compute) / keep)
    return weights


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    broadcast_dropout: bool = True,
    dropout_rng: Array | None = None,
    dropout_rate: float = 0.0,
    deterministic: bool = False,
    dtype: DTypeLike | None = None,
    precision: Any = None,
    module: Module | None = None,
    force_fp32_for_softmax: bool = False,
) -> Array:
    """Scaled dot-product attention: the values averaged with the weights of
    :func:`dot_product_attention_weights`.

    Args:
      query: ``(..., q_length, heads, depth)``.
      key: ``(..., kv_length, heads, depth)``.
      value: ``(..., kv_length, heads, v_depth)``.
      bias, mask, broadcast_dropout, dropout_rng, dropout_rate,
        deterministic, precision, module, force_fp32_for_softmax: as
        :func:`dot_product_attention_weights`.
      dtype: the compute dtype (default: the promotion of query, key and
        value).

    Returns:
      ``(..., q_length, heads, v_depth)``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> q = tnp.ones((2, 3, 4, 8))
    >>> nn.dot_product_attention(q, q, q).shape
    (2, 3, 4, 8)
    """
    q, k, v = (_dtypes.as_input(a) for a in (query, key, value))
    _real("dot_product_attention", q, k, v)
    q, k, v = _dtypes.promote(q, k, v, dtype=dtype, where="dot_product_attention")
    weights = dot_product_attention_weights(
        q,
        k,
        bias,
        mask,
        broadcast_dropout,
        dropout_rng,
        dropout_rate,
        deterministic,
        None,
        precision,
        module,
        force_fp32_for_softmax,
    )
    return tnp.einsum("...hqk,...khd->...qhd", weights, v)


class MultiHeadDotProductAttention(Module):
    """Multi-head attention: query, key and value projections
    (``DenseGeneral`` named ``query``, ``key``, ``value``), dot-product
    attention per head, and an output projection (``out``).

    Attributes:
      num_heads: the number of heads (dividing ``qkv_features``).
      dtype, param_dtype: as :class:`Dense`.
      qkv_features: the projections' total size (default: the query's
        features).
      out_features: the output's size (default: the query's features).
      broadcast_dropout: one dropout mask for the batch and head axes.
      dropout_rate: attention-weight dropout.
      deterministic: no dropout (may be given at call time instead).
      precision: accepted for compatibility.
      kernel_init, bias_init, use_bias: the projections' initialisers.
      out_kernel_init, out_bias_init: the output projection's (default: as
        the others).
      attention_fn: the attention function.
      decode: autoregressive decoding, as Flax: ``init`` on full-length
        inputs makes a ``'cache'`` collection (``cached_key``,
        ``cached_value``, ``cache_index``); each ``apply(...,
        mutable=['cache'])`` then takes one position, stores its key and
        value at the index and attends to the positions stored so far.
      normalize_qk: LayerNorm on the projected queries and keys.
      force_fp32_for_softmax: compute the softmax in float32.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)
    >>> x = tnp.ones((4, 5, 6))
    >>> variables = layer.init(random.key(0), x)
    >>> sorted(variables['params']), variables['params']['query']['kernel'].shape
    (['key', 'out', 'query', 'value'], (6, 2, 4))
    >>> layer.apply(variables, x).shape
    (4, 5, 6)
    """

    num_heads: int
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    qkv_features: int | None = None
    out_features: int | None = None
    broadcast_dropout: bool = True
    dropout_rate: float = 0.0
    deterministic: bool | None = None
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    out_kernel_init: initializers.Initializer | None = None
    bias_init: initializers.Initializer = initializers.zeros
    out_bias_init: initializers.Initializer | None = None
    use_bias: bool = True
    attention_fn: Any = dot_product_attention
    decode: bool = False
    normalize_qk: bool = False
    force_fp32_for_softmax: bool = False

    def _decode(
        self, query: Array, key: Array, value: Array, mask: Any
    ) -> tuple[Array, Array, Any]:
        """One step of autoregressive decoding (see ``decode``)."""

        initialized = self.has_variable("cache", "cached_key")
        cached_key = self.variable(
            "cache", "cached_key", tnp.zeros, key.shape, key.dtype
        )
        cached_value = self.variable(
            "cache", "cached_value", tnp.zeros, value.shape, value.dtype
        )
        cache_index = self.variable(
            "cache", "cache_index", lambda: tnp.zeros((), dtype="int32")
        )
        if not initialized:
            return key, value, mask
        *batch, max_length, heads, depth = cached_key.value.shape
        expected = (*batch, 1, heads, depth)
        if tuple(query.shape) != expected:
            raise ValueError(
                f"Autoregressive cache shape error, expected query shape "
                f"{expected} instead got {tuple(query.shape)}: decode one "
                "position at a time"
            )
        if (key.dtype, value.dtype) != (
            cached_key.value.dtype,
            cached_value.value.dtype,
        ):
            # Flax raises too; a cast would narrow, e.g. float64 into float32.
            raise TypeError(
                f"MultiHeadDotProductAttention(decode=True): the cache holds "
                f"{cached_key.value.dtype} keys and {cached_value.value.dtype} "
                f"values, this step computes {key.dtype} and {value.dtype} ones: "
                "decode inputs of the dtype given to init, or init again with "
                "inputs of this dtype"
            )
        index = cache_index.value
        start: tuple[Any, ...] = (0,) * len(batch) + (index, 0, 0)
        key = lax.dynamic_update_slice(cached_key.value, key, start)
        value = lax.dynamic_update_slice(cached_value.value, value, start)
        cached_key.value, cached_value.value = key, value
        cache_index.value = index + 1
        stored = tnp.broadcast_to(
            tnp.arange(max_length) <= index, (*batch, 1, 1, max_length)
        )
        mask = stored if mask is None else tnp.logical_and(mask, stored)
        return key, value, mask

    @compact
    def __call__(
        self,
        inputs_q: Any,
        inputs_k: Any = None,
        inputs_v: Any = None,
        *,
        inputs_kv: Any = None,
        mask: Any = None,
        deterministic: bool | None = None,
        dropout_rng: Array | None = None,
        sow_weights: bool = False,
    ) -> Array:
        """Attend from ``inputs_q`` to ``inputs_k``/``inputs_v`` (self-attention
        when they are not given).

        Args:
          inputs_q: ``(..., q_length, features)``.
          inputs_k: ``(..., kv_length, features)`` (default ``inputs_q``).
          inputs_v: default ``inputs_k``.
          inputs_kv: both key and value inputs (instead of the two).
          mask: ``(..., heads or 1, q_length, kv_length)``, False to block.
          deterministic: as the attribute.
          dropout_rng: the dropout key (default: the ``'dropout'`` stream).
          sow_weights: sow the attention weights, ``(..., heads, q_length,
            kv_length)``, into ``'intermediates'`` as ``attention_weights``
            (pass ``mutable=['intermediates']`` to ``apply`` to get them).

        Returns:
          ``(..., q_length, out_features)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.MultiHeadDotProductAttention(num_heads=1)
        >>> q, kv = tnp.ones((3, 4)), tnp.ones((7, 4))
        >>> layer.apply(layer.init(random.key(0), q, kv), q, kv).shape
        (3, 4)
        """
        q_in = _dtypes.as_input(inputs_q)
        if inputs_kv is not None:
            if inputs_k is not None or inputs_v is not None:
                raise ValueError("give inputs_kv, or inputs_k and inputs_v, not both")
            inputs_k = inputs_v = inputs_kv
        k_in = q_in if inputs_k is None else _dtypes.as_input(inputs_k)
        v_in = k_in if inputs_v is None else _dtypes.as_input(inputs_v)
        _real("MultiHeadDotProductAttention", q_in, k_in, v_in)
        features = self.qkv_features or q_in.shape[-1]
        if features % self.num_heads:
            raise ValueError(
                f"qkv_features={features} must be divisible by "
                f"num_heads={self.num_heads}"
            )
        head_dim = features // self.num_heads

        def projection(name: str) -> DenseGeneral:
            return DenseGeneral(
                features=(self.num_heads, head_dim),
                axis=-1,
                dtype=self.dtype,
                param_dtype=self.param_dtype,
                kernel_init=self.kernel_init,
                bias_init=self.bias_init,
                use_bias=self.use_bias,
                precision=self.precision,
                name=name,
            )

        query = projection("query")(q_in)
        key = projection("key")(k_in)
        value = projection("value")(v_in)
        if self.normalize_qk:
            query = LayerNorm(
                name="query_ln",
                use_bias=False,
                dtype=self.dtype,
                param_dtype=self.param_dtype,
            )(query)
            key = LayerNorm(
                name="key_ln",
                use_bias=False,
                dtype=self.dtype,
                param_dtype=self.param_dtype,
            )(key)
        if self.decode:
            key, value, mask = self._decode(query, key, value, mask)
        rng = None
        if self.dropout_rate > 0.0:
            deterministic = merge_param(
                "deterministic", self.deterministic, deterministic
            )
            if not deterministic and dropout_rng is None:
                rng = self.make_rng("dropout")
            else:
                rng = dropout_rng
        else:
            deterministic = True
        # The module that sows the weights is passed only when asked, as in
        # Flax: an attention_fn of one's own need not take it.
        sow: dict[str, Any] = {"module": self} if sow_weights else {}
        x = self.attention_fn(
            query,
            key,
            value,
            mask=mask,
            dropout_rng=rng,
            dropout_rate=self.dropout_rate,
            broadcast_dropout=self.broadcast_dropout,
            deterministic=deterministic,
            dtype=self.dtype,
            precision=self.precision,
            force_fp32_for_softmax=self.force_fp32_for_softmax,
            **sow,
        )
        return DenseGeneral(
            features=self.out_features or q_in.shape[-1],
            axis=(-2, -1),
            kernel_init=self.out_kernel_init or self.kernel_init,
            bias_init=self.out_bias_init or self.bias_init,
            use_bias=self.use_bias,
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            precision=self.precision,
            name="out",
        )(x)


def make_attention_mask(
    query_input: Any,
    key_input: Any,
    pairwise_fn: Any = tnp.multiply,
    extra_batch_dims: int = 0,
    dtype: DTypeLike = tnp.float32,
) -> Array:
    """An attention mask from per-position values of queries and keys, as
    Flax's: ``pairwise_fn(query[..., :, None], key[..., None, :])`` with a
    head axis of size 1.

    Args:
      query_input: ``(..., q_length)``, e.g. 1 for tokens and 0 for padding.
      key_input: ``(..., kv_length)``.
      pairwise_fn: combines a query value and a key value.
      extra_batch_dims: leading axes of size 1 added.
      dtype: the mask's dtype.

    Returns:
      ``(..., 1, q_length, kv_length)``.

    >>> import typelattice.numpy as tnp
    >>> make_attention_mask(tnp.asarray([1, 1, 0]), tnp.asarray([1, 0])).shape
    (1, 3, 2)
    """
    mask = pairwise_fn(tnp.expand_dims(query_input, -1), tnp.expand_dims(key_input, -2))
    mask = tnp.expand_dims(mask, -3)
    if extra_batch_dims:
        mask = tnp.expand_dims(mask, tuple(range(extra_batch_dims)))
    return tnp.astype(mask, dtype)


def combine_masks(*masks: Any, dtype: DTypeLike = tnp.float32) -> Array | None:
    """Attention masks combined by logical and, as Flax's; ``None`` masks
    are skipped.

    Args:
      *masks: masks of one rank (they broadcast together), or None.
      dtype: the combined mask's dtype.

    Returns:
      The combined mask in ``dtype``, or None when no mask is given.

    Raises:
      ValueError: masks of different ranks.

    >>> import typelattice.numpy as tnp
    >>> combine_masks(tnp.asarray([1, 1, 0]), None, tnp.asarray([True, False, True]))
    Array([1., 0., 0.], dtype=float32)
    """
    given = [tnp.asarray(m) for m in masks if m is not None]
    if not given:
        return None
    ranks = tuple(m.ndim for m in given)
    if len(set(ranks)) != 1:
        raise ValueError(
            f"combine_masks: masks must have the same rank, got ranks {ranks}; "
            "add axes of size 1 (tnp.expand_dims) to broadcast them"
        )
    mask = given[0]
    for other in given[1:]:
        mask = tnp.logical_and(mask, other)
    return tnp.astype(mask, dtype)


def make_causal_mask(
    x: Any, extra_batch_dims: int = 0, dtype: DTypeLike = tnp.float32
) -> Array:
    """The mask letting each position attend to itself and the positions
    before it, as Flax's.

    Args:
      x: ``(..., length)``: only its shape counts.
      extra_batch_dims: leading axes of size 1 added.
      dtype: the mask's dtype.

    Returns:
      ``(..., 1, length, length)``, lower triangular.

    >>> import typelattice.numpy as tnp
    >>> make_causal_mask(tnp.ones((1, 3)))[0, 0]
    Array([[1., 0., 0.],
           [1., 1., 0.],
           [1., 1., 1.]], dtype=float32)
    """
    shape = tuple(tnp.asarray(x).shape)
    positions = tnp.broadcast_to(tnp.arange(shape[-1], dtype="int32"), shape)
    return make_attention_mask(
        positions, positions, tnp.greater_equal, extra_batch_dims, dtype
    )
