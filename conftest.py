"""Collection of the whole tree: the doctests of an optional backend's
module run only where its library is installed (importing the module
imports the library)."""

from __future__ import annotations

import importlib.util

collect_ignore = [
    f"src/typelattice/_backends/{name}.py"
    for name in ("torch",)
    if importlib.util.find_spec(name) is None
]
