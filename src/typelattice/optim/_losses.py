"""Losses, as optax's (``optax.losses``): elementwise or per example, not
averaged (take ``.mean()`` for a batch's loss).

They are written on ``typelattice.numpy`` and ``typelattice.nn`` functions,
which are on ``lax``, so they differentiate with ``grad`` and trace under
``jit`` and ``vmap``. The result has the predictions' (logits') dtype:
labels and targets are converted to it as optax does, by the checked
conversion (a label the dtype cannot hold raises OverflowError).
"""

from __future__ import annotations

from typing import Any

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn
from typelattice.numpy._creation import convert_to
from typelattice.typing import Array, ArrayLike

__all__ = [
    "cosine_distance",
    "cosine_similarity",
    "huber_loss",
    "l2_loss",
    "log_cosh",
    "sigmoid_binary_cross_entropy",
    "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels",
    "squared_error",
]


def _floating(x: ArrayLike, name: str, where: str) -> Array:
    a = tnp.asarray(x)
    if not tl.isdtype(a.dtype, "real floating"):
        raise TypeError(
            f"{where}: {name} must be a real floating array, not {a.dtype}; "
            f"convert it with .astype('float32')"
        )
    return a


def _shaped(x: ArrayLike, like: Array, name: str, where: str) -> Array:
    """``x`` as an array, checked to have ``like``'s shape (its dtype is
    kept: the loss promotes the two, as optax does)."""
    a = tnp.asarray(x)
    if a.shape != like.shape:
        raise ValueError(
            f"{where}: {name} has shape {a.shape}, but the predictions have "
            f"shape {like.shape}; give them the same shape"
        )
    return a


def _like(x: ArrayLike, like: Array, name: str, where: str) -> Array:
    """``x`` in ``like``'s dtype (checked), with ``like``'s shape."""
    a = _shaped(x, like, name, where)
    return convert_to(a, like.dtype, f"{where} ({name})")


def softmax_cross_entropy(
    logits: ArrayLike, labels: ArrayLike, axis: Any = -1
) -> Array:
    """The cross entropy of ``softmax(logits)`` with the probabilities
    ``labels``: ``-sum(labels * log_softmax(logits), axis)``.

    Args:
      logits: the unnormalised log-probabilities, floating.
      labels: probabilities of the same shape (one-hot for a class).
      axis: the axis (or axes) of the classes.

    Returns:
      The loss per example (``axis`` summed out), in the promoted dtype of
      the logits and labels (float32 for bfloat16 logits and float32
      labels, as optax).

    Raises:
      TypeError: the logits are not floating.
      ValueError: the labels' shape is not the logits'.

    >>> import typelattice.numpy as tnp
    >>> logits = tnp.asarray([[2.0, 0.0], [0.0, 0.0]])
    >>> softmax_cross_entropy(logits, tnp.asarray([[1.0, 0.0], [0.0, 1.0]])).round(4)
    Array([0.1269, 0.6931], dtype=float32)
    """
    where = "softmax_cross_entropy"
    x = _floating(logits, "logits", where)
    y = _shaped(labels, x, "labels", where)
    return -tnp.sum(y * nn.log_softmax(x, axis=axis), axis=axis)


def softmax_cross_entropy_with_integer_labels(
    logits: ArrayLike, labels: ArrayLike, axis: int = -1
) -> Array:
    """The cross entropy of ``softmax(logits)`` with the classes ``labels``:
    ``logsumexp(logits) - logits[label]``.

    Args:
      logits: the unnormalised log-probabilities, floating.
      labels: the class of each example, integers, of the logits' shape
        without ``axis``.
      axis: the axis of the classes.

    Returns:
      The loss per example, in the logits' dtype.

    Raises:
      TypeError: the logits are not floating, or the labels not integers.
      ValueError: the labels' shape does not fit the logits'.

    >>> import typelattice.numpy as tnp
    >>> logits = tnp.asarray([[2.0, 0.0], [0.0, 0.0]])
    >>> softmax_cross_entropy_with_integer_labels(logits, tnp.asarray([0, 1])).round(4)
    Array([0.1269, 0.6931], dtype=float32)
    """
    where = "softmax_cross_entropy_with_integer_labels"
    x = _floating(logits, "logits", where)
    y = tnp.asarray(labels)
    if not tl.isdtype(y.dtype, "integral"):
        raise TypeError(
            f"{where}: labels must be integers (class indices), not {y.dtype}; "
            "for probabilities use softmax_cross_entropy"
        )
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(
            f"{where}: axis {axis} is out of range for logits of ndim {x.ndim}"
        )
    ax = axis % x.ndim
    want = x.shape[:ax] + x.shape[ax + 1 :]
    if y.shape != want:
        raise ValueError(
            f"{where}: labels have shape {y.shape}, but logits of shape "
            f"{x.shape} with classes on axis {axis} need labels of shape {want}"
        )
    # The label's logit, picked by a comparison with the class indices (a
    # where, not a product with a one-hot: 0 * -inf would be NaN).
    shape = [1] * x.ndim
    shape[ax] = x.shape[ax]
    classes = tnp.reshape(tnp.arange(x.shape[ax], dtype=y.dtype), tuple(shape))
    picked = tnp.sum(tnp.where(tnp.expand_dims(y, ax) == classes, x, 0), axis=ax)
    return nn.logsumexp(x, axis=ax) - picked


