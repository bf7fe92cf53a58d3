"""The CuPy backend: every primitive computed on a CUDA device by CuPy.

Importing this module imports CuPy; nothing imports it but the code that
asks for the backend. The implementations are the NumPy backend's, run on
CuPy arrays through NumPy's dispatch protocols (see
:mod:`typelattice._backends._xp`), so values, casts and data-safety errors
are the NumPy backend's; the control flow primitives and the few listed in
``_xp.ON_HOST`` are computed on the host, exactly.

CuPy has no dtypes of ``ml_dtypes`` (bfloat16, the float8/float6/float4
family, the narrow integers): :data:`MISSING` declares them, and an array of
one of them cannot be put on the device (TypeError naming the dtype, the
backend, the device and the fix). Emulating bfloat16 through float32 would
need every primitive to round its result; it is not done.
"""

from __future__ import annotations

from typing import Any, Final

import cupy  # pyright: ignore[reportMissingImports]
import numpy as np

from typelattice import _dtypes
from typelattice._backends import _xp
from typelattice._backends._backend import Backend

__all__ = [
    "BACKEND",
    "MISSING",
    "NAME",
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

#: The dtypes CuPy lacks (CuPy 13): dtype name -> reason. Every dtype of
#: ml_dtypes; the support table and the errors of :func:`from_numpy` are
#: derived from it.
MISSING: Final[dict[str, str]] = {
    dt.name: f"CuPy has no {dt.name} dtype" for dt in _dtypes.EXTENDED_DTYPES
}

_xp_array: Final[type] = cupy.ndarray  # pyright: ignore[reportUnknownMemberType]


def owns(x: Any) -> bool:
    """Whether ``x`` is a CuPy array."""
    return isinstance(x, _xp_array)


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of CuPy array ``x`` (CuPy's dtypes are NumPy's)."""
    return np.dtype(x.dtype)


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
        return cupy.asarray(a)  # pyright: ignore[reportUnknownMemberType]
    with cupy.cuda.Device(ident):  # pyright: ignore[reportUnknownMemberType]
        return cupy.asarray(a)  # pyright: ignore[reportUnknownMemberType]


def to_numpy(x: Any) -> np.ndarray[Any, Any]:
    """CuPy array ``x`` copied to the host."""
    return np.asarray(x.get())


def put(x: Any, device: str) -> Any:
    """CuPy array ``x`` on CUDA device ``device`` (no copy if it is there)."""
    ident = _device_id(device)
    if ident is None or int(x.device.id) == ident:
        return x
    with cupy.cuda.Device(ident):  # pyright: ignore[reportUnknownMemberType]
        return cupy.asarray(x)  # pyright: ignore[reportUnknownMemberType]


def register(backend: Backend) -> Backend:
    """Give ``backend`` every primitive on CuPy arrays."""
    return _xp.register(backend, cupy)


BACKEND: Final = Backend(NAME, from_numpy=from_numpy, to_numpy=to_numpy)
register(BACKEND)


def support_table() -> dict[str, dict[str, str]]:
    """Primitive name -> dtype name -> 'yes', 'emulated: ...' or 'no: ...'."""
    return _xp.support_table(BACKEND, MISSING)
