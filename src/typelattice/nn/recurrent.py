"""The recurrent layers' module, as Flax's ``flax.linen.recurrent``: the
cells, RNN, Bidirectional and ``flip_sequences``."""

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
    flip_sequences,
)

__all__ = [
    "RNN",
    "Bidirectional",
    "ConvLSTMCell",
    "GRUCell",
    "LSTMCell",
    "MGUCell",
    "OptimizedLSTMCell",
    "RNNCellBase",
    "SimpleCell",
    "flip_sequences",
]
