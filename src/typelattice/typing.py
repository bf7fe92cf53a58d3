"""Types for annotating code that uses typelattice.

Inputs are annotated permissively and outputs precisely (JAX's JEP 12049):

- :data:`ArrayLike`: what converts to an array implicitly: a typelattice
  :class:`Array`, a NumPy array, a NumPy scalar, a Python ``bool``, ``int``,
  ``float`` or ``complex``. Not a list or tuple, as in JAX: convert those
  with ``typelattice.numpy.asarray`` first.
- :data:`DTypeLike`: what names a dtype: a string (``'int8'``, ``'bf'``), an
  ``np.dtype``, a NumPy or ml_dtypes scalar type (``np.int8``,
  ``ml_dtypes.bfloat16``), ``bool``/``int``/``float``/``complex``, or any
  object with a ``.dtype`` (:class:`SupportsDType`: arrays,
  ``typelattice.numpy.int8``). Not ``None``.
- :data:`ShapeLike`: an ``int`` or a sequence of ``int``.
- :class:`Array` (the base class of every typelattice array), :data:`DType`
  (``np.dtype[Any]``) and :data:`Shape` (``tuple[int, ...]``) for results.

Annotations and run-time checks need different objects here. The aliases
contain parameterized generics (``np.ndarray[Any, Any]``, ``type[...]``), and
``isinstance(x, ArrayLike)`` raises ``TypeError`` on Python 3.11 (a known
pitfall of ``jax.typing.ArrayLike``). Check values with:

- ``isinstance(x, Array)`` and ``isinstance(x, SupportsDType)``: both are
  classes;
- ``isinstance(x, ArrayLikeTypes)``: a plain tuple of the classes an
  ``ArrayLike`` value is an instance of;
- :func:`is_array_like`, :func:`is_dtype_like`, :func:`is_shape_like`:
  predicates that also narrow the type for mypy and pyright. Being a dtype-like
  or a shape-like is not a matter of one class (``np.int8`` is a dtype-like
  because it is a *subclass* of ``np.generic``; ``(2, 3)`` is a shape-like
  because of its elements), so those two have no ``isinstance`` form.

>>> import numpy as np
>>> import typelattice.numpy as tnp
>>> from typelattice.typing import ArrayLike, ArrayLikeTypes, DType
>>> def dtype_of_sum(x: ArrayLike, y: ArrayLike) -> DType:
...     return (tnp.asarray(x) + y).dtype
>>> dtype_of_sum(np.int8(1), 2)
dtype('int8')
>>> [isinstance(v, ArrayLikeTypes) for v in (tnp.zeros(2), 1.5, [1, 2])]
[True, True, False]
"""

from typelattice._basearray import Array
from typelattice._typing import (
    ArrayLike,
    ArrayLikeTypes,
    DType,
    DTypeLike,
    Shape,
    ShapeLike,
    SupportsDType,
    is_array_like,
    is_dtype_like,
    is_shape_like,
)

__all__ = [
    "Array",
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
