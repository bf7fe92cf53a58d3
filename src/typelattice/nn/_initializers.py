"""Parameter initialisers with jax.nn.initializers' names, signatures and
dtypes.

Every initialiser creates its parameter directly in the dtype asked for
(Flax's ``param_dtype``): narrow floats (bfloat16, float16) are sampled in
float32, scaled there, and rounded once. The default dtype is JAX's: the
initialiser's ``dtype`` argument, else float32 (float64 under
``enable_x64``). The random values come from :mod:`typelattice.random`.
"""

# Package-internal: uses the namespace's private helpers (_shape, _requested).
# pyright: reportPrivateUsage=false

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

import numpy as np

import typelattice.numpy as tnp
from typelattice import _dtypes, random
from typelattice.lax import linalg
from typelattice.nn._meta import AxisMetadata
from typelattice.numpy import Array
from typelattice.numpy._creation import _shape
from typelattice.random._distributions import _requested

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "ones_init",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
    "zeros_init",
]

_FLOAT32: Final = np.dtype("float32")
_EXACT: Final = frozenset(np.dtype(t) for t in ("f4", "f8", "c8", "c16"))

# The standard deviation of a standard normal truncated to (-2, 2), which
# variance_scaling divides by so that the truncated values have the variance
# asked for (JAX's and Keras's constant).
_TRUNCATED_STDDEV: Final = 0.87962566103423978
# Its complex counterpart: |z|**2 of a complex normal with E|z|**2 = 1 is
# exponential with mean 1; truncating |z| at 2 leaves the mean
# E[X | X <= 4] = (1 - 5 e**-4) / (1 - e**-4). Note: JAX uses
# sqrt(1 - 5 e**-4) = 0.95311164380491208, which leaves the variance 1.9%
# too high.
_COMPLEX_TRUNCATED_STDDEV: Final = math.sqrt(
    (1 - 5 * math.exp(-4)) / (1 - math.exp(-4))
)

_MODES: Final = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS: Final = ("truncated_normal", "normal", "uniform")


@runtime_checkable
class Initializer(Protocol):
    """What an initialiser is: ``init(key, shape, dtype=None) -> Array``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> def halves(key, shape, dtype=None):
    ...     return initializers.constant(0.5)(key, shape, dtype)
    >>> isinstance(halves, initializers.Initializer)
    True
    """

    def __call__(
        self, key: Array, shape: Sequence[int], dtype: DTypeLike | None = None
    ) -> Array:
        """The parameter.

        Args:
          key: a key (see :func:`typelattice.random.key`).
          shape: the parameter's shape.
          dtype: its dtype.

        Returns:
          The parameter.

        >>> from typelattice import random
        >>> from typelattice.nn import initializers
        >>> initializers.ones(random.key(0), (2,))
        Array([1., 1.], dtype=float32)
        """
        ...


# -- what Module.apply may remember ------------------------------------------------

# The initialisers made here (zeros, ones, and the functions the factories
# return). The shapes and dtypes of their results depend only on their
# arguments and the configuration: their hyperparameters are fixed when
# they are made. Module.apply compares a given parameter with the abstract
# result of its initialiser (eval_shape), and may remember that result for
# these; a user's function may depend on anything (its globals, its own
# state), so it is evaluated each time, as Flax does.
_MADE_HERE: Final[weakref.WeakSet[Callable[..., Any]]] = weakref.WeakSet()


def _made_here(init: Initializer) -> Initializer:
    _MADE_HERE.add(init)
    return init


def shaped_by_arguments(init: object) -> bool:
    """Whether ``init``'s result's shape and dtype follow from its arguments
    and the configuration alone (an initialiser of this module, or one
    :class:`Reshaped` from such)."""
    if isinstance(init, Reshaped):
        return shaped_by_arguments(init.init)
    try:
        return init in _MADE_HERE
    except TypeError:  # (unhashable)
        return False


@dataclasses.dataclass(frozen=True)
class Reshaped:
    """``init`` drawing a parameter of shape ``drawn``, reshaped to the
    shape asked for: DenseGeneral's kernel and bias, which initialisers see
    as matrices (as in Flax). A boxed value (``nn.with_partitioning``)
    keeps its box, its value reshaped. Equal when made from the same
    ``init`` and ``drawn``, so that Module.apply's memory finds it again."""

    init: Callable[..., Array]
    drawn: tuple[int, ...]

    def __call__(self, key: Array, shape: Sequence[int], dtype: Any = None) -> Any:
        drawn: Any = self.init(key, self.drawn, dtype)
        if isinstance(drawn, AxisMetadata):
            box: AxisMetadata[Any] = drawn  # pyright: ignore[reportUnknownVariableType]
            return box.replace_boxed(tnp.reshape(box.unbox(), tuple(shape)))
        return tnp.reshape(drawn, tuple(shape))


