"""Activation functions, as ``jax.nn``'s (and Flax linen's re-exports).

Each keeps its input's dtype when that is inexact; integer input computes
in the default float (weak Python constants never widen a narrow float:
``gelu`` of bfloat16 is bfloat16).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import lax
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.custom import custom_jvp
from typelattice.nn._module import Module, compact
from typelattice.numpy import Array

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "PReLU",
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
    "tanh",
]

Axis = int | tuple[int, ...] | None


def _float(x: ArrayLike) -> Array:
    """``x`` as an inexact array (integers in the default float)."""
    a = tnp.asarray(x)
    if tnp.issubdtype(a.dtype, tnp.inexact):
        return a
    # JAX's rule for integers meeting a float: the mode's default float.
    with tl.dtype_promotion("standard"):
        return a.astype(tl.result_type(a.dtype, 1.0))


def _logistic(a: Array) -> Array:
    # 1 / (1 + exp(-a)) overflows exp for a < -88 (float32); the tanh form
    # does not. (typelattice.numpy functions, so that jit traces them.)
    return 0.5 * tnp.tanh(0.5 * a) + 0.5


def relu(x: ArrayLike) -> Array:
    """The rectified linear unit, ``max(x, 0)``.

    Args:
      x: the input.

    Returns:
      ``max(x, 0)``, of ``x``'s dtype.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.relu(tnp.asarray([-1.0, 2.0]))
    Array([0., 2.], dtype=float32)
    """
    return _relu(tnp.asarray(x))


# As JAX's relu: the derivative is 0 at 0 (maximum's would be 1/2).
@custom_jvp
def _relu(a: Array) -> Array:
    return tnp.maximum(a, 0)


def _relu_jvp(t: Array, out: Array, a: Array) -> Array:
    return lax.select(a > 0, t, tnp.zeros_like(a))


_relu.defjvps(_relu_jvp)


def relu6(x: ArrayLike) -> Array:
    """``min(max(x, 0), 6)``.

    Args:
      x: the input.

    Returns:
      The clipped input.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.relu6(tnp.asarray([-1.0, 7.0]))
    Array([0., 6.], dtype=float32)
    """
    return _relu6(tnp.asarray(x))


# As JAX's relu6: the derivative is 0 at 0 and at 6.
@custom_jvp
def _relu6(a: Array) -> Array:
    return tnp.minimum(tnp.maximum(a, 0), 6.0)


def _relu6_jvp(t: Array, out: Array, a: Array) -> Array:
    return lax.select((a > 0) & (a < 6), t, tnp.zeros_like(a))


_relu6.defjvps(_relu6_jvp)


def sigmoid(x: ArrayLike) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``.

    Args:
      x: the input.

    Returns:
      The sigmoid, in ``x``'s (inexact) dtype.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.sigmoid(tnp.asarray([0.0]))
    Array([0.5], dtype=float32)
    """
    return _logistic(_float(x))


def log_sigmoid(x: ArrayLike) -> Array:
    """``log(sigmoid(x))``, computed as ``-softplus(-x)``.

    Args:
      x: the input.

    Returns:
      The log-sigmoid.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.log_sigmoid(tnp.asarray([0.0])).round(4)
    Array([-0.6931], dtype=float32)
    """
    return -softplus(-_float(x))


def tanh(x: ArrayLike) -> Array:
    """The hyperbolic tangent.

    Args:
      x: the input.

    Returns:
      ``tanh(x)``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.tanh(tnp.asarray([0.0]))
    Array([0.], dtype=float32)
    """
    return tnp.tanh(_float(x))


def silu(x: ArrayLike) -> Array:
    """The sigmoid-weighted linear unit ``x * sigmoid(x)`` (also ``swish``).

    Args:
      x: the input.

    Returns:
      ``x * sigmoid(x)``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.silu(tnp.asarray([0.0, 1.0])).round(4)
    Array([0.    , 0.7311], dtype=float32)
    """
    a = _float(x)
    return a * _logistic(a)


swish = silu


