"""The CuPy backend: every primitive computed on a CUDA device by CuPy.

Importing this module imports CuPy; nothing imports it but the code that
asks for the backend. The implementations are the NumPy backend's, run on
CuPy arrays through NumPy's dispatch protocols (see
:mod:`typelattice._backends._xp`), so values, casts and data-safety errors
are the NumPy backend's; the control flow primitives and the few listed in
``_xp.ON_HOST`` are computed on the host, exactly. Mixed operands of a
binary primitive (``int32 + float32``) are converted inside CuPy's ufunc
(``_xp.XpBackend.promoting``) where the conversion is exact or one IEEE
rounding, as NumPy's (:data:`_xp.EXACT_IN_KERNEL`).

CuPy lacks most dtypes of ``ml_dtypes`` (the float8/float6/float4 family,
the narrow integers; CuPy 13 also bfloat16): :data:`MISSING` lists those the
installed CuPy lacks, and an array of one of them cannot be put on the
device (TypeError naming the dtype, the backend, the device and the fix).
They are not emulated: emulating a float8 through float32 would need every
primitive to round its result to the narrow format.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import numpy as np

from typelattice import _dtypes
from typelattice._backends import _xp
from typelattice._backends._backend import Backend

# (imported by name: CuPy is optional and has no type annotations)
cupy: Any = importlib.import_module("cupy")

__all__ = [
    "BACKEND",
    "MISSING",
    "NAME",
    "copy",
    "device_of",
    "dtype_of",
    "from_numpy",
    "owns",
    "put",
    "register",
    "shape_of",
    "support_table",
    "to_numpy",
]

NAME: Final = "cupy"


def _lacks(dt: np.dtype[Any]) -> str | None:
    """Why the installed CuPy cannot compute with arrays of ``dt``, or None.
    CuPy 14 holds and adds bfloat16 arrays, but its ``where`` gives float32:
    a dtype counts only where selecting keeps it."""
    version = cupy.__version__
    try:
        x = cupy.asarray(np.zeros(2, dt))
        kept = (x + x).dtype == dt and cupy.where(x == x, x, x).dtype == dt
    except Exception as e:  # (CuPy raises several kinds)
        return f"CuPy {version} has no {dt.name} ({type(e).__name__})"
    if not kept:
        return f"CuPy {version} computes {dt.name} only in part (where widens it)"
    return None


#: The dtypes the installed CuPy lacks: dtype name -> reason, probed once at
#: import on one element (CuPy 13 lacks every dtype of ml_dtypes; CuPy 14
#: holds bfloat16). The support table and the errors of :func:`from_numpy`
#: are derived from it.
MISSING: Final[dict[str, str]] = {
    dt.name: reason for dt in _dtypes.ALL_DTYPES if (reason := _lacks(dt)) is not None
}

_xp_array: Final[type] = cupy.ndarray


def owns(x: Any) -> bool:
    """Whether ``x`` is a CuPy array."""
    return isinstance(x, _xp_array)


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of CuPy array ``x`` (CuPy's dtypes are NumPy's)."""
    dtype: np.dtype[Any] = np.dtype(x.dtype)
    return dtype


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of CuPy array ``x``, of Python ints."""
    return tuple(int(d) for d in x.shape)


def device_of(x: Any) -> str:
    """``'cuda:N'``, the device holding CuPy array ``x``."""
    return f"cuda:{int(x.device.id)}"


def _device_id(device: str | None) -> int | None:
    if device is None:
        return None
    if device == "cuda":
        return 0
    if device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    raise ValueError(
        f"the cupy backend computes on CUDA devices, got device={device!r}: "
        "give 'cuda' or 'cuda:N', or use backend='numpy' for the CPU"
    )


def from_numpy(a: Any, device: str | None = None) -> Any:
    """NumPy array ``a`` copied to the CUDA device ``device`` (``'cuda:N'``;
    the current device by default), of the same dtype and values.

    Raises:
      TypeError: CuPy lacks ``a``'s dtype (see :data:`MISSING`).
      ValueError: ``device`` is not a CUDA device.
    """
    a = np.asarray(a)
    reason = MISSING.get(a.dtype.name)
    if reason is not None:
        where = device or "cuda"
        raise TypeError(
            f"the cupy backend cannot hold {a.dtype.name} (device {where}): "
            f"{reason}. Convert first (x.astype('float32')), or compute on the "
            "CPU with backend='numpy'"
        )
    ident = _device_id(device)
    if ident is None:
        return cupy.asarray(a)
    with cupy.cuda.Device(ident):
        return cupy.asarray(a)


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    """CuPy array ``x`` copied to the host."""
    return np.asarray(x.get())


def copy(x: Any) -> Any:
    """A copy of CuPy array ``x`` on its device."""
    return x.copy()


def put(x: Any, device: str) -> Any:
    """CuPy array ``x`` on CUDA device ``device`` (no copy if it is there)."""
    ident = _device_id(device)
    if ident is None or int(x.device.id) == ident:
        return x
    with cupy.cuda.Device(ident):
        return cupy.asarray(x)


def register(backend: Backend) -> Backend:
    """Give ``backend`` every primitive on CuPy arrays."""
    return _xp.register(backend, cupy)


#: Converts mixed operands inside CuPy's ufuncs where the conversion is exact
#: or one IEEE rounding, as NumPy's on the host (``_xp.EXACT_IN_KERNEL``).
BACKEND: Final = _xp.XpBackend(
    NAME,
    cupy,
    converts_to=_xp.EXACT_IN_KERNEL,
    from_numpy=from_numpy,
    to_numpy=to_numpy,
)
register(BACKEND)


def support_table() -> dict[str, dict[str, str]]:
    """Primitive name -> dtype name -> 'yes', 'emulated: ...' or 'no: ...'."""
    return _xp.support_table(BACKEND, MISSING)