# -- dtypes -------------------------------------------------------------------


def _param_dtype(dtype: Any, where: str) -> np.dtype[Any]:
    return _requested(dtype, "f", where)


def _work_dtype(dt: np.dtype[Any], where: str, complex_ok: bool) -> np.dtype[Any]:
    """The dtype a ``dt`` parameter is sampled and scaled in: ``dt`` itself
    for float32, float64 and the complex types, float32 for narrower floats;
    a ValueError (as JAX's) for other dtypes."""
    kinds = ("real floating", "complex floating") if complex_ok else "real floating"
    if not _dtypes.isdtype(dt, kinds):
        wanted = "a float or complex dtype" if complex_ok else "a float dtype"
        raise ValueError(
            f"dtype argument to `{where}` must be {wanted}, got {dt}; "
            f"parameters are usually float32 (the default) or bfloat16"
        )
    return dt if dt in _EXACT else _FLOAT32


def _real_of(dt: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype("float64") if dt == np.dtype("complex128") else _FLOAT32


# -- constants ------------------------------------------------------------------


def zeros(key: Array, shape: Sequence[int], dtype: DTypeLike | None = None) -> Array:
    """An initialiser: zeros.

    Args:
      key: a key (unused; initialisers all take one).
      shape: the parameter's shape.
      dtype: its dtype, any (default float32, float64 under
        ``enable_x64``).

    Returns:
      A strong Array of zeros.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.zeros(random.key(0), (2, 2), 'int8')
    Array([[0, 0],
           [0, 0]], dtype=int8)
    """
    return tnp.zeros(_shape(shape, "zeros"), _param_dtype(dtype, "zeros"))


def ones(key: Array, shape: Sequence[int], dtype: DTypeLike | None = None) -> Array:
    """An initialiser: ones.

    Args:
      key: a key (unused; initialisers all take one).
      shape: the parameter's shape.
      dtype: its dtype, any (default float32, float64 under
        ``enable_x64``).

    Returns:
      A strong Array of ones.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.ones(random.key(0), (3,), 'bfloat16')
    Array([1, 1, 1], dtype=bfloat16)
    """
    return tnp.ones(_shape(shape, "ones"), _param_dtype(dtype, "ones"))


def zeros_init() -> Initializer:
    """The :func:`zeros` initialiser, from a factory as Flax's.

    Returns:
      :func:`zeros`.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.zeros_init()(random.key(0), (2,), 'float32')
    Array([0., 0.], dtype=float32)
    """
    return zeros


def ones_init() -> Initializer:
    """The :func:`ones` initialiser, from a factory as Flax's.

    Returns:
      :func:`ones`.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.ones_init()(random.key(0), (2,), 'int8')
    Array([1, 1], dtype=int8)
    """
    return ones


def constant(value: ArrayLike, dtype: DTypeLike | None = None) -> Initializer:
    """An initialiser that fills the parameter with ``value``.

    Args:
      value: a scalar, or an array that broadcasts to the parameter's
        shape. It must be representable in the parameter's dtype (an
        overflow is an error, not an infinity).
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.constant(-7.0)(random.key(0), (2,))
    Array([-7., -7.], dtype=float32)
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, filled with the constant."""
        dims = _shape(shape, "constant")
        return tnp.full(dims, value, _param_dtype(dtype, "constant"))

    return _made_here(init)


# -- simple distributions -----------------------------------------------------------


def normal(stddev: float = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initialiser drawing from a normal distribution of mean 0.

    Args:
      stddev: the standard deviation. Default 0.01.
      dtype: the initialiser's default dtype (float or complex).

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.normal(1.0)(random.key(0), (10000,))
    >>> w.dtype, bool(abs(w.std() - 1.0) < 0.05)
    (dtype('float32'), True)
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, drawn from the normal distribution."""
        dt = _param_dtype(dtype, "normal")
        work = _work_dtype(dt, "normal", complex_ok=True)
        return (random.normal(key, shape, work) * stddev).astype(dt)

    return _made_here(init)


def uniform(scale: float = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initialiser drawing uniformly from [0, scale).

    Args:
      scale: the upper bound. Default 0.01.
      dtype: the initialiser's default dtype (a real float).

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.uniform(2.0)(random.key(0), (1000,))
    >>> bool(w.min() >= 0.0), bool(w.max() < 2.0)
    (True, True)
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, drawn uniformly from [0, scale)."""
        dt = _param_dtype(dtype, "uniform")
        work = _work_dtype(dt, "uniform", complex_ok=False)
        return (random.uniform(key, shape, work) * scale).astype(dt)

    return _made_here(init)


def truncated_normal(
    stddev: float = 1e-2,
    dtype: DTypeLike | None = None,
    lower: float = -2.0,
    upper: float = 2.0,
) -> Initializer:
    """An initialiser drawing from a truncated normal distribution.

    The values are ``stddev`` times a standard normal truncated to
    (lower, upper): ``stddev`` is the standard deviation before truncation,
    as in JAX.

    Args:
      stddev: the scale. Default 0.01.
      dtype: the initialiser's default dtype (a real float).
      lower: the lower truncation bound, in standard deviations. Default -2.
      upper: the upper bound. Default 2.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.truncated_normal(1.0)(random.key(0), (1000,))
    >>> bool(w.min() > -2.0), bool(w.max() < 2.0)
    (True, True)
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, drawn from the truncated normal distribution."""
        dt = _param_dtype(dtype, "truncated_normal")
        work = _work_dtype(dt, "truncated_normal", complex_ok=False)
        x = random.truncated_normal(key, lower, upper, shape, work)
        return (x * stddev).astype(dt)

    return _made_here(init)


# -- variance scaling -----------------------------------------------------------------


def _axes_size(shape: tuple[int, ...], axes: int | Sequence[int]) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[a] for a in axes)


def _fans(
    shape: tuple[int, ...],
    in_axis: int | Sequence[int],
    out_axis: int | Sequence[int],
    batch_axis: int | Sequence[int],
) -> tuple[float, float]:
    """The effective numbers of inputs and outputs of a weight of ``shape``:
    the sizes of the input and output axes, each times the size of the
    receptive field (the axes that are neither those nor batch axes)."""
    if in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional "
            f"weights tensor (shape {shape}) with default in_axis. Must be at "
            f"least 2D or specify in_axis explicitly."
        )
    fan_in = _axes_size(shape, in_axis)
    fan_out = _axes_size(shape, out_axis)
    batch = _axes_size(shape, batch_axis)
    receptive = math.prod(shape) / fan_in / fan_out / batch
    return fan_in * receptive, fan_out * receptive


