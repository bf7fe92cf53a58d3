"""FrozenDict: an immutable nested dict, a pytree node (the home of
``typelattice.flax.core``'s FrozenDict, freeze, unfreeze, copy, pop and
pretty_repr, as Flax's ``flax.core.frozen_dict``)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from typelattice._tracing import tree
from typelattice.flax import _serialization as serialization

__all__ = ["FrozenDict", "copy", "freeze", "pop", "pretty_repr", "unfreeze"]

K = TypeVar("K")
V = TypeVar("V")


def _frozen_copy(xs: Any) -> Any:
    """A deep copy of the dicts of ``xs`` (FrozenDicts share theirs: they
    never change)."""
    if isinstance(xs, FrozenDict):
        frozen: FrozenDict[Any, Any] = xs  # pyright: ignore[reportUnknownVariableType]
        return frozen._dict  # pyright: ignore[reportPrivateUsage]
    if not isinstance(xs, dict):
        return xs
    return {
        k: _frozen_copy(v)
        for k, v in xs.items()  # pyright: ignore[reportUnknownVariableType]
    }


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.split("\n"))


def _pretty(x: Any, spaces: int) -> str:
    if not isinstance(x, dict) or not x:
        return "{}" if isinstance(x, dict) else repr(x)
    body = "\n".join(
        f"{k}: {_pretty(v, spaces)},"
        for k, v in x.items()  # pyright: ignore[reportUnknownVariableType]
    )
    return "{\n" + _indent(body, spaces) + "\n}"


class FrozenDict(Mapping[K, V]):
    """An immutable dict whose nested dicts are frozen too, as Flax's
    ``flax.core.FrozenDict``.

    A pytree node whose children are its values in the order of the sorted
    keys, as in Flax (and as plain dicts are). Indexing a nested dict gives a
    FrozenDict; ``copy`` and ``pop`` return new ones.

    Args:
      *args: as for ``dict``.
      **kwargs: as for ``dict``.

    >>> d = FrozenDict({'b': {'x': 1}, 'a': 2})
    >>> d['b']
    FrozenDict({
        x: 1,
    })
    >>> d2, b = d.pop('b')
    >>> dict(d2), b['x']
    ({'a': 2}, 1)
    >>> d['a'] = 3
    Traceback (most recent call last):
    ...
    TypeError: FrozenDict is immutable: make a changed copy with \
