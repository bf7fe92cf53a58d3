"""typelattice.random and typelattice.nn.initializers against the dtypes,
weak flags, shapes and error classes that jax.random and
jax.nn.initializers give.

``golden/random_ops.json`` was recorded from JAX by
``golden/make_random_golden.py``, which defines the cases (Python
expressions) and the encoding. Each expression is evaluated here with
typelattice's modules in JAX's place and must give JAX's result, except the
deliberate differences listed below with their reasons. An exception
matches the recorded built-in class or a subclass of it.

``TYPELATTICE_GOLDEN_MODULE=jax`` replays the data on JAX itself (in an
environment that has it): every case must then pass with no differences
applied, which checks this harness and the recorded file.
"""

from __future__ import annotations

import json
import os
from types import ModuleType
from typing import Any

import pytest

import typelattice as tl
from support import GOLDEN_DIR, recorder

ON_JAX = os.environ.get("TYPELATTICE_GOLDEN_MODULE") == "jax"
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "random_ops.json").read_text())


def _recorder() -> ModuleType:
    return recorder("make_random_golden.py")


rec = _recorder()

_BOUNDS = (
    "parameters whose shapes do not broadcast to the shape argument are a "
    "ValueError here, as in randint, bernoulli and truncated_normal (JAX "
    "raises a TypeError from its internals for uniform)"
)
_HALF_QR = "orthogonal matrices in bfloat16/float16 are computed in float32 and rounded"

# expression -> (our encoding in every mode, or per mode; the reason).
DIFFERENCES: dict[str, tuple[str | dict[str, str], str]] = {
    "random.fold_in(key, -1)": (
        "u4[2]",
        "data is any 64-bit integer (its two's complement), as a seed is",
    ),
    "random.fold_in(key, 2**32)": (
        "u4[2]",
        "data is any 64-bit integer (its two's complement), as a seed is",
    ),
    "random.fold_in(key, 1.5)": (
        "!TypeError",
        "JAX converts a float to uint32, dropping its fraction: data safety",
    ),
    "random.uniform(key, (2,), minval=xnp.zeros(3))": ("!ValueError", _BOUNDS),
    "random.uniform(key, (2, 3), minval=xnp.zeros((4, 2, 3)))": (
        "!ValueError",
        _BOUNDS,
    ),
    "random.uniform(key, (2,), minval=1j)": (
        "!TypeError",
        "JAX drops a complex bound's imaginary part: data safety",
    ),
    "random.randint(key, (3,), 0.5, 10.5)": (
        "!TypeError",
        "JAX truncates float bounds to integers: data safety",
    ),
    "random.randint(key, (3,), 0, xnp.asarray(5.0))": (
        "!TypeError",
        "JAX truncates float bounds to integers: data safety",
    ),
    "init.orthogonal()(key, (4, 3), 'bfloat16')": ("bf[4,3]", _HALF_QR),
    "init.orthogonal()(key, (4, 3), 'float16')": ("f2[4,3]", _HALF_QR),
    "init.delta_orthogonal()(key, (3, 3, 3), 'bfloat16')": ("bf[3,3,3]", _HALF_QR),
    "init.delta_orthogonal()(key, (3, 3, 3), 'float16')": ("f2[3,3,3]", _HALF_QR),
}


def _namespace() -> dict[str, Any]:
    if ON_JAX:
        import jax
        import jax.numpy as jnp
        from jax.nn import initializers

        return {"random": jax.random, "init": initializers, "xnp": jnp}
    import typelattice.nn.initializers
    import typelattice.numpy
    import typelattice.random

    return {
        "random": typelattice.random,
        "init": typelattice.nn.initializers,
        "xnp": typelattice.numpy,
    }


def _mode(x64: bool) -> Any:
    if ON_JAX:
        import jax

        return jax.enable_x64(x64)
    return tl.enable_x64(x64)


def expected(mode: str, expr: str) -> str:
    recorded: str = GOLDEN["modes"][mode][expr]
    if ON_JAX or expr not in DIFFERENCES:
        return recorded
    ours = DIFFERENCES[expr][0]
    return ours if isinstance(ours, str) else ours[mode]


def accepted(want: str, got: Any) -> bool:
    if isinstance(got, BaseException):
        bases = [c.__name__ for c in type(got).__mro__ if c.__module__ == "builtins"]
        return want.startswith("!") and want[1:] in bases
    return rec.encode(got) == want


@pytest.mark.parametrize("mode", sorted(GOLDEN["modes"]))
def test_every_case_gives_jax_dtype_weak_flag_shape_or_error(mode: str) -> None:
    wrong: list[str] = []
    with _mode(rec.MODES[mode]):
        names = _namespace()
        names["key"] = names["random"].PRNGKey(0)
        for expr in GOLDEN["modes"][mode]:
            got = rec.outcome(expr, names)
            want = expected(mode, expr)
            if not accepted(want, got):
                shown = got if isinstance(got, BaseException) else rec.encode(got)
                wrong.append(f"{expr}: expected {want}, got {shown!r}")
    assert wrong == []


def test_the_recording_covers_the_cases() -> None:
    assert len(set(rec.CASES)) == len(rec.CASES), "a case is listed twice"
    for mode in rec.MODES:
        assert list(GOLDEN["modes"][mode]) == rec.CASES


def test_every_difference_is_a_recorded_case_that_differs() -> None:
    for expr, (ours, reason) in DIFFERENCES.items():
        assert reason
        for mode in rec.MODES:
            recorded = GOLDEN["modes"][mode][expr]
            mine = ours if isinstance(ours, str) else ours[mode]
            assert mine != recorded, (expr, mode)
