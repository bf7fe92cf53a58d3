"""Configuration flags, global values and scoped overrides.

The state in force is one interned :class:`State` object, so hot paths read
the whole configuration with one ``ContextVar.get()`` and can key caches on
it. Scoped overrides live in a ContextVar: they are private to a thread and
to an asyncio task (a task starts with a copy of its creator's scopes). The
ContextVar holds the stack of scopes entered there, so a scope object keeps
no state and may be shared by any number of threads and tasks.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Final, TypeVar

__all__ = [
    "Config",
    "State",
    "config",
    "current",
    "dtype_promotion",
    "enable_x64",
    "explicit_x64_dtypes",
    "rank_promotion",
]

F = TypeVar("F", bound=Callable[..., Any])

_BOOL_WORDS: Final = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}

_DEFAULTS: Final[dict[str, object]] = {
    "enable_x64": False,
    "dtype_promotion": "standard",
    "explicit_x64_dtypes": "warn",
    "rank_promotion": "allow",
    # Where new arrays are made (creation functions, the zeros and seeds of
    # the transformations): a backend's name, and a device of it or None
    # (the library's default device).
    "default_backend": "numpy",
    "default_device": None,
}

# Valid string values per flag. dtype_promotion grows when a lattice is
# registered under a new name (typelattice.register_lattice).
_CHOICES: Final[dict[str, list[str]]] = {
    "dtype_promotion": ["standard", "strict"],
    "explicit_x64_dtypes": ["warn", "error", "allow"],
    "rank_promotion": ["allow", "warn", "raise"],
}


class State:
    """One combination of flag values. Interned: compare with ``is``.

    ``memo`` is a dict shared by every state with the same ``enable_x64``,
    ``dtype_promotion`` and ``explicit_x64_dtypes`` and whose
    ``default_backend`` is NumPy or is not (where the plans of Python
    scalars alone make their result: not by the C path), for caches whose
    answers depend only on those;
    ``promotion_memo`` is shared by every state with the same
    ``dtype_promotion`` and ``enable_x64``.
    """

    __slots__ = (
        "default_backend",
        "default_device",
        "dtype_promotion",
        "enable_x64",
        "explicit_x64_dtypes",
        "memo",
        "promotion_memo",
        "rank_promotion",
    )

    enable_x64: bool
    dtype_promotion: str
    explicit_x64_dtypes: str
    rank_promotion: str
    default_backend: str
    default_device: str | None
    memo: dict[Any, Any]
    promotion_memo: dict[Any, Any]

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in _DEFAULTS}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"State({inner})"


_STATES: dict[tuple[object, ...], State] = {}
_MEMOS: dict[tuple[object, ...], dict[Any, Any]] = {}
_lock = threading.RLock()


def _state(values: Mapping[str, object]) -> State:
    key = tuple(values[name] for name in _DEFAULTS)
    found = _STATES.get(key)
    if found is not None:
        return found
    with _lock:
        found = _STATES.get(key)
        if found is None:
            found = State()
            for name in _DEFAULTS:
                object.__setattr__(found, name, values[name])
            memo_key = (
                values["enable_x64"],
                values["dtype_promotion"],
                values["explicit_x64_dtypes"],
                values["default_backend"] == "numpy",
            )
            found.memo = _MEMOS.setdefault(memo_key, {})
            promo_key = (None, values["dtype_promotion"], values["enable_x64"])
            found.promotion_memo = _MEMOS.setdefault(promo_key, {})
            _STATES[key] = found
    return found


def register_promotion_name(name: str) -> None:
    """Make ``name`` a valid value of ``dtype_promotion``."""
    if name not in _CHOICES["dtype_promotion"]:
        _CHOICES["dtype_promotion"].append(name)


#: JAX's names of the flags typelattice has (``jax.config.update`` takes
#: them).
JAX_FLAG_NAMES: dict[str, str] = {
    "jax_enable_x64": "enable_x64",
    "jax_numpy_dtype_promotion": "dtype_promotion",
    "jax_numpy_rank_promotion": "rank_promotion",
    "jax_explicit_x64_dtypes": "explicit_x64_dtypes",
}


def validate(name: str, value: object) -> object:
    """Check a flag's name and value; return the value in canonical form."""
    if name not in _DEFAULTS:
        raise ValueError(
            f"unknown configuration flag {name!r}: the flags are {', '.join(_DEFAULTS)}"
        )
    if name == "enable_x64":
        if type(value) is bool:
            return value
        raise ValueError(f"enable_x64 must be True or False, got {value!r}")
    if name == "default_backend":
        if type(value) is str and value.isidentifier():
            return value
        raise ValueError(
            f"default_backend must be a backend's name ('numpy', 'torch', "
            f"'cupy', 'dask'), got {value!r}"
        )
    if name == "default_device":
        if value is None or (type(value) is str and value):
            return value
        raise ValueError(
            f"default_device must be None or a device's name ('cpu', 'cuda', "
            f"'cuda:1'), got {value!r}"
        )
    choices = _CHOICES[name]
    if value in choices and type(value) is str:
        return value
    raise ValueError(
        f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}"
    )


