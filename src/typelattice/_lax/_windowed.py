"""Reductions over sliding windows: ``reduce_window`` and the primitives it
binds, ``reduce_window_sum``, ``reduce_window_max`` and ``reduce_window_min``
(pooling is written with them), as ``jax.lax``.

A window reduction pads the operand (``padding`` per axis; ``base_dilation``
spreads its elements with holes between them), slides a window of
``window_dimensions`` over it (``window_dilation`` spreads the window's
elements, ``window_strides`` steps it) and reduces each window. Padding and
holes hold the reduction's identity (0 for sums, the smallest value for
maxima), so they never change a result. The result has the operand's dtype
and weak flag; sums of narrow floats accumulate in float32.

Derivatives, as JAX's: a window sum is linear, and its transpose is a window
sum of the cotangent spread by the strides (the cotangent of each element is
the sum of the cotangents of the windows that hold it). A window maximum's
tangent is the tangent of the element it chose (the first largest of its
window): ``select_and_gather_add`` picks those tangents, linear in them;
its transpose ``select_and_scatter_add`` adds each window's cotangent to
the element the window chose, and the two are each other's transposes.
"""

# Package-internal: reads the structural family's implementation of pad.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from typelattice import _dtypes
from typelattice._array import ArrayImpl
from typelattice._lax import _elementwise as ew
from typelattice._lax import _structural as st
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    Zero,
    batch_size,
    bdim_at_front,
    check_accepts,
    defjvp,
    deflinear,
    ints_of,
    is_undefined,
    to_array,
)
from typelattice._lax._reductions import _identity

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike

__all__ = ["padtype_to_pads", "reduce_window"]

NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]
_F32: Final = np.dtype(np.float32)
_PARAMS: Final = (
    "window_dimensions",
    "window_strides",
    "padding",
    "base_dilation",
    "window_dilation",
)


# -- shapes -------------------------------------------------------------------


def _dilate(n: int, d: int) -> int:
    """The length of ``n`` elements with ``d - 1`` holes between each two."""
    return 0 if n == 0 else (n - 1) * d + 1


