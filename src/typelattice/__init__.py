"""typelattice: JAX's dtype promotion lattice, standalone, on NumPy.

>>> import typelattice as tl
>>> tl.result_type('int32', 'float32')
dtype('float32')
>>> tl.result_type('int8', 2)
dtype('int8')
"""

import importlib as _importlib
from typing import TYPE_CHECKING

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
from typelattice._lattice import JoinError, Lattice, LatticeError, LatticeProblem
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

if TYPE_CHECKING:
    from typelattice import tree as tree
    from typelattice import tree_util as tree_util
    from typelattice._basearray import Array
    from typelattice._compare import (
        LIBRARIES,
        Comparison,
        Laws,
        LibraryNotInstalled,
        check_laws,
        compare_libraries,
        measure_library,
    )
    from typelattice._devices import (
        Device,
        default_backend,
        device_count,
        devices,
        local_device_count,
        local_devices,
        process_count,
        process_index,
    )
    from typelattice._draw import lattice_dot, lattice_layout, lattice_png, lattice_svg
    from typelattice._explain import Explanation, explain
    from typelattice._policies import checkpoint_policies
    from typelattice._sharding import P, set_mesh
    from typelattice._tables import Table, format_table, promotion_table
    from typelattice._tracing.ad import (
        grad,
        jvp,
        linearize,
        stop_gradient,
        value_and_grad,
        vjp,
    )
    from typelattice._tracing.batching import vmap
    from typelattice._tracing.custom import custom_jvp, custom_vjp
    from typelattice._tracing.jacobians import hessian, jacfwd, jacrev
    from typelattice._tracing.jaxpr import make_jaxpr
    from typelattice._tracing.jit import (
        CacheInfo,
        Jitted,
        ShapeDtypeStruct,
        eval_shape,
        jit,
    )
    from typelattice._tracing.linear import linear_transpose
    from typelattice._tracing.pmap import pmap
    from typelattice._tracing.primitive import float0
    from typelattice._tracing.remat import checkpoint, remat
    from typelattice._tracing.tracer import (
        ConcretizationTypeError,
        Tracer,
        UnexpectedTracerError,
    )
    from typelattice._tracing.transfer import (
        block_until_ready,
        device_get,
        device_put,
    )
del TYPE_CHECKING  # only for the imports above; not part of the API

__version__ = "0.1.0"

# The tools (tables, live comparisons, drawings, explanations) load on first
# use, so that `import typelattice` costs only what promotion needs.
_LAZY: dict[str, str] = {
    # The arrays' base class (a leaf module: it loads no array code).
    "Array": "typelattice._basearray",
    **dict.fromkeys(
        [
            "LIBRARIES",
            "Comparison",
            "Laws",
            "LibraryNotInstalled",
            "check_laws",
            "compare_libraries",
            "measure_library",
        ],
        "typelattice._compare",
    ),
    **dict.fromkeys(
        ["lattice_dot", "lattice_layout", "lattice_png", "lattice_svg"],
        "typelattice._draw",
    ),
    **dict.fromkeys(["Explanation", "explain"], "typelattice._explain"),
    **dict.fromkeys(
        ["CacheInfo", "Jitted", "ShapeDtypeStruct", "eval_shape", "jit"],
        "typelattice._tracing.jit",
    ),
    **dict.fromkeys(
        ["grad", "jvp", "linearize", "stop_gradient", "value_and_grad", "vjp"],
        "typelattice._tracing.ad",
    ),
    **dict.fromkeys(
        [
            "Device",
            "default_backend",
            "device_count",
            "devices",
            "local_device_count",
            "local_devices",
            "process_count",
            "process_index",
        ],
        "typelattice._devices",
    ),
    **dict.fromkeys(
        ["block_until_ready", "device_get", "device_put"],
        "typelattice._tracing.transfer",
    ),
    **dict.fromkeys(["hessian", "jacfwd", "jacrev"], "typelattice._tracing.jacobians"),
    "float0": "typelattice._tracing.primitive",
    "make_jaxpr": "typelattice._tracing.jaxpr",
    "linear_transpose": "typelattice._tracing.linear",
    "vmap": "typelattice._tracing.batching",
    "pmap": "typelattice._tracing.pmap",
    **dict.fromkeys(["P", "set_mesh"], "typelattice._sharding"),
    **dict.fromkeys(["custom_jvp", "custom_vjp"], "typelattice._tracing.custom"),
    **dict.fromkeys(["checkpoint", "remat"], "typelattice._tracing.remat"),
    "checkpoint_policies": "typelattice._policies",
    **dict.fromkeys(
        ["ConcretizationTypeError", "Tracer", "UnexpectedTracerError"],
        "typelattice._tracing.tracer",
    ),
    **dict.fromkeys(
        ["Table", "format_table", "promotion_table"], "typelattice._tables"
    ),
}


# The public submodules that load on first use, as jax.tree and jax.tree_util.
_SUBMODULES: frozenset[str] = frozenset(
    {"experimental", "lax", "nn", "numpy", "random", "sharding", "tree", "tree_util"}
)


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return _importlib.import_module(f"typelattice.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'typelattice' has no attribute {name!r}")
    if module.startswith("typelattice._tracing"):
        # The transformations make arrays and tracers, whose operators and
        # methods the array namespace sets as it loads: it loads first.
        _importlib.import_module("typelattice.numpy")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, *_SUBMODULES])


# Tracebacks show the public names.
for _cls in (JoinError, Lattice, LatticeError, TypePromotionError, X64DtypeWarning):
    _cls.__module__ = "typelattice"
del _cls

__all__ = [
    "Array",
    "CATEGORIES",
    "CacheInfo",
    "ConcretizationTypeError",
    "Device",
    "LIBRARIES",
    "Comparison",
    "Explanation",
    "JoinError",
    "Jitted",
    "Lattice",
    "LatticeError",
    "LatticeProblem",
    "Laws",
    "LibraryNotInstalled",
    "ShapeDtypeStruct",
    "Table",
    "Tracer",
    "TypePromotionError",
    "UnexpectedTracerError",
    "X64DtypeWarning",
    "__version__",
    "block_until_ready",
    "canonicalize_dtype",
    "check_laws",
    "checkpoint",
    "checkpoint_policies",
    "code_to_dtype",
    "compare_libraries",
    "config",
    "custom_jvp",
    "custom_vjp",
    "default_backend",
    "device_count",
    "device_put",
    "devices",
    "dtype",
    "dtype_code",
    "dtype_promotion",
    "enable_x64",
    "eval_shape",
    "float0",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "stop_gradient",
    "value_and_grad",
    "vjp",
    "vmap",
    "pmap",
    "P",
    "set_mesh",
    "process_count",
    "process_index",
    "device_get",
    "explain",
    "explicit_x64_dtypes",
    "finfo",
    "format_table",
    "get_lattice",
    "iinfo",
    "is_weakly_typed",
    "isdtype",
    "issubdtype",
    "jit",
    "lattice_dot",
    "lattice_layout",
    "lattice_png",
    "lattice_result_type",
    "lattice_svg",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "measure_library",
    "promote_types",
    "promotion_table",
    "rank_promotion",
    "register_lattice",
    "remat",
    "result_type",
    "safe_to_cast",
]
