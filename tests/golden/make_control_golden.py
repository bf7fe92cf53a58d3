"""Record what jax.lax's control flow gives for carries and branch results
of mixed dtypes: the results' dtypes, weak flags, shapes and values, or the
exceptions' classes and messages.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_control_golden.py

It writes ``control.json`` beside this file; ``tests/test_control_golden.py``
makes every recorded call on ``typelattice.lax`` (eagerly and under
``jit``) and compares. The calls are built here, from a namespace (``lax``,
``numpy``), so that the recording and the replay make the same ones.

Kinds of values (labels): ``i1 u1 bf f2 f4`` an array of that dtype (0-d,
or a vector of 2 with ``:v``), ``py:int`` ``py:float`` Python scalars (weak),
``w:f`` a weak 0-d float array. A loop's initial carry is one kind, and its
body adds a value of another kind to it; a cond's branches return one kind
each. A message is stored with the source locations of functions (``<lambda>
at file:line``) cut out.
"""

from __future__ import annotations

import json
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).with_name("control.json")

KINDS = ["i1", "u1", "bf", "f2", "f4", "py:int", "py:float", "w:f"]
NAMES = {
    "i1": "int8",
    "u1": "uint8",
    "bf": "bfloat16",
    "f2": "float16",
    "f4": "float32",
}
VALUES = {"i1": 3, "u1": 5, "bf": 1.5, "f2": 2.5, "f4": 0.75}


def make(kind: str, tnp: Any, vector: bool = False) -> Any:
    """A value of ``kind`` made with the array namespace ``tnp``."""
    if kind == "py:int":
        return 2
    if kind == "py:float":
        return 0.5
    if kind == "w:f":
        return tnp.asarray(0.25)
    value = VALUES[kind]
    shape = (2,) if vector else ()
    return tnp.full(shape, value, dtype=NAMES[kind])


def cases() -> dict[str, Callable[[Any, Any], Any]]:
    """Every recorded call: name -> ``call(lax, numpy)``."""
    out: dict[str, Callable[[Any, Any], Any]] = {}
    for init in KINDS:
        for step in KINDS:

            def scan_case(
                lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                def body(c: Any, x: Any) -> Any:
                    return c + make(step, tnp), c

                return lax.scan(body, make(init, tnp), None, length=3)

            def while_case(
                lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                def body(c: Any) -> Any:
                    return c[0] + 1, c[1] + make(step, tnp)

                return lax.while_loop(lambda c: c[0] < 3, body, (0, make(init, tnp)))

            def fori_case(
                lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                return lax.fori_loop(
                    0, 3, lambda i, c: c + make(step, tnp), make(init, tnp)
                )

            def cond_case(
                lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                return lax.cond(True, lambda: make(init, tnp), lambda: make(step, tnp))

            def switch_case(
                lax: Any, tnp: Any, init: str = init, step: str = step
            ) -> Any:
                return lax.switch(
                    5, [lambda x: x * make(init, tnp), lambda x: x * make(step, tnp)], 1
                )

            out[f"scan/{init}/{step}"] = scan_case
            out[f"while/{init}/{step}"] = while_case
            out[f"fori/{init}/{step}"] = fori_case
            out[f"cond/{init}/{step}"] = cond_case
            out[f"switch/{init}/{step}"] = switch_case
    for kind in KINDS:

        def scan_xs(lax: Any, tnp: Any, kind: str = kind) -> Any:
            xs = tnp.stack([make(kind, tnp, True)] * 3) if kind in NAMES else None
            length = None if xs is not None else 3

            def body(c: Any, x: Any) -> Any:
                y = c * 2 if x is None else x * c
                return c, y

            return lax.scan(body, make(kind, tnp), xs, length=length, reverse=True)

        out[f"scan_xs/{kind}"] = scan_xs

        def map_case(lax: Any, tnp: Any, kind: str = kind) -> Any:
            xs = tnp.stack([make("f4", tnp, True)] * 2)
            return lax.map(lambda x: x + make(kind, tnp), xs)

        out[f"map/{kind}"] = map_case
    out["errors/scan_pair"] = lambda lax, tnp: lax.scan(
        lambda c, x: c, 1.0, tnp.zeros(3)
    )
    out["errors/scan_tree"] = lambda lax, tnp: lax.scan(
        lambda c, x: ([c[0]], x), (1.0,), tnp.zeros(3)
    )
    out["errors/scan_length"] = lambda lax, tnp: lax.scan(
        lambda c, x: (c, x), 1.0, tnp.zeros(3), length=4
    )
    out["errors/scan_sizes"] = lambda lax, tnp: lax.scan(
        lambda c, x: (c, x), 1.0, [tnp.zeros(3), tnp.zeros(4)]
    )
    out["errors/scan_none"] = lambda lax, tnp: lax.scan(lambda c, x: (c, x), 1.0, None)
    out["errors/scan_shape"] = lambda lax, tnp: lax.scan(
        lambda c, x: (x, x), tnp.zeros(2), tnp.zeros((3, 3))
    )
    out["errors/cond_pred"] = lambda lax, tnp: lax.cond(
        tnp.asarray([True]), lambda: 1.0, lambda: 2.0
    )
    out["errors/cond_tree"] = lambda lax, tnp: lax.cond(
        True, lambda: 1.0, lambda: (1.0,)
    )
    out["errors/switch_index"] = lambda lax, tnp: lax.switch(
        1.5, [lambda: 1.0, lambda: 2.0]
    )
    out["errors/switch_empty"] = lambda lax, tnp: lax.switch(1, [])
    out["errors/while_cond"] = lambda lax, tnp: lax.while_loop(
        lambda c: c, lambda c: c + 1, 0
    )
    out["errors/fori_types"] = lambda lax, tnp: lax.fori_loop(0, 3.0, lambda i, c: c, 0)
    return out


def encode(result: Any) -> Any:
    """A result as JSON: per array ``[dtype, weak, shape, values]``, in
    nested lists for tuples and lists."""
    if isinstance(result, tuple | list):
        return [encode(r) for r in result]
    if result is None:
        return None
    # (JAX returns a carry that the body passes through as it was given: a
    # Python scalar stays one, weak.)
    weak = getattr(result, "weak_type", isinstance(result, int | float))
    array = np.asarray(result)
    if isinstance(result, int | float):
        array = array.astype(np.int32 if isinstance(result, int) else np.float32)
    values = array.astype(np.float64).ravel().tolist()
    return [str(array.dtype), bool(weak), list(array.shape), values]


def encode_error(error: Exception) -> dict[str, str]:
    message = re.sub(r" at [^\s]+:\d+", "", str(error))
    builtin = next(c for c in type(error).__mro__ if c.__module__ == "builtins")
    return {"error": builtin.__name__, "message": message}


def record(lax: Any, tnp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, call in cases().items():
        try:
            out[name] = encode(call(lax, tnp))
        except Exception as e:  # noqa: BLE001 - every failure is recorded
            out[name] = encode_error(e)
    return out


def main() -> None:
    import jax
    import jax.numpy as jnp
    from jax import lax

    results = record(lax, jnp)
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
