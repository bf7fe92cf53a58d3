"""``pad``: every padding mode of jax.numpy's, on lax (``lax.pad`` for
constants, slices, reversals and concatenations for the others).

Each axis is padded in turn, first to last, so that the corners of a
multi-axis pad see the axes padded before them (NumPy's order). The result
keeps the array's dtype and weak flag; padding values are converted to it
and must fit (a float constant does not silently become an integer).
"""

# Package-internal: shares the shape module's conversions and checks.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from typelattice import _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl
from typelattice._basearray import Array
from typelattice.numpy import _creation, _reductions, _shape, _ufuncs
from typelattice.numpy._elementwise import lax_function

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike

__all__ = ["pad"]

Pairs = list[tuple[int, int]]

# The keyword arguments each mode takes (jax.numpy's table).
_MODES: Final[dict[str, tuple[str, ...]]] = {
    "constant": ("constant_values",),
    "edge": (),
    "wrap": (),
    "empty": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _pairs(value: Any, ndim: int, name: str) -> list[tuple[Any, Any]]:
    """``value`` as one ``(before, after)`` pair per axis, broadcast as
    NumPy does: a scalar, one pair, or one pair per axis."""
    arr: np.ndarray[Any, Any] = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    elif arr.ndim == 1:
        arr = arr.reshape(1, -1) if arr.shape[0] == 2 else arr.reshape(-1, 1)
    try:
        full = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: {name} {value!r} does not broadcast to one (before, after) "
            f"pair for each of the {ndim} axes"
        ) from None
    return [(full[i, 0], full[i, 1]) for i in range(ndim)]


def _widths(pad_width: Any, ndim: int) -> Pairs:
    out: Pairs = []
    for before, after in _pairs(pad_width, ndim, "pad_width"):
        pair: list[int] = []
        for v in (before, after):
            as_array: np.ndarray[Any, Any] = np.asarray(v)
            if as_array.dtype.kind not in "iu" or as_array.shape:
                raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
            n = int(v)
            if n < 0:
                raise ValueError(
                    f"pad: pad_width must not be negative, got {pad_width!r}"
                )
            pair.append(n)
        out.append((pair[0], pair[1]))
    return out


def _value(x: Any, v: Any) -> Any:
    """A padding value as a strong scalar of ``x``'s dtype (it must fit the
    dtype)."""
    value = _shape._fitting_array(v, x.dtype, False, "pad", "pad with")
    if value.shape:
        raise ValueError(
            f"pad: padding values must be scalars, got shape {value.shape}"
        )
    return value


def _block(x: Any, axis: int, n: int, value: Any) -> Any:
    """``n`` copies of the scalar ``value`` along ``axis``, x's other axes."""
    shape = (*x.shape[:axis], n, *x.shape[axis + 1 :])
    return lax.broadcast_in_dim(value, shape, ())


def _cut(x: Any, axis: int, start: int, stop: int) -> Any:
    return lax.slice_in_dim(x, start, stop, 1, axis)


def _repeat(edge: Any, axis: int, n: int) -> Any:
    """``edge`` (length 1 along ``axis``) repeated ``n`` times there."""
    shape = (*edge.shape[:axis], n, *edge.shape[axis + 1 :])
    return lax.broadcast_in_dim(edge, shape, tuple(range(edge.ndim)))


def _join(parts: Sequence[Any], axis: int) -> Any:
    kept = [p for p in parts if p.shape[axis]]
    if len(kept) == 1:
        return kept[0]
    return lax.concatenate(kept or [parts[0]], axis)


def _same_weak(out: Any, x: Any) -> Any:
    """``out`` with ``x``'s weak flag."""
    return _shape._weak_as(out, x)


def _empty_axis(axis: int, pads: tuple[int, int], mode: str) -> None:
    if pads != (0, 0):
        raise ValueError(
            f"pad: can't extend the empty axis {axis} using modes other than "
            f"'constant' or 'empty' (mode={mode!r})"
        )


