"""The lifted transformations' module, as Flax's ``flax.linen.transforms``:
``jit``, ``vmap``, ``scan``, ``remat``/``checkpoint``, ``broadcast`` and
``map_variables`` over modules."""

from typelattice.nn._transforms import (
    broadcast,
    checkpoint,
    jit,
    map_variables,
    remat,
    scan,
    vmap,
)

__all__ = ["broadcast", "checkpoint", "jit", "map_variables", "remat", "scan", "vmap"]
