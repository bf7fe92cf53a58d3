"""The PyTorch backend: every primitive of :mod:`typelattice.lax` computed by
torch, on the CPU or a CUDA device.

The lattice decides every result's dtype; torch never does. A primitive's
operands already share one dtype (primitives do not promote), so each
implementation below is torch's own function on them, or a thin closure
that adds what lax defines and torch leaves open: integer division by zero,
shifts by the width or more, NaN-propagating ``max``, lexicographic order of
complex numbers, saturating float-to-integer conversion.

Dtypes torch holds but cannot compute with are emulated exactly (the
literal :data:`_GAPS` says how, and :func:`support_table` reports it):

- ``uint16``, ``uint32``, ``uint64``: torch has conversions only. Where an
  operation gives the same bits whatever the sign (``add``, ``mul``,
  bitwise operations, moving data), it runs on the signed integers of the
  same width, viewed without a copy; where the order of values matters
  (comparisons, ``div``, ``max``, conversions), ``uint16`` and ``uint32``
  run in ``int32`` and ``int64``, which hold every value; ``uint64`` is
  computed by NumPy on the host.
- float8 kinds: conversions only. Arithmetic runs in float32 and is rounded
  to the float8 kind, as ml_dtypes (and so the NumPy backend) computes it;
  ``float8_e4m3fn`` has no infinity, and values beyond its range become
  NaN, as in ml_dtypes (torch itself would saturate them).

Dtypes torch lacks (``int4``, ``float8_e3m4``, ...) raise TypeError when an
array of them enters, naming the dtype and the fix (compute with the NumPy
backend).

Primitives without a torch kernel of their own here (``sort``, ``gather``
and the scatters, the folds, the control flow, ``qr``, ...) are computed by
the NumPy backend's implementation on the host, and the result is moved
back to the operands' device; the control flow primitives run their
programs that way, whose own primitives are computed by the backend in
force. :func:`support_table` reports these as emulated.

This module imports torch; nothing in typelattice imports it.
"""

# Package-internal: the NumPy backend's implementations are read by design.
# pyright: reportPrivateUsage=false, reportUnknownMemberType=false
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false, reportUnknownParameterType=false
# pyright: reportUnknownLambdaType=false

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import ml_dtypes
import numpy as np
import torch

from typelattice import _dtypes
from typelattice import lax as _lax
from typelattice import numpy as _tnp
from typelattice._backends._backend import NUMPY, Backend
from typelattice._backends._xp import guarded, kept
from typelattice._lax._dot import _compute_dtype, result_dtype
from typelattice._lax._indexing import (
    GatherScatterMode,
    _default_fill,
    _offset_perm,
    _scatter_layout,
    _window_dims,
)
from typelattice._lax._primitive import PRIMITIVES, Primitive

__all__ = [
    "BACKEND",
    "NAME",
    "TorchBackend",
    "backend_on",
    "copy",
    "device_of",
    "dtype_of",
    "from_numpy",
    "owns",
    "promoting",
    "put",
    "register",
    "shape_of",
    "support_markdown",
    "support_table",
    "to_numpy",
]

NAME: Final = "torch"

Tensor = torch.Tensor
NDArray = np.ndarray[Any, Any]
DType = np.dtype[Any]

# -- dtypes -------------------------------------------------------------------

#: The one map between typelattice's dtypes and torch's, by name on each
#: side (torch 2.13). A dtype of the lattice missing here has no torch
#: counterpart: int1/2/4, uint1/2/4, float8_e3m4, float8_e4m3,
#: float8_e4m3b11fnuz, float6 and float4 kinds; float8_e8m0fnu is left out
#: too, as torch rounds negative values and zero to it where ml_dtypes
#: gives NaN.
_DTYPES: Final = {
    "bool": "bool",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "bfloat16": "bfloat16",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e4m3fnuz": "float8_e4m3fnuz",
    "float8_e5m2": "float8_e5m2",
    "float8_e5m2fnuz": "float8_e5m2fnuz",
}

#: How each dtype torch cannot compute with is computed (torch 2.13 has
#: only conversions for them, on every device): ``bits`` is the dtype of
#: the same width whose operations give the same bits (a view, no copy),
#: ``values`` one that holds every value exactly (None: the host computes
#: what depends on the values).
_GAPS: Final[dict[str, dict[str, str | None]]] = {
    "uint16": {"bits": "int16", "values": "int32"},
    "uint32": {"bits": "int32", "values": "int64"},
    "uint64": {"bits": "int64", "values": None},
    "float8_e4m3fn": {"bits": "int8", "values": "float32"},
    "float8_e4m3fnuz": {"bits": "int8", "values": "float32"},
    "float8_e5m2": {"bits": "int8", "values": "float32"},
    "float8_e5m2fnuz": {"bits": "int8", "values": "float32"},
}


def _np_dtype(name: str) -> DType:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


