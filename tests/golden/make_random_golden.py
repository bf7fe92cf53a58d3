"""Record the dtypes, weak flags, shapes and errors of jax.random and
jax.nn.initializers calls.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_random_golden.py

It writes ``random_ops.json`` beside this file. ``tests/test_random_golden.py``
evaluates every recorded expression with typelattice.random,
typelattice.nn.initializers and typelattice.numpy in their place and
compares. Importing this module needs only NumPy and ml_dtypes.

Each case is a Python expression over the names ``random``, ``init`` (the
initializers module), ``xnp`` (the array namespace) and ``key`` (the key
``random.PRNGKey(0)``), evaluated in each mode. Its result is encoded as

- ``<code>[<shape>]``: the typelattice dtype code of the result (``u4 i4
  bf f4 c8``...), prefixed by ``w:`` when ``weak_type`` is True, and its
  shape, e.g. ``f4[2,3]``, ``w:f4[]``;
- ``!<Class>``: the nearest built-in class in the exception's MRO. The
  message is kept beside it (``messages``), for reading.

Warnings (a 64-bit dtype requested in 32-bit mode) are ignored here; the
tests check typelattice's separately.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("random_ops.json")

# mode name -> enable_x64
MODES: dict[str, bool] = {"x32": False, "x64": True}

_CODES: dict[Any, str] = {
    np.dtype(t): code
    for code, t in {
        "b1": np.bool_,
        "u1": np.uint8,
        "u2": np.uint16,
        "u4": np.uint32,
        "u8": np.uint64,
        "i1": np.int8,
        "i2": np.int16,
        "i4": np.int32,
        "i8": np.int64,
        "bf": ml_dtypes.bfloat16,
        "f2": np.float16,
        "f4": np.float32,
        "f8": np.float64,
        "c8": np.complex64,
        "c16": np.complex128,
    }.items()
}

FLOATS = ["None", "'float32'", "'bfloat16'", "'float16'", "'float64'", "float"]
NOT_FLOATS = ["'int32'", "'uint8'", "'bool'", "'complex64'"]
INTS = ["None", "'int8'", "'uint8'", "'int16'", "'uint16'", "'int32'", "'uint32'"]
INTS += ["'int64'", "'uint64'", "int"]
INIT_DTYPES = ["'float32'", "'bfloat16'", "'float16'", "'float64'"]
INIT_DTYPES += ["'int32'", "'complex64'"]


def _keys() -> list[str]:
    return [
        "random.PRNGKey(0)",
        "random.key(0)",
        "random.PRNGKey(-1)",
        "random.PRNGKey(2**40)",
        "random.PRNGKey(2**63)",
        "random.PRNGKey(True)",
        "random.PRNGKey(1.5)",
        "random.PRNGKey(xnp.asarray(3))",
        "random.PRNGKey(xnp.asarray(3, dtype='uint8'))",
        "random.PRNGKey(xnp.arange(2))",
        "random.split(key)",
        "random.split(key, 3)",
        "random.split(key, (2, 3))",
        "random.split(key, 0)",
        "random.split(xnp.zeros((2, 2), 'uint32'))",
        "random.split(xnp.zeros(3, 'uint32'))",
        "random.split(xnp.zeros(2, 'int32'))",
        "random.split(xnp.zeros(2, 'float32'))",
        "random.split([0, 0])",
        "random.fold_in(key, 3)",
        "random.fold_in(key, xnp.asarray(3, dtype='int8'))",
        "random.fold_in(key, xnp.asarray(3, dtype='uint32'))",
        "random.fold_in(key, xnp.arange(2))",
        "random.fold_in(key, -1)",
        "random.fold_in(key, 2**32)",
        "random.fold_in(key, 1.5)",
        "random.key_data(key)",
        "random.key_data(random.split(key))",
        "random.wrap_key_data(xnp.zeros(2, 'uint32'))",
    ]


def _floats() -> list[str]:
    cases = [f"random.uniform(key, (2,), {d})" for d in FLOATS + NOT_FLOATS]
    cases += [f"random.normal(key, (2,), {d})" for d in FLOATS + NOT_FLOATS]
    cases += ["random.normal(key, (2,), 'complex128')"]
    cases += [f"random.{f}(key, (2,), 'float8_e4m3fn')" for f in ("uniform", "normal")]
    cases += ["random.truncated_normal(key, -1, 1, (2,), 'float8_e5m2')"]
    cases += [f"random.truncated_normal(key, -2, 2, (2,), {d})" for d in FLOATS]
    cases += [f"random.truncated_normal(key, -2, 2, (2,), {d})" for d in NOT_FLOATS]
    cases += [
        "random.uniform(key)",
        "random.uniform(key, 3)",
        "random.uniform(key, (2.0,))",
        "random.uniform(key, (2,), minval=-1, maxval=xnp.asarray(2))",
        "random.uniform(key, (2,), minval=xnp.zeros(2, 'float16'))",
        "random.uniform(key, (2,), 'bfloat16', minval=xnp.zeros(2, 'float32'))",
        "random.uniform(key, (2,), minval=xnp.zeros(2, 'int32'))",
        "random.uniform(key, (2, 3), minval=xnp.zeros((2, 1)))",
        "random.uniform(key, (2, 3), minval=xnp.zeros(3))",
        "random.uniform(key, (2,), minval=xnp.zeros(3))",
        "random.uniform(key, (2, 3), minval=xnp.zeros((4, 2, 3)))",
        "random.uniform(key, (2,), minval=[0.0, 1.0])",
        "random.uniform(key, (2,), minval=1j)",
        "random.uniform(xnp.zeros(3, 'uint32'))",
        "random.uniform(xnp.zeros(2, 'int32'))",
        "random.uniform(xnp.zeros((2, 2), 'uint32'))",
        "random.normal(key)",
        "random.normal(key, 3)",
        "random.truncated_normal(key, -2.0, 2.0)",
        "random.truncated_normal(key, xnp.zeros(3), 2.0)",
        "random.truncated_normal(key, xnp.zeros(3), 2.0, (2, 3))",
        "random.truncated_normal(key, xnp.zeros(3), 2.0, (2,))",
        "random.truncated_normal(key, xnp.zeros(3, 'bfloat16'), 2.0)",
        "random.bernoulli(key)",
        "random.bernoulli(key, 0.3, (2,))",
        "random.bernoulli(key, xnp.full(3, 0.3))",
        "random.bernoulli(key, xnp.full(3, 0.3, 'bfloat16'))",
        "random.bernoulli(key, xnp.full(3, 0.3, 'float16'), (2, 3))",
        "random.bernoulli(key, xnp.asarray(0.3))",
        "random.bernoulli(key, 1)",
        "random.bernoulli(key, xnp.ones(3, 'int32'))",
        "random.bernoulli(key, xnp.full(3, 0.3), (2,))",
    ]
    return cases


def _integers() -> list[str]:
    cases = [f"random.randint(key, (3,), 0, 10, {d})" for d in INTS]
    cases += [
        "random.randint(key, (3,), 0, 10, 'float32')",
        "random.randint(key, (3,), 0, 2, 'bool')",
        "random.randint(key, (3,), 0, 256, 'uint8')",
        "random.randint(key, (3,), -1000, 1000, 'int8')",
        "random.randint(key, 3, 0, 10)",
        "random.randint(key, (2, 3), xnp.zeros(3, 'int32'), 10)",
        "random.randint(key, (3,), xnp.zeros(2, 'int32'), 10)",
        "random.randint(key, (3,), xnp.asarray(0, dtype='int8'), 10)",
        "random.randint(key, (3,), 0, xnp.asarray(200, dtype='uint8'), 'int8')",
        "random.randint(key, (3,), 0.5, 10.5)",
        "random.randint(key, (3,), 0, xnp.asarray(5.0))",
        "random.categorical(key, xnp.zeros((2, 5)))",
        "random.categorical(key, xnp.zeros((2, 5), 'bfloat16'))",
        "random.categorical(key, xnp.zeros((2, 5), 'float16'))",
        "random.categorical(key, xnp.zeros((2, 5), 'float64'))",
        "random.categorical(key, xnp.zeros((2, 5), 'int32'))",
        "random.categorical(key, xnp.zeros((2, 5)), axis=0)",
        "random.categorical(key, xnp.zeros((2, 5)), shape=(7, 2))",
        "random.categorical(key, xnp.zeros((2, 5)), shape=(7, 3))",
        "random.categorical(key, xnp.zeros((2, 5)), shape=(3, 2), replace=False)",
        "random.categorical(key, xnp.zeros((2, 5)), shape=(6, 2), replace=False)",
        "random.categorical(key, xnp.broadcast_to(xnp.asarray(0.0), (4,)))",
        "random.categorical(key, [0.0, 1.0])",
        "random.permutation(key, 5)",
        "random.permutation(key, xnp.asarray(5))",
        "random.permutation(key, xnp.arange(5, dtype='int8'))",
        "random.permutation(key, xnp.broadcast_to(xnp.asarray(2.0), (3,)))",
        "random.permutation(key, xnp.ones((2, 3), 'bfloat16'))",
        "random.permutation(key, xnp.broadcast_to(xnp.asarray(2.0), (2, 3)))",
        "random.permutation(key, xnp.ones((2, 3)), axis=1, independent=True)",
        "random.permutation(key, 3.0)",
        "random.permutation(key, xnp.asarray(3.0))",
        "random.permutation(key, [1, 2, 3])",
        "random.choice(key, 5, (3,))",
        "random.choice(key, xnp.asarray(5), (3,))",
        "random.choice(key, xnp.zeros(5, 'float16'), (3,))",
        "random.choice(key, xnp.broadcast_to(xnp.asarray(2.0), (5,)), (3,))",
        "random.choice(key, 5, (6,), replace=False)",
        "random.choice(key, 5, (3,), replace=False)",
        "random.choice(key, 5, (3,), p=xnp.full(5, 0.2))",
        "random.choice(key, 5, (3,), p=xnp.full(5, 0.2, 'bfloat16'))",
        "random.choice(key, 5, (3,), replace=False, p=xnp.full(5, 0.2))",
        "random.choice(key, 5, (3,), p=xnp.full(4, 0.25))",
        "random.choice(key, 5, 3)",
        "random.choice(key, xnp.zeros((4, 5)), (2, 3), axis=1)",
        "random.choice(key, 0, (3,))",
        "random.choice(key, 5, (0,))",
    ]
    return cases


_FACTORIES = [
    "constant(1.5)",
    "normal()",
    "uniform()",
    "truncated_normal()",
    "lecun_normal()",
    "lecun_uniform()",
    "glorot_normal()",
    "glorot_uniform()",
    "xavier_uniform()",
    "he_normal()",
    "he_uniform()",
    "kaiming_normal()",
    "variance_scaling(2.0, 'fan_avg', 'uniform')",
    "variance_scaling(1.0, 'fan_geo_avg', 'normal')",
    "orthogonal()",
]


def _initializers() -> list[str]:
    cases: list[str] = []
    for name in ["zeros", "ones"]:
        cases.append(f"init.{name}(key, (2, 3))")
        cases += [f"init.{name}(key, (2, 3), {d})" for d in INIT_DTYPES]
    for factory in _FACTORIES:
        cases.append(f"init.{factory}(key, (4, 3))")
        cases += [f"init.{factory}(key, (4, 3), {d})" for d in INIT_DTYPES]
    cases += [f"init.delta_orthogonal()(key, (3, 3, 3), {d})" for d in INIT_DTYPES]
    cases += [
        "init.delta_orthogonal()(key, (3, 3, 3))",
        "init.he_normal()(key, (3, 3, 8, 16))",
        "init.lecun_normal(dtype='bfloat16')(key, (3, 3))",
        "init.constant(2)(key, (2,))",
        "init.constant(2, dtype='bfloat16')(key, (2,))",
        "init.lecun_normal()(key, (3,))",
        "init.variance_scaling(1.0, 'fan_x', 'normal')(key, (3, 3))",
        "init.variance_scaling(1.0, 'fan_in', 'gauss')(key, (3, 3))",
        "init.variance_scaling(1.0, 'fan_in', 'uniform')(key, (3, 3), 'complex64')",
        "init.variance_scaling(1.0, 'fan_in', 'normal', in_axis=0, out_axis=1)"
        "(key, (3, 3))",
        "init.orthogonal()(key, (3,))",
        "init.delta_orthogonal()(key, (3, 3))",
        "init.delta_orthogonal()(key, (3, 4, 3))",
    ]
    return cases


CASES: list[str] = [*_keys(), *_floats(), *_integers(), *_initializers()]


def builtin_base(exc: BaseException) -> str:
    """The nearest built-in class in the MRO of ``exc``."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")


