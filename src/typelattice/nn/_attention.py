"""Attention: dot_product_attention(_weights) and
MultiHeadDotProductAttention, as Flax linen's.

Dtypes: query, key and value are promoted together (or cast to ``dtype``);
the softmax runs in that dtype unless ``force_fp32_for_softmax`` asks for
float32 (the weights are cast back). Complex input raises TypeError: the
FLIP leaves the softmax of complex scores undefined (Flax computes one).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
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
    "MultiHeadAttention",
    "combine_masks",
    "MultiHeadDotProductAttention",
    "SelfAttention",
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


def _no_dot_general(where: str, dot_general: Any) -> None:
    """A custom ``dot_general`` (quantised matrix products) cannot be
    honoured: refuse it rather than compute something else."""
    if dot_general is not None:
        raise NotImplementedError(
            f"{where}: a custom dot_general ({dot_general!r}) is not supported; "
            "leave it unset (the products run as einsum), or pass an einsum "
            "function of your own where one is accepted"
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
    einsum_dot_general: Any = None,
    einsum: Callable[..., Any] | None = None,
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
      einsum_dot_general: a custom ``dot_general``: not supported (None
        only).
      einsum: the function computing the scores, called as
        ``einsum('...qhd,...khd->...hqk', query, key)`` (default
        :func:`typelattice.numpy.einsum`).

    Returns:
      ``(..., heads, q_length, kv_length)``.

    Raises:
      NotImplementedError: ``einsum_dot_general`` is given.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> q = tnp.ones((2, 3, 4, 8), dtype='bfloat16')
    >>> w = nn.dot_product_attention_weights(q, q)
    >>> w.shape, w.dtype
    ((2, 4, 3, 3), dtype(bfloat16))
    """
    _no_dot_general("dot_product_attention_weights", einsum_dot_general)
    q, k = _dtypes.as_input(query), _dtypes.as_input(key)
    _real("dot_product_attention_weights", q, k)
    q, k = _dtypes.promote(q, k, dtype=dtype, where="dot_product_attention_weights")
    assert q is not None and k is not None
    compute = q.dtype
    q = q / math.sqrt(q.shape[-1])
    weights = (einsum or tnp.einsum)("...qhd,...khd->...hqk", q, k)
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
    einsum_dot_general: Any = None,
    qk_attn_weights_einsum: Callable[..., Any] | None = None,
    attn_weights_value_einsum: Callable[..., Any] | None = None,
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
      einsum_dot_general: a custom ``dot_general``: not supported (None
        only).
      qk_attn_weights_einsum: the einsum computing the scores (as
        ``einsum`` of :func:`dot_product_attention_weights`).
      attn_weights_value_einsum: the einsum averaging the values, called
        as ``f('...hqk,...khd->...qhd', weights, value)``; given together
        with ``qk_attn_weights_einsum``.

    Returns:
      ``(..., q_length, heads, v_depth)``.

    Raises:
      ValueError: only one of the two einsum functions is given.
      NotImplementedError: ``einsum_dot_general`` is given.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> q = tnp.ones((2, 3, 4, 8))
    >>> nn.dot_product_attention(q, q, q).shape
    (2, 3, 4, 8)
    """
    _no_dot_general("dot_product_attention", einsum_dot_general)
    if (qk_attn_weights_einsum is None) != (attn_weights_value_einsum is None):
        raise ValueError(
            "dot_product_attention: qk_attn_weights_einsum and "
            "attn_weights_value_einsum are given together (or neither)"
        )
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
        einsum=qk_attn_weights_einsum,
    )
    combine = attn_weights_value_einsum or tnp.einsum
    return combine("...hqk,...khd->...qhd", weights, v)


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
      qkv_dot_general, out_dot_general, qkv_dot_general_cls,
        out_dot_general_cls: custom matrix products of the projections:
        not supported (None only; NotImplementedError otherwise).
      qk_attn_weights_einsum_cls, attn_weights_value_einsum_cls: factories
        of the two einsum functions given to ``attention_fn``.

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
    qkv_dot_general: Any = None
    out_dot_general: Any = None
    qkv_dot_general_cls: Any = None
    out_dot_general_cls: Any = None
    qk_attn_weights_einsum_cls: Callable[[], Callable[..., Any]] | None = None
    attn_weights_value_einsum_cls: Callable[[], Callable[..., Any]] | None = None

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
        where = type(self).__name__
        for given in (
            self.qkv_dot_general,
            self.out_dot_general,
            self.qkv_dot_general_cls,
            self.out_dot_general_cls,
        ):
            _no_dot_general(where, given)
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
        qk_einsum = (
            self.qk_attn_weights_einsum_cls()
            if self.qk_attn_weights_einsum_cls
            else None
        )
        value_einsum = (
            self.attn_weights_value_einsum_cls()
            if self.attn_weights_value_einsum_cls
            else None
        )
        options: dict[str, Any] = {
            "mask": mask,
            "dropout_rng": rng,
            "dropout_rate": self.dropout_rate,
            "broadcast_dropout": self.broadcast_dropout,
            "deterministic": deterministic,
            "dtype": self.dtype,
            "precision": self.precision,
            "force_fp32_for_softmax": self.force_fp32_for_softmax,
            "qk_attn_weights_einsum": qk_einsum,
            "attn_weights_value_einsum": value_einsum,
        }
        # As Flax: an attention_fn of one's own gets the options it names
        # (all of them when it takes **kwargs); the module that sows the
        # weights only when asked.
        options = _accepted(self.attention_fn, options)
        if sow_weights:
            options["module"] = self
        x = self.attention_fn(query, key, value, **options)
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


def _accepted(fn: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The ``options`` that ``fn`` takes by name."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # (no signature: pass everything)
        return options
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return options
    return {k: v for k, v in options.items() if k in params}


class MultiHeadAttention(MultiHeadDotProductAttention):
    """:class:`MultiHeadDotProductAttention` under another name, as Flax's
    alias: its default submodule name is ``MultiHeadAttention_<n>``.

    Attributes:
      num_heads, dtype, param_dtype, qkv_features, out_features, ...: as
        :class:`MultiHeadDotProductAttention`.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.MultiHeadAttention(num_heads=2, qkv_features=4)
    >>> x = tnp.ones((1, 3, 4))
    >>> layer.apply(layer.init(random.key(0), x), x).shape
    (1, 3, 4)
    """


class SelfAttention(MultiHeadDotProductAttention):
    """Self-attention: :class:`MultiHeadDotProductAttention` with keys and
    values from the queries' input. Deprecated, as in Flax: call
    ``MultiHeadDotProductAttention(...)(x)`` instead (each call warns).

    Attributes:
      num_heads, dtype, param_dtype, qkv_features, out_features, ...: as
        :class:`MultiHeadDotProductAttention`.

    >>> import warnings
    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.SelfAttention(num_heads=2, qkv_features=4)
    >>> x = tnp.ones((1, 3, 4))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore', DeprecationWarning)
    ...     layer.apply(layer.init(random.key(0), x), x).shape
    (1, 3, 4)
    """

    @compact
    def __call__(  # type: ignore[override]
        self,
        inputs_q: Any,
        mask: Any = None,
        deterministic: bool | None = None,
        dropout_rng: Array | None = None,
        sow_weights: bool = False,
    ) -> Array:
        """Attend from ``inputs_q`` to itself.

        Args:
          inputs_q: ``(..., length, features)``.
          mask, deterministic, dropout_rng, sow_weights: as
            :meth:`MultiHeadDotProductAttention.__call__`.

        Returns:
          ``(..., length, out_features)``.

        >>> import warnings
        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> x = tnp.ones((2, 4))
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter('always')
        ...     _ = nn.SelfAttention(num_heads=1).init(random.key(0), x)
        >>> caught[0].category.__name__
        'DeprecationWarning'
        """
        warnings.warn(
            "SelfAttention is deprecated: call "
            "MultiHeadDotProductAttention(...)(inputs_q), which attends from "
            "the queries' input to itself",
            DeprecationWarning,
            stacklevel=2,
        )
        return super().__call__(
            inputs_q,
            mask=mask,
            deterministic=deterministic,
            dropout_rng=dropout_rng,
            sow_weights=sow_weights,
        )


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
