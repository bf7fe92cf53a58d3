"""Linear layers: Dense, DenseGeneral and Einsum, as Flax linen's, with the
FLIP's dtypes: inputs, kernel and bias are promoted together (or cast to
``dtype``), then multiplied."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typelattice.numpy as tnp
from typelattice.nn import _dtypes, initializers
from typelattice.nn._initializers import Reshaped
from typelattice.nn._module import Module, compact
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = ["Dense", "DenseGeneral", "Einsum"]

# Flax's default kernel initialiser: LeCun normal (truncated), fan-in.
default_kernel_init = initializers.lecun_normal()


def _axes(axes: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    items = (axes,) if isinstance(axes, int) else tuple(axes)
    return tuple(a % ndim for a in items)


class Dense(Module):
    """A linear layer ``y = x @ kernel + bias`` on the last axis.

    Attributes:
      features: the number of outputs.
      use_bias: whether to add a bias.
      dtype: the compute and output dtype; None: the promotion of the input
        and the parameters (float32 for integer input).
      param_dtype: the parameters' dtype.
      precision: accepted for compatibility (NumPy computes at full
        precision).
      kernel_init: initialiser of the ``(in, features)`` kernel.
      bias_init: initialiser of the ``(features,)`` bias.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Dense(4)
    >>> x = tnp.ones((2, 3), dtype='bfloat16')
    >>> variables = layer.init(random.key(0), x)
    >>> layer.apply(variables, x).dtype  # bfloat16 input, float32 params
    dtype('float32')
    >>> nn.Dense(4, dtype='bfloat16').apply(variables, x).dtype
    dtype(bfloat16)
    """

    features: int
    use_bias: bool = True
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Apply the layer.

        Args:
          inputs: an array whose last axis is contracted.

        Returns:
          ``inputs @ kernel + bias``, of shape ``(*inputs.shape[:-1],
          features)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> v = nn.Dense(2).init(random.key(0), tnp.ones(3))
        >>> nn.Dense(2).apply(v, tnp.ones((5, 3))).shape
        (5, 2)
        """
        x = _dtypes.as_input(inputs)
        kernel = self.param(
            "kernel", self.kernel_init, (x.shape[-1], self.features), self.param_dtype
        )
        bias = (
            self.param("bias", self.bias_init, (self.features,), self.param_dtype)
            if self.use_bias
            else None
        )
        x, kernel, bias = _dtypes.promote(
            x, kernel, bias, dtype=self.dtype, where="Dense"
        )
        assert x is not None and kernel is not None
        y = tnp.matmul(x, kernel)
        return y if bias is None else y + bias


