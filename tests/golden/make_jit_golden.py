"""Record what JAX does at the edges of jit and of size-taking functions.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_jit_golden.py

It writes ``jit_edges.json`` beside this file; ``tests/test_jit_golden.py``
replays every case on typelattice and compares. The cases live here, written
once for both libraries: each takes a namespace ``ns`` with ``ns.np``
(``jax.numpy`` or ``typelattice.numpy``), ``ns.jit``, ``ns.eval_shape`` and
``ns.enable_x64`` (a context manager). Importing this module needs only
NumPy (JAX is imported by ``main``).

Outcome encoding (one object per case):

- ``{"raises": [names]}``: the built-in classes in the exception's MRO,
  nearest first (the replay accepts an exception of the first one);
- ``{"value": [[dtype, weak, shape, values], ...]}``: the leaves of the
  result (one for an array, several for a tuple); ``values`` is a nested
  list, or None for a ShapeDtypeStruct; a Python object (a jitted function)
  is ``["object", false, [], null]``. Complex values are ``[real, imag]``
  pairs; JSON holds NaN and Infinity as Python writes them.
"""

from __future__ import annotations

import json
import platform
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("jit_edges.json")


# -- functions with the signatures the static_argnums cases name ----------------


def two(x: Any, y: Any) -> Any:
    return x


def var_positional(*args: Any) -> Any:
    return args[0]


def var_keyword(x: Any, **kwargs: Any) -> Any:
    return x


def keyword_only(x: Any, y: Any = 1, *, z: Any = 2) -> Any:
    return x


def positional_only(x: Any, /, y: Any) -> Any:
    return x


def _jit_case(fun: Callable[..., Any], call: bool, **options: Any) -> Any:
    def case(ns: Any) -> Any:
        jitted = ns.jit(fun, **options)
        return jitted(1.0, 2.0) if call else jitted

    return case


# Cases are (name, function of ns); a name says what JAX decides.
Case = tuple[str, Callable[[Any], Any]]

STATIC: list[Case] = []
for _label, _fun in [
    ("(x, y)", two),
    ("(*args)", var_positional),
    ("(x, **kwargs)", var_keyword),
    ("(x, y=1, *, z=2)", keyword_only),
    ("(x, /, y)", positional_only),
]:
    for _options in [
        {"static_argnums": 0},
        {"static_argnums": 1},
        {"static_argnums": 2},
        {"static_argnums": 5},
        {"static_argnums": -1},
        {"static_argnums": -2},
        {"static_argnums": -3},
        {"static_argnums": (1, 1)},
        {"static_argnames": "x"},
        {"static_argnames": "y"},
        {"static_argnames": "z"},
        {"static_argnames": "q"},
        {"static_argnames": ("y", "q")},
    ]:
        (_key, _value), *_ = _options.items()
        for _call in (False, True):
            _what = "call" if _call else "make"
            STATIC.append(
                (
                    f"jit {_label} {_key}={_value!r} {_what}",
                    _jit_case(_fun, _call, **_options),
                )
            )
STATIC += [
    ("jit static_argnums='x'", _jit_case(two, False, static_argnums="x")),
    ("jit static_argnums=1.0", _jit_case(two, False, static_argnums=1.0)),
    ("jit static_argnums=True", _jit_case(two, True, static_argnums=True)),
    ("jit static_argnames=1", _jit_case(two, False, static_argnames=1)),
    ("jit max static_argnums=5", _jit_case(max, False, static_argnums=5)),
    ("jit max static_argnames='q'", _jit_case(max, False, static_argnames="q")),
]


def _times(x: Any, y: Any) -> Any:
    return x * y


def _ones(ns: Any) -> Any:
    return ns.np.ones(3, dtype="float32")


SCALARS: list[Case] = []
for _arg in [
    "2**31 - 1",
    "-2**31",
    "2**31",
    "-2**31 - 1",
    "2**40",
    "2**63",
    "3.4028234663852886e38",
    "float('inf')",
    "float('nan')",
    "True",
    "1e39",
    "complex(1e39, 0)",
]:
    _value = eval(_arg)
    SCALARS += [
        (f"jit x * {_arg}", lambda ns, v=_value: ns.jit(_times)(_ones(ns), v)),
        (
            f"eval_shape x * {_arg}",
            lambda ns, v=_value: ns.eval_shape(_times, _ones(ns), v),
        ),
    ]
    if _arg in ("2**40", "2**63"):

        def _x64(ns: Any, v: Any = _value) -> Any:
            with ns.enable_x64(True):
                return ns.jit(_times)(_ones(ns), v)

        SCALARS.append((f"jit x * {_arg} with x64", _x64))

SIZES: list[Case] = []
_MATRIX = [[0, 1], [2, 0]]
for _size in ["-1", "-5", "0", "1", "3", "2.0", "2.5", "True", "np.int64(3)", "'2'"]:
    _size_value = eval(_size)
    for _name in ("nonzero", "where", "argwhere", "flatnonzero"):

        def _sized(ns: Any, n: str = _name, s: Any = _size_value) -> Any:
            return getattr(ns.np, n)(ns.np.asarray(_MATRIX), size=s)

        def _jitted(ns: Any, n: str = _name, s: Any = _size_value) -> Any:
            fn = ns.jit(lambda a: getattr(ns.np, n)(a, size=s))
            return fn(ns.np.asarray(_MATRIX))

        SIZES += [
            (f"{_name} size={_size}", _sized),
            (f"jit {_name} size={_size}", _jitted),
        ]