def _reflect(x: Any, axis: int, before: int, after: int, mode: str, odd: bool) -> Any:
    """'reflect' (the edge not repeated) or 'symmetric' (repeated) along
    ``axis``, in chunks of at most the array's period, each reflecting what
    is already there (NumPy's way); ``odd``: the chunk turned about the edge
    value (``2 * edge - chunk``), a linear continuation."""
    n = x.shape[axis]
    if n == 1 and mode == "reflect":  # nothing to reflect: the edge repeats
        edge = _cut(x, axis, 0, 1)
        return _join([_repeat(edge, axis, before), x, _repeat(edge, axis, after)], axis)
    offset = 1 if mode == "reflect" else 0
    period = n - offset
    while before or after:
        size = x.shape[axis]
        if before:
            k = min(before, period)
            chunk = lax.rev(_cut(x, axis, offset, offset + k), (axis,))
            if odd:
                edge = _repeat(_cut(x, axis, 0, 1), axis, k)
                chunk = lax.sub(lax.add(edge, edge), chunk)
            x = _join([chunk, x], axis)
            before -= k
            size = x.shape[axis]
        if after:
            k = min(after, period)
            chunk = lax.rev(_cut(x, axis, size - offset - k, size - offset), (axis,))
            if odd:
                edge = _repeat(_cut(x, axis, size - 1, size), axis, k)
                chunk = lax.sub(lax.add(edge, edge), chunk)
            x = _join([x, chunk], axis)
            after -= k
    return x


