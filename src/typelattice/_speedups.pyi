"""C fast paths for typelattice's cached promotion lookups and binary
elementwise functions (_speedups.c)."""

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Final, Literal

import numpy as np

API_VERSION: Final[int]
#: The plans' conversion codes by name (_elementwise.Conversion).
CONVERSIONS: Final[dict[str, int]]

def configure(
    scope: ContextVar[Any], ndarray: type, generic: type, dtype: type, /
) -> None:
    """Set the ContextVar holding the scoped configuration and NumPy's array,
    scalar and dtype types."""

def set_global_memos(
    memo: dict[Any, Any],
    promotion_memo: dict[Any, Any],
    rank_allow: bool,
    state: object,
    /,
) -> None:
    """Set the global state's memos, whether its rank_promotion is 'allow',
    and the state itself."""

def read_only_view(value: np.ndarray[Any, Any], /) -> np.ndarray[Any, Any]:
    """An ndarray of ``value``'s shape, dtype and strides over its memory,
    read-only for good: its base is a ``ReadOnlyMemory``, which refuses
    writable buffers and does not give ``value`` out."""

def reuses_temporaries() -> bool:
    """Whether elementwise functions compute into the buffers of temporary
    arrays here: on CPython 3.14 and later, where Python can prove that
    nothing else holds one."""

def configure_jit(
    trace_var: ContextVar[Any],
    scalar_dtypes: tuple[Any, ...],
    asarray: Callable[..., Any],
    /,
) -> None:
    """Set the ContextVar holding the trace running here, the dtypes of
    Python scalar arguments (int32, int64, float32, float64, complex64,
    complex128, bool) and ``numpy.asarray``."""

def configure_binary(
    array_type: type,
    value_slot: Any,
    key_slot: Any,
    fp_var: ContextVar[Any],
    fp_ignore: object,
    scalar_to: Callable[..., Any],
    weak_to: Callable[..., Any],
    cast_call: Callable[..., Any],
    finish: Callable[..., Any],
    asarray: Callable[..., Any],
    check_operand: Callable[..., Any],
    /,
) -> None:
    """Set the array type, its slots, NumPy's error state and the helpers."""

class FastPath:
    """Answers from the promotion memos; calls ``fallback`` when it cannot."""

    def __init__(
        self,
        kind: Literal["result_type", "lattice_result_type", "promote_types"],
        fallback: Callable[..., Any],
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    @property
    def fallback(self) -> Callable[..., Any]: ...
    @property
    def kind(self) -> str: ...

class FastElementwise:
    """A binary elementwise function run from its cached plans in C; calls
    ``fallback`` with the same arguments when it cannot. ``swap`` is given
    for an Array operator (the reflected ones swap their operands), never
    for a namespace function."""

    def __init__(
        self, op: Any, fallback: Callable[..., Any], swap: bool = False
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any: ...
    @property
    def fallback(self) -> Callable[..., Any]: ...
    @property
    def op(self) -> Any: ...
    @property
    def swap(self) -> bool: ...

class JitCall:
    """``Jitted.__call__`` for traced calls with arrays and Python scalars
    as positional arguments; calls ``fallback`` with the same arguments
    otherwise."""

    def __init__(self, fallback: Callable[..., Any]) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any: ...
    @property
    def fallback(self) -> Callable[..., Any]: ...

def configure_bind(
    array_type: type,
    value_slot: Any,
    key_slot: Any,
    primitive_type: type,
    eager_slot: Any,
    active: list[Any],
    backends: list[Any],
    fp_var: ContextVar[Any],
    fp_ignore: object,
    owned: Callable[..., Any],
    ndarray: type,
    /,
) -> None:
    """Set the array and primitive types and their slots, the list of
    traces running, the list of backends other than NumPy's in force,
    NumPy's error state and the wrapping of results."""

class FastPrimitive:
    """``Primitive.bind`` (no ``primitive``), or a public function binding
    ``primitive`` to its ``nargs`` operands, run from the primitive's eager
    plans on arrays (with ``scalars``, on an array and a Python scalar too,
    converted as ``to_arrays`` converts it); calls ``fallback`` with the
    same arguments otherwise."""

    def __init__(
        self,
        fallback: Callable[..., Any],
        primitive: object = None,
        nargs: int = -1,
        scalars: bool = False,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, obj: object, owner: type | None = None) -> Any: ...
    @property
    def fallback(self) -> Callable[..., Any]: ...
    @property
    def primitive(self) -> object: ...