def _out_shape(
    shape: Shape,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Pads,
    base_dilation: Shape,
    window_dilation: Shape,
) -> Shape:
    out: list[int] = []
    for n, w, s, (lo, hi), b, wd in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = _dilate(n, b) + lo + hi
        span = _dilate(w, wd)
        out.append(0 if padded < span else (padded - span) // s + 1)
    return tuple(out)


def _check(
    fname: str,
    x: ShapedArray,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Pads,
    base_dilation: Shape,
    window_dilation: Shape,
) -> Shape:
    """The result's shape, or jax.lax's errors for inconsistent parameters."""
    if x.ndim != len(window_dimensions):
        raise TypeError(
            f"{fname} got the wrong number of window_dimensions for operand: "
            f"got operand shape {x.shape} with window_dimensions "
            f"{window_dimensions}."
        )
    for what, value in (
        ("window_strides", window_strides),
        ("padding", padding),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if len(value) != len(window_dimensions):
            raise TypeError(
                f"{fname} got inconsistent {what} and window_dimensions: got "
                f"{what} {value} and window_dimensions {window_dimensions}."
            )
    for what, value in (
        ("window_dimensions", window_dimensions),
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if any(v < 1 for v in value):
            raise TypeError(f"{fname}: {what} must be positive integers, got {value}")
    return _out_shape(
        x.shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """The explicit ``(low, high)`` padding of a padding name.

    ``'VALID'`` pads nothing; ``'SAME'`` pads so that the output has
    ``ceil(n / stride)`` elements per axis, half the padding before (the
    smaller half) and the rest after; ``'SAME_LOWER'`` puts the larger half
    before.

    Args:
      in_shape: the operand's shape (of the windowed axes).
      window_shape: the window's shape, dilated.
      window_strides: the strides.
      padding: ``'VALID'``, ``'SAME'`` or ``'SAME_LOWER'`` (any case).

    Returns:
      A list of ``(low, high)`` pairs.

    Raises:
      ValueError: an unknown padding name.

    >>> padtype_to_pads((5,), (2,), (2,), 'SAME')
    [(0, 1)]
    """
    name = padding.upper()
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    if name not in ("SAME", "SAME_LOWER"):
        raise ValueError(
            f"Unknown padding type: {padding!r}: use 'VALID', 'SAME', "
            "'SAME_LOWER' or a sequence of (low, high) pairs"
        )
    pads: list[tuple[int, int]] = []
    for n, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-n // s)
        total = max(0, (out - 1) * s + w - n)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if name == "SAME" else (large, small))
    return pads


# -- the windows of an array ----------------------------------------------------


def _windows(
    x: NDArray,
    fill: Any,
    *,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Pads,
    base_dilation: Shape,
    window_dilation: Shape,
) -> NDArray:
    """A view of shape ``out_shape + window_dimensions``: each window's
    elements, padding and holes holding ``fill``."""
    config = tuple(
        (lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=True)
    )
    trivial = all(c == (0, 0, 0) for c in config)
    padded = (
        x
        if trivial
        else st._pad_impl(x, np.asarray(fill, x.dtype), padding_config=config)
    )
    out_shape = _out_shape(
        x.shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    if 0 in out_shape:
        return np.zeros(out_shape + window_dimensions, x.dtype)
    spans = tuple(
        _dilate(w, d) for w, d in zip(window_dimensions, window_dilation, strict=True)
    )
    view = sliding_window_view(padded, spans)
    steps = tuple(
        np.s_[: n * s : s] for n, s in zip(out_shape, window_strides, strict=True)
    )
    spread = tuple(np.s_[::d] for d in window_dilation)
    return view[steps + spread]


def _flat_windows(x: NDArray, fill: Any, params: dict[str, Any]) -> NDArray:
    """:func:`_windows` with each window's elements along one last axis."""
    view = _windows(x, fill, **params)
    n = len(params["window_dimensions"])
    return view.reshape(*view.shape[:n], -1)


def _accumulating(x: NDArray) -> NDArray:
    narrow = _dtypes.kind_of(x.dtype) == "f" and x.dtype.itemsize < 4
    return x.astype(_F32) if narrow else x


def _selected(x: NDArray, select: str, params: dict[str, Any]) -> NDArray:
    """For each window, the flat index into ``x`` of the element it chooses
    (the first largest for ``select='ge'``, smallest for ``'le'``), -1 where
    that is padding or a hole."""
    fill = _identity("max" if select == "ge" else "min", x.dtype)
    values = _flat_windows(_accumulating(x), fill, params)
    pick = (np.argmax if select == "ge" else np.argmin)(values, axis=-1)
    if not x.size:
        return np.full(pick.shape, -1, np.int64)
    # The chosen tap's position in the padded, dilated operand, then in x,
    # axis by axis (arithmetic on small broadcast arrays where an axis has
    # no window, padding or dilation: most axes of a pooling).
    # (NumPy's stubs leave unravel_index's result unknown.)
    taps = cast(
        "tuple[NDArray, ...]", np.unravel_index(pick, params["window_dimensions"])
    )
    valid: Any = True
    flat: Any = 0
    for axis, n in enumerate(x.shape):
        shape = [1] * pick.ndim
        shape[axis] = pick.shape[axis]
        count: NDArray = np.arange(pick.shape[axis], dtype=np.int64)
        at: Any = np.reshape(count, shape)
        at = at * params["window_strides"][axis] - params["padding"][axis][0]
        if params["window_dimensions"][axis] > 1:
            at = at + taps[axis] * params["window_dilation"][axis]
        base = params["base_dilation"][axis]
        lo, hi = params["padding"][axis]
        if base != 1:
            at, rest = np.divmod(at, base)
            valid = valid & (rest == 0)
        if base != 1 or lo > 0 or hi > 0:
            valid = valid & (at >= 0) & (at < n)
            at = np.clip(at, 0, n - 1)
        flat = flat * n + at
    flat = np.broadcast_to(flat, pick.shape)
    if valid is True:
        return np.asarray(flat)
    return np.where(valid, flat, -1)


# -- reduce_window_sum, _max, _min ----------------------------------------------


def _window_batch(prim: Primitive) -> None:
    """The batching rule: the batch axis gets a window of 1."""

    @prim.def_batch
    def _batch(
        args: Sequence[Any], dims: Sequence[int | None], **params: Any
    ) -> tuple[Any, int]:
        (x,), (d,) = args, dims
        assert d is not None
        new = dict(params)
        for name, one in zip(_PARAMS, (1, 1, (0, 0), 1, 1), strict=True):
            value = list(params[name])
            value.insert(d, one)
            new[name] = tuple(value)
        return prim.bind(x, **new), d


def _window_reduction(
    name: str, kinds: str, reduce: Callable[[NDArray, Shape], NDArray], fill: str
) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, **params: Any) -> ShapedArray:
        check_accepts(name, x, kinds)
        return x.update(shape=_check(name, x, **params))

    @prim.def_impl
    def _impl(x: NDArray, **params: Any) -> NDArray:
        identity = 0 if fill == "sum" else _identity(fill, x.dtype)
        view = _windows(_accumulating(x), identity, **params)
        n = x.ndim
        out = reduce(view, tuple(range(n, 2 * n)))
        return np.asarray(out).astype(x.dtype, copy=False)

    _window_batch(prim)
    return prim


def _sum(view: NDArray, axes: Shape) -> NDArray:
    return np.asarray(np.sum(view, axis=axes, dtype=view.dtype))


def _max(view: NDArray, axes: Shape) -> NDArray:
    return np.asarray(np.max(view, axis=axes))


def _min(view: NDArray, axes: Shape) -> NDArray:
    return np.asarray(np.min(view, axis=axes))


reduce_window_sum_p: Final = _window_reduction("reduce_window_sum", "iufc", _sum, "sum")
reduce_window_max_p: Final = _window_reduction(
    "reduce_window_max", "biufc", _max, "max"
)
reduce_window_min_p: Final = _window_reduction(
    "reduce_window_min", "biufc", _min, "min"
)


def _reduce_window_sum_transpose(
    ct: Any,
    x: Any,
    *,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Pads,
    base_dilation: Shape,
    window_dilation: Shape,
) -> list[Any]:
    # The cotangent spread by the strides (holes of stride - 1) and padded so
    # that a window sum over it, stepping by the base dilation, lands on the
    # operand's elements: each one sums the cotangents of the windows that
    # hold it (the window of ones is symmetric, so it needs no reversal).
    assert is_undefined(x)
    shape = x.aval.shape
    config: list[tuple[int, int, int]] = []
    for n, w, s, (lo, _), b, wd, m in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        ct.shape,
        strict=True,
    ):
        before = _dilate(w, wd) - lo - 1
        after = _dilate(n, b) + _dilate(w, wd) - 1 - _dilate(m, s) - before
        config.append((before, after, s - 1))
    zero = ew._like(ShapedArray((), ct.dtype, ct.weak_type), 0)
    spread = st.pad_p.bind(ct, zero, padding_config=tuple(config))
    out = reduce_window_sum_p.bind(
        spread,
        window_dimensions=window_dimensions,
        window_strides=base_dilation,
        padding=((0, 0),) * len(shape),
        base_dilation=(1,) * len(shape),
        window_dilation=window_dilation,
    )
    return [out]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


# -- choosing: select_and_gather_add, select_and_scatter_add ---------------------

select_and_gather_add_p: Final = Primitive("select_and_gather_add")
select_and_scatter_add_p: Final = Primitive("select_and_scatter_add")


def _check_pair(
    fname: str, t: ShapedArray, x: ShapedArray, shape: Shape, select: str
) -> None:
    if t.shape != shape:
        raise TypeError(
            f"{fname}: the first operand has shape {t.shape}, expected {shape}"
        )
    if t.dtype != x.dtype:
        raise TypeError(
            f"{fname} requires operands of one dtype, got {t.dtype.name} and "
            f"{x.dtype.name}"
        )
    if select not in ("ge", "le"):
        raise ValueError(f"{fname}: select must be 'ge' or 'le', got {select!r}")


@select_and_gather_add_p.def_abstract_eval
def _gather_abstract(
    t: ShapedArray, x: ShapedArray, *, select: str, **params: Any
) -> ShapedArray:
    _check_pair("select_and_gather_add", t, x, x.shape, select)
    shape = _check("select_and_gather_add", x, **params)
    return t.update(shape=shape, weak_type=t.weak_type and x.weak_type)


@select_and_gather_add_p.def_impl
def _gather_impl(t: NDArray, x: NDArray, *, select: str, **params: Any) -> NDArray:
    chosen = _selected(x, select, params)
    picked = t.ravel()[np.maximum(chosen, 0)]
    return np.where(chosen >= 0, picked, np.zeros((), t.dtype)).astype(t.dtype)


@select_and_scatter_add_p.def_abstract_eval
def _scatter_abstract(
    s: ShapedArray, x: ShapedArray, *, select: str, **params: Any
) -> ShapedArray:
    out = _check("select_and_scatter_add", x, **params)
    _check_pair("select_and_scatter_add", s, x, out, select)
    return s.update(shape=x.shape, weak_type=s.weak_type and x.weak_type)


@select_and_scatter_add_p.def_impl
def _scatter_impl(s: NDArray, x: NDArray, *, select: str, **params: Any) -> NDArray:
    chosen = _selected(x, select, params).ravel()
    kept = chosen >= 0
    into, values = chosen[kept], _accumulating(s).ravel()[kept]
    if values.dtype.kind in "fc":
        # Sums by position, in float64 (the cotangents of float32 and
        # narrower rounded once): bincount is an order of magnitude faster
        # than np.add.at.
        def total(v: NDArray) -> NDArray:
            return np.bincount(into, weights=v, minlength=x.size)

        acc = total(values.real)
        if values.dtype.kind == "c":
            acc = acc + 1j * total(values.imag)
    else:
        acc = np.zeros(x.size, values.dtype)
        np.add.at(acc, into, values)
    return np.reshape(acc, x.shape).astype(s.dtype)


def _choosing_rules(prim: Primitive, other: Primitive) -> None:
    """JVP, transpose and batching of ``prim``, linear in its first operand
    and piecewise constant in the second (which only chooses); its
    transpose is ``other``."""

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        (t, x), (dt, _) = primals, tangents
        out = prim.bind(t, x, **params)
        if type(dt) is Zero:
            return out, Zero.of(out)
        return out, prim.bind(dt, x, **params)

    def transpose(ct: Any, t: Any, x: Any, **params: Any) -> list[Any]:
        assert is_undefined(t) and not is_undefined(x)
        if type(ct) is Zero:
            return [Zero(t.aval), None]
        return [st._as_aval(other.bind(ct, x, **params), t.aval), None]

    def batch(
        args: Sequence[Any], dims: Sequence[int | None], **params: Any
    ) -> tuple[Any, int]:
        size = batch_size(args, dims)
        t, x = (bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True))
        new = dict(params)
        for name, one in zip(_PARAMS, (1, 1, (0, 0), 1, 1), strict=True):
            new[name] = (one, *params[name])
        return prim.bind(t, x, **new), 0

    prim.def_jvp(jvp)
    prim.def_transpose(transpose)
    prim.def_batch(batch)


_choosing_rules(select_and_gather_add_p, select_and_scatter_add_p)
_choosing_rules(select_and_scatter_add_p, select_and_gather_add_p)


def _chooser_jvp(select: str) -> Callable[..., Any]:
    def rule(g: Any, x: Any, **params: Any) -> Any:
        return select_and_gather_add_p.bind(g, x, select=select, **params)

    return rule


defjvp(reduce_window_max_p, _chooser_jvp("ge"))
defjvp(reduce_window_min_p, _chooser_jvp("le"))


# -- reduce_window ----------------------------------------------------------------

# The computations with a window primitive, and the identity each needs for
# its init_value (JAX binds the same primitives for them).
_MONOIDS: Final[dict[Any, tuple[Primitive, str]]] = {
    ew.add: (reduce_window_sum_p, "sum"),
    ew.max: (reduce_window_max_p, "max"),
    ew.min: (reduce_window_min_p, "min"),
}


def _is_identity(init: Any, kind: str) -> bool:
    """Whether ``init`` is a concrete scalar equal to ``kind``'s identity
    in its own dtype (a tracer is not concrete)."""
    if type(init) is not ArrayImpl:
        return False
    value = np.asarray(init)
    if value.shape:
        return False
    want = 0 if kind == "sum" else _identity(kind, value.dtype)
    return bool(value == want)


def _pairs(fname: str, padding: Any) -> Pads:
    out: list[tuple[int, int]] = []
    for item in padding:
        pair = ints_of(fname, "padding", item)
        if len(pair) != 2:
            raise TypeError(
                f"lax.{fname}: padding must be 'VALID', 'SAME' or a sequence "
                f"of (low, high) pairs, got {padding!r}"
            )
        out.append((pair[0], pair[1]))
    return tuple(out)


def reduce_window(
    operand: ArrayLike,
    init_value: ArrayLike,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Array:
    """The reduction of each window of ``operand`` by ``computation``.

    ``computation`` is :func:`typelattice.lax.add`, :func:`~typelattice.lax.max`
    or :func:`~typelattice.lax.min`. With ``init_value`` its identity (0, the
    dtype's smallest value or ``-inf``, its largest or ``inf``) the result
    keeps ``operand``'s weak flag, as JAX's (an identity of another dtype,
    such as ``-inf`` for integers, is accepted: it is never used); any
    other ``init_value`` must have ``operand``'s dtype, is combined once
    with each window, and the result is strong.

    Args:
      operand: an array (bool, integer or floating; complex for sums).
      init_value: a scalar of ``operand``'s dtype (a Python scalar takes it).
      computation: ``lax.add``, ``lax.max`` or ``lax.min``.
      window_dimensions: the window's size along each axis.
      window_strides: the steps between windows (default 1 per axis).
      padding: ``'VALID'`` (none), ``'SAME'``, ``'SAME_LOWER'`` or one
        ``(low, high)`` pair per axis.
      base_dilation: holes between the operand's elements, plus one.
      window_dilation: holes between the window's elements, plus one.

    Returns:
      An array of ``operand``'s dtype, one element per window.

    Raises:
      NotImplementedError: another computation.
      TypeError: an ``init_value`` of another dtype, or parameters of the
        wrong lengths.

    >>> import typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> x = tnp.arange(5, dtype='float32')
    >>> lax.reduce_window(x, 0.0, lax.add, (2,), (1,), 'VALID')
    Array([1., 3., 5., 7.], dtype=float32)
    >>> lax.reduce_window(x, -tnp.inf, lax.max, (2,), (2,), 'SAME')
    Array([1., 3., 4.], dtype=float32)
    """
    monoid = _MONOIDS.get(computation)
    if monoid is None:
        raise NotImplementedError(
            f"lax.reduce_window supports the computations lax.add, lax.max and "
            f"lax.min, got {computation!r}; write other reductions with those "
            "(a product as the exponential of a window sum of logarithms, for "
            "positive values)"
        )
    prim, kind = monoid
    x = to_array(operand, "reduce_window", 0)
    dims = ints_of("reduce_window", "window_dimensions", window_dimensions)
    n = len(dims)
    strides = (1,) * n if window_strides is None else window_strides
    strides = ints_of("reduce_window", "window_strides", strides)
    base = ints_of("reduce_window", "base_dilation", base_dilation or (1,) * n)
    wdil = ints_of("reduce_window", "window_dilation", window_dilation or (1,) * n)
    if isinstance(padding, str):
        if len(x.shape) != n:
            raise TypeError(
                f"reduce_window got the wrong number of window_dimensions for "
                f"operand: got operand shape {x.shape} with window_dimensions "
                f"{dims}."
            )
        spans = [_dilate(w, d) for w, d in zip(dims, wdil, strict=False)]
        pads = tuple(padtype_to_pads(x.shape, spans, strides, padding))
    else:
        pads = _pairs("reduce_window", padding)
    params = {
        "window_dimensions": dims,
        "window_strides": strides,
        "padding": pads,
        "base_dilation": base,
        "window_dilation": wdil,
    }
    init = to_array(init_value, "reduce_window", 1, x.dtype)
    if _is_identity(init, kind):
        # As JAX: an init value that is its own dtype's identity is never
        # used (a max pool of integers may start from -inf).
        return prim.bind(x, **params)  # type: ignore[no-any-return]
    if init.dtype != x.dtype or init.shape:
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and "
            f"init_values: got operand dtype {x.dtype.name} and init_value "
            f"{init.dtype.name}{list(init.shape)}. Give a scalar of the "
            f"operand's dtype, e.g. lax.convert_element_type(init_value, "
            f"'{x.dtype.name}')"
        )
    out = prim.bind(x, **params)
    # JAX's general window reduction: the init value joins every window once;
    # its result is strong.
    combined = computation(out, init)
    return ew._cast(combined, combined.dtype, False)
