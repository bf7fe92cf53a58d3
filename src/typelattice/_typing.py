"""The types of typelattice.typing, defined here so that the public module
holds only its own names (documented there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol, TypeAlias, TypeGuard, runtime_checkable

import numpy as np

from typelattice._basearray import Array
from typelattice._dtypes import ALL_DTYPES

__all__ = [
    "ArrayLike",
    "ArrayLikeTypes",
    "DType",
    "DTypeLike",
    "Shape",
    "ShapeLike",
    "SupportsDType",
    "is_array_like",
    "is_dtype_like",
    "is_shape_like",
]

DType: TypeAlias = np.dtype[Any]
"""A dtype, as functions return it: always an ``np.dtype`` object."""

Shape: TypeAlias = tuple[int, ...]
"""A shape, as arrays report it."""


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a ``.dtype``: arrays, scalars and dtype objects like
    ``typelattice.numpy.int8``. Usable with ``isinstance``.

    >>> import numpy as np
    >>> import typelattice.numpy as tnp
    >>> isinstance(tnp.int8, SupportsDType), isinstance(np.zeros(2), SupportsDType)
    (True, True)
    >>> isinstance('int8', SupportsDType)
    False
    """

    @property
    def dtype(self) -> DType:
        """The object's dtype, something ``np.dtype`` accepts."""
        ...


ArrayLike: TypeAlias = (
    Array | np.ndarray[Any, Any] | np.generic | bool | int | float | complex
)
"""A value that converts to an array implicitly (not a list or tuple).

Statically any NumPy scalar is accepted, because ml_dtypes declares its scalar
types (``bfloat16``...) only as subclasses of ``np.generic``; at run time
:data:`ArrayLikeTypes` and the library accept those of the bool and numeric
dtypes of the universe only.
"""

DTypeLike: TypeAlias = (
    str
    | np.dtype[Any]
    | type[np.generic]
    | type[bool]
    | type[int]
    | type[float]
    | type[complex]
    | type[np.dtype[Any]]
    | SupportsDType
)
"""What names a dtype (not ``None``). Any value with a ``.dtype`` counts."""

ShapeLike: TypeAlias = int | Sequence[int]
"""An ``int`` (a 1-d shape) or a sequence of ``int``."""

# Exactly the scalar types of the universe: np.number would let in longdouble,
# and the ml_dtypes scalars (bfloat16, float8...) subclass np.generic only,
# which would let in str_, datetime64 and object_.
_SCALAR_TYPES: Final[tuple[type[np.generic], ...]] = tuple(dt.type for dt in ALL_DTYPES)

ArrayLikeTypes: Final[tuple[type, ...]] = (
    Array,
    np.ndarray,
    *_SCALAR_TYPES,
    int,  # bool too
    float,
    complex,
)
"""The classes of :data:`ArrayLike` values, for ``isinstance``.

>>> import numpy as np
>>> isinstance(np.float16(1), ArrayLikeTypes), isinstance(np.str_('1'), ArrayLikeTypes)
(True, False)
"""

_PYTHON_SCALAR_TYPES: Final = (bool, int, float, complex)


def is_array_like(x: object) -> TypeGuard[ArrayLike]:
    """Whether ``x`` is an :data:`ArrayLike` value.

    Args:
      x: any object.

    Returns:
      ``isinstance(x, ArrayLikeTypes)``; a type checker then narrows ``x`` to
      ``ArrayLike``.

    >>> import numpy as np, ml_dtypes
    >>> is_array_like(np.zeros(2)), is_array_like(ml_dtypes.bfloat16(1))
    (True, True)
    >>> is_array_like([1.0, 2.0]), is_array_like('1'), is_array_like(None)
    (False, False, False)
    """
    return isinstance(x, ArrayLikeTypes)


def is_dtype_like(x: object) -> TypeGuard[DTypeLike]:
    """Whether ``x`` has the form of a :data:`DTypeLike`.

    The form only: a string is a dtype-like here even if no dtype has that
    name, and a value's ``.dtype`` may still be one typelattice refuses
    (``typelattice.dtype`` raises ``TypeError`` for those).

    Args:
      x: any object.

    Returns:
      True for strings, ``np.dtype`` objects and classes, NumPy and ml_dtypes
      scalar types, ``bool``/``int``/``float``/``complex`` and objects with a
      ``.dtype``; a type checker then narrows ``x`` to ``DTypeLike``.

    >>> import numpy as np, ml_dtypes
    >>> is_dtype_like('int8'), is_dtype_like(np.float32), is_dtype_like(float)
    (True, True, True)
    >>> is_dtype_like(ml_dtypes.bfloat16), is_dtype_like(np.zeros(2))
    (True, True)
    >>> is_dtype_like(None), is_dtype_like(list), is_dtype_like(3)
    (False, False, False)
    """
    if isinstance(x, str | np.dtype):
        return True
    if isinstance(x, type):
        return x in _PYTHON_SCALAR_TYPES or issubclass(x, np.generic | np.dtype)
    return isinstance(x, SupportsDType)


def is_shape_like(x: object) -> TypeGuard[ShapeLike]:
    """Whether ``x`` is a :data:`ShapeLike`: an ``int`` or a sequence of them.

    ``bool`` is refused, alone or as an element, and so are strings (a
    sequence, but of strings) and NumPy arrays (not a ``Sequence``).

    Args:
      x: any object.

    Returns:
      Whether ``x`` is one; a type checker then narrows ``x`` to ``ShapeLike``.

    >>> is_shape_like(3), is_shape_like((2, 3)), is_shape_like([]), is_shape_like(())
    (True, True, True, True)
    >>> is_shape_like((2.0, 3)), is_shape_like(True), is_shape_like('')
    (False, False, False)
    """
    if isinstance(x, int):
        return not isinstance(x, bool)
    if isinstance(x, Sequence) and not isinstance(x, str | bytes | bytearray):
        # isinstance leaves the element type unknown (Sequence[Unknown]).
        items: Sequence[object] = x  # pyright: ignore[reportUnknownVariableType]
        return all(isinstance(d, int) and not isinstance(d, bool) for d in items)
    return False
