"""Normalisation layers: LayerNorm, RMSNorm, GroupNorm, BatchNorm and
InstanceNorm, and the weight normalisations SpectralNorm and WeightNorm
(layers wrapping another layer whose parameters they normalise).

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

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax, random
from typelattice._tracing import tree
from typelattice.nn import _dtypes, initializers
from typelattice.nn._module import Module, compact, field, merge_param
from typelattice.nn._transforms import map_variables
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = [
    "BatchNorm",
    "GroupNorm",
    "InstanceNorm",
    "LayerNorm",
    "RMSNorm",
    "SpectralNorm",
    "WeightNorm",
]


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
    x: Array,
    axes: tuple[int, ...],
    center: bool,
    fast: bool,
    mask: Any = None,
    axis_name: str | None = None,
) -> tuple[Array | None, Array]:
    """The mean (None unless ``center``) and variance (or mean square, when
    not centring) of ``x`` over ``axes``, kept as size-1 axes, in ``x``'s
    dtype, over the elements where ``mask`` (broadcast to ``x``) holds, and
    averaged over the named axis ``axis_name`` (of ``vmap`` or ``pmap``)
    when given. ``fast`` uses ``E|x|² - |E x|²`` (one pass, as Flax's
    ``use_fast_variance``), else ``E|x - E x|²``."""

    def mean_of(v: Array) -> Array:
        m = tnp.mean(v, axis=axes, keepdims=True, where=mask)
        return m if axis_name is None else lax.pmean(m, axis_name)

    if not center:
        return None, mean_of(_abs_sq(x))
    mean = mean_of(x)
    if fast:
        square = mean_of(_abs_sq(x))
        # Rounding can leave E|x|² a hair below |E x|².
        return mean, tnp.maximum(square - _abs_sq(mean), 0)
    return mean, mean_of(_abs_sq(x - mean))


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
      axis_name: the named axis (of ``pmap`` or ``vmap``) over which the
        batch statistics are also averaged, as data parallelism needs (not
        while initialising, which runs outside the mapped function).
      axis_index_groups: not provided (None only).

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
    axis_name: str | None = None
    axis_index_groups: Any = None

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
            if self.axis_index_groups is not None:
                raise NotImplementedError(
                    "BatchNorm(axis_index_groups=...) is not provided: the "
                    "statistics are averaged over the whole named axis "
                    f"{self.axis_name!r}; leave axis_index_groups=None"
                )
            found, var = _moments(
                xs,
                reduction_axes,
                True,
                self.use_fast_variance,
                mask,
                # (not while initialising, as Flax: init runs outside pmap)
                None if self.is_initializing() else self.axis_name,
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


class InstanceNorm(_Norm):
    """Instance normalisation: each example and feature normalised over the
    other non-batch axes (the first axis is the batch), then scaled and
    shifted per feature, as Flax's ``InstanceNorm``.

    Attributes:
      epsilon, dtype, param_dtype, use_bias, use_scale, bias_init,
        scale_init, use_fast_variance: as :class:`LayerNorm`.
      feature_axes: the axes of the features (not the first).
      axis_name, axis_index_groups: statistics averaged over a mapped axis
        are not supported: None only (NotImplementedError otherwise).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> x = tnp.reshape(tnp.arange(8.0), (1, 4, 2))
    >>> layer = nn.InstanceNorm()
    >>> layer.apply(layer.init(random.key(0), x), x)[0, :, 0]
    Array([-1.3416406 , -0.44721353,  0.44721353,  1.3416406 ], dtype=float32)
    """

    epsilon: float = 1e-6
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_bias: bool = True
    use_scale: bool = True
    bias_init: initializers.Initializer = initializers.zeros
    scale_init: initializers.Initializer = initializers.ones
    feature_axes: int | Sequence[int] = -1
    axis_name: str | None = None
    axis_index_groups: Any = None
    use_fast_variance: bool = True

    @compact
    def __call__(self, x: Any, *, mask: Any = None) -> Array:
        """Normalise ``x``.

        Args:
          x: the input, batch first.
          mask: bool, broadcastable to ``x``: the statistics are taken over
            the elements where it holds.

        Returns:
          The normalised input, of ``x``'s shape.

        Raises:
          ValueError: ``feature_axes`` names the first (batch) axis.
          NotImplementedError: ``axis_name`` is given.

        >>> from typelattice import nn
        >>> import typelattice.numpy as tnp
        >>> layer = nn.InstanceNorm(use_scale=False, use_bias=False)
        >>> layer.apply({}, tnp.asarray([[[1.0], [3.0]]]))[0, :, 0]
        Array([-0.9999995,  0.9999995], dtype=float32)
        """
        if self.axis_name is not None or self.axis_index_groups is not None:
            raise NotImplementedError(
                f"InstanceNorm(axis_name={self.axis_name!r}): statistics "
                "averaged over a mapped axis are not supported; leave "
                "axis_name and axis_index_groups unset"
            )
        x, xs = self._prepare(x, self.dtype)
        feature_axes = _axes(self.feature_axes, x.ndim)
        if 0 in feature_axes:
            raise ValueError(
                f"InstanceNorm(feature_axes={self.feature_axes}) names the "
                "first axis, which is the batch axis: give the axes of the "
                "features, e.g. feature_axes=-1"
            )
        reduction_axes = tuple(a for a in range(1, x.ndim) if a not in feature_axes)
        if mask is not None:
            mask = tnp.broadcast_to(tnp.asarray(mask, dtype=bool), xs.shape)
        mean, var = _moments(xs, reduction_axes, True, self.use_fast_variance, mask)
        assert mean is not None
        y = (xs - mean) * _dtypes.cast(_rsqrt(var + self.epsilon), xs.dtype)
        scale, bias, broadcast = self._params(
            x, feature_axes, self.use_scale, self.use_bias
        )
        return self._finish(x, y, scale, bias, broadcast, self.dtype)


def _l2_normalize(x: Array, axis: tuple[int, ...] | None, eps: float) -> Array:
    """``x / sqrt(sum(x²) + eps)`` over ``axis`` (all axes for None)."""
    return x * _rsqrt(tnp.sum(x * x, axis=axis, keepdims=True) + eps)


def _child_name(module: Module) -> str:
    """The name a submodule field was bound under (its ``name``, else the
    field's name)."""
    scope = module._bound_scope()  # pyright: ignore[reportPrivateUsage]
    if scope is not None and scope.path:
        return scope.path[-1]
    return module.name or type(module).__name__


def _leaf_path(path: tuple[Any, ...]) -> str:
    """``'kernel'``, ``'Dense_0/kernel'``: a variable's path in its
    collection (the collection's key left out)."""
    return tree.keystr(path[1:], simple=True, separator="/")


class SpectralNorm(Module):
    """Spectral normalisation of a layer's weights, as Flax's
    ``SpectralNorm``: each parameter of two or more axes (reshaped to a
    matrix over its last axis) is divided by its largest singular value,
    estimated by power iteration. The iteration's vector ``u`` and the
    estimate ``sigma`` are kept in ``collection_name`` (``'batch_stats'``)
    under ``<layer>/<parameter>/u`` and ``.../sigma``; they change only with
    ``update_stats=True`` and that collection mutable.

    Attributes:
      layer_instance: the layer whose parameters are normalised.
      n_steps: power-iteration steps per call.
      epsilon: added in the vector normalisations.
      dtype: the normalised parameters' dtype; None: the promotion of the
        parameter and the iteration's vectors.
      param_dtype: the dtype of ``u`` and ``sigma``.
      error_on_non_matrix: raise for a parameter of more than two axes
        (else it is reshaped to a matrix).
      collection_name: where ``u`` and ``sigma`` are kept.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.SpectralNorm(nn.Dense(3))
    >>> x = tnp.ones((2, 4))
    >>> variables = layer.init(random.key(0), x, update_stats=True)
    >>> sorted(variables['batch_stats'])
    ['layer_instance/kernel/sigma', 'layer_instance/kernel/u']
    >>> y, updates = layer.apply(variables, x, update_stats=True,
    ...                          mutable=['batch_stats'])
    >>> y.shape
    (2, 3)
    """

    layer_instance: Module
    n_steps: int = 1
    epsilon: float = 1e-12
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    error_on_non_matrix: bool = False
    collection_name: str = "batch_stats"

    @compact
    def __call__(self, *args: Any, update_stats: bool, **kwargs: Any) -> Any:
        """Run the layer with its parameters spectrally normalised.

        Args:
          *args: the layer's inputs.
          update_stats: store this call's power-iteration state.
          **kwargs: the layer's keyword arguments.

        Returns:
          The layer's output.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.SpectralNorm(nn.Dense(2), n_steps=10)
        >>> x = tnp.eye(3)
        >>> v = layer.init(random.key(0), x, update_stats=True)
        >>> y = layer.apply(v, x, update_stats=False)
        >>> import numpy as np  # x is the identity: y - bias is the kernel used
        >>> w = np.asarray(y - v['params']['layer_instance']['bias'])
        >>> round(float(np.linalg.svd(w)[1][0]), 4)  # its largest singular value
        1.0
        """
        name = _child_name(self.layer_instance)

        def normalize_all(variables: dict[str, Any]) -> dict[str, Any]:
            leaves, treedef = tree.flatten_with_path(variables)
            done = [
                self._normalize(name, _leaf_path(path), value, update_stats)
                for path, value in leaves
            ]
            return tree.unflatten(treedef, done)  # type: ignore[no-any-return]

        def forward(layer: Any) -> Any:
            return layer(*args, **kwargs)

        run: Callable[[Any], Any] = map_variables(
            forward,
            trans_in_fn=normalize_all,
            init=self.is_initializing(),
            mutable=True,
        )
        return run(self.layer_instance)

    def _normalize(self, layer: str, path: str, vs: Any, update_stats: bool) -> Array:
        value = _dtypes.as_input(vs)
        shape = value.shape
        if value.ndim <= 1 or self.n_steps < 1:
            return value
        if value.ndim > 2:
            if self.error_on_non_matrix:
                raise ValueError(
                    f"SpectralNorm: the parameter {layer}/{path} has "
                    f"{value.ndim} axes ({shape}) and error_on_non_matrix=True; "
                    "pass error_on_non_matrix=False to normalise it as a "
                    "matrix over its last axis"
                )
            value = tnp.reshape(value, (-1, shape[-1]))
        u_name = f"{layer}/{path}/u"
        sigma_name = f"{layer}/{path}/sigma"
        col = self.collection_name
        key = None if self.has_variable(col, u_name) else self.make_rng("params")
        u_var = self.variable(
            col, u_name, random.normal, key, (1, value.shape[-1]), self.param_dtype
        )
        sigma_var = self.variable(col, sigma_name, tnp.ones, (), self.param_dtype)
        u0 = u_var.value
        v0 = u0
        for _ in range(self.n_steps):
            v0 = _l2_normalize(tnp.matmul(u0, value.T), None, self.epsilon)
            u0 = _l2_normalize(tnp.matmul(v0, value), None, self.epsilon)
        u0 = lax.stop_gradient(u0)
        v0 = lax.stop_gradient(v0)
        sigma = tnp.matmul(tnp.matmul(v0, value), u0.T)[0, 0]
        value = value / tnp.where(sigma != 0, sigma, 1)
        if update_stats:
            u_var.value = u0
            sigma_var.value = sigma
        out = _dtypes.compute_dtype(
            _dtypes.as_input(vs), u0, v0, sigma, dtype=self.dtype, where="SpectralNorm"
        )
        return _dtypes.cast(tnp.reshape(value, shape), out)


class WeightNorm(Module):
    """Weight normalisation of a layer's parameters, as Flax's
    ``WeightNorm``: each parameter whose path contains a name of
    ``variable_filter`` is divided by its L2 norm over the axes other than
    ``feature_axes`` and multiplied by a learned ``scale`` (a parameter of
    this module named ``<layer>/<parameter>/scale``).

    Attributes:
      layer_instance: the layer whose parameters are normalised.
      epsilon: added to the squared norm.
      dtype: the normalised parameters' dtype; None: the promotion of the
        parameter and the scale.
      param_dtype: the scale's dtype.
      use_scale: learn a scale (else the parameters have unit norm).
      scale_init: the scale's initialiser.
      feature_axes: the axes kept (None: the norm over all axes).
      variable_filter: the names a parameter's path must contain (None or
        empty: every parameter).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.WeightNorm(nn.Dense(3))
    >>> variables = layer.init(random.key(0), tnp.ones((2, 4)))
    >>> {k: v.shape for k, v in variables['params'].items() if k != 'layer_instance'}
    {'layer_instance/kernel/scale': (3,)}
    """

    layer_instance: Module
    epsilon: float = 1e-12
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    use_scale: bool = True
    scale_init: initializers.Initializer = initializers.ones
    feature_axes: int | Sequence[int] | None = -1
    variable_filter: Iterable[str] | None = dataclasses.field(
        default_factory=lambda: frozenset({"kernel"})
    )

    @compact
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the layer with its parameters weight-normalised.

        Args:
          *args: the layer's inputs.
          **kwargs: the layer's keyword arguments.

        Returns:
          The layer's output.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.WeightNorm(nn.Dense(1, use_bias=False))
        >>> x = tnp.eye(2)
        >>> layer.apply(layer.init(random.key(0), x), x)  # a unit-norm kernel
        ... # doctest: +ELLIPSIS
        Array([[...],
               [...]], dtype=float32)
        """
        name = _child_name(self.layer_instance)

        def normalize_all(variables: dict[str, Any]) -> dict[str, Any]:
            leaves, treedef = tree.flatten_with_path(variables)
            done = [
                self._normalize(f"{name}/{_leaf_path(path)}", value)
                for path, value in leaves
            ]
            return tree.unflatten(treedef, done)  # type: ignore[no-any-return]

        def forward(layer: Any) -> Any:
            return layer(*args, **kwargs)

        run: Callable[[Any], Any] = map_variables(
            forward, trans_in_fn=normalize_all, init=self.is_initializing()
        )
        return run(self.layer_instance)

    def _normalize(self, path: str, vs: Any) -> Array:
        value = _dtypes.as_input(vs)
        if self.variable_filter and not any(n in path for n in self.variable_filter):
            return value
        if self.feature_axes is None:
            feature_axes: tuple[int, ...] = ()
        else:
            feature_axes = _axes(self.feature_axes, value.ndim)
        reduction_axes = tuple(a for a in range(value.ndim) if a not in feature_axes)
        broadcast = tuple(
            value.shape[a] if a in feature_axes else 1 for a in range(value.ndim)
        )
        normalized = _l2_normalize(value, reduction_axes, self.epsilon)
        operands = [value]
        if self.use_scale:
            scale = self.param(
                f"{path}/scale",
                self.scale_init,
                tuple(value.shape[a] for a in feature_axes),
                self.param_dtype,
            )
            scale = tnp.reshape(scale, broadcast)
            operands.append(scale)
            normalized = normalized * scale
        out = _dtypes.compute_dtype(*operands, dtype=self.dtype, where="WeightNorm")
        return _dtypes.cast(normalized, out)