def _complex_polar(radius: Array, key: Array, dt: np.dtype[Any]) -> Array:
    """``radius * exp(i theta)`` in ``dt`` for a uniformly random theta."""
    angle = (2 * math.pi) * random.uniform(key, radius.shape, radius.dtype)
    re = (radius * tnp.cos(angle)).astype(dt)
    im = (radius * tnp.sin(angle)).astype(dt)
    return re + im * 1j


def variance_scaling(
    scale: float,
    mode: str,
    distribution: str,
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """An initialiser whose variance is ``scale / n``, n a fan of the shape.

    n is, by ``mode``: the number of inputs (``'fan_in'``), of outputs
    (``'fan_out'``), their mean (``'fan_avg'``) or geometric mean
    (``'fan_geo_avg'``), each counting the receptive field (axes that are
    not ``in_axis``, ``out_axis`` or ``batch_axis``, e.g. a convolution's
    spatial axes).

    ``'truncated_normal'`` draws a normal truncated at two standard
    deviations, scaled so that the truncated values have the variance
    (divided by 0.87962566103423978, their standard deviation);
    ``'uniform'`` draws from [-sqrt(3 scale / n), sqrt(3 scale / n)).
    Complex dtypes get uniform phases (a disk for ``'uniform'``).

    Args:
      scale: the variance's numerator (positive).
      mode: ``'fan_in'``, ``'fan_out'``, ``'fan_avg'`` or ``'fan_geo_avg'``.
      distribution: ``'truncated_normal'``, ``'normal'`` or ``'uniform'``.
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    Raises:
      ValueError: an unknown ``mode`` or ``distribution`` (here when the
        initialiser is made; JAX only when it is called); a negative
        ``scale``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> init = initializers.variance_scaling(2.0, 'fan_in', 'normal')
    >>> w = init(random.key(0), (200, 100))
    >>> bool(abs(w.var() - 2.0 / 200) < 0.0005)
    True
    """
    if not scale >= 0:
        raise ValueError(
            f"variance_scaling: scale is a variance's numerator and must not be "
            f"negative, got {scale!r}"
        )
    if mode not in _MODES:
        raise ValueError(
            f"invalid mode for variance scaling initializer: {mode!r}; "
            f"expected one of {', '.join(map(repr, _MODES))}"
        )
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"invalid distribution for variance scaling initializer: "
            f"{distribution!r}; expected one of "
            f"{', '.join(map(repr, _DISTRIBUTIONS))}"
        )

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, with variance scale / n."""
        dt = _param_dtype(dtype, "variance_scaling")
        work = _work_dtype(dt, "variance_scaling", complex_ok=True)
        dims = _shape(shape, "variance_scaling")
        if math.prod(dims) == 0:
            return tnp.zeros(dims, dt)
        fan_in, fan_out = _fans(dims, in_axis, out_axis, batch_axis)
        n = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo_avg": math.sqrt(fan_in * fan_out),
        }[mode]
        stddev = math.sqrt(scale / n)
        is_complex = _dtypes.isdtype(work, "complex floating")
        if distribution == "normal":
            x = random.normal(key, dims, work) * stddev
        elif not is_complex and distribution == "truncated_normal":
            x = random.truncated_normal(key, -2, 2, dims, work)
            x = x * (stddev / _TRUNCATED_STDDEV)
        elif not is_complex:
            x = random.uniform(key, dims, work, -1, 1) * (math.sqrt(3) * stddev)
        else:
            radius_key, angle_key = random.split(key)
            u = random.uniform(radius_key, dims, _real_of(work))
            if distribution == "uniform":
                # Uniform on the disk of radius sqrt(2): E|z|**2 = 1.
                radius = tnp.sqrt(2 * u)
            else:
                # |z|**2 exponential (a complex normal) truncated at 4.
                radius = tnp.sqrt(-tnp.log1p(-(1 - math.exp(-4)) * u))
                radius = radius / _COMPLEX_TRUNCATED_STDDEV
            x = _complex_polar(radius * stddev, angle_key, work)
        return x.astype(dt)

    return _made_here(init)


def glorot_uniform(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The Glorot (Xavier) uniform initialiser:
    ``variance_scaling(1.0, 'fan_avg', 'uniform')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.glorot_uniform()(random.key(0), (3, 2)).dtype
    dtype('float32')
    """
    return variance_scaling(
        1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype
    )