_TO_TORCH: Final[dict[DType, torch.dtype]] = {
    _np_dtype(n): getattr(torch, t) for n, t in _DTYPES.items()
}
_TO_NUMPY: Final[dict[torch.dtype, DType]] = {t: n for n, t in _TO_TORCH.items()}
#: The dtypes NumPy cannot pass to torch itself (ml_dtypes'): moved as the
#: unsigned integers of their width, and viewed.
_CARRIER: Final[dict[DType, DType]] = {
    d: np.dtype(f"u{d.itemsize}") for d in _TO_TORCH if d.isbuiltin != 1
}
_BITS: Final[dict[torch.dtype, torch.dtype]] = {
    getattr(torch, n): getattr(torch, str(g["bits"])) for n, g in _GAPS.items()
}
_VALUES: Final[dict[torch.dtype, torch.dtype | None]] = {
    getattr(torch, n): (getattr(torch, g["values"]) if g["values"] else None)
    for n, g in _GAPS.items()
}
#: The dtypes torch computes with itself.
_NATIVE: Final = frozenset(t for t in _TO_NUMPY if t not in _BITS)
_HALF: Final = frozenset((torch.float16, torch.bfloat16))
_FLOAT8: Final = frozenset(t for t, v in _VALUES.items() if v is torch.float32)
_UNSIGNED_WIDE: Final = frozenset(
    (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
)
_INTEGER: Final = frozenset(
    (torch.int8, torch.int16, torch.int32, torch.int64, *_UNSIGNED_WIDE)
)
_COMPLEX_OF: Final = {torch.float32: torch.complex64, torch.float64: torch.complex128}
_REAL_OF: Final = {torch.complex64: torch.float32, torch.complex128: torch.float64}
# float8_e4m3fn has no infinity: ml_dtypes rounds magnitudes above 464
# (halfway from its largest value, 448, to the next step) and infinities to
# NaN, where torch saturates them to 448.
_E4M3FN_LIMIT: Final = 464.0


def _missing(dtype: Any) -> TypeError:
    return TypeError(
        f"the torch backend has no dtype {dtype}: torch 2.13 lacks it. Compute "
        "with the NumPy backend (backend='numpy', or x.to_device('cpu') then "
        "np.asarray(x)), or convert to a dtype torch has first, e.g. "
        "x.astype('float32')"
    )


def _torch_dtype(dt: DType) -> torch.dtype:
    try:
        return _TO_TORCH[dt]
    except KeyError:
        raise _missing(dt.name) from None


def owns(x: object) -> bool:
    """Whether ``x`` is a torch tensor.

    >>> owns(torch.zeros(2)), owns(np.zeros(2))
    (True, False)
    """
    return isinstance(x, torch.Tensor)


def dtype_of(x: Tensor) -> DType:
    """The NumPy (or ml_dtypes) dtype of a tensor.

    Raises:
      TypeError: the tensor's dtype has no counterpart (``torch.int4``...).

    >>> dtype_of(torch.zeros(2, dtype=torch.bfloat16))
    dtype(bfloat16)
    """
    try:
        return _TO_NUMPY[x.dtype]
    except KeyError:
        raise _missing(x.dtype) from None


def shape_of(x: Tensor) -> tuple[int, ...]:
    """The shape of a tensor, as Python ints.

    >>> shape_of(torch.zeros(2, 3))
    (2, 3)
    """
    return tuple(x.shape)


def device_of(x: Tensor) -> str:
    """The device of a tensor: ``'cpu'``, ``'cuda:0'``...

    >>> device_of(torch.zeros(1))
    'cpu'
    """
    d = x.device
    # (torch's stubs type the index as int; it is None on the CPU.)
    index: int | None = d.index
    return d.type if index is None else f"{d.type}:{index}"  # pyright: ignore[reportUnnecessaryComparison]


def from_numpy(a: NDArray, device: str | None = None) -> Tensor:
    """A tensor of ``a``'s dtype and values: on the CPU it shares ``a``'s
    memory (torch does not change it), on ``device`` a copy.

    Args:
      a: a NumPy array (or a NumPy scalar).
      device: a torch device (``'cuda'``, ``'cuda:1'``...); None is the CPU.

    Returns:
      A tensor.

    Raises:
      TypeError: torch has no dtype for ``a``'s.

    >>> from_numpy(np.arange(3, dtype=np.uint32))
    tensor([0, 1, 2], dtype=torch.uint32)
    """
    a = np.asarray(a)
    target = _TO_TORCH.get(a.dtype)
    if target is None:
        raise _missing(a.dtype.name)
    carrier = _CARRIER.get(a.dtype)
    if carrier is not None:
        a = a.view(carrier)
    # DLPack takes read-only arrays (an Array's) without a copy, which
    # torch.from_numpy warns about; it cannot take negative strides.
    if a.strides and builtins.min(a.strides) < 0:
        a = np.ascontiguousarray(a)
    if torch.is_inference_mode_enabled():
        # A plain tensor, never an inference one: what is converted may be
        # kept (a program's constants, a Python scalar met again) and used
        # later by computations torch differentiates.
        with torch.inference_mode(False):
            return from_numpy(a, device)
    t = torch.from_dlpack(a)  # type: ignore[attr-defined]
    if carrier is not None:
        t = t.view(target)
    if device is not None:
        t = t.to(device)
    return t


def to_numpy(x: Tensor) -> NDArray:
    """A tensor's values as a NumPy array of :func:`dtype_of` ``x`` (a CUDA
    tensor is copied to the host; a CPU one is shared).

    >>> to_numpy(torch.ones(2, dtype=torch.bfloat16))
    array([1, 1], dtype=bfloat16)
    """
    dt = dtype_of(x)
    x = x.detach()
    if x.device.type != "cpu":
        x = x.cpu()
    carrier = _CARRIER.get(dt)
    if carrier is None:
        return x.numpy()
    return x.view(_TO_TORCH[carrier]).numpy().view(dt)


def copy(x: Tensor) -> Tensor:
    """A copy of tensor ``x`` on its device (``clone``: torch's autograd
    follows it, as it follows every operation on tensor Arrays)."""
    return x.clone()


def put(x: Tensor, device: str) -> Tensor:
    """``x`` on ``device`` (itself when it is there already).

    >>> put(torch.ones(1), 'cpu')
    tensor([1.])
    """
    return x.to(device)


# -- how a computation reaches torch ------------------------------------------


def _host(prim: Primitive) -> Callable[..., Any]:
    """``prim`` computed by the NumPy backend on the host: the operands
    copied there, the results moved back to the first operand's device (a
    copy when NumPy's result shares an operand's memory, as the operands'
    host copies are the tensors' own memory on the CPU)."""
    impl = NUMPY.impl(prim)
    several = prim.multiple_results

    def back(v: Any, device: torch.device | None, ins: list[NDArray]) -> Tensor:
        v = np.asarray(v)
        if any(np.may_share_memory(v, a) for a in ins):
            v = v.copy()
        t = from_numpy(v)
        return t if device is None or device.type == "cpu" else t.to(device)

    def on_host(*xs: Any, **params: Any) -> Any:
        device = next((x.device for x in xs if isinstance(x, Tensor)), None)
        ins = [to_numpy(x) if isinstance(x, Tensor) else x for x in xs]
        out = impl(*ins, **params)
        if several:
            return tuple(back(v, device, ins) for v in out)
        return back(out, device, ins)

    on_host.__name__ = f"host_{prim.name}"
    on_host.__qualname__ = on_host.__name__
    on_host.on_host = True  # type: ignore[attr-defined]
    return on_host


def _bits(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn``, an operation whose bits do not depend on the operands' sign
    or kind (moving data, wrapping arithmetic), on tensors of one dtype:
    the gap dtypes run on the signed integers of their width, viewed."""

    def impl(x: Tensor, *rest: Tensor, **params: Any) -> Tensor:
        dt = x.dtype
        if dt in _NATIVE:
            return fn(x, *rest, **params)
        view = _BITS[dt]
        out = fn(x.view(view), *[r.view(view) for r in rest], **params)
        return out.view(dt) if out.dtype is view else out

    return impl


def _wrapping(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn``, arithmetic that wraps (or a bitwise operation), on tensors
    of one dtype: unsigned gap dtypes run on the signed integers of their
    width, viewed (two's complement wraps alike); float8 kinds in float32,
    rounded back."""

    def impl(x: Tensor, *rest: Tensor, **params: Any) -> Tensor:
        dt = x.dtype
        if dt in _NATIVE:
            return fn(x, *rest, **params)
        if dt in _FLOAT8:
            out = fn(x.float(), *[r.float() for r in rest], **params)
            return out if out.dtype is torch.bool else _round_to(out, dt)
        view = _BITS[dt]
        out = fn(x.view(view), *[r.view(view) for r in rest], **params)
        return out.view(dt) if out.dtype is view else out

    return impl


def _wrapping2(fn: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Tensor]:
    """:func:`_wrapping` for a binary ``fn``, with no argument packing on
    the common path (the hot path of ``add``, ``mul``...)."""
    slow = _wrapping(fn)

    def impl(x: Tensor, y: Tensor) -> Tensor:
        if x.dtype in _NATIVE:
            return fn(x, y)
        return slow(x, y)

    return impl


class _OnHost(Exception):
    """Raised by an implementation for operands torch has no kernel for:
    the NumPy backend computes them on the host."""


def _round_to(x: Tensor, dt: torch.dtype) -> Tensor:
    """A computed value in the result's dtype ``dt``, rounded as NumPy and
    ml_dtypes round."""
    if x.dtype is dt:
        return x
    out = x.to(dt)
    if dt is torch.float8_e4m3fn:
        over = (x.abs() > _E4M3FN_LIMIT) | x.isinf()
        if bool(over.any()):
            out = torch.where(over, torch.tensor(math.nan, device=x.device), x).to(dt)
    return out


def _values(
    fn: Callable[..., Tensor], *, wrap: bool = False, other: bool = False
) -> Callable[..., Tensor]:
    """``fn``, whose results depend on the values, on tensors of one dtype:
    the gap dtypes run in a dtype holding their values, and a result of
    that dtype is converted back (``wrap``: integers wrap, modulo their
    width; ``other``: results of another dtype, kept); uint64 operands,
    and those ``fn`` refuses (:class:`_OnHost`), go to the host (the
    primitive's NumPy implementation, put in ``impl.fallback`` by
    :func:`register`)."""
    host: list[Callable[..., Any]] = []

    def impl(x: Tensor, *rest: Tensor, **params: Any) -> Tensor:
        dt = x.dtype
        if dt in _NATIVE:
            try:
                return fn(x, *rest, **params)
            except _OnHost:
                return host[0](x, *rest, **params)  # type: ignore[no-any-return]
        wide = _VALUES[dt]
        if wide is None:
            return host[0](x, *rest, **params)  # type: ignore[no-any-return]
        try:
            out = fn(x.to(wide), *[r.to(wide) for r in rest], **params)
        except _OnHost:
            return host[0](x, *rest, **params)  # type: ignore[no-any-return]
        if other or out.dtype is not wide:
            return out  # (bool, an index, ...)
        if wrap and dt not in _FLOAT8:
            return out.to(_BITS[dt]).view(dt)  # (int64 to int32 wraps)
        return _round_to(out, dt)

    impl.fallback = host  # type: ignore[attr-defined]
    return impl


def _widened(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` computed in float32 for float16 and bfloat16 operands and
    rounded back, as XLA computes its math functions (and the NumPy
    backend)."""

    def impl(x: Tensor, *rest: Tensor) -> Tensor:
        if x.dtype in _HALF:
            out = fn(x.float(), *[r.float() for r in rest])
            return out if out.dtype is torch.bool else out.to(x.dtype)
        return fn(x, *rest)

    return impl


#: Dtypes every math function computes in directly (no widening, no gap).
_MATH_DIRECT: Final = frozenset(
    (torch.float32, torch.float64, torch.complex64, torch.complex128)
)


def _math(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """A math function computed in float32 for the narrow floats (see
    :func:`_widened`), emulated for the gap dtypes (:func:`_values`); for
    the common dtypes, torch's function with one test before it."""
    slow = _values(_widened(fn))

    def impl(x: Tensor, *rest: Tensor) -> Tensor:
        if x.dtype in _MATH_DIRECT:
            return fn(x, *rest)
        return slow(x, *rest)

    impl.fallback = slow.fallback  # type: ignore[attr-defined]
    return impl


def _in_f64(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` computed in float64 for every real float, as the NumPy
    backend computes the error and gamma functions."""

    def impl(x: Tensor, **params: Any) -> Tensor:
        return fn(x.double(), **params).to(x.dtype)

    return impl


# -- elementwise --------------------------------------------------------------


def _sign(x: Tensor) -> Tensor:
    if x.is_complex():
        size = x.abs()
        zero = size == 0
        return torch.where(zero, torch.zeros_like(x), x / torch.where(zero, 1, size))
    # lax keeps the sign of a zero, and NaN, as the NumPy backend.
    if x.is_floating_point():
        return torch.where((x == 0) | x.isnan(), x, torch.sign(x))
    return torch.where(x == 0, x, torch.sign(x))


def _exp2(x: Tensor) -> Tensor:
    if x.is_complex():
        return torch.exp(x * math.log(2))
    return torch.exp2(x)


def _logistic(x: Tensor) -> Tensor:
    return 1 / (1 + torch.exp(-x))


def _not(x: Tensor) -> Tensor:
    return torch.logical_not(x) if x.dtype is torch.bool else torch.bitwise_not(x)


def _real(x: Tensor) -> Tensor:
    return torch.real(x).clone()


def _imag(x: Tensor) -> Tensor:
    return torch.imag(x).clone()


def _conj(x: Tensor) -> Tensor:
    if not x.is_complex():
        x = x.to(_COMPLEX_OF[x.dtype])
    return torch.conj_physical(x)


def _abs(x: Tensor) -> Tensor:
    return torch.abs(x)


def _round(x: Tensor, *, rounding_method: int) -> Tensor:
    wide = x.float() if x.dtype in _HALF else x
    if rounding_method == 1:
        out = torch.round(wide)  # (ties to even)
    else:
        whole = torch.trunc(wide)
        out = torch.where((wide - whole).abs() >= 0.5, whole + torch.sign(wide), whole)
    return out.to(x.dtype)


def _integer_pow(x: Tensor, *, y: int) -> Tensor:
    # Repeated squaring in the operand's dtype (integers wrap), as XLA.
    base = x.float() if x.dtype in _HALF else x
    acc: Tensor | None = None
    n = builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    if acc is None:
        acc = torch.ones_like(base)
    elif acc is x:
        acc = acc.clone()
    if y < 0:
        acc = 1 / acc
    return acc.to(x.dtype)


def _digamma(x: Tensor) -> Tensor:
    # NaN at the poles (0 and the negative integers), as JAX, where torch
    # gives infinities.
    pole = (x <= 0) & (x == torch.floor(x))
    return torch.where(pole, math.nan, torch.special.digamma(x))


def _polygamma(x: Tensor, *, m: int) -> Tensor:
    out: Tensor = torch.special.polygamma(m, x)
    return out


def _is_finite(x: Tensor) -> Tensor:
    return torch.isfinite(x)


def _div(x: Tensor, y: Tensor) -> Tensor:
    if x.is_floating_point() or x.is_complex():
        return torch.true_divide(x, y)
    # Integer division truncates; x / 0 is -1 (all bits set), as XLA.
    # Dividing by -1 negates (wrapping): the hardware's division would trap
    # on the smallest value.
    zero = y == 0
    minus = y == -1
    safe = torch.where(zero | minus, torch.ones_like(y), y)
    quotient = torch.div(x, safe, rounding_mode="trunc")
    quotient = torch.where(minus, -x, quotient)
    return torch.where(zero, torch.full_like(quotient, -1), quotient)


def _rem(x: Tensor, y: Tensor) -> Tensor:
    if x.is_floating_point():
        return torch.fmod(x, y)
    # The dividend's sign; x % 0 is x, as XLA; x % -1 is 0.
    zero = y == 0
    safe = torch.where(zero | (y == -1), torch.ones_like(y), y)
    return torch.where(zero, x, torch.fmod(x, safe))


def _lexicographic(greater: bool) -> Callable[[Tensor, Tensor], Tensor]:
    native = torch.maximum if greater else torch.minimum

    def fn(x: Tensor, y: Tensor) -> Tensor:
        if not x.is_complex():
            return native(x, y)
        xr, yr = x.real, y.real
        if greater:
            first = (xr > yr) | ((xr == yr) & (x.imag > y.imag))
        else:
            first = (xr < yr) | ((xr == yr) & (x.imag < y.imag))
        return torch.where(first, x, y)

    return fn


def _atan2(x: Tensor, y: Tensor) -> Tensor:
    if not x.is_complex():
        return torch.atan2(x, y)
    return 1j * torch.log((y - 1j * x) / torch.sqrt(x * x + y * y))


_NEXTAFTER: Final = frozenset((torch.float32, torch.float64))


def _nextafter(host: list[Callable[..., Any]]) -> Callable[..., Tensor]:
    """torch's nextafter for float32 and float64; the narrower floats on
    the host (``host``, filled by :func:`register`), which steps their bit
    patterns."""

    def impl(x: Tensor, y: Tensor) -> Tensor:
        if x.dtype in _NEXTAFTER:
            return torch.nextafter(x, y)
        out: Tensor = host[0](x, y)
        return out

    impl.fallback = host  # type: ignore[attr-defined]
    return impl


_WIDTH: Final = {
    torch.int8: 8,
    torch.uint8: 8,
    torch.int16: 16,
    torch.int32: 32,
    torch.int64: 64,
}


def _shift(kind: str) -> Callable[[Tensor, Tensor], Tensor]:
    """Shifts on the bit pattern; by a negative amount or by the width or
    more they give 0 (arithmetic right shifts: the sign bits), as XLA
    defines it. Operands arrive as signed integers of their width, unsigned
    ones viewed (see :func:`_bits`), except uint8."""

    def fn(x: Tensor, y: Tensor) -> Tensor:
        unsigned = x.dtype is torch.uint8
        if unsigned:
            x, y = x.view(torch.int8), y.view(torch.int8).to(torch.int16) & 0xFF
        bits = _WIDTH[x.dtype]
        inside = (y >= 0) & (y < bits)
        by = torch.where(inside, y, torch.zeros_like(y)).to(x.dtype)
        zero = torch.zeros_like(x)
        if kind == "left":
            out = torch.where(inside, x << by, zero)
        elif kind == "arithmetic":
            out = torch.where(inside, x >> by, torch.where(x < 0, zero - 1, zero))
        else:
            # Logical: the arithmetic shift with the copies of the sign bit
            # cleared (a mask of the low bits - by ones).
            low = torch.where(
                by == 0,
                torch.full_like(x, -1),
                ~(
                    (torch.full_like(x, -1) << (bits - by))
                    if bits < 64
                    else _ones_high(x, by)
                ),
            )
            out = torch.where(inside, (x >> by) & low, zero)
        return out.view(torch.uint8) if unsigned else out

    return fn


def _ones_high(x: Tensor, by: Tensor) -> Tensor:
    """For int64: ``by`` high bits set (``by`` from 1 to 63)."""
    minimum = torch.full_like(x, -(1 << 63))
    return minimum >> (by - 1).clamp(min=0)


def _pow(x: Tensor, y: Tensor) -> Tensor:
    complex_x = x.is_complex()
    if not (y.is_floating_point() or y.is_complex()):
        wide = torch.complex128 if complex_x else torch.float64
        out = torch.pow(x.to(wide), y.to(torch.float64))
    elif x.dtype in _HALF:
        out = torch.pow(x.float(), y.float())
    else:
        out = torch.pow(x, y)
    if complex_x:
        real_positive = (y.imag == 0 if y.is_complex() else True) & (y.real > 0)
        nan = torch.tensor(
            complex(math.nan, math.nan), dtype=out.dtype, device=x.device
        )
        at_zero = torch.where(
            y == 0,
            torch.ones_like(nan),
            torch.where(real_positive, torch.zeros_like(nan), nan),
        )
        out = torch.where(x == 0, at_zero, out)
    return out.to(x.dtype)


def _complex(x: Tensor, y: Tensor) -> Tensor:
    x, y = torch.broadcast_tensors(x, y)  # type: ignore[no-untyped-call]
    return torch.complex(x.contiguous(), y.contiguous())


def _select_n(which: Tensor, *cases: Tensor) -> Tensor:
    dt = cases[0].dtype
    if dt not in _NATIVE:
        view = _BITS[dt]
        return _select_n(which, *[c.view(view) for c in cases]).view(dt)
    if which.dtype is torch.bool:
        if len(cases) == 1:
            return cases[0].clone()
        return torch.where(which, cases[1], cases[0])
    index = which.to(torch.int64).clamp(0, len(cases) - 1)
    out = cases[0].expand(cases[0].shape)
    for i, case in enumerate(cases[1:], start=1):
        out = torch.where(index == i, case, out)
    return out.clone() if out is cases[0] else out


def _clamp(lo: Tensor, x: Tensor, hi: Tensor) -> Tensor:
    if x.is_complex():
        low = torch.where(x.real > lo.real, x, lo)
        return torch.where(low.real > hi.real, hi, low).expand(x.shape).clone()
    return torch.minimum(torch.maximum(x, lo), hi)


def _convert(
    x: Tensor, *, new_dtype: DType, weak_type: bool = False, check: Any = None
) -> Tensor:
    dt = _torch_dtype(new_dtype)
    src = x.dtype
    if src in _FLOAT8:
        x = x.float()
    elif src in _VALUES and src not in _FLOAT8:
        wide = _VALUES[src]
        if wide is None:  # uint64: as NumPy converts it, on the host
            return _host_convert(x, new_dtype=new_dtype, weak_type=weak_type)
        x = x.to(wide)
    if x.is_complex() and not (dt.is_complex):
        x = x.real
    if x.is_floating_point() and dt in _INTEGER:
        # Float to integer saturates and maps NaN to 0, as JAX.
        info = _dtypes.iinfo(new_dtype)
        wide64 = torch.nan_to_num(x.double(), nan=0.0)
        clipped = wide64.clamp(float(int(info.min)), float(int(info.max)))
        if dt in _BITS:
            return _unsigned_from(clipped, dt)
        return clipped.to(dt)
    if dt in _BITS and dt not in _FLOAT8:
        return _unsigned_from(x, dt)
    if dt in _FLOAT8:
        return _round_to(x.float() if x.dtype is not torch.float64 else x, dt)
    return x.to(dt)


def _unsigned_from(x: Tensor, dt: torch.dtype) -> Tensor:
    """Values to uint16/32/64, wrapping as NumPy's ``astype``: through the
    signed integers of the width."""
    if x.is_floating_point():
        # (saturated already: whole values, within the target's range)
        if dt is torch.uint64:
            big = x >= 2.0**63
            low = torch.where(big, x - 2.0**64, x).to(torch.int64)
            return low.view(dt)
        x = x.to(torch.int64)
    if x.dtype is torch.bool:
        x = x.to(torch.int64)
    return x.to(_BITS[dt]).view(dt) if x.dtype is not _BITS[dt] else x.view(dt)


_host_convert: Callable[..., Tensor]


def _convert_impl(
    x: Tensor, *, new_dtype: DType, weak_type: bool = False, check: Any = None
) -> Tensor:
    if check is not None:
        # The data-safety checks read values and raise the NumPy backend's
        # errors: computed on the host, as the NumPy backend does.
        return _host_convert(x, new_dtype=new_dtype, weak_type=weak_type, check=check)
    dt = _TO_TORCH.get(new_dtype)
    src = x.dtype
    if (
        src in _PLAIN_SOURCES
        and dt in _NATIVE
        and not (dt in _INTEGER and src.is_floating_point)
    ):
        return x.to(dt)  # (the common case: one torch conversion)
    return _convert(x, new_dtype=new_dtype, weak_type=weak_type)


#: Source dtypes whose conversion to a native dtype is torch's own: not
#: complex (lax takes the real part), not a gap dtype.
_PLAIN_SOURCES: Final = frozenset(
    t for t in _NATIVE if t not in (torch.complex64, torch.complex128)
)


# -- structural ---------------------------------------------------------------


def _broadcast_in_dim(
    x: Tensor, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> Tensor:
    view = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, x.shape, strict=True):
        view[d] = size
    return x.reshape(view).expand(shape)


def _reshape(
    x: Tensor, *, new_sizes: tuple[int, ...], dimensions: tuple[int, ...] | None
) -> Tensor:
    if dimensions is not None:
        x = x.permute(dimensions)
    return x.reshape(new_sizes)


def _transpose(x: Tensor, *, permutation: tuple[int, ...]) -> Tensor:
    return x.permute(permutation)


def _squeeze(x: Tensor, *, dimensions: tuple[int, ...]) -> Tensor:
    return x.squeeze(dimensions) if dimensions else x.view(x.shape)


def _rev(x: Tensor, *, dimensions: tuple[int, ...]) -> Tensor:
    return x.flip(dimensions) if dimensions else x


def _concatenate(*xs: Tensor, dimension: int) -> Tensor:
    dt = xs[0].dtype
    if dt not in _NATIVE:
        view = _BITS[dt]
        return torch.cat([x.view(view) for x in xs], dimension).view(dt)
    return torch.cat(xs, dimension)


def _pad(
    x: Tensor,
    padding_value: Tensor,
    *,
    padding_config: tuple[tuple[int, int, int], ...],
) -> Tensor:
    dt = x.dtype
    if dt not in _NATIVE:
        view = _BITS[dt]
        return _pad(
            x.view(view), padding_value.view(view), padding_config=padding_config
        ).view(dt)
    # Each of x's elements lands at lo + i * (interior + 1) along each axis
    # of the result; those landing outside it are cut (negative edges).
    full = [
        builtins.max(d + builtins.max(d - 1, 0) * interior + lo + hi, 0)
        for d, (lo, hi, interior) in zip(x.shape, padding_config, strict=True)
    ]
    out = padding_value.expand(full).clone()
    source: list[slice] = []
    target: list[slice] = []
    for n, (lo, _, interior), size in zip(x.shape, padding_config, full, strict=True):
        step = interior + 1
        first = builtins.max(0, -(lo // step)) if lo < 0 else 0
        last = builtins.min(n - 1, (size - 1 - lo) // step)
        if last < first:
            return out  # (nothing of x is kept)
        source.append(slice(first, last + 1))
        target.append(slice(lo + first * step, lo + last * step + 1, step))
    out[tuple(target)] = x[tuple(source)]
    return out


def _iota(*, dtype: DType, shape: tuple[int, ...], dimension: int) -> Tensor:
    dt = _torch_dtype(dtype)
    counts = torch.arange(shape[dimension], dtype=torch.int64)
    if dt in _FLOAT8:
        counts = _round_to(counts.float(), dt)
    elif dt in _BITS:
        counts = counts.to(_BITS[dt]).view(dt)
    else:
        counts = counts.to(dt)  # (integers wrap, as XLA)
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return counts.reshape(view).expand(shape)


def _slice(
    x: Tensor,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> Tensor:
    steps = strides or (1,) * len(start_indices)
    return x[
        tuple(
            slice(b, e, s)
            for b, e, s in zip(start_indices, limit_indices, steps, strict=True)
        )
    ]


def _starts(
    starts: Sequence[Tensor], shape: Sequence[int], sizes: Sequence[int]
) -> list[int]:
    # Start indices are clamped so that the slice fits, as XLA.
    return [
        builtins.min(builtins.max(int(s), 0), n - k)
        for s, n, k in zip(starts, shape, sizes, strict=True)
    ]


def _dynamic_slice(x: Tensor, *starts: Tensor, slice_sizes: tuple[int, ...]) -> Tensor:
    begin = _starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(b, b + n) for b, n in zip(begin, slice_sizes, strict=True))]


def _dynamic_update_slice(x: Tensor, update: Tensor, *starts: Tensor) -> Tensor:
    dt = x.dtype
    if dt not in _NATIVE:
        view = _BITS[dt]
        return _dynamic_update_slice(x.view(view), update.view(view), *starts).view(dt)
    begin = _starts(starts, x.shape, update.shape)
    out = x.clone()
    out[tuple(slice(b, b + n) for b, n in zip(begin, update.shape, strict=True))] = (
        update
    )
    return out


# -- reductions ---------------------------------------------------------------


#: Dtypes summed in themselves (not narrow floats, which accumulate in
#: float32; not bool).
_SUM_DIRECT: Final = frozenset(
    (
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
    )
)


def _accumulating(x: Tensor) -> Tensor:
    """Narrow floats accumulate in float32 (as the NumPy backend)."""
    return x.float() if x.dtype in _HALF or x.dtype in _FLOAT8 else x


def _reduce_sum(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    dt = x.dtype
    if axes and dt in _SUM_DIRECT:
        return torch.sum(x, dim=axes, dtype=dt)
    wide = _accumulating(x)
    if not axes:
        return x.clone()
    return _round_to(torch.sum(wide, dim=axes, dtype=wide.dtype), x.dtype)


def _reduce_prod(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
    wide = _accumulating(x)
    out = wide
    for a in sorted(axes, reverse=True):
        out = torch.prod(out, dim=a, dtype=wide.dtype)
    if out is x:
        out = out.clone()
    return _round_to(out, x.dtype)


def _reduce_extreme(kind: str) -> Callable[..., Tensor]:
    def fn(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        if not axes:
            return x.clone()
        if x.is_complex():
            pick = _lexicographic(kind == "max")
            moved = x.movedim(axes, tuple(range(len(axes))))
            flat = moved.reshape(-1, *moved.shape[len(axes) :])
            if not flat.shape[0]:
                fill = -math.inf if kind == "max" else math.inf
                return torch.full(
                    flat.shape[1:], complex(fill, 0), dtype=x.dtype, device=x.device
                )
            out = flat[0]
            for row in flat[1:]:
                out = pick(out, row)
            return out.clone()
        if x.numel() == 0:
            shape = [d for i, d in enumerate(x.shape) if i not in axes]
            return torch.full(shape, _identity(kind, x), dtype=x.dtype, device=x.device)
        # amax/amin propagate NaN, as lax.max.
        if x.dtype is torch.bool:
            return (torch.any if kind == "max" else torch.all)(x, dim=axes)
        return (torch.amax if kind == "max" else torch.amin)(x, dim=axes)

    return fn


def _identity(kind: str, x: Tensor) -> Any:
    if x.dtype is torch.bool:
        return kind == "min"
    if x.is_floating_point():
        return -math.inf if kind == "max" else math.inf
    info = torch.iinfo(x.dtype)
    return info.min if kind == "max" else info.max


def _reduce_bits(
    op: Callable[[Tensor, Tensor], Tensor], fill: int
) -> Callable[..., Tensor]:
    """A bitwise reduction (torch has none): the reduced axes made one, then
    folded in halves, in log2 steps."""

    def fn(x: Tensor, *, axes: tuple[int, ...]) -> Tensor:
        if not axes:
            return x.clone()
        moved = x.movedim(axes, tuple(range(len(axes))))
        flat = moved.reshape(-1, *moved.shape[len(axes) :])
        if flat.shape[0] == 0:
            return torch.full(flat.shape[1:], fill, dtype=x.dtype, device=x.device)
        while flat.shape[0] > 1:
            if flat.shape[0] % 2:
                flat = torch.cat([flat, flat[:1]])  # (op(v, v) is v for and/or)
                if op is torch.bitwise_xor:
                    flat[-1] = 0
            flat = op(flat[0::2], flat[1::2])
        return flat[0].clone()

    return fn


def _arg(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def impl(x: Tensor, *, axes: tuple[int, ...], index_dtype: DType) -> Tensor:
        wide = _accumulating(x)
        if wide.dtype is torch.bool:
            wide = wide.to(torch.int8)
        if wide.is_floating_point():
            # The first NaN's index, as XLA (and NumPy).
            nan = wide.isnan()
            fill = math.inf if fn is torch.argmax else -math.inf
            first_nan = torch.argmax(nan.to(torch.int8), dim=axes[0])
            plain = fn(torch.where(nan, fill, wide), dim=axes[0])
            out = torch.where(nan.any(dim=axes[0]), first_nan, plain)
        else:
            out = fn(wide, dim=axes[0])
        return _convert(out, new_dtype=index_dtype)

    return impl


def _cumulative(fn: Callable[[Tensor, int], Tensor]) -> Callable[..., Tensor]:
    def impl(x: Tensor, *, axis: int, reverse: bool) -> Tensor:
        data = x.flip(axis) if reverse else x
        out = _round_to(fn(_accumulating(data), axis), x.dtype)
        return out.flip(axis) if reverse else out

    return impl


def _cumsum(x: Tensor, axis: int) -> Tensor:
    return torch.cumsum(x, axis, dtype=x.dtype)


def _cumprod(x: Tensor, axis: int) -> Tensor:
    return torch.cumprod(x, axis, dtype=x.dtype)


def _cummax(x: Tensor, axis: int) -> Tensor:
    if x.is_complex():
        raise _OnHost
    if x.is_floating_point():
        # NaN propagates forward, as NumPy's maximum.accumulate.
        seen = torch.cumsum(x.isnan().to(torch.int32), axis) > 0
        return torch.where(seen, math.nan, torch.cummax(x, axis).values)
    return torch.cummax(x, axis).values


def _cummin(x: Tensor, axis: int) -> Tensor:
    if x.is_complex():
        raise _OnHost
    if x.is_floating_point():
        seen = torch.cumsum(x.isnan().to(torch.int32), axis) > 0
        return torch.where(seen, math.nan, torch.cummin(x, axis).values)
    return torch.cummin(x, axis).values


# -- sort, gather, scatter-add -----------------------------------------------


def _total_order_key(x: Tensor) -> Tensor:
    """Integers ordering floats as XLA's total order does: -inf < ... <
    -0.0 < 0.0 < ... < inf < NaN (those with the sign bit first), from the
    bits of their float64 values."""
    bits = x.double().view(torch.int64)
    key = torch.where(bits < 0, bits ^ ((1 << 63) - 1), bits)
    top = (1 << 63) - 1
    nan_key = torch.where(bits < 0, top - 1, top)
    return torch.where(x.isnan(), nan_key, key)


def _sort(*xs: Tensor, dimension: int, is_stable: bool, num_keys: int) -> Any:
    key = xs[0]
    if num_keys != 1 or key.is_complex() or key.dtype is torch.uint64:
        raise _OnHost
    if key.dtype in _VALUES:
        wide = _VALUES[key.dtype]
        assert wide is not None
        key = key.to(wide)
    if key.is_floating_point():
        key = _total_order_key(key)
    elif key.dtype is torch.bool:
        key = key.to(torch.int8)
    # A stable sort gives lax's result whether or not is_stable asks for it.
    order = torch.sort(key, dim=dimension, stable=True).indices
    return tuple(_take_along(x, order, dimension) for x in xs)


def _take_along(x: Tensor, order: Tensor, dim: int) -> Tensor:
    dt = x.dtype
    if dt in _NATIVE:
        return torch.take_along_dim(x, order, dim)
    return torch.take_along_dim(x.view(_BITS[dt]), order, dim).view(dt)


def _sort_impl(host: list[Callable[..., Any]]) -> Callable[..., Any]:
    def impl(*xs: Tensor, **params: Any) -> Any:
        try:
            return _sort(*xs, **params)
        except _OnHost:
            return host[0](*xs, **params)

    impl.fallback = host  # type: ignore[attr-defined]
    return impl


def _window_starts(
    idx: Tensor,
    rank: int,
    index_map: Sequence[int],
    operand_batching: Sequence[int],
    indices_batching: Sequence[int],
) -> Tensor:
    """Each window's start in the operand, shape ``(*batch, rank)`` (as the
    NumPy backend's gather and scatter compute it)."""
    batch = idx.shape[:-1]
    starts = torch.zeros((*batch, rank), dtype=torch.int64, device=idx.device)
    for k, d in enumerate(index_map):
        starts[..., d] = idx[..., k]
    for d, axis in zip(operand_batching, indices_batching, strict=True):
        view = [1] * len(batch)
        view[axis] = batch[axis]
        counts = torch.arange(int(batch[axis]), device=idx.device)
        starts[..., d] = counts.reshape(view)
    return starts


def _window_positions(
    starts: Tensor, window: list[int], sizes: Sequence[int]
) -> tuple[Tensor, ...]:
    """Operand indices of every window element: one tensor per operand
    axis, of shape ``(*batch, *window sizes)``."""
    nb = starts.ndim - 1
    nw = len(window)
    full = (*starts.shape[:-1], *(sizes[d] for d in window))
    out: list[Tensor] = []
    for d in range(starts.shape[-1]):
        pos = starts[..., d].reshape(*starts.shape[:-1], *([1] * nw))
        if d in window:
            view = [1] * (nb + nw)
            view[nb + window.index(d)] = sizes[d]
            pos = pos + torch.arange(sizes[d], device=starts.device).reshape(view)
        out.append(pos.expand(full))
    return tuple(out)


def _fill_tensor(x: Tensor, fill_value: Any) -> Tensor:

    dt = dtype_of(x)
    fill = _default_fill(dt) if fill_value is None else fill_value
    return from_numpy(np.asarray(fill).astype(dt), device_of(x))


def _gather(
    x: Tensor,
    indices: Tensor,
    *,
    dimension_numbers: Any,
    slice_sizes: tuple[int, ...],
    mode: Any,
    fill_value: Any,
) -> Tensor:

    dt = x.dtype
    if dt not in _NATIVE:  # (moving data: on the bits)
        fill = _fill_tensor(x, fill_value).view(_BITS[dt])
        out = _gather_native(
            x.view(_BITS[dt]),
            indices,
            dimension_numbers,
            slice_sizes,
            mode is GatherScatterMode.FILL_OR_DROP,
            fill,
        )
        return out.view(dt)
    fill = _fill_tensor(x, fill_value)
    return _gather_native(
        x,
        indices,
        dimension_numbers,
        slice_sizes,
        mode is GatherScatterMode.FILL_OR_DROP,
        fill,
    )


def _gather_native(
    x: Tensor,
    indices: Tensor,
    dn: Any,
    slice_sizes: tuple[int, ...],
    fill_or_drop: bool,
    fill: Tensor,
) -> Tensor:
    idx = _index_values(indices)
    device = x.device
    starts = _window_starts(
        idx,
        x.ndim,
        dn.start_index_map,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
    )
    hi = torch.tensor(
        [n - k for n, k in zip(x.shape, slice_sizes, strict=True)],
        dtype=torch.int64,
        device=device,
    )
    mapped = list(dn.start_index_map)
    ok = ((starts[..., mapped] >= 0) & (starts[..., mapped] <= hi[mapped])).all(-1)
    starts = torch.minimum(starts.clamp(min=0), hi.clamp(min=0))
    window = _window_dims(x.ndim, dn)
    full = (*idx.shape[:-1], *(slice_sizes[d] for d in window))
    if x.numel() == 0 or 0 in full:
        out = torch.zeros(full, dtype=x.dtype, device=device)
    elif x.ndim:
        out = x[_window_positions(starts, window, slice_sizes)]
    else:
        out = x.expand(full).clone()
    if fill_or_drop:
        keep = ok.reshape(*ok.shape, *([1] * len(window)))
        out = torch.where(keep, out, fill)
    return out.permute(_offset_perm(idx.ndim - 1, len(window), dn))


def _index_values(indices: Tensor) -> Tensor:
    """Index values as int64 (uint64 ones beyond int64's range saturate:
    they are out of bounds either way)."""
    if indices.dtype is torch.uint64:
        signed = indices.view(torch.int64)
        return torch.where(signed < 0, (1 << 63) - 1, signed)
    return indices.to(torch.int64)


#: The dtypes scatter-add accumulates natively: where torch's accumulation
#: in index order equals NumPy's ``add.at`` (narrow floats round each step
#: there, and go to the host).
_SCATTER_ADD: Final = frozenset(
    (
        torch.float32,
        torch.float64,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.complex64,
        torch.complex128,
    )
)


def _scatter_add(
    x: Tensor,
    indices: Tensor,
    updates: Tensor,
    *,
    dimension_numbers: Any,
    mode: Any,
) -> Tensor:

    if x.dtype not in _SCATTER_ADD:
        raise _OnHost
    dn = dimension_numbers
    idx = _index_values(indices)
    nb = idx.ndim - 1
    perm, window, sizes = _scatter_layout(x.ndim, tuple(updates.shape), nb, dn)
    values = updates.permute(perm)
    starts = _window_starts(
        idx,
        x.ndim,
        tuple(dn.scatter_dims_to_operand_dims),
        tuple(dn.operand_batching_dims),
        tuple(dn.scatter_indices_batching_dims),
    )
    hi = torch.tensor(
        [n - k for n, k in zip(x.shape, sizes, strict=True)],
        dtype=torch.int64,
        device=x.device,
    )
    if mode is GatherScatterMode.CLIP:
        starts = torch.minimum(starts.clamp(min=0), hi.clamp(min=0))
    ok = ((starts >= 0) & (starts <= hi)).all(-1)
    if x.ndim == 0:
        raise _OnHost  # (NumPy adds one value after another)
    out = x.clone()
    positions = _window_positions(starts, window, sizes)
    keep = ok.reshape(*ok.shape, *([1] * len(window))).expand(values.shape)
    out.index_put_(tuple(p[keep] for p in positions), values[keep], accumulate=True)
    return out


def _scatter_add_impl(host: list[Callable[..., Any]]) -> Callable[..., Any]:
    def impl(*xs: Tensor, **params: Any) -> Any:
        try:
            return _scatter_add(*xs, **params)
        except _OnHost:
            return host[0](*xs, **params)

    impl.fallback = host  # type: ignore[attr-defined]
    return impl


# -- linear algebra, bits -----------------------------------------------------


def _triangular_solve(a: Tensor, b: Tensor, **params: bool) -> Tensor:
    if a.dtype not in _MATH_DIRECT:
        raise _OnHost
    # As the NumPy backend: the triangle (its diagonal 1 when unit), in
    # the operation asked for, solved as a general system.
    t = torch.tril(a) if params["lower"] else torch.triu(a)
    if params["unit_diagonal"]:
        n = a.shape[-1]
        eye = torch.eye(n, dtype=torch.bool, device=a.device)
        t = torch.where(eye, torch.ones_like(t), t)
    if params["transpose_a"]:
        t = t.transpose(-1, -2)
    if params["conjugate_a"]:
        t = t.conj_physical()
    out: Tensor
    if params["left_side"]:
        out = torch.linalg.solve(t, b)
    else:
        out = torch.linalg.solve(t.mT, b.mT).mT
    return out


def _on_host_when_refused(
    fn: Callable[..., Any], host: list[Callable[..., Any]]
) -> Callable[..., Any]:
    """``fn``, or the primitive's NumPy implementation on the host where
    ``fn`` refuses its operands (:class:`_OnHost`)."""

    def impl(*xs: Tensor, **params: Any) -> Any:
        try:
            return fn(*xs, **params)
        except _OnHost:
            return host[0](*xs, **params)

    impl.fallback = host  # type: ignore[attr-defined]
    return impl


_UNSIGNED_OF_WIDTH: Final = {
    8: torch.uint8,
    16: torch.int16,
    32: torch.int32,
    64: torch.int64,
}


def _population_count(x: Tensor) -> Tensor:
    # The bits of each byte, counted by a table of the 256 bytes.
    width = x.element_size()
    as_bytes = x.contiguous().reshape(-1).view(torch.uint8).reshape(*x.shape, width)
    table = torch.tensor(
        [bin(i).count("1") for i in range(256)], dtype=torch.int64, device=x.device
    )
    return table[as_bytes.long()].sum(-1).to(x.dtype)


def _clz(x: Tensor) -> Tensor:
    # Leading zeros: the width less the bit length, found by halving.
    bits = x.element_size() * 8
    signed = x.view(_UNSIGNED_OF_WIDTH[bits]) if x.dtype is not torch.uint8 else x
    wide = signed.to(torch.int64)
    if bits < 64:
        wide = wide & ((1 << bits) - 1)
    length = torch.zeros_like(wide)
    negative = wide < 0  # (int64 with the top bit: length 64)
    rest = torch.where(negative, torch.zeros_like(wide), wide)
    for step in (32, 16, 8, 4, 2, 1):
        high = rest >= (1 << step)
        length = length + torch.where(high, step, 0)
        rest = torch.where(high, rest >> step, rest)
    length = length + (rest > 0).to(torch.int64)
    length = torch.where(negative, 64, length)
    return (bits - length).to(torch.int64).to(_BITS.get(x.dtype, x.dtype)).view(x.dtype)


def _bitcast(x: Tensor, *, new_dtype: DType) -> Tensor:
    target = _torch_dtype(new_dtype)
    size, new_size = x.element_size(), _element_size(target)
    y = x.contiguous()
    if size == new_size:
        return y.view(target).clone()
    if size > new_size:
        return y.reshape(*x.shape, 1).view(target).clone()
    return y.view(target).reshape(x.shape[:-1]).clone()


def _element_size(dt: torch.dtype) -> int:
    return torch.empty(0, dtype=dt).element_size()


# -- dot_general --------------------------------------------------------------


def _dot_general(
    lhs: Tensor,
    rhs: Tensor,
    *,
    dimension_numbers: Any,
    preferred_element_type: DType | None,
) -> Tensor:

    (lc, rc), (lb, rb) = dimension_numbers
    l_np, r_np = dtype_of(lhs), dtype_of(rhs)
    out_np = result_dtype(l_np, r_np, preferred_element_type)
    compute_np = _compute_dtype(result_dtype(l_np, r_np, None), out_np)
    compute = _TO_TORCH.get(compute_np)
    if compute is None or compute in _BITS or compute is torch.bool:
        return _host_dot(
            lhs,
            rhs,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
        )
    if (
        compute_np == out_np
        and lhs.dtype is compute
        and rhs.dtype is compute
        and lhs.ndim == 2
        and rhs.ndim == 2
        and not lb
        and len(lc) == 1
        and len(rc) == 1
        and (compute.is_floating_point or compute.is_complex)
    ):
        # A matrix product of one dtype (a dense layer's): torch's own, with
        # each operand transposed as its contracting axis asks.
        return torch.mm(
            lhs if tuple(lc) == (1,) else lhs.T, rhs if tuple(rc) == (0,) else rhs.T
        )
    free_l = [i for i in range(lhs.ndim) if i not in (*lb, *lc)]
    free_r = [i for i in range(rhs.ndim) if i not in (*rb, *rc)]
    a = _convert(lhs, new_dtype=compute_np).permute((*lb, *free_l, *lc))
    b = _convert(rhs, new_dtype=compute_np).permute((*rb, *rc, *free_r))
    nb = math.prod(lhs.shape[d] for d in lb)
    nk = math.prod(lhs.shape[d] for d in lc)
    nl = math.prod(lhs.shape[d] for d in free_l)
    nr = math.prod(rhs.shape[d] for d in free_r)
    if not compute.is_floating_point and not compute.is_complex and lhs.is_cuda:
        return _host_dot(
            lhs,
            rhs,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
        )
    if lb:
        product = torch.bmm(a.reshape(nb, nl, nk), b.reshape(nb, nk, nr))
    else:
        product = torch.mm(a.reshape(nl, nk), b.reshape(nk, nr))
    shape = (
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in free_l),
        *(rhs.shape[d] for d in free_r),
    )
    return _convert(product.reshape(shape), new_dtype=out_np)


_host_dot: Callable[..., Tensor]

# -- registration -------------------------------------------------------------

_F = Callable[..., Any]


def _unary_table() -> dict[str, _F]:
    w, f64 = _widened, _in_f64
    return {
        "neg": _wrapping(torch.neg),
        "sign": _math(_sign),
        "floor": _math(torch.floor),
        "ceil": _math(torch.ceil),
        "abs": _values(w(_abs), wrap=True),
        "exp": _math(torch.exp),
        "exp2": _math(_exp2),
        "log": _math(torch.log),
        "log1p": _math(torch.log1p),
        "expm1": _math(torch.expm1),
        "sqrt": _math(torch.sqrt),
        "rsqrt": _math(torch.rsqrt),
        "sin": _math(torch.sin),
        "cos": _math(torch.cos),
        "tan": _math(torch.tan),
        "asin": _math(torch.asin),
        "acos": _math(torch.acos),
        "atan": _math(torch.atan),
        "sinh": _math(torch.sinh),
        "cosh": _math(torch.cosh),
        "tanh": _math(torch.tanh),
        "asinh": _math(torch.asinh),
        "acosh": _math(torch.acosh),
        "atanh": _math(torch.atanh),
        "logistic": _math(_logistic),
        "erf": _values(f64(torch.special.erf)),
        "erfc": _values(f64(torch.special.erfc)),
        "erf_inv": _values(f64(torch.special.erfinv)),
        "lgamma": _values(f64(torch.special.gammaln)),
        "digamma": _values(f64(_digamma)),
        "polygamma": _values(f64(_polygamma)),
        "is_finite": _math(_is_finite),
        "not": _wrapping(_not),
        "real": _real,
        "imag": _imag,
        "conj": _conj,
        "round": _values(_round),
        "integer_pow": _values(_integer_pow, wrap=True),
    }


def _binary_table() -> dict[str, _F]:
    return {
        "add": _wrapping2(torch.add),
        "add_any": _wrapping2(torch.add),
        "sub": _wrapping2(torch.sub),
        "mul": _wrapping2(torch.mul),
        "div": _values(_div, wrap=True),
        "rem": _values(_rem, wrap=True),
        "max": _values(_lexicographic(True)),
        "min": _values(_lexicographic(False)),
        "atan2": _math(_atan2),
        "and": _wrapping2(torch.bitwise_and),
        "or": _wrapping2(torch.bitwise_or),
        "xor": _wrapping2(torch.bitwise_xor),
        "eq": _wrapping2(torch.eq),
        "ne": _wrapping2(torch.ne),
        "lt": _values(torch.lt),
        "le": _values(torch.le),
        "gt": _values(torch.gt),
        "ge": _values(torch.ge),
        "shift_left": _wrapping(_shift("left")),
        "shift_right_logical": _wrapping(_shift("logical")),
        "shift_right_arithmetic": _wrapping(_shift("arithmetic")),
        "nextafter": _nextafter([]),
        "pow": _values(_pow),
        "complex": _complex,
        "select_n": _select_n,
        "clamp": _values(_clamp),
    }


def _structural_table() -> dict[str, _F]:
    return {
        "broadcast_in_dim": _bits(_broadcast_in_dim),
        "reshape": _bits(_reshape),
        "transpose": _bits(_transpose),
        "squeeze": _bits(_squeeze),
        "rev": _bits(_rev),
        "concatenate": _concatenate,
        "pad": _pad,
        "iota": _iota,
        "slice": _bits(_slice),
        "dynamic_slice": _bits(_dynamic_slice),
        "dynamic_update_slice": _dynamic_update_slice,
        "convert_element_type": _convert_impl,
        "dot_general": _dot_general,
        "sort": _sort_impl([]),
        "triangular_solve": _on_host_when_refused(_triangular_solve, []),
        "population_count": _bits(_population_count),
        "clz": _bits(_clz),
        "bitcast_convert_type": _bitcast,
        "gather": _gather,
        "scatter-add": _scatter_add_impl([]),
    }


def _reduction_table() -> dict[str, _F]:
    return {
        "reduce_sum": _values(_reduce_sum, wrap=True),
        "reduce_prod": _values(_reduce_prod, wrap=True),
        "reduce_max": _values(_reduce_extreme("max")),
        "reduce_min": _values(_reduce_extreme("min")),
        "reduce_and": _bits(_reduce_bits(torch.bitwise_and, -1)),
        "reduce_or": _bits(_reduce_bits(torch.bitwise_or, 0)),
        "reduce_xor": _bits(_reduce_bits(torch.bitwise_xor, 0)),
        "argmax": _values(_arg(torch.argmax), other=True),
        "argmin": _values(_arg(torch.argmin), other=True),
        "cumsum": _values(_cumulative(_cumsum), wrap=True),
        "cumprod": _values(_cumulative(_cumprod), wrap=True),
        "cummax": _values(_cumulative(_cummax)),
        "cummin": _values(_cumulative(_cummin)),
    }


#: The primitives computed by torch itself here; every other one is
#: computed by the NumPy backend on the host (see the module's notes).
_TORCH_IMPLS: dict[str, _F] = {}


def register(backend: Backend) -> None:
    """Register an implementation of every primitive on ``backend``.

    Args:
      backend: the backend to fill (:data:`BACKEND`, or another made for a
        test).
    """
    global _host_convert, _host_dot
    _host_convert = _host(PRIMITIVES["convert_element_type"])
    _host_dot = _host(PRIMITIVES["dot_general"])
    if not _TORCH_IMPLS:
        for table in (_unary_table, _binary_table, _structural_table, _reduction_table):
            _TORCH_IMPLS.update(table())
    for name, prim in PRIMITIVES.items():
        impl = _TORCH_IMPLS.get(name)
        if name in _NEVER_COMPUTED:
            impl = NUMPY.impl(prim)  # (raises: bound outside its vmap)
        elif impl is None:
            impl = _host(prim)
        else:
            host = getattr(impl, "fallback", None)
            if host is not None and not host:
                host.append(_host(prim))
        backend.def_impl(prim, impl)
        _MADE.setdefault(backend, {})[prim] = impl


#: The implementations :func:`register` gave each backend (those that
#: :meth:`TorchBackend.promoting` stands for while they are kept).
_MADE: Final[dict[Backend, dict[Primitive, Callable[..., Any]]]] = {}


# -- the support table --------------------------------------------------------


def support_table() -> dict[str, dict[str, str]]:
    """How each primitive is computed for each dtype of the lattice:
    ``'yes'`` (torch computes it), ``'emulated: ...'`` (exactly, another
    way) or ``'no: ...'`` (TypeError), derived from :data:`_DTYPES`,
    :data:`_GAPS` and the registrations.

    Returns:
      primitive name → dtype name → what happens.

    >>> table = support_table()
    >>> table['add']['float32'], table['add']['uint32']
    ('yes', 'emulated: on int32 bits')
    >>> table['sort']['float32'], table['sort']['complex64']
    ('yes', 'emulated: by NumPy on the host')
    """
    register_once()
    out: dict[str, dict[str, str]] = {}
    for name, prim in sorted(PRIMITIVES.items()):
        impl = BACKEND.impls[prim]
        on_host = getattr(impl, "on_host", False)
        row: dict[str, str] = {}
        for dt in _dtypes.ALL_DTYPES:
            row[dt.name] = _support(name, dt, on_host)
        out[name] = row
    return out


#: The dtypes for which a primitive computed by torch otherwise goes to the
#: host (torch lacks the kernel, or accumulates in another order than
#: NumPy's ``ufunc.at``). Integer ``dot_general`` on CUDA goes there too.
_PARTLY_ON_HOST: Final = {
    "sort": ("complex64", "complex128"),
    "cummax": ("complex64", "complex128"),
    "cummin": ("complex64", "complex128"),
    "nextafter": ("bfloat16", "float16", *(n for n in _DTYPES if "float8" in n)),
    "scatter-add": ("bfloat16", "float16", *(n for n in _GAPS)),
    "dot_general": ("bool", "uint16", "uint32", "uint64"),
}


def _support(name: str, dt: DType, on_host: bool) -> str:
    if dt.name not in _DTYPES:
        return "no: torch has no such dtype"
    if name in _NEVER_COMPUTED or name == "bitcast_convert_type":
        return "yes"  # (a bitcast is torch's view, for every dtype)
    if name in _CONTROL:
        return "emulated: its program's primitives here, operands via the host"
    if on_host or dt.name in _PARTLY_ON_HOST.get(name, ()):
        return "emulated: by NumPy on the host"
    gap = _GAPS.get(dt.name)
    if gap is None:
        return "yes"
    float8 = gap["values"] == "float32"
    if name in _MOVING or (name in _WRAPPING and not float8):
        return f"emulated: on {gap['bits']} bits"
    if gap["values"] is None:
        return "emulated: by NumPy on the host"
    return f"emulated: in {gap['values']}"


def support_markdown() -> str:
    """:func:`support_table` as a Markdown table, primitives of the same
    row together, for the dtypes torch has (the others are ``no`` for
    every primitive): what torch computes itself, and how the rest is
    emulated. The documentation shows it.

    Returns:
      The table's Markdown text.
    """
    table = support_table()
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for name, row in table.items():
        key = tuple((d, row[d]) for d in _DTYPES)
        groups.setdefault(key, []).append(name)
    lines = [
        "| primitives | computed by torch | emulated |",
        "| --- | --- | --- |",
    ]
    for key, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        native = [d for d, v in key if v == "yes"]
        how: dict[str, list[str]] = {}
        for d, v in key:
            if v != "yes":
                how.setdefault(v.removeprefix("emulated: "), []).append(d)
        emulated = "; ".join(f"{', '.join(ds)}: {h}" for h, ds in how.items())
        prims = ", ".join(f"`{n}`" for n in sorted(names))
        lines.append(f"| {prims} | {', '.join(native) or '-'} | {emulated or '-'} |")
    missing = [d.name for d in _dtypes.ALL_DTYPES if d.name not in _DTYPES]
    lines.append("")
    lines.append(f"Not in torch (TypeError for every primitive): {', '.join(missing)}.")
    return "\n".join(lines)


#: Primitives that move data (any dtype: on the bits of its width).
_MOVING: Final = frozenset(
    {
        "broadcast_in_dim",
        "reshape",
        "transpose",
        "squeeze",
        "rev",
        "concatenate",
        "pad",
        "slice",
        "dynamic_slice",
        "dynamic_update_slice",
        "gather",
        "select_n",
    }
)
#: Primitives whose integer results wrap alike on signed and unsigned bits.
_WRAPPING: Final = frozenset(
    {
        "neg",
        "not",
        "add",
        "add_any",
        "sub",
        "mul",
        "and",
        "or",
        "xor",
        "eq",
        "ne",
        "shift_left",
        "shift_right_logical",
        "shift_right_arithmetic",
        "reduce_and",
        "reduce_or",
        "reduce_xor",
        "population_count",
        "clz",
    }
)
#: Collectives: bound inside a vmap of their axis name only, where the
#: batching rules compute them; no backend ever does.
_NEVER_COMPUTED: Final = frozenset({"psum", "pmax", "pmin", "axis_index"})
#: Control flow: the NumPy backend's implementation runs the program, whose
#: primitives the backend in force computes; the operands cross the host.
_CONTROL: Final = frozenset({"cond", "while", "scan"})


class TorchBackend(Backend):
    """The torch backend's table: a primitive defined after it was filled
    (by a module imported later, or a user's own) that the NumPy backend
    implements is computed by it on the host, as those here without a torch
    implementation are."""

    __slots__ = ()

    def implements(self, prim: Primitive) -> bool:
        return super().implements(prim) or NUMPY.implements(prim)

    def promoting(
        self, prim: Primitive, dtypes: list[DType | None], common: DType
    ) -> Callable[..., Any] | None:
        made = _MADE.get(self, {})
        convert = PRIMITIVES["convert_element_type"]
        if len(dtypes) != 2 or not (
            kept(self, prim, made) and kept(self, convert, made)
        ):
            return None  # (an implementation replaced since: not stood for)
        x, y = (common if d is None else d for d in dtypes)
        fn = promoting(prim.name, x, y, common)
        return None if fn is None else guarded(self, prim, dtypes, common, made, fn)

    def impl(self, prim: Primitive) -> Callable[..., Any]:
        if not super().implements(prim) and NUMPY.implements(prim):
            self.def_impl(prim, _host(prim))
        return super().impl(prim)


BACKEND: Final = TorchBackend(NAME, from_numpy=from_numpy, to_numpy=to_numpy)
_REGISTERED: list[bool] = []


def register_once() -> None:
    """:func:`register` on :data:`BACKEND`, once."""
    if not _REGISTERED:
        register(BACKEND)
        _REGISTERED.append(True)


# -- casts inside torch's kernels ---------------------------------------------

#: Binary primitives whose torch function, given operands of two dtypes,
#: converts both to torch's promoted dtype inside its kernel and computes
#: there, as lax does after converting them (``div``: of floats only).
_PROMOTING: Final[dict[str, Callable[..., Tensor]]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.true_divide,
    "max": torch.maximum,
    "min": torch.minimum,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}
#: Where the lattice's result dtype (the one both operands are converted to)
#: may be computed by torch's promotion: the operands are converted to it
#: by one rounding, as lax's conversion rounds. (Not float16 or bfloat16:
#: torch computes mixed operands in float32 and rounds once, where lax
#: rounds the converted operand and the result.)
_PROMOTED: Final = frozenset(
    (torch.float32, torch.float64, torch.complex64, torch.complex128)
)


def promoting(
    name: str, x_dtype: DType, y_dtype: DType, common: DType
) -> Callable[[Tensor, Tensor], Tensor] | None:
    """torch's own function for the binary primitive ``name`` on operands of
    ``x_dtype`` and ``y_dtype`` whose lattice dtype is ``common``, where
    torch's promotion computes in ``common`` too: it equals converting both
    operands to ``common`` (``convert_element_type`` without checks), then
    the primitive, without a separate conversion of the whole operand. None
    where it does not.

    Args:
      name: the primitive's name (``'add'``...).
      x_dtype: the first operand's dtype.
      y_dtype: the second operand's dtype.
      common: the dtype the lattice converts both to.

    Returns:
      A function of the two tensors, or None.

    >>> i32, f32, f16 = np.dtype('int32'), np.dtype('float32'), np.dtype('float16')
    >>> f = promoting('add', i32, f32, f32)
    >>> f(torch.tensor([16777217], dtype=torch.int32), torch.tensor([0.0]))
    tensor([16777216.])
    >>> promoting('add', i32, f16, f16)
    """
    fn = _PROMOTING.get(name)
    tx, ty, tc = _TO_TORCH.get(x_dtype), _TO_TORCH.get(y_dtype), _TO_TORCH.get(common)
    if fn is None or tx is None or ty is None or tc not in _PROMOTED:
        return None
    if tx not in _NATIVE or ty not in _NATIVE or torch.promote_types(tx, ty) is not tc:
        return None
    if tx.is_complex != tc.is_complex and name in ("max", "min"):
        return None  # (lax orders complex numbers; torch has no such order)
    if tc.is_complex and name in ("max", "min", "lt", "le", "gt", "ge"):
        return None
    if name == "sub" and torch.bool in (tx, ty):
        return None  # (torch refuses to subtract bools)
    return fn


def backend_on(device: str) -> Backend:
    """A backend computing with torch on ``device``: operands converted
    from NumPy are put there, results come back to NumPy (for tests on a
    GPU before Arrays hold tensors themselves).

    >>> backend_on("cpu")
    Backend('torch:cpu')
    """
    torch.empty(0, device=device)  # (fails here for a device torch lacks)

    def to_device(a: NDArray) -> Tensor:
        return from_numpy(a, device)

    backend = TorchBackend(f"torch:{device}", from_numpy=to_device, to_numpy=to_numpy)
    register(backend)
    return backend


#: (Imported for the primitives they define.)
_DEFINING: Final = (_lax, _tnp)
register_once()
