"""typelattice: JAX's dtype promotion lattice, standalone, on NumPy.

>>> import typelattice as tl
>>> tl.result_type('int32', 'float32')
dtype('float32')
>>> tl.result_type('int8', 2)
dtype('int8')
"""

from __future__ import annotations

from typelattice._config import (
    config,
    dtype_promotion,
    enable_x64,
    explicit_x64_dtypes,
    rank_promotion,
)
from typelattice._dtypes import (
    CATEGORIES,
    X64DtypeWarning,
    canonicalize_dtype,
    code_to_dtype,
    dtype,
    dtype_code,
    finfo,
    iinfo,
    isdtype,
    issubdtype,
)
from typelattice._lattice import JoinError, Lattice, LatticeError
from typelattice._promotion import (
    TypePromotionError,
    get_lattice,
    is_weakly_typed,
    lattice_result_type,
    promote_types,
    register_lattice,
    result_type,
    safe_to_cast,
)

__version__ = "0.1.0"

# Tracebacks show the public names.
for _cls in (JoinError, Lattice, LatticeError, TypePromotionError, X64DtypeWarning):
    _cls.__module__ = "typelattice"
del _cls

__all__ = [
    "CATEGORIES",
    "JoinError",
    "Lattice",
    "LatticeError",
    "TypePromotionError",
    "X64DtypeWarning",
    "__version__",
    "canonicalize_dtype",
    "code_to_dtype",
    "config",
    "dtype",
    "dtype_code",
    "dtype_promotion",
    "enable_x64",
    "explicit_x64_dtypes",
    "finfo",
    "get_lattice",
    "iinfo",
    "is_weakly_typed",
    "isdtype",
    "issubdtype",
    "lattice_result_type",
    "promote_types",
    "rank_promotion",
    "register_lattice",
    "result_type",
    "safe_to_cast",
]