d.copy({key: value}) (or unfreeze(d) for a dict)
    """

    __slots__ = ("_dict", "_hash")

    _dict: dict[K, V]
    _hash: int | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._dict = _frozen_copy(dict(*args, **kwargs))
        self._hash = None

    @classmethod
    def _wrap(cls, xs: dict[Any, Any]) -> FrozenDict[Any, Any]:
        """A FrozenDict of ``xs``, which no one else holds (no copy)."""
        out: FrozenDict[Any, Any] = cls.__new__(cls)
        out._dict = xs
        out._hash = None
        return out

    def __getitem__(self, key: K) -> V:
        value = self._dict[key]
        if isinstance(value, dict):
            frozen: Any = FrozenDict._wrap(value)  # pyright: ignore[reportUnknownArgumentType]
            return frozen  # type: ignore[no-any-return]
        return value

    def __setitem__(self, key: K, value: V) -> None:
        raise TypeError(
            "FrozenDict is immutable: make a changed copy with "
            "d.copy({key: value}) (or unfreeze(d) for a dict)"
        )

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __iter__(self) -> Iterator[K]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __repr__(self) -> str:
        return self.pretty_repr()

    def __reduce__(self) -> tuple[Any, ...]:
        return FrozenDict, (self.unfreeze(),)

    def __hash__(self) -> int:
        if self._hash is None:
            h = 0
            for item in self.items():
                h ^= hash(item)
            self._hash = h
        return self._hash

    def pretty_repr(self, num_spaces: int = 4) -> str:
        """The nested dict, one key a line, indented.

        Args:
          num_spaces: the indentation of each level.

        Returns:
          ``FrozenDict({...})`` as Flax writes it.

        >>> print(FrozenDict({'a': {'b': 1}}).pretty_repr(2))
        FrozenDict({
          a: {
            b: 1,
          },
        })
        """
        return f"FrozenDict({_pretty(self._dict, num_spaces)})"

    def copy(
        self, add_or_replace: Mapping[K, V] = MappingProxyType({})
    ) -> FrozenDict[K, V]:
        """A new FrozenDict with the entries of ``add_or_replace`` added or
        replaced.

        Args:
          add_or_replace: the new entries.

        Returns:
          The new FrozenDict.

        >>> dict(FrozenDict({'a': 1}).copy({'b': 2}))
        {'a': 1, 'b': 2}
        """
        return type(self)({**self._dict, **unfreeze(add_or_replace)})

    def pop(self, key: K) -> tuple[FrozenDict[K, V], V]:
        """A new FrozenDict without ``key``, and its value.

        Args:
          key: the key to remove.

        Returns:
          ``(the new FrozenDict, the value)``.

        Raises:
          KeyError: ``key`` is not a key.

        >>> rest, value = FrozenDict({'a': 1, 'b': 2}).pop('a')
        >>> dict(rest), value
        ({'b': 2}, 1)
        """
        value = self[key]
        rest = dict(self._dict)
        del rest[key]
        return type(self)(rest), value

    def unfreeze(self) -> dict[K, V]:
        """A nested dict copy (see :func:`unfreeze`).

        Returns:
          The dict.

        >>> FrozenDict({'a': {'b': 1}}).unfreeze()
        {'a': {'b': 1}}
        """
        plain: dict[K, V] = unfreeze(self)
        return plain

    def tree_flatten_with_keys(
        self,
    ) -> tuple[tuple[tuple[tree.DictKey, Any], ...], Hashable]:
        """The children in the order of the sorted keys, as Flax's.

        Returns:
          ``(((DictKey(k), value), ...), keys)``.

        >>> FrozenDict(b=2, a=1).tree_flatten_with_keys()
        (((DictKey(key='a'), 1), (DictKey(key='b'), 2)), ('a', 'b'))
        """
        keys: tuple[Any, ...] = tuple(sorted(cast(dict[Any, V], self._dict)))
        return tuple((tree.DictKey(k), self._dict[k]) for k in keys), keys

    def tree_flatten(self) -> tuple[tuple[Any, ...], Hashable]:
        """The children in the order of the sorted keys.

        Returns:
          ``((value, ...), keys)``.

        >>> FrozenDict(b=2, a=1).tree_flatten()
        ((1, 2), ('a', 'b'))
        """
        keys: tuple[Any, ...] = tuple(sorted(cast(dict[Any, V], self._dict)))
        return tuple(self._dict[k] for k in keys), keys

    @classmethod
    def tree_unflatten(cls, keys: tuple[Any, ...], values: Any) -> FrozenDict[Any, Any]:
        """Rebuild from the sorted keys and the children.

        Args:
          keys: the sorted keys.
          values: the children.

        Returns:
          The FrozenDict.

        >>> FrozenDict.tree_unflatten(('a', 'b'), [1, 2])['b']
        2
        """
        return cls._wrap(dict(zip(keys, values, strict=True)))


tree.register_pytree_with_keys_class(FrozenDict)


def freeze(xs: Mapping[Any, Any]) -> FrozenDict[Any, Any]:
    """A nested dict as a :class:`FrozenDict` (a deep copy of its dicts).

    Args:
      xs: the dict.

    Returns:
      The FrozenDict.

    >>> freeze({'a': {'b': 1}})['a']['b']
    1
    """
    return FrozenDict(xs)


def unfreeze(x: Any) -> Any:
    """A FrozenDict (or a dict holding FrozenDicts) as nested dicts, a copy
    that can be changed; other values are returned as they are.

    Args:
      x: a FrozenDict, a dict, or another value.

    Returns:
      The nested dicts.

    >>> unfreeze(freeze({'a': {'b': 1}}))
    {'a': {'b': 1}}
    """
    if isinstance(x, FrozenDict):
        frozen: FrozenDict[Any, Any] = x  # pyright: ignore[reportUnknownVariableType]
        x = frozen._dict  # pyright: ignore[reportPrivateUsage]
    if isinstance(x, dict):
        return {
            k: unfreeze(v)
            for k, v in x.items()  # pyright: ignore[reportUnknownVariableType]
        }
    return x


def copy(
    x: Mapping[Any, Any], add_or_replace: Mapping[Any, Any] = MappingProxyType({})
) -> Any:
    """``x`` with the entries of ``add_or_replace`` added or replaced: a
    FrozenDict for a FrozenDict, a new dict for a dict (``x`` unchanged).

    Args:
      x: a FrozenDict or a dict.
      add_or_replace: the new entries.

    Returns:
      The new mapping, of ``x``'s kind.

    Raises:
      TypeError: ``x`` is neither.

    >>> copy({'a': 1}, {'b': 2})
    {'a': 1, 'b': 2}
    """
    if isinstance(x, FrozenDict):
        return x.copy(add_or_replace)  # pyright: ignore[reportUnknownMemberType]
    if isinstance(x, dict):
        new = unfreeze(x)
        new.update(add_or_replace)
        return new
    raise TypeError(f"copy takes a FrozenDict or a dict, got a {type(x).__name__}")


def pop(x: Mapping[Any, Any], key: Any) -> tuple[Any, Any]:
    """``x`` without ``key``, and its value: a FrozenDict for a FrozenDict,
    a new dict for a dict (``x`` unchanged).

    Args:
      x: a FrozenDict or a dict.
      key: the key to remove.

    Returns:
      ``(the new mapping, the value)``.

    Raises:
      TypeError: ``x`` is neither.
      KeyError: ``key`` is not a key.

    >>> pop({'a': 1, 'b': 2}, 'a')
    ({'b': 2}, 1)
    """
    if isinstance(x, FrozenDict):
        return x.pop(key)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(x, dict):
        new = unfreeze(x)
        value = new.pop(key)
        return new, value
    raise TypeError(f"pop takes a FrozenDict or a dict, got a {type(x).__name__}")


def pretty_repr(x: Any, num_spaces: int = 4) -> str:
    """A nested dict (or FrozenDict), one key a line, indented; ``repr(x)``
    for other values.

    Args:
      x: the value.
      num_spaces: the indentation of each level.

    Returns:
      The text.

    >>> print(pretty_repr({'a': 1}))
    {
        a: 1,
    }
    """
    if isinstance(x, FrozenDict):
        return x.pretty_repr(num_spaces)  # pyright: ignore[reportUnknownMemberType]
    return _pretty(x, num_spaces)


def _frozen_state(xs: FrozenDict[Any, Any]) -> dict[str, Any]:
    state: dict[str, Any] = serialization.to_state_dict(
        dict(xs._dict)  # pyright: ignore[reportPrivateUsage]
    )
    return state


def _restore_frozen(xs: FrozenDict[Any, Any], state: Any) -> FrozenDict[Any, Any]:
    # (the dict's restore, at this FrozenDict's path)
    restored = serialization._restore_dict(  # pyright: ignore[reportPrivateUsage]
        dict(xs._dict),  # pyright: ignore[reportPrivateUsage]
        state,
    )
    return FrozenDict(restored)


serialization.register_serialization_state(FrozenDict, _frozen_state, _restore_frozen)