class DenseGeneral(Module):
    """A linear layer contracting any axes and producing any output shape.

    Attributes:
      features: the output shape (an int for one axis).
      axis: the input axes contracted (default: the last).
      batch_dims: leading input axes (0, 1, ...) that are batched: the
        kernel and bias get one slice per index of them, as in Flax.
      use_bias, dtype, param_dtype, precision, kernel_init, bias_init: as
        :class:`Dense`. The initialisers see the kernel as a matrix
        ``(prod(contracted), prod(features))``, as in Flax, so fan-in and
        fan-out are those of the flattened layer.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.DenseGeneral(features=(2, 3), axis=(-2, -1))
    >>> v = layer.init(random.key(0), tnp.ones((5, 4, 6)))
    >>> v['params']['kernel'].shape, layer.apply(v, tnp.ones((5, 4, 6))).shape
    ((4, 6, 2, 3), (5, 2, 3))
    """

    features: int | Sequence[int]
    axis: int | Sequence[int] = -1
    batch_dims: Sequence[int] = ()
    use_bias: bool = True
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros
    precision: Any = None

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Apply the layer.

        Args:
          inputs: an array with the axes ``axis``.

        Returns:
          The input's other axes followed by ``features``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.DenseGeneral(4)
        >>> layer.apply(layer.init(random.key(0), tnp.ones(3)), tnp.ones(3)).shape
        (4,)
        """
        x = _dtypes.as_input(inputs)
        features = (
            (self.features,) if isinstance(self.features, int) else tuple(self.features)
        )
        batch = tuple(sorted(_axes(self.batch_dims, x.ndim))) if self.batch_dims else ()
        if batch and batch != tuple(range(len(batch))):
            raise ValueError(
                f"DenseGeneral: batch_dims={tuple(self.batch_dims)} must be "
                "consecutive leading dimensions starting from 0"
            )
        axes = _axes(self.axis, x.ndim)
        if set(axes) & set(batch):
            raise ValueError(
                f"DenseGeneral: axis={self.axis} and batch_dims="
                f"{tuple(self.batch_dims)} share an axis; an axis is contracted "
                "or batched, not both"
            )
        batch_shape = tuple(x.shape[a] for a in batch)
        contracted = tuple(x.shape[a] for a in axes)
        flat = (
            math.prod(batch_shape) * math.prod(contracted),
            math.prod(features),
        )
        init_kernel = Reshaped(self.kernel_init, flat)
        kernel = self.param(
            "kernel", init_kernel, batch_shape + contracted + features, self.param_dtype
        )
        bias: Array | None = None
        if self.use_bias:
            size = math.prod(batch_shape) * flat[1]
            init_bias = Reshaped(self.bias_init, (size,))
            bias = self.param(
                "bias", init_bias, batch_shape + features, self.param_dtype
            )
        x, kernel, bias = _dtypes.promote(
            x, kernel, bias, dtype=self.dtype, where="DenseGeneral"
        )
        assert x is not None and kernel is not None
        if not batch:
            y = tnp.tensordot(x, kernel, axes=(axes, tuple(range(len(axes)))))
            return y if bias is None else y + bias
        # Batched: batch axes, then the input's free axes, then features.
        letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        x_labels = [next(letters) for _ in range(x.ndim)]
        f_labels = [next(letters) for _ in features]
        k_labels = [x_labels[a] for a in batch] + [x_labels[a] for a in axes] + f_labels
        free = [x_labels[a] for a in range(x.ndim) if a not in batch and a not in axes]
        out_labels = [x_labels[a] for a in batch] + free + f_labels
        spec = f"{''.join(x_labels)},{''.join(k_labels)}->{''.join(out_labels)}"
        y = tnp.einsum(spec, x, kernel)
        if bias is None:
            return y
        expanded = batch_shape + (1,) * len(free) + features
        return y + tnp.reshape(bias, expanded)


class Einsum(Module):
    """A linear layer given by an einsum: ``einsum(einsum_str, x, kernel) +
    bias``, the bias over the kernel's axes kept in the output.

    Attributes:
      shape: the kernel's shape.
      einsum_str: the subscripts ``'inputs,kernel->output'`` (or pass it
        when calling).
      use_bias, dtype, param_dtype, precision, kernel_init, bias_init: as
        :class:`Dense`.
      preferred_element_type: the einsum's accumulation dtype, if given.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Einsum((4, 2, 3), 'bti,ihd->bthd')
    >>> v = layer.init(random.key(0), tnp.ones((5, 7, 4)))
    >>> v['params']['bias'].shape, layer.apply(v, tnp.ones((5, 7, 4))).shape
    ((2, 3), (5, 7, 2, 3))
    """

    shape: Sequence[int]
    einsum_str: str | None = None
    use_bias: bool = True
    dtype: DTypeLike | None = None
    param_dtype: DTypeLike = tnp.float32
    precision: Any = None
    kernel_init: initializers.Initializer = default_kernel_init
    bias_init: initializers.Initializer = initializers.zeros
    preferred_element_type: DTypeLike | None = None

    @compact
    def __call__(self, inputs: Any, einsum_str: str | None = None) -> Array:
        """Apply the layer.

        Args:
          inputs: the einsum's first operand.
          einsum_str: the subscripts, when not given to the constructor.

        Returns:
          The einsum plus the bias.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Einsum((3, 2), use_bias=False)
        >>> v = layer.init(random.key(0), tnp.ones((4, 3)), 'bi,io->bo')
        >>> layer.apply(v, tnp.ones((4, 3)), 'bi,io->bo').shape
        (4, 2)
        """
        if (self.einsum_str is None) == (einsum_str is None):
            raise ValueError(
                "Einsum needs its subscripts exactly once: either "
                "Einsum(shape, einsum_str) or layer(x, einsum_str)"
            )
        subscripts = (self.einsum_str or einsum_str or "").replace(" ", "")
        if "->" not in subscripts or subscripts.count(",") != 1 or "." in subscripts:
            raise ValueError(
                f"Einsum subscripts {subscripts!r} must read 'lhs,rhs->out' "
                "with explicit letters (no '...')"
            )
        x = _dtypes.as_input(inputs)
        kernel = self.param(
            "kernel", self.kernel_init, tuple(self.shape), self.param_dtype
        )
        operands, out = subscripts.split("->")
        lhs, rhs = operands.split(",")
        bias: Array | None = None
        broadcast: tuple[int, ...] = ()
        if self.use_bias:
            # The bias runs over the kernel's axes that survive into the
            # output, broadcast over the output's other axes.
            kept = [c for c in rhs if c in out and c not in lhs]
            bias_shape = tuple(self.shape[rhs.index(c)] for c in kept)
            bias = self.param("bias", self.bias_init, bias_shape, self.param_dtype)
            broadcast = tuple(self.shape[rhs.index(c)] if c in kept else 1 for c in out)
        x, kernel, bias = _dtypes.promote(
            x, kernel, bias, dtype=self.dtype, where="Einsum"
        )
        y = tnp.einsum(
            subscripts, x, kernel, preferred_element_type=self.preferred_element_type
        )
        return y if bias is None else y + tnp.reshape(bias, broadcast)
