"""Convolutions: Conv, ConvTranspose and ConvLocal (unshared weights),
channels last, any number of spatial dimensions, as Flax linen's.

A convolution here is im2col: the (padded, dilated) input's windows are
gathered by strided slices, one per kernel position, and multiplied with
the kernel flattened to a matrix; one matmul does the work. A transposed
convolution is the same with the strides moved onto the input (``lhs``
dilation) and the padding of ``jax.lax.conv_transpose``. Dtypes: input,
kernel and bias promote together (or are cast to ``dtype``), as in Dense.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typelattice.numpy as tnp
from typelattice.nn import _dtypes, initializers
from typelattice.nn._linear import default_kernel_init
from typelattice.nn._module import Module, compact, field
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = ["Conv", "ConvLocal", "ConvTranspose"]

PaddingLike = str | int | Sequence[int | tuple[int, int]]
Pairs = list[tuple[int, int]]


def _tuple(value: None | int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    if value is None:
        return (1,) * n
    if isinstance(value, int):
        return (value,) * n
    out = tuple(value)
    if len(out) != n:
        raise ValueError(
            f"{name}={out} has {len(out)} entries for a {n}-d kernel; give one "
            "per spatial dimension (or a single int)"
        )
    return out


def _explicit(padding: PaddingLike, n: int) -> Pairs | str:
    """Padding as (low, high) pairs, or the name of a rule ('SAME'...)."""
    if isinstance(padding, str):
        rule = padding.upper()
        if rule not in ("SAME", "VALID", "CAUSAL", "CIRCULAR"):
            raise ValueError(
                f"padding={padding!r} is not one of 'SAME', 'VALID', 'CAUSAL', "
                "'CIRCULAR', an int, or (low, high) pairs"
            )
        return rule
    if isinstance(padding, int):
        return [(padding, padding)] * n
    pairs = [(p, p) if isinstance(p, int) else (int(p[0]), int(p[1])) for p in padding]
    if len(pairs) != n:
        raise ValueError(
            f"padding has {len(pairs)} entries for a {n}-d kernel; give one "
            "(low, high) pair per spatial dimension"
        )
    return pairs


def _wrap(x: Array, pads: Pairs) -> Array:
    """``x`` (batch, spatial..., channels) padded periodically: each spatial
    axis extended by its last ``low`` and first ``high`` elements."""
    for axis, (low, high) in enumerate(pads, start=1):
        size = x.shape[axis]
        if low > size or high > size:
            raise ValueError(
                f"padding='CIRCULAR' wraps at most the input's size ({size}) per "
                f"side; this window needs {max(low, high)}"
            )
        parts: list[Array] = []
        if low:
            parts.append(tnp.take(x, tnp.arange(size - low, size), axis=axis))
        parts.append(x)
        if high:
            parts.append(tnp.take(x, tnp.arange(high), axis=axis))
        x = tnp.concatenate(parts, axis=axis) if len(parts) > 1 else x
    return x


def _conv_pads(
    rule: Pairs | str,
    sizes: Sequence[int],
    windows: Sequence[int],
    strides: Sequence[int],
) -> Pairs:
    """The (low, high) padding of a forward convolution, as XLA's rules:
    'SAME' keeps ``ceil(size / stride)`` outputs, padding evenly (the extra
    one high); 'CAUSAL' (1-d) pads only before."""
    if not isinstance(rule, str):
        return rule
    if rule == "VALID":
        return [(0, 0)] * len(sizes)
    if rule == "CAUSAL":
        if len(sizes) != 1:
            raise ValueError("padding='CAUSAL' is for 1-d convolutions")
        return [(windows[0] - 1, 0)]
    pads: Pairs = []
    for size, window, stride in zip(sizes, windows, strides, strict=True):
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def _transpose_pads(
    rule: Pairs | str, windows: Sequence[int], strides: Sequence[int]
) -> Pairs:
    """The padding ``jax.lax.conv_transpose`` gives the dilated input, per
    dimension, from the forward convolution's padding."""
    pads: Pairs = []
    for i, (k, s) in enumerate(zip(windows, strides, strict=True)):
        if rule == "SAME":
            length = k + s - 2
            low = k - 1 if s > k - 1 else -(-length // 2)
        elif rule == "VALID":
            length = k + s - 2 + max(k - s, 0)
            low = k - 1
        elif isinstance(rule, list):
            lo, hi = rule[i]
            low, length = k - lo - 1, (k - lo - 1) + (k - hi - 1)
        else:
            raise ValueError(f"ConvTranspose does not support padding={rule!r}")
        pads.append((low, length - low))
    return pads


def _fold(y: Array, periods: Sequence[int], transpose_kernel: bool) -> Array:
    """The output of a 'VALID' transposed convolution wrapped around onto
    ``periods`` (input size × stride) per spatial axis, as Flax's 'CIRCULAR'
    padding: zeros bring each axis to an odd number of periods, placed so the
    input's start falls on a period boundary, and the periods are summed."""
    n = y.ndim
    for axis, period in enumerate(periods, start=1):
        extra = -(y.shape[axis] - period) % (2 * period)
        # The odd element goes low, aligning even kernels as Conv does; with
        # transpose_kernel it goes high, mirroring Conv, so that the layer is
        # Conv's exact transpose on the same kernel.
        low = extra // 2 if transpose_kernel else (extra + 1) // 2
        config = [(0, 0, 0)] * n
        config[axis] = (low, extra - low, 0)
        y = _pad(y, config)
        shape = (*y.shape[:axis], y.shape[axis] // period, period, *y.shape[axis + 1 :])
        y = tnp.sum(tnp.reshape(y, shape), axis=axis)
    return y


def _pad(x: Array, config: Sequence[tuple[int, int, int]]) -> Array:
    """``lax.pad`` with zeros, from typelattice.numpy operations (traced by
    jit): per axis (low, high, interior), negative low/high cropping."""
    for axis, (low, high, interior) in enumerate(config):
        if interior:
            # Interleave: each element followed by `interior` zeros, the
            # trailing ones dropped.
            n = x.shape[axis]
            spaced = tnp.concatenate(
                [
                    tnp.expand_dims(x, axis + 1),
                    tnp.zeros(
                        (*x.shape[: axis + 1], interior, *x.shape[axis + 1 :]), x.dtype
                    ),
                ],
                axis=axis + 1,
            )
            shape = (*x.shape[:axis], n * (interior + 1), *x.shape[axis + 1 :])
            x = tnp.reshape(spaced, shape)
            keep = (slice(None),) * axis + (slice(0, shape[axis] - interior),)
            x = x[keep]
        parts: list[Array | None] = []
        crop = [slice(None)] * x.ndim
        crop[axis] = slice(max(-low, 0), x.shape[axis] - max(-high, 0))
        x = x[tuple(crop)]
        for amount in (low, high):
            if amount > 0:
                pad_shape = list(x.shape)
                pad_shape[axis] = amount
                parts.append(tnp.zeros(tuple(pad_shape), x.dtype))
            else:
                parts.append(None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        if len(pieces) > 1:
            x = tnp.concatenate(pieces, axis=axis)
    return x


def _patches(
    x: Array,
    window: Sequence[int],
    strides: Sequence[int],
    pads: Pairs,
    input_dilation: Sequence[int],
    kernel_dilation: Sequence[int],
) -> tuple[Array, list[int]]:
    """The windows of ``x`` ``(batch, *spatial, channels)``, padded and
    dilated: ``(batch, *out, taps, channels)`` (one strided slice per
    kernel position, taps in the kernel's order), and ``out``."""
    if any(d > 1 for d in input_dilation) or any(p != (0, 0) for p in pads):
        config = [(0, 0, 0)]
        config += [
            (lo, hi, d - 1) for (lo, hi), d in zip(pads, input_dilation, strict=True)
        ]
        config.append((0, 0, 0))
        x = _pad(x, config)
    spatial = x.shape[1:-1]
    reach = [(k - 1) * d + 1 for k, d in zip(window, kernel_dilation, strict=True)]
    out = [
        (size - r) // s + 1 for size, r, s in zip(spatial, reach, strides, strict=True)
    ]
    if min(out) <= 0:
        raise ValueError(
            f"the kernel's reach {tuple(reach)} exceeds the padded input "
            f"{tuple(spatial)}: pad more, or use a smaller kernel or dilation"
        )
    batch, channels = x.shape[0], x.shape[-1]
    columns: list[Array] = []
    for offset in itertools.product(*(range(k) for k in window)):
        start = (
            [0] + [o * d for o, d in zip(offset, kernel_dilation, strict=True)] + [0]
        )
        limit = [batch]
        limit += [
            st + s * (o - 1) + 1
            for st, s, o in zip(start[1:-1], strides, out, strict=True)
        ]
        limit.append(channels)
        steps = [1, *strides, 1]
        index = tuple(
            slice(a, b, c) for a, b, c in zip(start, limit, steps, strict=True)
        )
        columns.append(x[index])
    if len(columns) == 1:
        return tnp.expand_dims(columns[0], -2), out
    return tnp.stack(columns, axis=-2), out


def conv_general(
    x: Array,
    kernel: Array,
    strides: Sequence[int],
    pads: Pairs,
    input_dilation: Sequence[int],
    kernel_dilation: Sequence[int],
    groups: int,
) -> Array:
    """Convolve ``x`` ``(batch, *spatial, in)`` with ``kernel`` ``(*window,
    in // groups, out)``: im2col and one matmul (an einsum over groups)."""
    n = len(strides)
    window = kernel.shape[:n]
    patches, out = _patches(x, window, strides, pads, input_dilation, kernel_dilation)
    batch, channels = x.shape[0], x.shape[-1]
    rows = batch * math.prod(out)
    taps = patches.shape[-2]
    features = kernel.shape[-1]
    if groups == 1:
        y = tnp.matmul(
            tnp.reshape(patches, (rows, taps * channels)),
            tnp.reshape(kernel, (taps * channels, features)),
        )
    else:
        per_group = channels // groups
        y = tnp.einsum(
            "mkgc,kcgd->mgd",
            tnp.reshape(patches, (rows, taps, groups, per_group)),
            tnp.reshape(kernel, (taps, per_group, groups, features // groups)),
        )
    return tnp.reshape(y, (batch, *out, features))


def _flat_batch(
    inputs: Any, kernel_size: int | Sequence[int], where: str
) -> tuple[Array, tuple[int, ...], tuple[int, ...]]:
    """The input with its batch axes made one (an unbatched input gets one),
    the window, and the batch shape to restore."""
    window = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
    n = len(window)
    x = _dtypes.as_input(inputs)
    if x.ndim < n + 1:
        raise ValueError(
            f"{where} with a {n}-d kernel needs input of at least {n + 1} "
            f"dimensions (*spatial, features), got shape {x.shape}"
        )
    batch_shape = x.shape[: x.ndim - n - 1]
    x = tnp.reshape(x, (math.prod(batch_shape), *x.shape[x.ndim - n - 1 :]))
    return x, window, batch_shape


def _geometry(
    x: Array,
    window: tuple[int, ...],
    strides: None | int | Sequence[int],
    padding: PaddingLike,
    input_dilation: None | int | Sequence[int],
    kernel_dilation: None | int | Sequence[int],
) -> tuple[Array, tuple[int, ...], Pairs, tuple[int, ...], tuple[int, ...]]:
    """A convolution's spatial geometry: the input (wrapped around for
    'CIRCULAR'), the strides, the (low, high) pads and the input and kernel
    dilations, one per spatial dimension."""
    n = len(window)
    steps = _tuple(strides, n, "strides")
    in_dil = _tuple(input_dilation, n, "input_dilation")
    k_dil = _tuple(kernel_dilation, n, "kernel_dilation")
    dilated = [(s - 1) * d + 1 for s, d in zip(x.shape[1:-1], in_dil, strict=True)]
    reach = [(k - 1) * d + 1 for k, d in zip(window, k_dil, strict=True)]
    rule = _explicit(padding, n)
    if rule == "CIRCULAR":
        # As Flax: the input wrapped around, ((k-1)//2, k//2) of the
        # dilated window per side, then a 'VALID' convolution.
        x = _wrap(x, [((r - 1) // 2, r // 2) for r in reach])
        rule = "VALID"
    return x, steps, _conv_pads(rule, dilated, reach, steps), in_dil, k_dil


class _ConvBase(Module):
    """What Conv and ConvTranspose share: the batch handling, the
    parameters and the dtypes."""

    def _conv(
        self,
        inputs: Any,
        kernel_size: int | Sequence[int],
        groups: int,
        run: Any,
        transposed_kernel: bool = False,
    ) -> Array:
        # Unbatched input gets a batch axis; several batch axes become one.
        x, window, batch_shape = _flat_batch(inputs, kernel_size, type(self).__name__)
        in_features = x.shape[-1]
        if in_features % groups:
            raise ValueError(
                f"{in_features} input features do not split into "
                f"feature_group_count={groups} groups"
            )
        features: int = field(self, "features")
        param_dtype = field(self, "param_dtype")
        tail = (in_features // groups, features)
        shape = (*window, *(tail[::-1] if transposed_kernel else tail))
        kernel = self.param("kernel", field(self, "kernel_init"), shape, param_dtype)
        mask = field(self, "mask")
        if mask is not None:
            kernel = kernel * mask
        bias = (
            self.param("bias", field(self, "bias_init"), (features,), param_dtype)
            if field(self, "use_bias")
            else None
        )
        x, kernel, bias = _dtypes.promote(
            x,
            kernel,
            bias,
            dtype=field(self, "dtype"),
            where=type(self).__name__,
        )
        assert x is not None and kernel is not None
        y = run(x, kernel, window)
        if bias is not None:
            y = y + bias
        return tnp.reshape(y, (*batch_shape, *y.shape[1:]))


class Conv(_ConvBase):
    """An N-d convolution (really cross-correlation, as in every framework),
    channels last.

    Attributes:
      features: the number of output channels.
      kernel_size: the window (an int for 1-d).
      strides: the step per spatial dimension (int or sequence).
      padding: 'SAME', 'VALID', 'CAUSAL' (1-d), 'CIRCULAR' (the input
        wrapped around, as Flax), an int, or (low, high) pairs per spatial
        dimension.
      input_dilation: spacing inserted between input elements.
      kernel_dilation: spacing between kernel taps (atrous convolution).
      feature_group_count: groups of input channels convolved separately.
      use_bias, dtype, param_dtype, precision, kernel_init, bias_init: as
        :class:`Dense`.
      mask: an optional mask multiplied into the kernel.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Conv(features=8, kernel_size=(3, 3), strides=2)
    >>> x = tnp.ones((4, 32, 32, 3))
    >>> variables = layer.init(random.key(0), x)
    >>> variables['params']['kernel'].shape, layer.apply(variables, x).shape
    ((3, 3, 3, 8), (4, 16, 16, 8))
    """

    features: int
    kernel_size: int | Sequence[int]
    strides: None | int | Sequence[int] = 1
    padding: PaddingLike = "SAME"
    input_dilation: None | int | Sequence[int] = 1
    kernel_dilation: None | int | Sequence[int] = 1
    feature_group_count: int = 1
    use_bias: bool = True
    mask: Any = None
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Convolve.

        Args:
          inputs: ``(*batch, *spatial, features_in)`` (no batch axis is
            fine).

        Returns:
          ``(*batch, *spatial_out, features)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Conv(2, kernel_size=3, padding='VALID')
        >>> x = tnp.ones((7, 1))
        >>> layer.apply(layer.init(random.key(0), x), x).shape
        (5, 2)
        """

        def run(x: Array, kernel: Array, window: tuple[int, ...]) -> Array:
            x, strides, pads, input_dilation, kernel_dilation = _geometry(
                x,
                window,
                self.strides,
                self.padding,
                self.input_dilation,
                self.kernel_dilation,
            )
            return conv_general(
                x,
                kernel,
                strides,
                pads,
                input_dilation,
                kernel_dilation,
                self.feature_group_count,
            )

        return self._conv(inputs, self.kernel_size, self.feature_group_count, run)


class ConvTranspose(_ConvBase):
    """A transposed convolution (the gradient of a convolution with respect
    to its input), channels last, as ``jax.lax.conv_transpose``.

    Attributes:
      features: the number of output channels.
      kernel_size: the window (an int for 1-d).
      strides: the upsampling factor per spatial dimension.
      padding: 'SAME' (output = input × stride), 'VALID', 'CIRCULAR' (the
        'VALID' output wrapped around onto input × stride, as Flax), an int,
        or (low, high) pairs, as for the forward convolution.
      kernel_dilation: spacing between kernel taps.
      use_bias, mask, dtype, param_dtype, precision, kernel_init, bias_init:
        as :class:`Conv`.
      transpose_kernel: flip the kernel spatially and swap its in/out axes
        (the exact gradient of Conv with the same kernel; with 'CIRCULAR'
        padding, as in Flax, only for odd windows and strides of 1 or 2).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.ConvTranspose(features=3, kernel_size=(3, 3), strides=(2, 2))
    >>> x = tnp.ones((1, 8, 8, 4))
    >>> layer.apply(layer.init(random.key(0), x), x).shape
    (1, 16, 16, 3)
    """

    features: int
    kernel_size: int | Sequence[int]
    strides: Sequence[int] | None = None
    padding: PaddingLike = "SAME"
    kernel_dilation: Sequence[int] | None = None
    use_bias: bool = True
    mask: Any = None
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros
    transpose_kernel: bool = False

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Apply the transposed convolution.

        Args:
          inputs: ``(*batch, *spatial, features_in)``.

        Returns:
          ``(*batch, *spatial_out, features)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.ConvTranspose(2, kernel_size=(3,), strides=(2,), padding='VALID')
        >>> x = tnp.ones((4, 1))
        >>> layer.apply(layer.init(random.key(0), x), x).shape
        (9, 2)
        """

        def run(x: Array, kernel: Array, window: tuple[int, ...]) -> Array:
            n = len(window)
            strides = _tuple(self.strides, n, "strides")
            kernel_dilation = _tuple(self.kernel_dilation, n, "kernel_dilation")
            reach = [
                (k - 1) * d + 1 for k, d in zip(window, kernel_dilation, strict=True)
            ]
            rule = _explicit(self.padding, n)
            circular = rule == "CIRCULAR"
            pads = _transpose_pads("VALID" if circular else rule, reach, strides)
            if self.transpose_kernel:
                kernel = tnp.swapaxes(tnp.flip(kernel, axis=tuple(range(n))), -1, -2)
            y = conv_general(x, kernel, (1,) * n, pads, strides, kernel_dilation, 1)
            if circular:
                periods = [
                    size * s for size, s in zip(x.shape[1:-1], strides, strict=True)
                ]
                y = _fold(y, periods, self.transpose_kernel)
            return y

        # Kernel (*window, in, out); with transpose_kernel (*window, out, in).
        return self._conv(inputs, self.kernel_size, 1, run, self.transpose_kernel)


class ConvLocal(Module):
    """A locally connected layer: a convolution whose kernel is not shared,
    one per output position, as Flax linen's (``lax.conv_general_dilated_local``).

    The kernel is ``(*output spatial, prod(kernel_size) * in_features,
    features)``, each row's inputs ordered channel first, then kernel
    position (JAX's patches); the bias ``(*output spatial, features)``.

    Attributes:
      features: the number of output channels.
      kernel_size: the window (an int for 1-d).
      strides, padding, input_dilation, kernel_dilation: as :class:`Conv`.
      feature_group_count: must be 1 (as Flax).
      use_bias, mask, dtype, param_dtype, precision, kernel_init, bias_init:
        as :class:`Conv` (``mask`` of the kernel's shape).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.ConvLocal(features=4, kernel_size=(3,), padding='VALID')
    >>> x = tnp.ones((2, 8, 3))
    >>> variables = layer.init(random.key(0), x)
    >>> variables['params']['kernel'].shape, layer.apply(variables, x).shape
    ((6, 9, 4), (2, 6, 4))
    """

    features: int
    kernel_size: int | Sequence[int]
    strides: None | int | Sequence[int] = 1
    padding: PaddingLike = "SAME"
    input_dilation: None | int | Sequence[int] = 1
    kernel_dilation: None | int | Sequence[int] = 1
    feature_group_count: int = 1
    use_bias: bool = True
    mask: Any = None
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Apply the layer.

        Args:
          inputs: ``(*batch, *spatial, features_in)`` (no batch axis is
            fine).

        Returns:
          ``(*batch, *spatial_out, features)``.

        Raises:
          NotImplementedError: ``feature_group_count`` other than 1.
          ValueError: a mask of another shape than the kernel.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.ConvLocal(2, kernel_size=(2, 2), strides=2)
        >>> x = tnp.ones((4, 4, 1))
        >>> layer.apply(layer.init(random.key(0), x), x).shape
        (2, 2, 2)
        """
        if self.feature_group_count != 1:
            raise NotImplementedError(
                "ConvLocal does not support feature_group_count != 1, got "
                f"{self.feature_group_count} (as Flax); use Conv for grouped "
                "convolutions"
            )
        x, window, batch_shape = _flat_batch(inputs, self.kernel_size, "ConvLocal")
        in_features = x.shape[-1]
        x, strides, pads, input_dilation, kernel_dilation = _geometry(
            x,
            window,
            self.strides,
            self.padding,
            self.input_dilation,
            self.kernel_dilation,
        )
        # The output's size per spatial dimension (x is already wrapped
        # around for 'CIRCULAR', its pads then zero).
        out = [
            ((s - 1) * di + 1 + lo + hi - ((k - 1) * dk + 1)) // st + 1
            for s, di, (lo, hi), k, dk, st in zip(
                x.shape[1:-1],
                input_dilation,
                pads,
                window,
                kernel_dilation,
                strides,
                strict=True,
            )
        ]
        taps = math.prod(window)
        shape = (*out, taps * in_features, self.features)
        if self.mask is not None and tuple(self.mask.shape) != shape:
            raise ValueError(
                f"ConvLocal: the mask must have the kernel's shape {shape}, got "
                f"{tuple(self.mask.shape)}"
            )
        kernel = self.param("kernel", self.kernel_init, shape, self.param_dtype)
        if self.mask is not None:
            kernel = kernel * self.mask
        bias = (
            self.param("bias", self.bias_init, (*out, self.features), self.param_dtype)
            if self.use_bias
            else None
        )
        x, kernel, bias = _dtypes.promote(
            x, kernel, bias, dtype=self.dtype, where="ConvLocal"
        )
        assert x is not None and kernel is not None
        patches, _ = _patches(x, window, strides, pads, input_dilation, kernel_dilation)
        # JAX's patches put the channel first, then the kernel position.
        patches = tnp.swapaxes(patches, -1, -2)
        batch = x.shape[0]
        rows = tnp.reshape(patches, (batch, math.prod(out), taps * in_features))
        weights = tnp.reshape(
            kernel, (math.prod(out), taps * in_features, self.features)
        )
        y = tnp.einsum("bpk,pkf->bpf", rows, weights)
        y = tnp.reshape(y, (batch, *out, self.features))
        if bias is not None:
            y = y + bias
        return tnp.reshape(y, (*batch_shape, *y.shape[1:]))