def _from_environment() -> dict[str, object]:
    values = dict(_DEFAULTS)
    for name in _DEFAULTS:
        var = f"TYPELATTICE_{name.upper()}"
        raw = os.environ.get(var)
        if raw is None:
            continue
        value: object = raw.strip()
        if name == "enable_x64":
            value = _BOOL_WORDS.get(raw.strip().lower(), raw)
        elif name == "default_device" and not raw.strip():
            value = None
        try:
            values[name] = validate(name, value)
        except ValueError as err:
            raise ValueError(f"environment variable {var}={raw!r}: {err}") from None
    return values


_initial: Final = _from_environment()
_global: State = _state(_initial)


class _Scope:
    """One scope entered in one context, on top of the scope it was entered in.

    The scopes entered in a context form a linked stack whose top is the value
    of the ContextVar ``_scope``; ``overrides`` holds the flags of the whole
    stack, resolved against the globals by ``resolve`` (which the C
    accelerator calls too). Nothing changes after construction but the
    resolve cache, so a stack copied into an asyncio task is never disturbed
    by another context's exits.
    """

    __slots__ = ("_resolved", "overrides", "parent", "setting")

    setting: _Setting
    parent: _Scope | None
    overrides: dict[str, object]

    def __init__(self, setting: _Setting, parent: _Scope | None) -> None:
        self.setting = setting
        self.parent = parent
        self.overrides = {} if parent is None else dict(parent.overrides)
        self.overrides[setting.name] = setting.value
        if type(setting) is _Settings:
            self.overrides.update(setting.more)
        self._resolved: tuple[State, State] | None = None

    def resolve(self) -> State:
        base = _global
        cached = self._resolved  # one read: the pair is replaced atomically
        if cached is not None and cached[0] is base:
            return cached[1]
        state = _state({**base.as_dict(), **self.overrides})
        self._resolved = (base, state)
        return state


_scope: ContextVar[_Scope | None] = ContextVar("typelattice_config", default=None)

# Called with the new global state whenever it changes, so hot paths can keep
# direct references to the global state's caches.
_listeners: list[Callable[[State], None]] = []


def on_global_change(fn: Callable[[State], None]) -> None:
    """Call ``fn(state)`` now and whenever the global configuration changes."""
    _listeners.append(fn)
    fn(_global)


def _notify() -> None:
    for fn in _listeners:
        fn(_global)


def current() -> State:
    """The configuration in force here (this thread, this task)."""
    scope = _scope.get()
    return _global if scope is None else scope.resolve()


