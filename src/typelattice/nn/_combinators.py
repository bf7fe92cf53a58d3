"""Sequential: layers applied in turn, as Flax linen's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from typelattice.nn._module import Module, compact

__all__ = ["Sequential"]


class Sequential(Module):
    """Apply ``layers`` in order, each to the previous one's output: a tuple
    is passed on as positional arguments, a dict as keyword arguments, as
    Flax's.

    Attributes:
      layers: a sequence of modules or functions (the first one takes the
        call's arguments).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> model = nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(2)])
    >>> x = tnp.ones((3, 5))
    >>> variables = model.init(random.key(0), x)
    >>> sorted(variables['params']), model.apply(variables, x).shape
    (['layers_0', 'layers_2'], (3, 2))
    """

    layers: Sequence[Callable[..., Any]]

    def __post_init__(self) -> None:
        # (The annotation is not checked at run time.)
        if not isinstance(self.layers, Sequence):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"Sequential: 'layers' must be a sequence (a list or tuple), got "
                f"{type(self.layers).__name__}"
            )
        super().__post_init__()

    @compact
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Apply the layers.

        Args:
          *args: the first layer's positional arguments.
          **kwargs: its keyword arguments.

        Returns:
          The last layer's output.

        Raises:
          ValueError: no layers.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> model = nn.Sequential([lambda a, b: (a + b, b), lambda a, b: a * b])
        >>> model.apply({}, tnp.float32(2.0), tnp.float32(3.0))
        Array(15., dtype=float32)
        """
        if not self.layers:
            raise ValueError(
                "Sequential has no layers: give it a non-empty list of modules "
                "or functions"
            )
        out = self.layers[0](*args, **kwargs)
        for layer in self.layers[1:]:
            if isinstance(out, tuple):
                out = layer(*out)
            elif isinstance(out, dict):
                out = layer(**out)
            else:
                out = layer(out)
        return out
