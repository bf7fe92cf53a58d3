"""typelattice.random: random numbers with explicit keys, as jax.random.

A key is made from a seed by :func:`key` (a typed key, dtype ``key<fry>``)
or :func:`PRNGKey` (a raw key: a uint32 Array of shape (2,)).
Functions take a key and return values that depend on nothing else: the same
key gives the same values, whatever was computed before. Use each key once;
:func:`split` and :func:`fold_in` derive new, independent keys. Dtypes are
JAX's (float32 and int32 by default, float64 and int64 under
``enable_x64``); the values are not JAX's (see docs/random.md).

>>> from typelattice import random
>>> key = random.key(0)
>>> key, sub = random.split(key)
>>> x = random.normal(sub, (2, 3))
>>> x.shape, x.dtype
((2, 3), dtype('float32'))
>>> bool((random.normal(sub, (2, 3)) == x).all())
True
"""

from typelattice.random._distributions import (
    bernoulli,
    categorical,
    choice,
    normal,
    permutation,
    randint,
    truncated_normal,
    uniform,
)
from typelattice.random._keys import (
    KeyArray,
    PRNGKey,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    wrap_key_data,
)

__all__ = [
    "KeyArray",
    "PRNGKey",
    "bernoulli",
    "categorical",
    "choice",
    "fold_in",
    "key",
    "key_data",
    "key_impl",
    "normal",
    "permutation",
    "randint",
    "split",
    "truncated_normal",
    "uniform",
    "wrap_key_data",
]