SIZES += [
    (
        "compress size=-1",
        lambda ns: ns.np.compress(
            ns.np.asarray([True, False, True]), ns.np.asarray([1, 2, 3]), size=-1
        ),
    ),
    (
        "compress size=2.0",
        lambda ns: ns.np.compress(
            ns.np.asarray([True, False, True]), ns.np.asarray([1, 2, 3]), size=2.0
        ),
    ),
    ("argwhere 0-d nonzero", lambda ns: ns.np.argwhere(ns.np.asarray(1))),
    ("argwhere 0-d zero", lambda ns: ns.np.argwhere(ns.np.asarray(0))),
    ("argwhere 0-d size=2", lambda ns: ns.np.argwhere(ns.np.asarray(1), size=2)),
    (
        "argwhere fill -1",
        lambda ns: ns.np.argwhere(ns.np.asarray(_MATRIX), size=3, fill_value=-1),
    ),
    (
        "argwhere fill (-1, -2)",
        lambda ns: ns.np.argwhere(ns.np.asarray(_MATRIX), size=3, fill_value=(-1, -2)),
    ),
    (
        "argwhere fill 1.5",
        lambda ns: ns.np.argwhere(ns.np.asarray(_MATRIX), size=3, fill_value=1.5),
    ),
    ("flatnonzero 0-d", lambda ns: ns.np.flatnonzero(ns.np.asarray(1))),
    (
        "flatnonzero fill 1.5",
        lambda ns: ns.np.flatnonzero(ns.np.asarray(_MATRIX), size=3, fill_value=1.5),
    ),
    (
        "flatnonzero int8",
        lambda ns: ns.np.flatnonzero(ns.np.asarray([0, 3, 0, 4], dtype="int8")),
    ),
]

ARANGE: list[Case] = []
for _args in [
    "5, None, 2",
    "None",
    "5, None",
    "2, 5, None",
    "None, 5",
    "None, None",
    "None, 5, 2",
    "None, None, 2",
    "0, None, 2",
    "5.0, None, 2",
    "-5, None, -2",
    "5, None, -1",
    "3, None, 1",
    "7, None, 2.5",
]:
    _call = f"arange({_args})"
    _values = eval(f"({_args},)")

    def _eager(ns: Any, a: tuple[Any, ...] = _values) -> Any:
        return ns.np.arange(*a)

    def _in_jit(ns: Any, a: tuple[Any, ...] = _values) -> Any:
        return ns.jit(lambda: ns.np.arange(*a))()

    def _shape(ns: Any, a: tuple[Any, ...] = _values) -> Any:
        return ns.eval_shape(lambda: ns.np.arange(*a))

    ARANGE += [
        (_call, _eager),
        (f"jit {_call}", _in_jit),
        (f"eval_shape {_call}", _shape),
    ]
ARANGE += [
    ("arange(5, step=2)", lambda ns: ns.np.arange(5, step=2)),
    ("arange(start=5, step=2)", lambda ns: ns.np.arange(start=5, step=2)),
    ("arange(stop=5)", lambda ns: ns.np.arange(stop=5)),
]

CASES: dict[str, Callable[[Any], Any]] = dict(STATIC + SCALARS + SIZES + ARANGE)


# -- outcomes -------------------------------------------------------------------


def builtin_bases(exc: BaseException) -> list[str]:
    """The built-in classes in the MRO of ``exc``'s class, nearest first."""
    return [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"]


def _leaf(x: Any) -> list[Any]:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        values = None
        if not type(x).__name__ == "ShapeDtypeStruct":
            array = np.asarray(x)
            if array.dtype.kind == "c":  # as [real, imag] pairs
                array = np.stack([array.real, array.imag], axis=-1)
            values = array.tolist()
        weak = bool(getattr(x, "weak_type", False))
        return [np.dtype(x.dtype).name, weak, list(x.shape), values]
    return ["object", False, [], None]


def outcome(case: Callable[[Any], Any], ns: Any) -> dict[str, Any]:
    """The encoded outcome of ``case(ns)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = case(ns)
        except Exception as err:  # noqa: BLE001 - the class is the answer
            return {"raises": builtin_bases(err)}
    leaves = list(result) if isinstance(result, tuple) else [result]
    return {"value": [_leaf(x) for x in leaves]}


def main() -> None:
    import types

    import jax
    import jax.numpy as jnp

    ns = types.SimpleNamespace(
        np=jnp, jit=jax.jit, eval_shape=jax.eval_shape, enable_x64=jax.enable_x64
    )
    data = {
        "description": (
            "What JAX does at the edges of jit, eval_shape and the size-taking "
            "functions, recorded by tests/golden/make_jit_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
        "cases": {name: outcome(case, ns) for name, case in CASES.items()},
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
