"""Collection of the whole project: the modules of optional backends are
collected (for their doctests) only where their library is installed."""

from __future__ import annotations

import importlib.util

_OPTIONAL = {
    "torch": "src/typelattice/_backends/torch.py",
    "cupy": "src/typelattice/_backends/cupy.py",
    "dask": "src/typelattice/_backends/dask.py",
}

collect_ignore = [
    path
    for library, path in _OPTIONAL.items()
    if importlib.util.find_spec(library) is None
]
