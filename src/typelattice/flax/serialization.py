"""``typelattice.flax.serialization``: state dicts and Flax's msgpack format,
as ``flax.serialization``.

Bytes written by Flax's ``to_bytes`` read here and ours read in Flax (the
same bytes for the same tree). Restoring into a target checks each array's
shape and dtype (see docs/flax.md). Writing and reading bytes needs msgpack
(``pip install 'typelattice[flax]'``).

>>> import typelattice.numpy as tnp
>>> from typelattice.flax import serialization
>>> params = {'dense': {'kernel': tnp.ones((2, 2)), 'bias': tnp.zeros(2)}}
>>> data = serialization.to_bytes(params)
>>> restored = serialization.from_bytes(params, data)
>>> restored['dense']['kernel'].dtype
dtype('float32')
"""

from typelattice.flax._serialization import (
    current_path,
    from_bytes,
    from_state_dict,
    is_serializable,
    msgpack_restore,
    msgpack_serialize,
    register_serialization_state,
    to_bytes,
    to_state_dict,
)

__all__ = [
    "current_path",
    "from_bytes",
    "from_state_dict",
    "is_serializable",
    "msgpack_restore",
    "msgpack_serialize",
    "register_serialization_state",
    "to_bytes",
    "to_state_dict",
]