def hard_sigmoid(x: ArrayLike) -> Array:
    """``relu6(x + 3) / 6``.

    Args:
      x: the input.

    Returns:
      The hard sigmoid.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.hard_sigmoid(tnp.asarray([0.0]))
    Array([0.5], dtype=float32)
    """
    return relu6(_float(x) + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Array:
    """``x * hard_sigmoid(x)`` (also ``hard_swish``).

    Args:
      x: the input.

    Returns:
      The hard SiLU.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.hard_silu(tnp.asarray([3.0]))
    Array([3.], dtype=float32)
    """
    a = _float(x)
    return a * hard_sigmoid(a)


hard_swish = hard_silu


def hard_tanh(x: ArrayLike) -> Array:
    """``x`` clipped to ``[-1, 1]`` (real input: complex numbers have no
    order).

    Args:
      x: the input.

    Returns:
      The clipped input.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.hard_tanh(tnp.asarray([-3.0, 0.5]))
    Array([-1. ,  0.5], dtype=float32)
    """
    return tnp.clip(tnp.asarray(x), -1, 1)


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """The exponential linear unit: ``x`` if positive, else
    ``alpha * (exp(x) - 1)``.

    Args:
      x: the input.
      alpha: the scale of the negative part.

    Returns:
      The ELU.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.elu(tnp.asarray([-1.0, 2.0])).round(4)
    Array([-0.6321,  2.    ], dtype=float32)
    """
    a = _float(x)
    safe = tnp.where(a > 0, 0, a)
    return tnp.where(a > 0, a, alpha * tnp.expm1(safe))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """The continuously differentiable ELU: ``max(x, 0) + alpha *
    min(exp(x / alpha) - 1, 0)``.

    Args:
      x: the input.
      alpha: the scale.

    Returns:
      The CELU.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.celu(tnp.asarray([-1.0, 2.0])).round(4)
    Array([-0.6321,  2.    ], dtype=float32)
    """
    a = _float(x)
    return tnp.maximum(a, 0.0) + alpha * tnp.expm1(tnp.minimum(a, 0.0) / alpha)


def selu(x: ArrayLike) -> Array:
    """The scaled ELU, with the constants of Klambauer et al. (2017).

    Args:
      x: the input.

    Returns:
      ``scale * elu(x, alpha)``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.selu(tnp.asarray([1.0]))
    Array([1.050701], dtype=float32)
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 0.01) -> Array:
    """``x`` if positive, else ``negative_slope * x``.

    Args:
      x: the input.
      negative_slope: the slope below zero.

    Returns:
      The leaky ReLU.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.leaky_relu(tnp.asarray([-2.0, 2.0]))
    Array([-0.02,  2.  ], dtype=float32)
    """
    a = _float(x)
    return tnp.where(a >= 0, a, negative_slope * a)


def softplus(x: ArrayLike) -> Array:
    """``log(1 + exp(x))``, computed without overflow.

    Args:
      x: the input.

    Returns:
      The softplus.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.softplus(tnp.asarray([0.0, 100.0])).round(4)
    Array([  0.6931, 100.    ], dtype=float32)
    """
    return tnp.logaddexp(_float(x), 0)


def soft_sign(x: ArrayLike) -> Array:
    """``x / (|x| + 1)``.

    Args:
      x: the input.

    Returns:
      The soft sign.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.soft_sign(tnp.asarray([1.0]))
    Array([0.5], dtype=float32)
    """
    a = _float(x)
    return a / (tnp.abs(a) + 1)


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """The Gaussian error linear unit, ``x * Phi(x)``; by default its tanh
    approximation, as JAX.

    Args:
      x: the input.
      approximate: use ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x³)))``
        instead of the exact ``0.5 x (1 + erf(x / sqrt(2)))``.

    Returns:
      The GELU.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> x = tnp.asarray([1.0])
    >>> nn.gelu(x).round(4), nn.gelu(x, approximate=False).round(4)
    (Array([0.8412], dtype=float32), Array([0.8413], dtype=float32))
    """
    a = _float(x)
    if approximate:
        c = math.sqrt(2 / math.pi)
        return 0.5 * a * (1 + tnp.tanh(c * (a + 0.044715 * (a * a * a))))
    return 0.5 * a * (1 + lax.erf(a * (1 / math.sqrt(2))))


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """The gated linear unit: ``x`` split in halves ``a, b`` along ``axis``,
    ``a * sigmoid(b)``.

    Args:
      x: the input (even size along ``axis``).
      axis: the axis split.

    Returns:
      The GLU, half the size along ``axis``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.glu(tnp.asarray([2.0, 0.0]))
    Array([1.], dtype=float32)
    """
    a = _float(x)
    size = a.shape[axis]
    if size % 2:
        raise ValueError(f"glu splits axis {axis} in halves; its size is {size}")
    first, second = tnp.split(a, 2, axis=axis)
    return first * _logistic(second)


def logsumexp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Array:
    """``log(sum(exp(x)))`` along ``axis``, computed without overflow.

    Args:
      x: the input.
      axis: the axes summed (all by default).
      keepdims: keep the summed axes with size 1.

    Returns:
      The log-sum-exp.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.logsumexp(tnp.asarray([1000.0, 1000.0]))
    Array(1000.6932, dtype=float32)
    """
    a = _float(x)
    top = _shift(a, axis)
    # An all -inf slice stays -inf instead of giving nan.
    top = tnp.where(tnp.isfinite(top), top, 0)
    out = tnp.log(tnp.sum(tnp.exp(a - top), axis=axis, keepdims=True)) + top
    return out if keepdims else tnp.squeeze(out, axis=axis)


def _shift(a: Array, axis: Axis) -> Array:
    """The maximum over ``axis`` (kept), subtracted for stability: it
    cancels out of the result, so it is a constant to differentiation, as
    in JAX; taken of the values without their tangents, nothing of it is
    differentiated."""
    values: Array = stop_gradient(a)
    return tnp.max(values, axis=axis, keepdims=True)


def softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed without overflow.

    Args:
      x: the input.
      axis: the axes normalised over.

    Returns:
      The softmax, of ``x``'s shape and (inexact) dtype.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.softmax(tnp.asarray([0.0, 0.0]))
    Array([0.5, 0.5], dtype=float32)
    """
    a = _float(x)
    unnormalised = tnp.exp(a - _shift(a, axis))
    return unnormalised / tnp.sum(unnormalised, axis=axis, keepdims=True)


