"""``typelattice.flax.linen.module``: the Module API of
:mod:`typelattice.nn` under the name a Flax program imports
(``nn.module.merge_param``).

>>> from typelattice.flax.linen import module
>>> from typelattice import nn
>>> module.Module is nn.Module, module.merge_param is nn.merge_param
(True, True)
"""

from typelattice.nn import (
    DenyList,
    Module,
    Variable,
    compact,
    merge_param,
    nowrap,
    share_scope,
)

__all__ = [
    "DenyList",
    "Module",
    "Variable",
    "compact",
    "merge_param",
    "nowrap",
    "share_scope",
]