class Config:
    """Global configuration; attribute reads give the values in force.

    >>> from typelattice import config
    >>> config.enable_x64
    False
    >>> config.update('dtype_promotion', 'strict')
    >>> config.dtype_promotion
    'strict'
    >>> config.update('dtype_promotion', 'standard')
    """

    __slots__ = ()

    def update(self, name: str, value: object) -> None:
        """Set a flag globally (scoped overrides in force still win).

        Args:
          name: ``'enable_x64'``, ``'dtype_promotion'``,
            ``'explicit_x64_dtypes'`` or ``'rank_promotion'``; or JAX's
            name of one of them (``'jax_enable_x64'``,
            ``'jax_numpy_dtype_promotion'``, ``'jax_numpy_rank_promotion'``,
            ``'jax_explicit_x64_dtypes'``), so that
            ``jax.config.update(...)`` lines run as they are.
          value: the new value (see docs/semantics.md, "Modes").

        Raises:
          ValueError: for an unknown flag or value, listing the valid ones.

        >>> import typelattice
        >>> typelattice.config.update('enable_x64', True)
        >>> typelattice.result_type(1.0)
        dtype('float64')
        >>> typelattice.config.update('enable_x64', False)
        """
        global _global
        name = JAX_FLAG_NAMES.get(name, name)
        value = validate(name, value)
        with _lock:
            _global = _state({**_global.as_dict(), name: value})
            _notify()

    def reset(self) -> None:
        """Restore every flag to its value at import (defaults or environment).

        >>> import typelattice
        >>> typelattice.config.update('rank_promotion', 'raise')
        >>> typelattice.config.reset()
        >>> typelattice.config.rank_promotion
        'allow'
        """
        global _global
        with _lock:
            _global = _state(_initial)
            _notify()

    def values(self) -> dict[str, object]:
        """Every flag and the value in force here.

        Returns:
          A dict of flag names to values, scoped overrides included.

        >>> import typelattice
        >>> with typelattice.enable_x64():
        ...     typelattice.config.values()['enable_x64']
        True
        """
        return current().as_dict()

    @property
    def enable_x64(self) -> bool:
        """64-bit mode: Python scalars and inferred types default to 64 bits."""
        return current().enable_x64

    @property
    def dtype_promotion(self) -> str:
        """The promotion lattice: ``'standard'``, ``'strict'`` or a registered one."""
        return current().dtype_promotion

    @property
    def explicit_x64_dtypes(self) -> str:
        """What an explicit 64-bit dtype does in 32-bit mode: warn, error, allow."""
        return current().explicit_x64_dtypes

    @property
    def rank_promotion(self) -> str:
        """Implicit rank promotion in broadcasting: allow, warn, raise."""
        return current().rank_promotion

    @property
    def default_backend(self) -> str:
        """The backend new arrays are made on: ``'numpy'``, ``'torch'``..."""
        return current().default_backend

    @property
    def default_device(self) -> str | None:
        """The device new arrays are made on (None: the backend's default)."""
        return current().default_device

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"set configuration with config.update({name!r}, value) or a scope "
            f"such as typelattice.{name}(value)"
        )

    def __repr__(self) -> str:
        return f"Config({', '.join(f'{k}={v!r}' for k, v in self.values().items())})"


config: Final = Config()


