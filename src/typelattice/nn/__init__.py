"""typelattice.nn: Flax-linen-style layers whose dtypes follow the promotion
lattice.

Layers are frozen dataclasses of their hyperparameters; ``layer.init(key,
x)`` returns the variables as plain nested dicts (``{'params': {...}}``) and
``layer.apply(variables, x)`` runs the layer on them, as in Flax linen. A
layer's ``dtype=None`` computes in the promotion of its inputs and
parameters; parameters are float32 by default (``param_dtype``);
normalisation statistics are computed in at least float32 (see docs/nn.md).
The parameter initialisers are in :mod:`typelattice.nn.initializers`.

>>> from typelattice import nn, random
>>> import typelattice.numpy as tnp
>>> x = tnp.ones((2, 3), dtype='bfloat16')
>>> layer = nn.Dense(4)
>>> variables = layer.init(random.key(0), x)
>>> variables['params']['kernel'].dtype, layer.apply(variables, x).dtype
(dtype('float32'), dtype('float32'))
"""

from typelattice.nn import initializers as initializers
from typelattice.nn import meta as meta
from typelattice.nn import recurrent as recurrent
from typelattice.nn import transforms as transforms
from typelattice.nn._activation import (
    PReLU,
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    logsumexp,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    standardize,
    swish,
    tanh,
)
from typelattice.nn._attention import (
    MultiHeadAttention,
    MultiHeadDotProductAttention,
    SelfAttention,
    combine_masks,
    dot_product_attention,
    dot_product_attention_weights,
    make_attention_mask,
    make_causal_mask,
)
from typelattice.nn._combinators import Sequential
from typelattice.nn._conv import Conv, ConvLocal, ConvTranspose
from typelattice.nn._embedding import Embed
from typelattice.nn._linear import Dense, DenseGeneral, Einsum
from typelattice.nn._meta import (
    PARTITION_NAME,
    LogicallyPartitioned,
    Partitioned,
    get_logical_axis_rules,
    get_partition_spec,
    logical_axis_rules,
    logical_to_mesh_axes,
    logical_to_mesh_sharding,
    set_logical_axis_rules,
    unbox,
    with_logical_partitioning,
    with_partitioning,
)
from typelattice.nn._module import (
    DenyList,
    Module,
    ScopeParamShapeError,
    Variable,
    apply,
    compact,
    init,
    init_with_output,
    merge_param,
    nowrap,
    share_scope,
)
from typelattice.nn._normalization import (
    BatchNorm,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    RMSNorm,
    SpectralNorm,
    WeightNorm,
)
from typelattice.nn._pooling import avg_pool, max_pool, min_pool, pool
from typelattice.nn._recurrent import (
    RNN,
    Bidirectional,
    ConvLSTMCell,
    GRUCell,
    LSTMCell,
    MGUCell,
    OptimizedLSTMCell,
    RNNCellBase,
    SimpleCell,
)
from typelattice.nn._stochastic import Dropout
from typelattice.nn._summary import tabulate
from typelattice.nn._transforms import (
    broadcast,
    checkpoint,
    jit,
    map_variables,
    remat,
    scan,
    vmap,
)

__all__ = [
    "PARTITION_NAME",
    "DenyList",
    "LogicallyPartitioned",
    "Partitioned",
    "apply",
    "get_logical_axis_rules",
    "get_partition_spec",
    "init",
    "init_with_output",
    "logical_axis_rules",
    "logical_to_mesh_axes",
    "logical_to_mesh_sharding",
    "merge_param",
    "nowrap",
    "set_logical_axis_rules",
    "share_scope",
    "unbox",
    "with_logical_partitioning",
    "with_partitioning",
    "RNN",
    "BatchNorm",
    "Bidirectional",
    "ConvLSTMCell",
    "GRUCell",
    "LSTMCell",
    "MGUCell",
    "OptimizedLSTMCell",
    "RNNCellBase",
    "SimpleCell",
    "Conv",
    "ConvLocal",
    "ConvTranspose",
    "Dense",
    "DenseGeneral",
    "Dropout",
    "Einsum",
    "Embed",
    "GroupNorm",
    "InstanceNorm",
    "SpectralNorm",
    "WeightNorm",
    "LayerNorm",
    "Module",
    "MultiHeadAttention",
    "MultiHeadDotProductAttention",
    "PReLU",
    "SelfAttention",
    "RMSNorm",
    "ScopeParamShapeError",
    "Sequential",
    "Variable",
    "broadcast",
    "avg_pool",
    "celu",
    "checkpoint",
    "combine_masks",
    "compact",
    "dot_product_attention",
    "dot_product_attention_weights",
    "make_attention_mask",
    "make_causal_mask",
    "map_variables",
    "max_pool",
    "min_pool",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "jit",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "pool",
    "relu",
    "relu6",
    "remat",
    "scan",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
    "tabulate",
    "tanh",
    "vmap",
]
