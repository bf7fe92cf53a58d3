"""typelattice.flax: Flax's modules, for Flax programs ported to typelattice.

A Flax program runs on typelattice once its imports name typelattice's
modules (``typelattice port FILE`` rewrites them): ``flax.linen`` becomes
:mod:`typelattice.flax.linen` (the layers of :mod:`typelattice.nn`),
``flax.struct`` :mod:`typelattice.flax.struct`, ``flax.core``
:mod:`typelattice.flax.core`, ``flax.training``
:mod:`typelattice.flax.training`, ``flax.serialization``
:mod:`typelattice.flax.serialization`, ``flax.errors``
:mod:`typelattice.flax.errors` and ``flax.metrics``
:mod:`typelattice.flax.metrics` (see docs/flax.md). The submodules
load on first use: ``import typelattice`` loads none of them, and msgpack
loads only when bytes are written or read.

>>> import typelattice.flax as flax
>>> flax.linen.Dense is flax.linen.Dense
True
"""

import importlib as _importlib
import importlib.util as _util

# The public submodules, loaded on first use as attributes (`import
# typelattice.flax as flax; flax.linen.Dense`, as `import flax` allows).
_SUBMODULES: frozenset[str] = frozenset(
    {
        "core",
        "errors",
        "jax_utils",
        "linen",
        "metrics",
        "serialization",
        "struct",
        "training",
    }
)


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return _importlib.import_module(f"typelattice.flax.{name}")
    raise AttributeError(f"module 'typelattice.flax' has no attribute {name!r}")


def __dir__() -> list[str]:
    present = {n for n in _SUBMODULES if _util.find_spec(f"typelattice.flax.{n}")}
    return sorted({*globals(), *present})


__all__: list[str] = []
