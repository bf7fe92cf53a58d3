"""Normalisation layers: LayerNorm, RMSNorm, GroupNorm and BatchNorm.

Dtypes (the FLIP): statistics are computed in ``promote_types(dtype or the
input's dtype, float32)``, at least float32 whatever the compute dtype; the
output is ``dtype``, else the promotion of the input and the parameters.
Every cast is an explicit ``astype``, so with ``dtype`` given the layers run
under ``dtype_promotion('strict')`` (Flax raises there). For complex input
the variance is the mean of ``re² + im²``, real, as the FLIP asks. BatchNorm
keeps its running statistics in the statistics dtype from creation on (Flax
creates float32 ones whose dtype changes with the first update).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.nn import _dtypes, initializers
from typelattice.nn._module import Module, compact, field, merge_param
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = ["BatchNorm", "GroupNorm", "LayerNorm", "RMSNorm"]


def _axes(axes: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    items = (axes,) if isinstance(axes, int) else tuple(axes)
    return tuple(sorted(a % ndim for a in items))


def _real_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return tl.finfo(dtype).dtype if _dtypes.is_complex(dtype) else dtype


def _rsqrt(x: Array) -> Array:
    # typelattice.numpy has no rsqrt; typelattice.lax's is not traced yet.
    return 1 / tnp.sqrt(x)


def _abs_sq(x: Array) -> Array:
    """``|x|²``, real: ``re² + im²`` for complex ``x``."""
    if _dtypes.is_complex(x.dtype):
        re, im = tnp.real(x), tnp.imag(x)
        return re * re + im * im
    return x * x


def _moments(
    x: Array, axes: tuple[int, ...], center: bool, fast: bool, mask: Any = None
) -> tuple[Array | None, Array]:
    """The mean (None unless ``center``) and variance (or mean square, when
    not centring) of ``x`` over ``axes``, kept as size-1 axes, in ``x``'s
    dtype, over the elements where ``mask`` (broadcast to ``x``) holds.
    ``fast`` uses ``E|x|² - |E x|²`` (one pass, as Flax's
    ``use_fast_variance``), else ``E|x - E x|²``."""
    if not center:
        return None, tnp.mean(_abs_sq(x), axis=axes, keepdims=True, where=mask)
    mean = tnp.mean(x, axis=axes, keepdims=True, where=mask)
    if fast:
        square = tnp.mean(_abs_sq(x), axis=axes, keepdims=True, where=mask)
        # Rounding can leave E|x|² a hair below |E x|².
        return mean, tnp.maximum(square - _abs_sq(mean), 0)
    return mean, tnp.mean(_abs_sq(x - mean), axis=axes, keepdims=True, where=mask)


class _Norm(Module):
    """What the normalisation layers share: parameters over feature axes and
    the final scale, shift and cast."""

    def _params(
        self, x: Array, feature_axes: tuple[int, ...], use_scale: bool, use_bias: bool
    ) -> tuple[Array | None, Array | None, tuple[int, ...]]:
        shape = tuple(x.shape[a] for a in feature_axes)
        broadcast = tuple(x.shape[a] if a in feature_axes else 1 for a in range(x.ndim))
        param_dtype = field(self, "param_dtype")
        scale = (
            self.param("scale", field(self, "scale_init"), shape, param_dtype)
            if use_scale
            else None
        )
        bias = (
            self.param("bias", field(self, "bias_init"), shape, param_dtype)
            if use_bias
            else None
        )
        return scale, bias, broadcast

    def _finish(
        self,
        x: Array,
        y: Array,
        scale: Array | None,
        bias: Array | None,
        broadcast: tuple[int, ...],
        dtype: DTypeLike | None,
    ) -> Array:
        """``y * scale + bias`` in y's (statistics) dtype, cast to the output
        dtype: ``dtype``, else the promotion of x, scale and bias."""
        out = _dtypes.compute_dtype(
            x, scale, bias, dtype=dtype, where=type(self).__name__
        )
        if scale is not None:
            y = y * _dtypes.cast(tnp.reshape(scale, broadcast), y.dtype)
        if bias is not None:
            y = y + _dtypes.cast(tnp.reshape(bias, broadcast), y.dtype)
        return _dtypes.cast(y, out)

    def _prepare(self, inputs: Any, dtype: DTypeLike | None) -> tuple[Array, Array]:
        """The input, and the input cast to the statistics dtype (raising
        first for a complex input with a real ``dtype``)."""
        x = _dtypes.as_input(inputs)
        _dtypes.compute_dtype(x, dtype=dtype, where=type(self).__name__)
        return x, _dtypes.cast(x, _dtypes.stats_dtype(x, dtype))


class LayerNorm(_Norm):
    """Layer normalisation: each example rescaled to zero mean and unit
    variance over ``reduction_axes``, then scaled and shifted per feature.

    Attributes:
      epsilon: added to the variance.
      dtype: the output dtype; None: the promotion of the input and the
        parameters. Statistics are computed in at least float32 either way.
      param_dtype: the parameters' dtype.
      use_bias: whether to learn a shift (``bias``).
      use_scale: whether to learn a scale (``scale``).
      bias_init: initialiser of the shift.
      scale_init: initialiser of the scale.
      reduction_axes: the axes the statistics run over.
      feature_axes: the axes the parameters run over.
      use_fast_variance: ``E x² - (E x)²`` in one pass (else two passes).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[1.0, 2.0, 3.0, 6.0]], dtype='bfloat16')
    >>> layer = nn.LayerNorm(dtype='bfloat16')
    >>> layer.apply(layer.init(random.key(0), x), x)
    Array([[-1.07031, -0.535156, 0, 1.60156]], dtype=bfloat16)
    """

    epsilon: float = 1e-6
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: initializers.Initializer = initializers.zeros
    scale_init: initializers.Initializer = initializers.ones
    reduction_axes: int | Sequence[int] = -1
    feature_axes: int | Sequence[int] = -1
    use_fast_variance: bool = True

    @compact
    def __call__(self, x: Any) -> Array:
        """Normalise ``x``.

        Args:
          x: the input.

        Returns:
          The normalised input, of ``x``'s shape.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.LayerNorm(use_scale=False, use_bias=False)
        >>> layer.apply({}, tnp.asarray([1.0, 3.0]))
        Array([-0.9999995,  0.9999995], dtype=float32)
        """
        x, xs = self._prepare(x, self.dtype)
        mean, var = _moments(
            xs, _axes(self.reduction_axes, x.ndim), True, self.use_fast_variance
        )
        assert mean is not None
        y = (xs - mean) * _dtypes.cast(_rsqrt(var + self.epsilon), xs.dtype)
        scale, bias, broadcast = self._params(
            x, _axes(self.feature_axes, x.ndim), self.use_scale, self.use_bias
        )
        return self._finish(x, y, scale, bias, broadcast, self.dtype)


class RMSNorm(_Norm):
    """Root-mean-square normalisation: ``x / sqrt(mean(|x|²) + epsilon)``
    over ``reduction_axes``, then scaled per feature (no centring, no bias).

    Attributes:
      epsilon: added to the mean square.
      dtype, param_dtype, use_scale, scale_init, reduction_axes,
        feature_axes: as :class:`LayerNorm`.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[3.0, 4.0]])
    >>> layer = nn.RMSNorm()
    >>> layer.apply(layer.init(random.key(0), x), x)
    Array([[0.8485281, 1.1313708]], dtype=float32)
    """

    epsilon: float = 1e-6
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_scale: bool = True
    scale_init: initializers.Initializer = initializers.ones
    reduction_axes: int | Sequence[int] = -1
    feature_axes: int | Sequence[int] = -1

    @compact
    def __call__(self, x: Any) -> Array:
        """Normalise ``x``.

        Args:
          x: the input.

        Returns:
          The normalised input, of ``x``'s shape.

        >>> from typelattice import nn
        >>> import typelattice.numpy as tnp
        >>> nn.RMSNorm(use_scale=False).apply({}, tnp.asarray([1, 1, 1, 1]))
        Array([0.9999995, 0.9999995, 0.9999995, 0.9999995], dtype=float32)
        """
        x, xs = self._prepare(x, self.dtype)
        _, ms = _moments(xs, _axes(self.reduction_axes, x.ndim), False, True)
        y = xs * _dtypes.cast(_rsqrt(ms + self.epsilon), xs.dtype)
        scale, _, broadcast = self._params(
            x, _axes(self.feature_axes, x.ndim), self.use_scale, False
        )
        return self._finish(x, y, scale, None, broadcast, self.dtype)


class GroupNorm(_Norm):
    """Group normalisation: the channels (last axis) split into groups,
    each normalised over all non-batch axes, then scaled and shifted per
    channel.

    Attributes:
      num_groups: the number of groups (None when ``group_size`` is given).
      group_size: the channels per group (instead of ``num_groups``).
      epsilon, dtype, param_dtype, use_bias, use_scale, bias_init,
        scale_init, use_fast_variance: as :class:`LayerNorm`.
      reduction_axes: the axes the statistics run over (default: all but
        the first).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> x = tnp.reshape(tnp.arange(8.0), (1, 2, 4))
    >>> layer = nn.GroupNorm(num_groups=2)
    >>> layer.apply(layer.init(random.key(0), x), x)[0, 0]
    Array([-1.2126781 , -0.72760683, -1.2126781 , -0.72760683], dtype=float32)
    """

    num_groups: int | None = 32
    group_size: int | None = None
    epsilon: float = 1e-6
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: initializers.Initializer = initializers.zeros
    scale_init: initializers.Initializer = initializers.ones
    reduction_axes: int | Sequence[int] | None = None
    use_fast_variance: bool = True

    @compact
    def __call__(self, x: Any) -> Array:
        """Normalise ``x``.

        Args:
          x: the input, channels last.

        Returns:
          The normalised input, of ``x``'s shape.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.GroupNorm(num_groups=None, group_size=1)
        >>> x = tnp.ones((2, 5, 3))
        >>> layer.apply(layer.init(random.key(0), x), x).shape
        (2, 5, 3)
        """
        x, xs = self._prepare(x, self.dtype)
        channels = x.shape[-1]
        if (self.num_groups is None) == (self.group_size is None):
            raise ValueError(
                "GroupNorm needs exactly one of num_groups and group_size, got "
                f"num_groups={self.num_groups}, group_size={self.group_size}"
            )
        groups = self.num_groups or channels // (self.group_size or 1)
        if groups <= 0 or channels % groups:
            raise ValueError(
                f"GroupNorm: {channels} channels do not split into "
                f"{self.num_groups or groups} groups"
                + (f" of {self.group_size}" if self.group_size else "")
                + "; pick num_groups dividing the last axis"
            )
        grouped = tnp.reshape(xs, (*x.shape[:-1], groups, channels // groups))
        if self.reduction_axes is None:
            axes = (*range(1, x.ndim - 1), x.ndim)
        else:
            # Given on x: the channel axis becomes the in-group axis.
            axes = tuple(
                a if a < x.ndim - 1 else x.ndim
                for a in _axes(self.reduction_axes, x.ndim)
            )
        mean, var = _moments(grouped, axes, True, self.use_fast_variance)
        assert mean is not None
        y = (grouped - mean) * _dtypes.cast(_rsqrt(var + self.epsilon), xs.dtype)
        y = tnp.reshape(y, x.shape)
        scale, bias, broadcast = self._params(
            x, (x.ndim - 1,), self.use_scale, self.use_bias
        )
        return self._finish(x, y, scale, bias, broadcast, self.dtype)


class BatchNorm(_Norm):
    """Batch normalisation: features normalised over the batch (every axis
    but ``axis``) in training, with running statistics kept in the
    ``'batch_stats'`` collection for evaluation.

    Attributes:
      use_running_average: normalise with the running statistics (evaluate)
        instead of the batch's (train); may be given at call time instead.
      axis: the feature axis.
      momentum: the running statistics' decay.
      epsilon, dtype, param_dtype, use_bias, use_scale, bias_init,
        scale_init, use_fast_variance: as :class:`LayerNorm`. The running
        statistics are created and kept in the statistics dtype (at least
        float32; for complex input a complex mean and a real variance).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([[0.0, 1.0], [2.0, 5.0]])
    >>> layer = nn.BatchNorm(use_running_average=False)
    >>> variables = layer.init(random.key(0), x)
    >>> y, updates = layer.apply(variables, x, mutable=['batch_stats'])
    >>> updates['batch_stats']['mean']
    Array([0.01, 0.03], dtype=float32)
    """

    use_running_average: bool | None = None
    axis: int = -1
    momentum: float = 0.99
    epsilon: float = 1e-5
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: initializers.Initializer = initializers.zeros
    scale_init: initializers.Initializer = initializers.ones
    use_fast_variance: bool = True

    @compact
    def __call__(
        self, x: Any, use_running_average: bool | None = None, *, mask: Any = None
    ) -> Array:
        """Normalise ``x`` and, in training, update the running statistics
        (pass ``mutable=['batch_stats']`` to ``apply``).

        Args:
          x: the input.
          use_running_average: as the attribute (give it in one place).
          mask: bool, broadcastable to ``x``: the statistics are taken over
            the elements where it holds (as Flax); every element is
            normalised.

        Returns:
          The normalised input.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.BatchNorm()
        >>> v = layer.init(random.key(0), tnp.ones((4, 3)), use_running_average=True)
        >>> layer.apply(v, tnp.ones((4, 3)), use_running_average=True).shape
        (4, 3)
        """
        running = merge_param(
            "use_running_average", self.use_running_average, use_running_average
        )
        x, xs = self._prepare(x, self.dtype)
        feature_axes = _axes(self.axis, x.ndim)
        reduction_axes = tuple(a for a in range(x.ndim) if a not in feature_axes)
        feature_shape = tuple(x.shape[a] for a in feature_axes)
        broadcast = tuple(x.shape[a] if a in feature_axes else 1 for a in range(x.ndim))
        stats = xs.dtype
        ra_mean = self.variable("batch_stats", "mean", tnp.zeros, feature_shape, stats)
        ra_var = self.variable(
            "batch_stats", "var", tnp.ones, feature_shape, _real_dtype(stats)
        )
        if running:
            mean = tnp.reshape(_dtypes.cast(ra_mean.value, stats), broadcast)
            var = tnp.reshape(_dtypes.cast(ra_var.value, _real_dtype(stats)), broadcast)
        else:
            if mask is not None:
                mask = tnp.broadcast_to(tnp.asarray(mask, dtype=bool), xs.shape)
            found, var = _moments(
                xs, reduction_axes, True, self.use_fast_variance, mask
            )
            assert found is not None
            mean = found
            if not self.is_initializing():
                m = self.momentum
                ra_mean.value = m * ra_mean.value + (1 - m) * tnp.reshape(
                    mean, feature_shape
                )
                ra_var.value = m * ra_var.value + (1 - m) * tnp.reshape(
                    var, feature_shape
                )
        y = (xs - mean) * _dtypes.cast(_rsqrt(var + self.epsilon), stats)
        scale, bias, _ = self._params(x, feature_axes, self.use_scale, self.use_bias)
        return self._finish(x, y, scale, bias, broadcast, self.dtype)