def _wrap(x: Any, axis: int, before: int, after: int) -> Any:
    """The array repeated periodically along ``axis``."""
    n = x.shape[axis]
    reps = 1 + -(-before // n) + -(-after // n)
    start = (-(-before // n)) * n - before
    tiled = _join([x] * reps, axis)
    return _cut(tiled, axis, start, start + before + n + after)


def _ramp(x: Any, axis: int, before: int, after: int, ends: tuple[Any, Any]) -> Any:
    """Linear ramps from the end values to the edges (the edges excluded),
    computed in the array's dtype (floored for integers, as JAX)."""
    n = x.shape[axis]
    parts: list[Any] = []
    for count, end, lo in ((before, ends[0], True), (after, ends[1], False)):
        if not count:
            parts.append(None)
            continue
        edge = _cut(x, axis, 0, 1) if lo else _cut(x, axis, n - 1, n)
        shape = [1] * x.ndim
        shape[axis] = count
        steps: np.ndarray[Any, Any] = np.arange(count, dtype=np.float64)
        fraction = np.reshape(steps, shape) / count
        kind = _dtypes.kind_of(x.dtype)
        work = x.dtype if kind in "fc" else _core.key_dtype(float, False)
        start = _creation.asarray(
            _value(_creation.asarray(0, dtype=work), end), dtype=work
        )
        stop = _creation.asarray(edge, dtype=work)
        ramp = start + (stop - start) * _creation.asarray(fraction, dtype=work)
        if kind not in "fc":
            ramp = _ufuncs.floor(ramp)
        ramp = _shape.broadcast_to(
            ramp, (*x.shape[:axis], count, *x.shape[axis + 1 :])
        ).astype(x.dtype)
        parts.append(ramp if lo else lax.rev(ramp, (axis,)))
    return _join([p for p in (parts[0], x, parts[1]) if p is not None] or [x], axis)


def _stat(
    x: Any,
    axis: int,
    before: int,
    after: int,
    lengths: tuple[Any, Any] | None,
    fn: Callable[..., Any],
) -> Any:
    """Each side padded with a statistic (maximum, mean...) of the
    ``lengths`` elements nearest it (the whole axis by default)."""
    n = x.shape[axis]
    stats: list[Any] = []
    for side, count in ((0, before), (1, after)):
        part = x
        if lengths is not None:
            length = int(lengths[side])
            if length == 0:
                raise ValueError("pad: stat_length of 0 yields no value for padding")
            length = min(length, n)
            part = (
                _cut(x, axis, 0, length) if side == 0 else _cut(x, axis, n - length, n)
            )
        stat = fn(part, axis=axis, keepdims=True)
        if _dtypes.kind_of(x.dtype) in "iu":
            stat = _ufuncs.round(stat)
        stat = _creation.asarray(stat).astype(x.dtype)
        stats.append(_repeat(stat, axis, count))
    return _join([stats[0], x, stats[1]], axis)


def _median(x: Any, axis: int, keepdims: bool) -> Any:
    """The median along ``axis`` (kept, of length 1): the middle of the
    sorted values, or the mean of the two middle ones."""
    n = x.shape[axis]
    ordered = _shape.sort(x, axis=axis)
    middle = _cut(ordered, axis, (n - 1) // 2, n // 2 + 1)
    return _reductions.mean(middle, axis=axis, keepdims=keepdims)


@lax_function
def pad(
    array: ArrayLike,
    pad_width: Any,
    mode: str | Callable[..., Any] = "constant",
    **kwargs: Any,
) -> Array:
    """``array`` extended along each axis, as jax.numpy's ``pad``.

    Modes: ``'constant'`` (``constant_values``, default 0: a scalar, one
    pair, or a pair per axis), ``'edge'`` (the edge repeated), ``'wrap'``
    (the array repeated), ``'reflect'`` and ``'symmetric'`` (mirrored
    without and with the edge; ``reflect_type='odd'`` continues the array
    through its edge instead), ``'linear_ramp'`` (from ``end_values``,
    default 0, to the edge), ``'maximum'``, ``'minimum'``, ``'mean'``,
    ``'median'`` (of the ``stat_length`` elements nearest each side,
    default the whole axis; rounded for integers) and ``'empty'`` (zeros,
    as jax.numpy).

    Args:
      array: an array.
      pad_width: an int, a ``(before, after)`` pair, or a pair per axis.
      mode: one of the modes above.
      **kwargs: the mode's options, named above.

    Returns:
      An Array of ``array``'s dtype and weak flag.

    Raises:
      NotImplementedError: a function as mode.
      TypeError: a mode that is not a string, widths that are not
        integers, or a padding value that does not fit the dtype.
      ValueError: an unknown mode, options the mode does not take, or
        negative widths.

    >>> import typelattice.numpy as tnp
    >>> x = tnp.asarray([1, 2, 3])
    >>> tnp.pad(x, (2, 1))
    Array([0, 0, 1, 2, 3, 0], dtype=int32)
    >>> tnp.pad(x, 2, mode='reflect')
    Array([3, 2, 1, 2, 3, 2, 1], dtype=int32)
    >>> tnp.pad(x, (0, 3), mode='reflect', reflect_type='odd')
    Array([1, 2, 3, 4, 5, 6], dtype=int32)
    """
    x = _shape._arr(array, "pad")
    names = ", ".join(repr(m) for m in _MODES)
    if callable(mode):
        raise NotImplementedError(
            f"pad: a function as mode is not supported; use one of {names}"
        )
    if not isinstance(mode, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"pad: mode must be one of {names}, got {mode!r}")
    if mode not in _MODES:
        # (NumPy raises ValueError here; jax.numpy NotImplementedError.)
        raise ValueError(f"pad: unknown mode {mode!r}; use one of {names}")
    extra = set(kwargs) - set(_MODES[mode])
    if extra:
        raise ValueError(
            f"pad: unsupported keyword arguments for mode {mode!r}: "
            f"{sorted(extra)}; it takes {list(_MODES[mode]) or 'none'}"
        )
    nd = x.ndim
    widths = _widths(pad_width, nd)
    if mode == "constant":
        values = _pairs(kwargs.get("constant_values", 0), nd, "constant_values")
        if nd == 0:
            return x  # type: ignore[no-any-return]
        scalars = [_value(x, v) for pair in values for v in pair]
        # One value (known, not traced) for every side: a single lax.pad.
        known = all(type(v) is ArrayImpl for v in scalars)
        if known and len({np.asarray(v).tobytes() for v in scalars}) == 1:
            config = [(lo, hi, 0) for lo, hi in widths]
            return _same_weak(lax.pad(x, scalars[0], config), x)  # type: ignore[no-any-return]
        original = x
        for axis, (lo, hi) in enumerate(widths):
            vb, va = scalars[2 * axis], scalars[2 * axis + 1]
            x = _join([_block(x, axis, lo, vb), x, _block(x, axis, hi, va)], axis)
        return _same_weak(x, original)  # type: ignore[no-any-return]
    if mode == "empty":
        config = [(lo, hi, 0) for lo, hi in widths]
        return _same_weak(lax.pad(x, _value(x, 0), config), x) if nd else x  # type: ignore[no-any-return]
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(
            f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}"
        )
    ends = _pairs(kwargs.get("end_values", 0), nd, "end_values")
    stat_length = kwargs.get("stat_length")
    lengths = None if stat_length is None else _pairs(stat_length, nd, "stat_length")
    stat_fns: dict[str, Callable[..., Any]] = {
        "maximum": _reductions.max,
        "minimum": _reductions.min,
        "mean": _reductions.mean,
        "median": _median,
    }
    original = x
    for axis, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        if x.shape[axis] == 0:
            _empty_axis(axis, (lo, hi), mode)
        if mode == "edge":
            n = x.shape[axis]
            x = _join(
                [
                    _repeat(_cut(x, axis, 0, 1), axis, lo),
                    x,
                    _repeat(_cut(x, axis, n - 1, n), axis, hi),
                ],
                axis,
            )
        elif mode == "wrap":
            x = _wrap(x, axis, lo, hi)
        elif mode in ("reflect", "symmetric"):
            x = _reflect(x, axis, lo, hi, mode, reflect_type == "odd")
        elif mode == "linear_ramp":
            x = _ramp(x, axis, lo, hi, ends[axis])
        else:
            x = _stat(
                x,
                axis,
                lo,
                hi,
                None if lengths is None else lengths[axis],
                stat_fns[mode],
            )
    return _same_weak(x, original)  # type: ignore[no-any-return]