def log_softmax(x: ArrayLike, axis: Axis = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``.

    Args:
      x: the input.
      axis: the axes normalised over.

    Returns:
      The log-softmax.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.log_softmax(tnp.asarray([0.0, 0.0])).round(4)
    Array([-0.6931, -0.6931], dtype=float32)
    """
    a = _float(x)
    shifted = a - _shift(a, axis)
    return shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True))


def standardize(x: ArrayLike, axis: Axis = -1, epsilon: float = 1e-5) -> Array:
    """``(x - mean) / sqrt(var + epsilon)`` along ``axis``.

    Args:
      x: the input.
      axis: the axes the statistics run over.
      epsilon: added to the variance.

    Returns:
      The standardised input.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.standardize(tnp.asarray([1.0, 3.0]))
    Array([-0.999995,  0.999995], dtype=float32)
    """
    a = _float(x)
    if tl.isdtype(a.dtype, "complex floating"):
        raise ValueError(
            f"standardize takes real input, not {a.dtype.name}: standardise "
            "typelattice.numpy.real(x) and imag(x) separately, or use LayerNorm, "
            "which normalises complex input by |x|²"
        )
    centred = a - tnp.mean(a, axis=axis, keepdims=True)
    var = tnp.mean(centred * centred, axis=axis, keepdims=True)
    return centred / tnp.sqrt(var + epsilon)


def one_hot(
    x: ArrayLike, num_classes: int, *, dtype: DTypeLike | None = None, axis: int = -1
) -> Array:
    """One-hot encode integer labels.

    Args:
      x: the labels (out-of-range labels give all-zero rows).
      num_classes: the number of classes.
      dtype: the result's dtype (default: the default float).
      axis: where the new class axis goes.

    Returns:
      An array with a new axis of size ``num_classes``.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import nn
    >>> nn.one_hot(tnp.asarray([0, 2]), 3)
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    labels = tnp.expand_dims(tnp.asarray(x), axis)
    classes_shape = [1] * labels.ndim
    classes_shape[axis] = num_classes
    classes = tnp.reshape(tnp.arange(num_classes), classes_shape)
    # Python's float names the mode's default float (float64 under x64).
    target: Any = float if dtype is None else dtype
    return (labels == classes).astype(target)


class PReLU(Module):
    """A leaky ReLU whose negative slope is learned (a parameter of shape
    ``()``), as Flax's.

    Attributes:
      param_dtype: the slope's dtype (default float32).
      negative_slope_init: the slope's initial value (default 0.01).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.PReLU()
    >>> x = tnp.asarray([-2.0, 3.0])
    >>> variables = layer.init(random.key(0), x)
    >>> variables['params']['negative_slope']
    Array(0.01, dtype=float32)
    >>> layer.apply(variables, x)
    Array([-0.02,  3.  ], dtype=float32)
    """

    param_dtype: DTypeLike = tnp.float32
    negative_slope_init: float = 0.01

    @compact
    def __call__(self, inputs: Any) -> Array:
        """Apply the activation.

        Args:
          inputs: an array; the slope is cast to its dtype (as Flax).

        Returns:
          ``inputs`` where not negative, ``slope * inputs`` elsewhere.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> x = tnp.ones(2, dtype='bfloat16')
        >>> layer = nn.PReLU(negative_slope_init=0.25)
        >>> layer.apply(layer.init(random.key(0), x), -x)
        Array([-0.25, -0.25], dtype=bfloat16)
        """
        dtype = self.param_dtype

        def init(key: Any) -> Array:
            return tnp.asarray(self.negative_slope_init, dtype)

        slope = self.param("negative_slope", init)
        x = tnp.asarray(inputs)
        return tnp.where(x >= 0, x, tnp.astype(slope, x.dtype) * x)
