"""Record what ``jax.vmap`` of jax.lax's control flow gives for carries and
branch results of mixed dtypes: the results' dtypes, weak flags, shapes and
values.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_vmap_control_golden.py

It writes ``vmap_control.json`` beside this file;
``tests/test_vmap_control.py`` makes every recorded call with
``typelattice`` (eagerly and under ``jit``) and compares. The calls are
built here, from the namespaces (``vmap``, ``lax``, ``numpy``), so that the
recording and the replay make the same ones.

Kinds of values (labels): ``i1 u1 bf f2 f4`` an array of that dtype,
``py:int`` ``py:float`` Python scalars (weak), ``w:f`` a weak 0-d float
array. Each case maps over a batch of 3 examples: a loop's initial carry
(or a cond's operand) is a batch of one kind, and its body adds a value of
another kind (the step) to it; the loops' trip counts and the conds'
predicates are batched or not.
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("vmap_control.json")

INITS = ["i1", "bf", "f4", "w:f"]
STEPS = ["i1", "f2", "f4", "py:int", "py:float", "w:f"]
NAMES = {
    "i1": "int8",
    "u1": "uint8",
    "bf": "bfloat16",
    "f2": "float16",
    "f4": "float32",
}
VALUES = {"i1": 3, "u1": 5, "bf": 1.5, "f2": 2.5, "f4": 0.75}


def step_value(kind: str, tnp: Any) -> Any:
    """A value of ``kind``, the same for every example."""
    if kind == "py:int":
        return 2
    if kind == "py:float":
        return 0.5
    if kind == "w:f":
        return tnp.asarray(0.25)
    return tnp.asarray(VALUES[kind], dtype=NAMES[kind])


def batch(kind: str, tnp: Any) -> Any:
    """A batch of 3 examples of ``kind`` (a weak float vector for ``w:f``:
    a weak scalar broadcast)."""
    if kind == "w:f":
        return tnp.broadcast_to(tnp.asarray(0.25), (3,))
    return tnp.asarray([1, 2, 3], dtype=NAMES[kind])


def cases() -> dict[str, Callable[[Any, Any, Any], Any]]:
    """Every recorded call: name -> ``call(vmap, lax, numpy)``."""
    out: dict[str, Callable[[Any, Any, Any], Any]] = {}
    for init in INITS:
        for step in STEPS:

            def scan_case(
                vmap: Any, lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                def f(c: Any) -> Any:
                    def body(c: Any, x: Any) -> Any:
                        return c + step_value(step, tnp), c * x

                    return lax.scan(body, c, tnp.arange(3))

                return vmap(f)(batch(init, tnp))

            def while_case(
                vmap: Any, lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                def f(c: Any, n: Any) -> Any:
                    def body(s: Any) -> Any:
                        return s[0] + 1, s[1] + step_value(step, tnp)

                    return lax.while_loop(lambda s: s[0] < n, body, (0, c))

                return vmap(f)(batch(init, tnp), tnp.asarray([0, 1, 3]))

            def cond_case(
                vmap: Any, lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                def f(p: Any, x: Any) -> Any:
                    return lax.cond(
                        p,
                        lambda x: (x, x * step_value(step, tnp)),
                        lambda x: (x + 1, x * 2),
                        x,
                    )

                return vmap(f)(tnp.asarray([True, False, True]), batch(init, tnp))

            out[f"scan/{init}/{step}"] = scan_case
            out[f"while/{init}/{step}"] = while_case
            out[f"cond/{init}/{step}"] = cond_case
    for step in STEPS:

        def scan_unbatched_init(vmap: Any, lax: Any, tnp: Any, step: str = step) -> Any:
            def f(x: Any) -> Any:
                return lax.scan(
                    lambda c, x: (c + x * step_value(step, tnp), c),
                    0,
                    tnp.stack([x, x]),
                )

            return vmap(f)(tnp.asarray([1.5, 2.5, 3.5]))

        def while_fixed(vmap: Any, lax: Any, tnp: Any, step: str = step) -> Any:
            def f(x: Any) -> Any:
                return lax.while_loop(
                    lambda s: s[0] < 2,
                    lambda s: (s[0] + 1, s[1] * x + step_value(step, tnp)),
                    (0, 1),
                )

            return vmap(f)(tnp.asarray([1.5, 2.0, 3.0]))

        def switch_case(vmap: Any, lax: Any, tnp: Any, step: str = step) -> Any:
            def f(i: Any, x: Any) -> Any:
                return lax.switch(
                    i,
                    [
                        lambda x: x * step_value(step, tnp),
                        lambda x: x + 1,
                        lambda x: -x,
                    ],
                    x,
                )

            return vmap(f)(tnp.asarray([0, 1, 2, 7, -1]), tnp.asarray([1, 2, 3, 4, 5]))

        def cond_unbatched(vmap: Any, lax: Any, tnp: Any, step: str = step) -> Any:
            def f(x: Any) -> Any:
                return lax.cond(
                    True, lambda x: x * step_value(step, tnp), lambda x: x + 1, x
                )

            return vmap(f)(tnp.asarray([1.0, 2.0, 3.0], dtype="float16"))

        out[f"scan_unbatched_init/{step}"] = scan_unbatched_init
        out[f"while_fixed/{step}"] = while_fixed
        out[f"switch/{step}"] = switch_case
        out[f"cond_unbatched/{step}"] = cond_unbatched
    return out


def encode(result: Any) -> Any:
    """A result as JSON: per array ``[dtype, weak, shape, values]``, in
    nested lists for tuples."""
    if isinstance(result, tuple | list):
        return [encode(r) for r in result]
    array = np.asarray(result)
    values = array.astype(np.float64).ravel().tolist()
    return [str(array.dtype), bool(result.weak_type), list(array.shape), values]


def encode_error(error: Exception) -> dict[str, str]:
    """An exception as JSON: the nearest built-in class of its MRO."""
    builtin = next(c for c in type(error).__mro__ if c.__module__ == "builtins")
    return {"error": builtin.__name__}


def record(vmap: Any, lax: Any, tnp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, call in cases().items():
        try:
            out[name] = encode(call(vmap, lax, tnp))
        except Exception as e:  # noqa: BLE001 - every failure is recorded
            out[name] = encode_error(e)
    return out


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax

    results = record(jax.vmap, lax, jnp)
    payload = {
        "jax": jax.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cases": results,
    }
    OUT.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(results)} cases to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
