"""Collection of the whole project: the modules of optional backends (and
of the TensorBoard writer) are collected (for their doctests) only where
their library is installed."""

from __future__ import annotations

import importlib.util
import os

_OPTIONAL = {
    "torch": "src/typelattice/_backends/torch.py",
    "cupy": "src/typelattice/_backends/cupy.py",
    "dask": "src/typelattice/_backends/dask.py",
    # Flax's SummaryWriter writes with the tensorboard package.
    "tensorboard": "src/typelattice/flax/metrics/tensorboard.py",
}

collect_ignore = [
    path
    for library, path in _OPTIONAL.items()
    if importlib.util.find_spec(library) is None
]

# Under tests/last_bit.py, NumPy's functions are replaced by stand-ins that
# move their last bits; dask.array wraps NumPy's ufuncs when it loads and
# refuses anything else, so the Dask backend's examples cannot run there
# (they print no transcendental results).
if os.environ.get("TYPELATTICE_LAST_BIT") and _OPTIONAL["dask"] not in collect_ignore:
    collect_ignore.append(_OPTIONAL["dask"])
