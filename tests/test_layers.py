"""The package's layers: what each import loads.

``import typelattice.typing`` loads no array code (the ``Array`` base class
lives in a leaf module), and Array's methods, which are the namespace's
functions, work even on an array made before the namespace was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys


def _loaded_after(code: str) -> list[str]:
    """The typelattice modules loaded in a fresh interpreter after ``code``."""
    script = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'typelattice')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
    return loaded


# The array layer, tracing and the namespace.
ARRAY_CODE = ("typelattice._array", "typelattice._core", "typelattice._tracing")


def _array_code(loaded: list[str]) -> list[str]:
    return [
        m
        for m in loaded
        if m.startswith(ARRAY_CODE) or m.split(".")[:2] == ["typelattice", "numpy"]
    ]


def test_typing_loads_no_array_code() -> None:
    loaded = _loaded_after("import typelattice.typing")
    assert "typelattice.typing" in loaded
    assert _array_code(loaded) == []


def test_the_array_class_loads_no_array_code() -> None:
    code = (
        "import typelattice as tl, typelattice.typing as t\n"
        "assert tl.Array is t.Array and t.Array.sum.__doc__"
    )
    assert _array_code(_loaded_after(code)) == []


def test_the_namespace_loads_with_the_first_method_call() -> None:
    """An array made without importing typelattice.numpy (as internal code
    may) has its operators and methods: the first call loads the namespace."""
    code = (
        "import sys, numpy as np\n"
        "from typelattice._array import ArrayImpl\n"
        "x = ArrayImpl(np.arange(3, dtype='int8'))\n"
        "before = 'typelattice.numpy' in sys.modules\n"
        "print(before, repr(x + 1), repr(x.sum()), repr(x.T[1:]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == (
        "False Array([1, 2, 3], dtype=int8) Array(3, dtype=int32) "
        "Array([1, 2], dtype=int8)"
    )