class _Setting:
    """A scoped override: a context manager that also works as a decorator.

    One object may be entered by many threads and asyncio tasks at once, and
    again while it is in force: it keeps no state of its own. An entry lives
    in the context that made it (the ``_scope`` stack), so an exit undoes
    exactly that context's entry.
    """

    __slots__ = ("name", "value")

    name: str
    value: object

    def __init__(self, name: str, value: object) -> None:
        self.name = name
        self.value = validate(name, value)

    def __enter__(self) -> None:
        _scope.set(_Scope(self, _scope.get()))

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        top = _scope.get()
        if top is not None and top.setting is self:
            _scope.set(top.parent)  # the usual case: the innermost scope ends
            return
        # An exit out of order (two generators suspended inside scopes and
        # closed in the other order): drop this setting's innermost entry and
        # stack the later entries again, so that each flag keeps the value
        # of the innermost scope still in force.
        later: list[_Setting] = []
        node = top
        while node is not None and node.setting is not self:
            later.append(node.setting)
            node = node.parent
        if node is None:
            raise RuntimeError(
                f"{self!r} was exited in a thread or asyncio task where it was "
                "not entered: enter and exit a scope in the same thread and "
                "task (finish a generator that yields inside a scope where it "
                "started)"
            )
        rest = node.parent
        for setting in reversed(later):
            rest = _Scope(setting, rest)
        _scope.set(rest)

    def __call__(self, fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await fn(*args, **kwargs)

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"{self.name}({self.value!r})"


def enable_x64(new_val: bool = True) -> _Setting:
    """Scope in which 64-bit mode is on (or off, with ``False``).

    Works as a context manager and as a decorator (of plain and ``async``
    functions). It applies to the thread and asyncio task that enter it; one
    object may be entered by many threads and tasks at once, and again inside
    itself (docs/semantics.md, "Modes").

    Args:
      new_val: whether 64-bit mode is on inside the scope.

    Returns:
      The scope, a context manager and decorator.

    Raises:
      ValueError: ``new_val`` is not a bool.

    >>> import typelattice
    >>> with typelattice.enable_x64():
    ...     typelattice.result_type(1.0)
    dtype('float64')
    >>> typelattice.result_type(1.0)
    dtype('float32')
    """
    return _Setting("enable_x64", new_val)


def dtype_promotion(new_val: str) -> _Setting:
    """Scope using the ``'standard'``, ``'strict'`` or a registered lattice.

    Works as a context manager and as a decorator (of plain and ``async``
    functions). It applies to the thread and asyncio task that enter it; one
    object may be entered by many threads and tasks at once, and again inside
    itself (docs/semantics.md, "Modes").

    Args:
      new_val: ``'standard'``, ``'strict'`` or a name given to
        :func:`~typelattice.register_lattice`: the lattice in force inside
        the scope.

    Returns:
      The scope, a context manager and decorator.

    Raises:
      ValueError: for a name that is not a lattice, listing the valid ones.

    >>> import typelattice
    >>> @typelattice.dtype_promotion('strict')
    ... def add_types(a, b):
    ...     return typelattice.result_type(a, b)
    >>> add_types('float32', float)
    dtype('float32')
    """
    return _Setting("dtype_promotion", new_val)


def explicit_x64_dtypes(new_val: str) -> _Setting:
    """Scope setting what explicit 64-bit dtypes do in 32-bit mode.

    Works as a context manager and as a decorator (of plain and ``async``
    functions). It applies to the thread and asyncio task that enter it; one
    object may be entered by many threads and tasks at once, and again inside
    itself (docs/semantics.md, "Modes").

    Args:
      new_val: ``'warn'`` (truncate to 32 bits with a warning), ``'error'``
        or ``'allow'`` (keep 64 bits).

    Returns:
      The scope, a context manager and decorator.

    Raises:
      ValueError: any other value.

    >>> import typelattice
    >>> with typelattice.explicit_x64_dtypes('error'):
    ...     typelattice.config.explicit_x64_dtypes
    'error'
    """
    return _Setting("explicit_x64_dtypes", new_val)


def rank_promotion(new_val: str) -> _Setting:
    """Scope setting implicit rank promotion: ``'allow'``, ``'warn'``, ``'raise'``.

    With ``'warn'`` or ``'raise'``, broadcasting operands of different ranks
    (scalars aside) warns with ``RankPromotionWarning`` or raises ValueError.
    Works as a context manager and as a decorator (of plain and ``async``
    functions). It applies to the thread and asyncio task that enter it; one
    object may be entered by many threads and tasks at once, and again inside
    itself (docs/semantics.md, "Modes").

    Args:
      new_val: ``'allow'``, ``'warn'`` or ``'raise'``.

    Returns:
      The scope, a context manager and decorator.

    Raises:
      ValueError: any other value.

    >>> import typelattice
    >>> with typelattice.rank_promotion('raise'):
    ...     typelattice.config.rank_promotion
    'raise'
    """
    return _Setting("rank_promotion", new_val)


class _Settings(_Setting):
    """A scoped override of several flags at once (the first is ``name``)."""

    __slots__ = ("more",)

    more: dict[str, object]

    def __init__(self, name: str, value: object, more: dict[str, object]) -> None:
        super().__init__(name, value)
        self.more = {k: validate(k, v) for k, v in more.items()}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.more.items())
        return f"{self.name}({self.value!r}{extra})"