def sigmoid_binary_cross_entropy(logits: ArrayLike, labels: ArrayLike) -> Array:
    """The cross entropy of ``sigmoid(logits)`` with the probabilities
    ``labels``, elementwise: ``-labels * log_sigmoid(logits) - (1 - labels)
    * log_sigmoid(-logits)``.

    Args:
      logits: floating.
      labels: probabilities of the same shape (converted to the logits'
        dtype).

    Returns:
      The loss per element, in the logits' dtype.

    >>> import typelattice.numpy as tnp
    >>> logits, labels = tnp.asarray([0.0, 2.0]), tnp.asarray([1, 0])
    >>> sigmoid_binary_cross_entropy(logits, labels).round(4)
    Array([0.6931, 2.1269], dtype=float32)
    """
    where = "sigmoid_binary_cross_entropy"
    x = _floating(logits, "logits", where)
    y = _like(labels, x, "labels", where)
    return -y * nn.log_sigmoid(x) - (1.0 - y) * nn.log_sigmoid(-x)


def _errors(predictions: ArrayLike, targets: ArrayLike | None, where: str) -> Array:
    p = _floating(predictions, "predictions", where)
    return p if targets is None else p - _shaped(targets, p, "targets", where)


def squared_error(predictions: ArrayLike, targets: ArrayLike | None = None) -> Array:
    """``(predictions - targets) ** 2``, elementwise (``predictions ** 2``
    without targets).

    Args:
      predictions: floating.
      targets: of the same shape, or None.

    Returns:
      The loss per element, in the predictions' dtype.

    >>> import typelattice.numpy as tnp
    >>> squared_error(tnp.asarray([1.0, 3.0]), tnp.asarray([0.0, 1.0]))
    Array([1., 4.], dtype=float32)
    """
    return _errors(predictions, targets, "squared_error") ** 2


def l2_loss(predictions: ArrayLike, targets: ArrayLike | None = None) -> Array:
    """Half the squared error: ``0.5 * (predictions - targets) ** 2``.

    Args:
      predictions: floating.
      targets: of the same shape, or None.

    Returns:
      The loss per element, in the predictions' dtype.

    >>> import typelattice.numpy as tnp
    >>> l2_loss(tnp.asarray([1.0, 3.0]), tnp.asarray([0.0, 1.0]))
    Array([0.5, 2. ], dtype=float32)
    """
    return 0.5 * _errors(predictions, targets, "l2_loss") ** 2


def huber_loss(
    predictions: ArrayLike, targets: ArrayLike | None = None, *, delta: float = 1.0
) -> Array:
    """The Huber loss: ``0.5 * e**2`` for ``|e| <= delta``, ``delta * (|e| -
    0.5 * delta)`` beyond.

    Args:
      predictions: floating.
      targets: of the same shape, or None.
      delta: where the loss turns from quadratic to linear (0 or more).

    Returns:
      The loss per element, in the predictions' dtype.

    Raises:
      ValueError: ``delta`` is negative or not finite.

    >>> import typelattice.numpy as tnp
    >>> huber_loss(tnp.asarray([0.5, 3.0]))
    Array([0.125, 2.5  ], dtype=float32)
    """
    where = "huber_loss"
    if not (isinstance(delta, Array) or 0.0 <= delta < float("inf")):
        raise ValueError(f"{where}: delta = {delta!r} must be a finite number >= 0")
    err = tnp.abs(_errors(predictions, targets, where))
    quadratic = tnp.minimum(err, delta)
    return 0.5 * quadratic**2 + delta * (err - quadratic)


def log_cosh(predictions: ArrayLike, targets: ArrayLike | None = None) -> Array:
    """``log(cosh(predictions - targets))``, computed without overflow.

    Args:
      predictions: floating.
      targets: of the same shape, or None.

    Returns:
      The loss per element, in the predictions' dtype.

    >>> import typelattice.numpy as tnp
    >>> log_cosh(tnp.asarray([0.0, 100.0])).round(3)
    Array([ 0.   , 99.307], dtype=float32)
    """
    e = _errors(predictions, targets, "log_cosh")
    return tnp.logaddexp(e, -e) - tnp.log(tnp.asarray(2.0, e.dtype))


def cosine_similarity(
    predictions: ArrayLike, targets: ArrayLike, *, epsilon: float = 0.0, axis: Any = -1
) -> Array:
    """The cosine of the angle between ``predictions`` and ``targets`` along
    ``axis``; each norm is at least ``sqrt(epsilon)``.

    Args:
      predictions: floating.
      targets: floating, of the same shape.
      epsilon: the smallest squared norm (0 or more).
      axis: the axis (or axes) of the vectors.

    Returns:
      The similarity per vector, in ``[-1, 1]``.

    >>> import typelattice.numpy as tnp
    >>> cosine_similarity(tnp.asarray([[1.0, 0.0]]), tnp.asarray([[1.0, 1.0]])).round(4)
    Array([0.7071], dtype=float32)
    """
    where = "cosine_similarity"
    a = _floating(predictions, "predictions", where)
    b = _shaped(_floating(targets, "targets", where), a, "targets", where)
    a_norm = tnp.sqrt(tnp.clip(tnp.sum(a * a, axis=axis, keepdims=True), epsilon))
    b_norm = tnp.sqrt(tnp.clip(tnp.sum(b * b, axis=axis, keepdims=True), epsilon))
    return tnp.sum((a / a_norm) * (b / b_norm), axis=axis)


def cosine_distance(
    predictions: ArrayLike, targets: ArrayLike, *, epsilon: float = 0.0, axis: Any = -1
) -> Array:
    """``1 - cosine_similarity(predictions, targets)``.

    Args:
      predictions: floating.
      targets: floating, of the same shape.
      epsilon: the smallest squared norm (0 or more).
      axis: the axis (or axes) of the vectors.

    Returns:
      The distance per vector, in ``[0, 2]``.

    >>> import typelattice.numpy as tnp
    >>> cosine_distance(tnp.asarray([[1.0, 0.0]]), tnp.asarray([[0.0, 1.0]]))
    Array([1.], dtype=float32)
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis)