def encode(result: Any) -> str:
    if isinstance(result, BaseException):
        return f"!{builtin_base(result)}"
    try:
        code = _CODES.get(np.dtype(result.dtype), f"?{result.dtype}")
    except TypeError:  # not a NumPy dtype (JAX's typed keys)
        code = f"?{result.dtype}"
    weak = "w:" if getattr(result, "weak_type", False) else ""
    return f"{weak}{code}[{','.join(str(d) for d in result.shape)}]"


def outcome(expr: str, names: dict[str, Any]) -> Any:
    """The value of ``expr`` (warnings ignored), or the exception it raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, dict(names))
        except Exception as exc:
            return exc


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax.nn import initializers

    data: dict[str, Any] = {
        "description": (
            "dtype, weak_type and shape (or exception class) of jax.random and "
            "jax.nn.initializers calls, recorded by "
            "tests/golden/make_random_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "modes": {},
        "messages": {},
    }
    for mode, x64 in MODES.items():
        results: dict[str, str] = {}
        with jax.enable_x64(x64):
            names = {"random": jax.random, "init": initializers, "xnp": jnp}
            names["key"] = jax.random.PRNGKey(0)
            for expr in CASES:
                got = outcome(expr, names)
                results[expr] = encode(got)
                if isinstance(got, BaseException):
                    data["messages"].setdefault(expr, str(got).splitlines()[0][:200])
        data["modes"][mode] = results
        print(f"{mode}: {len(results)} calls", file=sys.stderr)
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
