"""typelattice.nn.initializers: parameter initialisers, as jax.nn.initializers.

An initialiser is a function ``init(key, shape, dtype) -> Array`` that
creates a parameter of ``shape`` directly in ``dtype`` (default: the
initialiser's own ``dtype`` argument, else float32, float64 under
``enable_x64``, as in JAX). The factories (``lecun_normal()``,
``variance_scaling(...)``, ``zeros_init()``...) return initialisers;
``zeros`` and ``ones`` are initialisers themselves.

>>> from typelattice import random
>>> from typelattice.nn import initializers
>>> init = initializers.glorot_uniform()
>>> w = init(random.key(0), (64, 32))
>>> w.shape, w.dtype
((64, 32), dtype('float32'))
>>> initializers.zeros(random.key(0), (2,), 'bfloat16')
Array([0, 0], dtype=bfloat16)
"""

from typelattice.nn._initializers import (
    Initializer,
    constant,
    delta_orthogonal,
    glorot_normal,
    glorot_uniform,
    he_normal,
    he_uniform,
    kaiming_normal,
    kaiming_uniform,
    lecun_normal,
    lecun_uniform,
    normal,
    ones,
    ones_init,
    orthogonal,
    truncated_normal,
    uniform,
    variance_scaling,
    xavier_normal,
    xavier_uniform,
    zeros,
    zeros_init,
)

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
    "zeros_init",
    "ones_init",
]
