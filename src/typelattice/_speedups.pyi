"""C fast paths for typelattice's cached promotion lookups (_speedups.c)."""

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Final, Literal

API_VERSION: Final[int]

def configure(scope: ContextVar[Any], ndarray: type, /) -> None:
    """Set the ContextVar holding the scoped configuration and the ndarray type."""

def set_global_memos(memo: dict[Any, Any], promotion_memo: dict[Any, Any], /) -> None:
    """Set the memos of the global configuration state."""

class FastPath:
    """Answers from the promotion memos; calls ``fallback`` when it cannot."""

    def __init__(
        self,
        kind: Literal["result_type", "lattice_result_type", "promote_types"],
        fallback: Callable[..., Any],
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    @property
    def fallback(self) -> Callable[..., Any]: ...
    @property
    def kind(self) -> str: ...