def glorot_normal(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The Glorot (Xavier) normal initialiser:
    ``variance_scaling(1.0, 'fan_avg', 'truncated_normal')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.glorot_normal()(random.key(0), (3, 2), 'float16').dtype
    dtype('float16')
    """
    return variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def lecun_uniform(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The LeCun uniform initialiser:
    ``variance_scaling(1.0, 'fan_in', 'uniform')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.lecun_uniform()(random.key(0), (3, 2)).shape
    (3, 2)
    """
    return variance_scaling(
        1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype
    )


def lecun_normal(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The LeCun normal initialiser (Flax's default for kernels):
    ``variance_scaling(1.0, 'fan_in', 'truncated_normal')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.lecun_normal()(random.key(0), (400, 100))
    >>> bool(abs(w.var() - 1 / 400) < 0.0001)
    True
    """
    return variance_scaling(
        1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def he_uniform(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The He (Kaiming) uniform initialiser:
    ``variance_scaling(2.0, 'fan_in', 'uniform')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.he_uniform()(random.key(0), (3, 3, 8, 16)).shape
    (3, 3, 8, 16)
    """
    return variance_scaling(
        2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype
    )


def he_normal(
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: DTypeLike | None = None,
) -> Initializer:
    """The He (Kaiming) normal initialiser:
    ``variance_scaling(2.0, 'fan_in', 'truncated_normal')``.

    Args:
      in_axis: the input axis or axes of the weight. Default -2.
      out_axis: the output axis or axes. Default -1.
      batch_axis: axes to leave out of the fans. Default none.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``.

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> initializers.he_normal()(random.key(0), (3, 2), 'bfloat16').dtype
    dtype(bfloat16)
    """
    return variance_scaling(
        2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# -- orthogonal ---------------------------------------------------------------------


def _orthonormal_columns(a: Array) -> Array:
    """The Q of ``a``'s reduced QR decomposition (a: n x m, n >= m), its
    columns' signs (phases) those of R's diagonal, so that Q is uniformly
    distributed (Haar) when ``a`` is Gaussian."""
    q, r = linalg.qr(a, full_matrices=False)
    d = tnp.diagonal(r)
    magnitude = tnp.abs(d)
    zero = magnitude == 0
    phase = tnp.where(zero, 1, d / tnp.where(zero, 1, magnitude))
    return (q * phase).astype(a.dtype)


def orthogonal(
    scale: float = 1.0, column_axis: int = -1, dtype: DTypeLike | None = None
) -> Initializer:
    """An initialiser of (scaled) matrices with orthonormal columns or rows,
    uniformly distributed.

    The parameter is seen as a matrix whose columns lie along
    ``column_axis`` and whose rows are all other axes; its columns are
    orthonormal when there are at least as many rows, its rows otherwise.

    Args:
      scale: the factor applied to the orthonormal matrix. Default 1.
      column_axis: the axis of the columns. Default -1.
      dtype: the initialiser's default dtype (float or complex).
        bfloat16 and float16 are computed in float32 (JAX refuses them).

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)``; it needs a shape
      of at least two dimensions.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.orthogonal()(random.key(0), (5, 3))
    >>> bool((abs(w.T @ w - tnp.eye(3)) < 1e-5).all())
    True
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The parameter, an orthonormal matrix times scale."""
        dt = _param_dtype(dtype, "orthogonal")
        work = _work_dtype(dt, "orthogonal", complex_ok=True)
        dims = _shape(shape, "orthogonal")
        if len(dims) < 2:
            raise ValueError(
                f"orthogonal initializer requires at least a 2D shape, got {dims}"
            )
        if math.prod(dims) == 0:
            return tnp.zeros(dims, dt)
        axis = column_axis % len(dims)
        n_cols = dims[axis]
        n_rows = math.prod(dims) // n_cols
        tall = n_rows >= n_cols
        a = random.normal(key, (n_rows, n_cols) if tall else (n_cols, n_rows), work)
        q = _orthonormal_columns(a)
        q = q if tall else q.T
        rest = dims[:axis] + dims[axis + 1 :]
        q = tnp.moveaxis(q.reshape(*rest, n_cols), -1, axis)
        return (q * scale).astype(dt)

    return _made_here(init)


def delta_orthogonal(
    scale: float = 1.0, column_axis: int = -1, dtype: DTypeLike | None = None
) -> Initializer:
    """An initialiser of convolution kernels that are orthogonal at the
    centre of the window and zero elsewhere (Xiao et al., 2018).

    Args:
      scale: the factor applied to the orthonormal matrix. Default 1.
      column_axis: the axis of the columns of the centre matrix. Default -1.
      dtype: the initialiser's default dtype.

    Returns:
      The initialiser ``init(key, shape, dtype=dtype)`` for 3-, 4- or 5-d
      shapes whose last axis (outputs) is at least as long as the one
      before (inputs).

    >>> from typelattice import random
    >>> from typelattice.nn import initializers
    >>> w = initializers.delta_orthogonal()(random.key(0), (3, 3, 4))
    >>> float(abs(w[0]).sum()), w[1].shape
    (0.0, (3, 4))
    """

    def init(
        key: Array, shape: Sequence[int], dtype: DTypeLike | None = dtype
    ) -> Array:
        """The kernel: an orthonormal matrix at the centre, zeros elsewhere."""
        dt = _param_dtype(dtype, "delta_orthogonal")
        dims = _shape(shape, "delta_orthogonal")
        if len(dims) not in (3, 4, 5):
            raise ValueError(
                f"Delta orthogonal initializer requires a 3D, 4D or 5D shape, "
                f"got {dims}"
            )
        if dims[-1] < dims[-2]:
            raise ValueError(
                f"delta_orthogonal: `fan_in` (shape[-2] = {dims[-2]}) must be "
                f"less or equal than `fan_out` (shape[-1] = {dims[-1]})"
            )
        centre = orthogonal(scale, column_axis, dt)(key, dims[-2:])
        middle = tuple((k - 1) // 2 for k in dims[:-2])
        return tnp.zeros(dims, dt).at[middle].set(centre)

    return _made_here(init)


_MADE_HERE.update((zeros, ones))
