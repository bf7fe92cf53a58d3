"""The Module system: frozen dataclasses whose parameters live outside them.

A layer is a frozen dataclass of its hyperparameters (``Dense(features=3)``);
its parameters are not attributes but entries of a plain nested dict,
``{'params': {'Dense_0': {'kernel': ..., 'bias': ...}}}``, that ``init``
creates and ``apply`` reads. While ``init``/``apply`` run, a :class:`_Run`
holds the variables, the random keys and which collections may change, and
every module taking part is *bound* to a :class:`_Scope`: the run plus its
path of names from the top (``('Encoder_0', 'Dense_1')``). ``self.param``
and ``self.variable`` look their name up under that path.

Submodules get their names as Flax linen names them: the attribute name for
those assigned in ``setup()`` (``layers_0``, ``layers_1`` for a list), the
``name=`` given, else ``<Class>_<n>``, counted per class within each call of
a ``@compact`` method, so that calling a module twice reuses its parameters.
"""

# The helpers below the class (binding, the assignment rule) are part of
# the Module machinery and use its private methods.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, dataclass_transform

import numpy as np

import typelattice.numpy as tnp
from typelattice import _config, random
from typelattice._array import ArrayImpl, from_python_or_numpy
from typelattice._tracing import tree
from typelattice._tracing.jit import eval_shape
from typelattice._tracing.tracer import (
    ConcretizationTypeError,
    Tracer,
)
from typelattice.nn._initializers import shaped_by_arguments
from typelattice.nn._meta import box_of
from typelattice.nn._summary import Recorder, summary_table
from typelattice.numpy import Array
from typelattice.numpy._creation import convert_to

__all__ = [
    "DenyList",
    "Module",
    "ScopeParamShapeError",
    "Variable",
    "apply",
    "compact",
    "init",
    "init_with_output",
    "merge_param",
    "nowrap",
    "share_scope",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# The collection that holds trainable parameters, and the random stream that
# initialises them (Flax's names).
_PARAMS = "params"
# Where sow (attention weights included) keeps values by default.
_INTERMEDIATES = "intermediates"


class _Run:
    """The state of one ``init`` or ``apply``: the variables by collection,
    which collections may be written, and the random keys by stream."""

    def __init__(
        self,
        variables: Mapping[str, Any],
        mutable: Callable[[str], bool],
        rngs: Mapping[str, Any],
        initializing: bool,
        capture: Callable[[Module, str], bool] | None = None,
    ) -> None:
        # Nested dicts are copied on the way in so the caller's stay as they
        # were (the arrays themselves are immutable and shared).
        self.variables: dict[str, Any] = {
            c: _copy_dicts(tree) for c, tree in variables.items()
        }
        self.mutable = mutable
        self.rngs = dict(rngs)
        self.initializing = initializing
        # Which method outputs capture_intermediates keeps (None: none).
        self.capture = capture
        # Told of each method call (module, method name, args, kwargs) and
        # returning what to tell of its output: tabulate's record.
        self.observe: Callable[..., Callable[[Any], None]] | None = None
        self.rng_counts: dict[tuple[str, tuple[str, ...]], int] = {}

    def make_rng(self, stream: str, path: tuple[str, ...]) -> Array | random.KeyArray:
        """A fresh key for ``stream`` at ``path``: the stream's key folded with
        the path and a counter, so that keys depend on where they are drawn
        and not on the order modules were called in."""
        if stream not in self.rngs:
            given = sorted(self.rngs) or "none"
            raise ValueError(
                f"a random key for the stream {stream!r} is needed at "
                f"{'/'.join(path) or 'the top module'}, and the keys given "
                f"are for: {given}. Pass it: rngs={{{stream!r}: "
                "typelattice.random.key(0)}"
            )
        count = self.rng_counts.get((stream, path), 0)
        self.rng_counts[(stream, path)] = count + 1
        key: Array | random.KeyArray = self.rngs[stream]
        for name in path:
            key = random.fold_in(key, zlib.crc32(name.encode()))
        return random.fold_in(key, count)


def _copy_dicts(tree: Any) -> Any:
    if isinstance(tree, Mapping):
        return {k: _copy_dicts(v) for k, v in tree.items()}  # pyright: ignore[reportUnknownVariableType]
    return tree


@dataclasses.dataclass
class _Scope:
    """Where a bound module sits: the run and its path of names."""

    run: _Run
    path: tuple[str, ...]
    # Per class name, how many unnamed submodules the current compact call
    # has made.
    counts: dict[str, int] = dataclasses.field(default_factory=dict[str, int])

    def lookup(self, collection: str) -> dict[str, Any] | None:
        node = self.run.variables.get(collection)
        for name in self.path:
            if not isinstance(node, dict):
                return None
            node = cast(Any, node).get(name)
        return cast(Any, node) if isinstance(node, dict) else None

    def store(self, collection: str) -> dict[str, Any]:
        node = self.run.variables.setdefault(collection, {})
        for name in self.path:
            node = node.setdefault(name, {})
        return node  # type: ignore[no-any-return]


class ScopeParamShapeError(ValueError):
    """A parameter given to ``apply`` whose shape differs from the one
    ``init`` makes for it (Flax's error of this name): variables made for
    another model, other settings, or input of another shape.

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> variables = {'params': {'kernel': tnp.ones((4, 3)), 'bias': tnp.ones(3)}}
    >>> nn.Dense(3).apply(variables, tnp.ones((1, 2)))
    Traceback (most recent call last):
    ...
    typelattice.nn.ScopeParamShapeError: the parameter 'kernel' has shape (4, 3), \
but Dense makes it (2, 3) here, from its settings and its input's shape. Fix: \
pass the variables that init returned for this model and input shape \
(model.init(key, x)), or give the layer the settings the parameters were made with.
    """

    __module__ = "typelattice.nn"  # where users catch it


class Variable(Generic[T]):
    """A mutable variable of a collection other than ``'params'`` (BatchNorm's
    running statistics): read and write it through ``.value``.

    Attributes:
      collection: the collection's name (``'batch_stats'``).
      name: the variable's name within its module.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class Counter(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         count = self.variable('counts', 'n', tnp.zeros, (), 'int32')
    ...         count.value = count.value + 1
    ...         return x
    >>> variables = Counter().init(random.key(0), 1.0)
    >>> variables
    {'counts': {'n': Array(1, dtype=int32)}}
    """

    def __init__(self, scope: _Scope, collection: str, name: str) -> None:
        self._scope = scope
        self.collection = collection
        self.name = name

    @property
    def value(self) -> T:
        """The variable's current value (unboxed, when it was made by a
        boxing initialiser such as ``nn.with_partitioning``)."""
        node = self._scope.lookup(self.collection)
        assert node is not None and self.name in node
        found = node[self.name]
        box = box_of(found)
        if box is not None:
            return box.unbox()  # type: ignore[no-any-return]
        return found  # type: ignore[no-any-return]

    @value.setter
    def value(self, new: T) -> None:
        if not self._scope.run.mutable(self.collection):
            where = "/".join((*self._scope.path, self.name))
            raise ValueError(
                f"the variable {self.collection}/{where} cannot be updated: "
                f"its collection is not mutable in this apply. Pass "
                f"mutable=[{self.collection!r}] to apply, which then returns "
                "(output, updated_variables)"
            )
        node = self._scope.store(self.collection)
        box = box_of(node.get(self.name))
        # A boxed variable stays boxed (its metadata kept), as in Flax.
        if box is not None and box_of(new) is None:
            node[self.name] = box.replace_boxed(new)
        else:
            node[self.name] = new


def compact(method: F) -> F:
    """Mark a method that declares its parameters and submodules inline, as
    Flax linen's ``nn.compact``.

    Args:
      method: the module's ``__call__`` (or another method) that calls
        ``self.param`` or creates submodules where they are used.

    Returns:
      The method, marked.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class MLP(nn.Module):
    ...     hidden: int
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))
    >>> variables = MLP(8).init(random.key(0), tnp.ones((2, 3)))
    >>> sorted(variables['params'])
    ['Dense_0', 'Dense_1']
    """
    method.__dict__["_compact"] = True
    return method


def nowrap(method: F) -> F:
    """Mark a method as a plain helper, as Flax linen's ``nn.nowrap``: it
    runs as an ordinary function, so that submodules it makes belong to
    the ``@compact`` method that calls it (or to ``setup``).

    Args:
      method: a module's method.

    Returns:
      The method, marked.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class Model(nn.Module):
    ...     @nn.nowrap
    ...     def make_dense(self, n):
    ...         return nn.Dense(n)
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         return self.make_dense(2)(x)
    >>> sorted(Model().init(random.key(0), tnp.ones((1, 3)))['params'])
    ['Dense_0']
    """
    method.__dict__["_nowrap"] = True
    return method


def _wrap_method(fun: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fun`` with its module on top of the run's stack, so that modules
    made inside find their parent."""

    is_compact = bool(getattr(fun, "_compact", False))

    @functools.wraps(fun)
    def wrapped(self: Module, *args: Any, **kwargs: Any) -> Any:
        scope = self._bound_scope()
        if scope is None:
            return fun(self, *args, **kwargs)
        if is_compact:
            scope.counts.clear()
        observe = scope.run.observe
        seen = None if observe is None else observe(self, fun.__name__, args, kwargs)
        _STACK.append((self, is_compact))
        try:
            out = fun(self, *args, **kwargs)
        finally:
            _STACK.pop()
        if seen is not None:
            seen(out)
        capture = scope.run.capture
        if capture is not None and capture(self, fun.__name__):
            self.sow(_INTERMEDIATES, fun.__name__, out)
        return out

    return wrapped


@dataclasses.dataclass(frozen=True)
class _Collections:
    """Which collections a run may write: those named (all when ``names``
    is None) except those denied. Hashable, so that a lifted ``jit`` keeps
    one program for the same choice."""

    names: frozenset[str] | None
    denied: frozenset[str] = frozenset()

    def __call__(self, collection: str) -> bool:
        if collection in self.denied:
            return False
        return self.names is None or collection in self.names


# What init may write: every collection but the sown values (Flax's
# DenyList('intermediates')).
_ALL_BUT_INTERMEDIATES = _Collections(None, frozenset({_INTERMEDIATES}))


def _append(xs: Any, x: Any) -> Any:
    """sow's default reduction: the values in a tuple, in order."""
    return (*xs, x)


def _empty() -> tuple[()]:
    return ()


@dataclasses.dataclass(frozen=True)
class DenyList:
    """Every collection but those named, as a ``mutable=`` argument (Flax's
    ``nn.DenyList``): ``init``'s default is ``DenyList('intermediates')``.

    Attributes:
      deny: the collections left out (a name or several).

    >>> from typelattice import nn
    >>> import typelattice.numpy as tnp
    >>> class Probe(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         self.sow('intermediates', 'x', x)
    ...         self.sow('other', 'x', x)
    ...         return x
    >>> _, state = Probe().apply({}, tnp.ones(1), mutable=nn.DenyList('other'))
    >>> sorted(state)
    ['intermediates']
    """

    deny: str | tuple[str, ...] | frozenset[str]


def _normalize_mutable(mutable: Any) -> _Collections:
    if isinstance(mutable, _Collections):
        return mutable
    if isinstance(mutable, DenyList):
        denied = mutable.deny
        return _Collections(
            None, frozenset({denied} if isinstance(denied, str) else denied)
        )
    if mutable is True:
        return _Collections(None)
    if mutable is False or mutable is None:
        return _Collections(frozenset())
    names = {mutable} if isinstance(mutable, str) else set(mutable)
    return _Collections(frozenset(names))


def _with_intermediates(mutable: _Collections) -> _Collections:
    """``mutable`` and ``'intermediates'``: where capture_intermediates
    keeps the outputs (Flax adds the collection likewise)."""
    if mutable.names is None:
        return _Collections(None, mutable.denied - {_INTERMEDIATES})
    return _Collections(mutable.names | {_INTERMEDIATES}, mutable.denied)


def _capture_call(module: Module, method_name: str) -> bool:
    """capture_intermediates=True: the output of every ``__call__``."""
    del module
    return method_name == "__call__"


def _normalize_capture(capture: Any) -> Callable[[Module, str], bool] | None:
    if capture is True:
        return _capture_call
    if capture is False or capture is None:
        return None
    if callable(capture):
        return cast(Callable[[Module, str], bool], capture)
    raise TypeError(
        f"capture_intermediates={capture!r} is neither a bool nor a function "
        "(module, method_name) -> bool"
    )


class _Unspecified:
    """The default of ``parent``: the module's parent is the ``@compact``
    method running where it is made, if any."""

    def __repr__(self) -> str:
        return "<unspecified parent>"


_PARENT_UNSPECIFIED: Any = _Unspecified()


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
@dataclasses.dataclass(frozen=True)
class Module:
    """The base of every layer: a frozen dataclass of hyperparameters, with
    ``init`` to create its variables and ``apply`` to run it on them.

    Subclasses declare their fields as annotations (they become a frozen
    dataclass automatically) and either ``setup()`` (submodules and
    parameters as attributes) or a ``@compact`` ``__call__``. Every module
    takes an optional keyword ``name``.

    Attributes:
      name: the module's name in its parent's variables (default: the
        attribute name from ``setup``, else ``<Class>_<n>``).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class Block(nn.Module):
    ...     features: int
    ...     def setup(self):
    ...         self.dense = nn.Dense(self.features)
    ...         self.norm = nn.LayerNorm()
    ...     def __call__(self, x):
    ...         return self.norm(self.dense(x))
    >>> block = Block(4)
    >>> variables = block.init(random.key(0), tnp.ones((2, 3)))
    >>> {k: sorted(v) for k, v in variables['params'].items()}
    {'dense': ['bias', 'kernel'], 'norm': ['bias', 'scale']}
    >>> block.apply(variables, tnp.ones((2, 3))).shape
    (2, 4)
    """

    name: str | None = dataclasses.field(default=None, kw_only=True)
    # Flax's keyword: None makes a module that belongs to no parent even
    # when made inside a @compact method; a bound module adopts it. Left
    # out of the repr and of comparisons, as in Flax.
    parent: Any = dataclasses.field(
        default=_PARENT_UNSPECIFIED, kw_only=True, repr=False, compare=False
    )

    # Set with object.__setattr__ on bound copies only.
    _scope: ClassVar[_Scope | None] = None
    _in_setup: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attr, value in list(vars(cls).items()):
            # Methods only: a field's default may be a function too
            # (kernel_init=lecun_normal()).
            if (
                inspect.isfunction(value)
                and value.__qualname__ == f"{cls.__qualname__}.{attr}"
                and (attr == "__call__" or not attr.startswith("_"))
                and attr != "setup"
                and not getattr(value, "_nowrap", False)
            ):
                setattr(cls, attr, _wrap_method(value))
        dataclasses.dataclass(frozen=True, eq=True, repr=True)(cls)
        # The frozen dataclass forbids every assignment; setup() may assign.
        cls.__setattr__ = _setattr  # type: ignore[assignment]

    def __post_init__(self) -> None:
        # A module made inside a running @compact method is its child,
        # unless made with parent=None.
        given = self.parent
        if given is _PARENT_UNSPECIFIED:
            parent = _current_parent()
        elif given is None:
            parent = None
        elif isinstance(given, Module) and given._bound_scope() is not None:
            parent = given
        else:
            raise TypeError(
                f"parent={given!r} is not a module running under init or "
                "apply: leave parent out (a module made in a @compact method "
                "belongs to it), or pass parent=None for a top-level module"
            )
        if parent is not None:
            scope = parent._bound_scope()
            assert scope is not None
            kind = type(self).__name__
            if self.name is None:
                n = scope.counts.get(kind, 0)
                scope.counts[kind] = n + 1
                name = f"{kind}_{n}"
            else:
                name = self.name
            self._bind(_Scope(scope.run, (*scope.path, name)))

    # -- binding ----------------------------------------------------------------

    def _bound_scope(self) -> _Scope | None:
        return self.__dict__.get("_scope")

    def _bind(self, scope: _Scope) -> None:
        object.__setattr__(self, "_scope", scope)
        # Submodules passed as fields are children under their field's name;
        # one module given to two fields is one child (named after the first),
        # its parameters shared, as Flax adopts it once.
        adopted: dict[int, Module] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if _has_module(value):
                object.__setattr__(
                    self, field.name, _bind_tree(value, scope, field.name, adopted)
                )
        object.__setattr__(self, "_in_setup", True)
        _STACK.append((self, False))
        try:
            self.setup()
        finally:
            _STACK.pop()
            object.__setattr__(self, "_in_setup", False)

    def setup(self) -> None:
        """Declare submodules and parameters as attributes; called once when
        the module is bound by ``init`` or ``apply``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Scale(nn.Module):
        ...     def setup(self):
        ...         self.s = self.param('s', nn.initializers.ones, (1,))
        ...     def __call__(self, x):
        ...         return x * self.s
        >>> Scale().init(random.key(0), tnp.ones(2))
        {'params': {'s': Array([1.], dtype=float32)}}
        """

    # -- declaring variables -----------------------------------------------------

    def _require_scope(self, what: str) -> _Scope:
        scope = self._bound_scope()
        if scope is None:
            raise ValueError(
                f"{type(self).__name__}.{what} can only be called while the "
                "module runs under init or apply: call layer.init(key, x) or "
                "layer.apply(variables, x)"
            )
        return scope

    def param(
        self,
        name: str,
        init_fn: Callable[..., T],
        *init_args: Any,
        unbox: bool = True,
        **init_kwargs: Any,
    ) -> T:
        """Declare (under ``init``) or look up (under ``apply``) the parameter
        ``name``, in the ``'params'`` collection.

        Args:
          name: the parameter's name within this module (``'kernel'``).
          init_fn: called as ``init_fn(key, *init_args)`` to create it.
          *init_args: further arguments of ``init_fn``: usually the shape and
            the dtype.
          unbox: return the value inside a box (a parameter made by
            ``nn.with_partitioning``) rather than the box; the variables
            keep the box either way.
          **init_kwargs: keyword arguments of ``init_fn``.

        Returns:
          The parameter's value. Under ``apply``, the value given is
          checked against what ``init_fn`` would make (its shape, found
          without computing it): NumPy arrays become Arrays as
          ``asarray`` makes them, and nested lists and Python numbers
          (a checkpoint read from JSON) Arrays of the dtype ``init_fn``
          would give, values checked (OverflowError for one the dtype
          cannot hold).

        Raises:
          ScopeParamShapeError: under ``apply``, a given parameter whose
            shape differs from the one ``init_fn`` makes.

        >>> from typelattice import nn, random
        >>> class Bias(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         return x + self.param('b', nn.initializers.zeros, x.shape[-1:])
        >>> Bias().init(random.key(0), random.normal(random.key(1), (2, 3)))
        {'params': {'b': Array([0., 0., 0.], dtype=float32)}}
        """
        scope = self._require_scope("param")
        if init_kwargs:
            init_fn = functools.partial(init_fn, **init_kwargs)
        found = scope.lookup(_PARAMS)
        if found is not None and name in found:
            value = found[name]
            box = box_of(value)
            if box is not None:
                value = box.unbox()
            if not scope.run.initializing:  # (else made by this init)
                path = (*scope.path, name)
                layer = type(self).__name__
                value = _given(value, init_fn, init_args, path, layer)
            if box is not None and not unbox:
                return box.replace_boxed(value)  # type: ignore[return-value]
            return value  # type: ignore[no-any-return]
        if not scope.run.mutable(_PARAMS):
            where = "/".join((*scope.path, name))
            raise ValueError(
                f"the parameter {where!r} is missing from the variables given "
                "to apply. Pass the variables that init returned for this "
                "layer: layer.apply(layer.init(key, x), x)"
            )
        value = init_fn(scope.run.make_rng(_PARAMS, (*scope.path, name)), *init_args)
        scope.store(_PARAMS)[name] = value
        made = box_of(value)
        if unbox and made is not None:
            return made.unbox()  # type: ignore[no-any-return]
        return value

    def variable(
        self, collection: str, name: str, init_fn: Callable[..., T], *init_args: Any
    ) -> Variable[T]:
        """Declare (or look up) the variable ``name`` of ``collection``.

        Args:
          collection: the collection (``'batch_stats'``).
          name: the variable's name within this module.
          init_fn: called as ``init_fn(*init_args)`` (no key) when the
            variable does not exist yet.
          *init_args: its arguments.

        Returns:
          A :class:`Variable`; read and write ``.value``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Last(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         last = self.variable('cache', 'last', tnp.zeros, x.shape)
        ...         previous, last.value = last.value, x
        ...         return previous
        >>> v = Last().init(random.key(0), tnp.ones(2))
        >>> y, updates = Last().apply(v, tnp.ones(2) * 5, mutable=['cache'])
        >>> y, updates['cache']['last']
        (Array([1., 1.], dtype=float32), Array([5., 5.], dtype=float32))
        """
        scope = self._require_scope("variable")
        found = scope.lookup(collection)
        if found is None or name not in found:
            if not scope.run.mutable(collection):
                where = "/".join((collection, *scope.path, name))
                raise ValueError(
                    f"the variable {where!r} is missing from the variables given "
                    f"to apply. Pass the variables that init returned, or "
                    f"mutable=[{collection!r}] to create it"
                )
            scope.store(collection)[name] = init_fn(*init_args)
        return Variable(scope, collection, name)

    def has_variable(self, collection: str, name: str) -> bool:
        """Whether the variable ``name`` of ``collection`` exists (was given
        to ``apply``, or made already).

        Args:
          collection: the collection (``'cache'``).
          name: the variable's name within this module.

        Returns:
          True when it exists.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Seen(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         return self.has_variable('cache', 'x')
        >>> Seen().apply({'cache': {'x': tnp.ones(1)}}, tnp.ones(1))
        True
        """
        scope = self._require_scope("has_variable")
        found = scope.lookup(collection)
        return found is not None and name in found

    def sow(
        self,
        col: str,
        name: str,
        value: Any,
        reduce_fn: Callable[[Any, Any], Any] = _append,
        init_fn: Callable[[], Any] = _empty,
    ) -> bool:
        """Keep an intermediate value in the collection ``col`` when that
        collection is mutable (``apply(..., mutable=['intermediates'])``);
        otherwise do nothing.

        Args:
          col: the collection (``'intermediates'``).
          name: the variable's name within this module.
          value: the value to keep.
          reduce_fn: combines the stored value with ``value`` (default:
            appends to a tuple, so each call adds one entry).
          init_fn: the stored value before the first call (default ``()``).

        Returns:
          True when the value was stored, False when ``col`` is not mutable.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Probe(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         self.sow('intermediates', 'doubled', x * 2)
        ...         return x + 1
        >>> y, state = Probe().apply({}, tnp.ones(2), mutable=['intermediates'])
        >>> state
        {'intermediates': {'doubled': (Array([2., 2.], dtype=float32),)}}
        >>> Probe().init(random.key(0), tnp.ones(2))  # init keeps no intermediates
        {}
        """
        scope = self._require_scope("sow")
        if not scope.run.mutable(col):
            return False
        node = scope.store(col)
        node[name] = reduce_fn(node[name] if name in node else init_fn(), value)
        return True

    def perturb(self, name: str, value: T, collection: str = "perturbations") -> T:
        """Add a zero variable to an intermediate value, so that the
        gradient with respect to that variable is the gradient with respect
        to the value (Flax's ``perturb``).

        Args:
          name: the variable's name within this module.
          value: the intermediate value (an array or a tree of them).
          collection: where the zeros live (``'perturbations'``), made by
            ``init``; pass them back to ``apply`` with the parameters.

        Returns:
          ``value`` plus the perturbation, when the collection is given;
          else ``value``.

        Raises:
          ValueError: the collection is given without this variable.

        >>> import typelattice as tl
        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Model(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         dense = nn.Dense(2, kernel_init=nn.initializers.ones)
        ...         h = self.perturb('h', dense(x))
        ...         return (h ** 2).sum()
        >>> x = tnp.ones((1, 3))
        >>> variables = Model().init(random.key(0), x)
        >>> def loss(perturbations):
        ...     return Model().apply(
        ...         {'params': variables['params'], 'perturbations': perturbations}, x)
        >>> tl.grad(loss)(variables['perturbations'])['h']  # d/dh of h**2: 2h
        Array([[6., 6.]], dtype=float32)
        """
        scope = self._require_scope("perturb")
        if scope.run.mutable(collection):
            node = scope.store(collection)
            if name not in node:
                node[name] = tree.tree_map(tnp.zeros_like, value)
        if collection in scope.run.variables:
            found = scope.lookup(collection)
            if found is None or name not in found:
                where = "/".join((collection, *scope.path, name))
                raise ValueError(
                    f"the perturbation {where!r} is missing, while the "
                    f"collection {collection!r} was given to apply. Pass the "
                    f"{collection!r} that init returned for this model, or "
                    "leave the collection out to run without perturbations"
                )
            leaves, treedef = tree.flatten(value)
            added = [
                a + b for a, b in zip(leaves, tree.leaves(found[name]), strict=True)
            ]
            value = tree.unflatten(treedef, added)
        return value

    def make_rng(self, name: str = _PARAMS) -> Array | random.KeyArray:
        """A fresh random key of the stream ``name`` (given to ``apply`` as
        ``rngs={name: key}``), different at each call and each module.

        Args:
          name: the stream (``'dropout'``).

        Returns:
          A key.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Noise(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         return x + random.normal(self.make_rng('noise'), x.shape)
        >>> y = Noise().apply({}, tnp.zeros(3), rngs={'noise': random.key(1)})
        >>> y.shape
        (3,)
        """
        scope = self._require_scope("make_rng")
        return scope.run.make_rng(name, scope.path)

    def is_initializing(self) -> bool:
        """Whether the module runs under ``init``.

        Returns:
          True under ``init``, False under ``apply``.

        >>> from typelattice import nn
        >>> nn.Dense(2).is_initializing()
        False
        """
        scope = self._bound_scope()
        return scope is not None and scope.run.initializing

    def clone(self, *, parent: Any = None, **updates: Any) -> Self:
        """A copy of the module with some fields changed, belonging to no
        run (Flax's ``clone``): unbound unless ``parent`` is a bound module,
        which then adopts it.

        Args:
          parent: None (a top-level module), or a bound module to adopt the
            copy.
          **updates: fields to change (``features=8``).

        Returns:
          The copy.

        >>> from typelattice import nn
        >>> nn.Dense(3).clone(features=8, name='wide')
        Dense(name='wide', features=8, use_bias=True, dtype=None, \
param_dtype=typelattice.numpy.float32, precision=None, kernel_init=..., \
bias_init=...)
        """
        fresh = _unbound_copy(self)
        return dataclasses.replace(fresh, parent=parent, **updates)

    @property
    def path(self) -> tuple[str, ...]:
        """The names from the top module down to this one (``()`` for the
        top module).

        Raises:
          ValueError: the module is not bound.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Outer(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         inner = nn.Dense(2)
        ...         return inner(x), inner.path
        >>> Outer().init_with_output(random.key(0), tnp.ones((1, 3)))[0][1]
        ('Dense_0',)
        """
        return self._require_scope("path").path

    # -- reading and writing variables -------------------------------------------

    @property
    def variables(self) -> dict[str, Any]:
        """This module's variables by collection, as the run holds them now
        (boxes kept): for a module bound with :meth:`bind`, or inside a
        method.

        Raises:
          ValueError: the module is not bound.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Dense(2)
        >>> bound = layer.bind(layer.init(random.key(0), tnp.ones((1, 3))))
        >>> sorted(bound.variables['params'])
        ['bias', 'kernel']
        """
        scope = self._require_scope("variables")
        found = {c: scope.lookup(c) for c in scope.run.variables}
        return {c: _copy_dicts(node) for c, node in found.items() if node}

    def get_variable(self, col: str, name: str, default: Any = None) -> Any:
        """The value of the variable ``name`` of ``col`` (a box as stored),
        or ``default`` when there is none.

        Args:
          col: the collection.
          name: the variable's name within this module.
          default: returned when the variable does not exist.

        Returns:
          The value, or ``default``.

        >>> from typelattice import nn
        >>> import typelattice.numpy as tnp
        >>> class Read(nn.Module):
        ...     @nn.compact
        ...     def __call__(self):
        ...         return self.get_variable('state', 'n', -1)
        >>> Read().apply({'state': {'n': 3}}), Read().apply({})
        (3, -1)
        """
        scope = self._require_scope("get_variable")
        found = scope.lookup(col)
        return found[name] if found is not None and name in found else default

    def put_variable(self, col: str, name: str, value: Any) -> None:
        """Set the variable ``name`` of ``col`` to ``value`` (making it when it
        does not exist); ``col`` must be mutable in this run.

        Args:
          col: the collection.
          name: the variable's name within this module.
          value: the new value.

        Raises:
          ValueError: ``col`` is not mutable.

        >>> from typelattice import nn
        >>> class Write(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         self.put_variable('state', 'last', x)
        ...         return x
        >>> Write().apply({}, 2.0, mutable=['state'])
        (2.0, {'state': {'last': 2.0}})
        """
        scope = self._require_scope("put_variable")
        if not scope.run.mutable(col):
            where = "/".join((col, *scope.path, name))
            raise ValueError(
                f"the variable {where!r} cannot be set: its collection is not "
                f"mutable in this run. Pass mutable=[{col!r}] to apply"
            )
        scope.store(col)[name] = value

    def has_rng(self, name: str) -> bool:
        """Whether this run has a random key for the stream ``name``.

        Args:
          name: the stream (``'dropout'``).

        Returns:
          True when the run was given a key for it.

        >>> from typelattice import nn, random
        >>> class Ask(nn.Module):
        ...     @nn.compact
        ...     def __call__(self):
        ...         return self.has_rng('dropout')
        >>> Ask().apply({}), Ask().apply({}, rngs={'dropout': random.key(0)})
        (False, True)
        """
        scope = self._require_scope("has_rng")
        return name in scope.run.rngs

    def is_mutable_collection(self, col: str) -> bool:
        """Whether this run may write the collection ``col``.

        Args:
          col: the collection.

        Returns:
          True when ``col`` is mutable.

        >>> from typelattice import nn
        >>> class Ask(nn.Module):
        ...     @nn.compact
        ...     def __call__(self):
        ...         return self.is_mutable_collection('cache')
        >>> Ask().apply({}), Ask().apply({}, mutable=['cache'])[0]
        (False, True)
        """
        scope = self._require_scope("is_mutable_collection")
        return scope.run.mutable(col)

    # -- running ----------------------------------------------------------------

    def _method(self, method: Callable[..., Any] | str | None) -> Callable[..., Any]:
        """The function ``method`` names, to be called with the module first:
        ``__call__`` by default, a method by name, a method of the class
        (``Model.encode``) or of an instance (``model.encode``), or any
        function taking the module first."""
        if method is None:
            return type(self).__call__
        if isinstance(method, str):
            fun = getattr(type(self), method, None)
            if not callable(fun):
                raise AttributeError(
                    f"{type(self).__name__} has no method {method!r} to run: "
                    "pass the name of one of its methods, or the method itself"
                )
            return cast(Callable[..., Any], fun)
        if inspect.ismethod(method) and isinstance(method.__self__, Module):
            # model.encode: the function, run on the bound copy.
            function: Callable[..., Any] = method.__func__
            return function
        if not callable(method):
            raise TypeError(
                f"method={method!r} is neither a method, its name nor a function "
                "of the module"
            )
        return method

    def _run(
        self,
        run: _Run,
        method: Callable[..., Any] | str | None,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        fun = self._method(method)
        # A bound copy: the user's module stays unbound and reusable.
        bound = dataclasses.replace(self)
        bound._bind(_Scope(run, ()))
        return fun(bound, *args, **kwargs)

    def init_with_output(
        self,
        rngs: Any,
        *args: Any,
        method: Callable[..., Any] | str | None = None,
        mutable: Any = _ALL_BUT_INTERMEDIATES,
        capture_intermediates: bool | Callable[[Module, str], bool] = False,
        **kwargs: Any,
    ) -> tuple[Any, dict[str, Any]]:
        """:meth:`init`, returning the output of the run too.

        Args:
          rngs, *args, method, mutable, capture_intermediates, **kwargs: as
            :meth:`init`.

        Returns:
          ``(output, variables)``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> y, v = nn.Dense(3).init_with_output(random.key(0), tnp.ones((1, 2)))
        >>> y.shape, sorted(v['params'])
        ((1, 3), ['bias', 'kernel'])
        """
        streams: dict[str, Any] = (
            dict(cast(Mapping[str, Any], rngs))
            if isinstance(rngs, Mapping)
            else {_PARAMS: rngs}
        )
        capture = _normalize_capture(capture_intermediates)
        may_write = _normalize_mutable(mutable)
        if capture is not None:
            may_write = _with_intermediates(may_write)
        run = _Run({}, may_write, streams, initializing=True, capture=capture)
        out = self._run(run, method, args, kwargs)
        return out, {c: tree for c, tree in run.variables.items() if tree}

    def init(
        self,
        rngs: Any,
        *args: Any,
        method: Callable[..., Any] | str | None = None,
        mutable: Any = _ALL_BUT_INTERMEDIATES,
        capture_intermediates: bool | Callable[[Module, str], bool] = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Create the module's variables by running it once on example inputs.

        Args:
          rngs: a key (for the ``'params'`` stream) or a dict of keys by
            stream (``{'params': k1, 'dropout': k2}``).
          *args: example inputs (their shapes and dtypes shape the
            parameters).
          method: the method to run (default ``__call__``): its name, the
            class's method (``Model.encode``), the instance's
            (``model.encode``), or a function taking the module first.
          mutable: the collections the run may create (default: all but
            ``'intermediates'``, as Flax's ``DenyList('intermediates')``).
          capture_intermediates: keep the output of every ``__call__`` in
            ``'intermediates'`` as ``'__call__'`` (True), or of the methods
            a function ``(module, method_name) -> bool`` picks (named
            after the method); the collection is then returned too.
          **kwargs: keyword arguments of the method.

        Returns:
          The variables as plain nested dicts by collection:
          ``{'params': {...}}``, plus ``'batch_stats'`` for BatchNorm.
          Values sown into ``'intermediates'`` are left out, as in Flax.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> v = nn.Dense(3).init(random.key(0), tnp.ones((1, 2)))
        >>> {k: w.shape for k, w in v['params'].items()}
        {'kernel': (2, 3), 'bias': (3,)}
        """
        return self.init_with_output(
            rngs,
            *args,
            method=method,
            mutable=mutable,
            capture_intermediates=capture_intermediates,
            **kwargs,
        )[1]

    def apply(
        self,
        variables: Mapping[str, Any],
        *args: Any,
        rngs: Mapping[str, Any] | None = None,
        method: Callable[..., Any] | str | None = None,
        mutable: Any = False,
        capture_intermediates: bool | Callable[[Module, str], bool] = False,
        **kwargs: Any,
    ) -> Any:
        """Run the module with the given variables.

        Args:
          variables: as ``init`` returned them (or updated).
          *args: the inputs.
          rngs: keys by stream, for layers that draw random numbers
            (``{'dropout': key}``).
          method: the method to run (default ``__call__``): its name, the
            class's method (``Model.encode``), the instance's
            (``model.encode``), or a function taking the module first
            (``lambda module, x: module.encode(x)``).
          mutable: the collections the run may change (``['batch_stats']``),
            True for all, a :class:`DenyList`; when given, the updated
            collections are returned too.
          capture_intermediates: as :meth:`init`: the output is then
            ``(output, updated_collections)`` with ``'intermediates'``.
          **kwargs: keyword arguments of the method (``deterministic=...``).

        Returns:
          The output, or ``(output, updated_collections)`` when ``mutable``
          names collections (or intermediates are captured).

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Dense(2, kernel_init=nn.initializers.ones)
        >>> layer.apply(layer.init(random.key(0), tnp.ones((1, 3))), tnp.ones((1, 3)))
        Array([[3., 3.]], dtype=float32)
        """
        is_mutable = _normalize_mutable(mutable)
        capture = _normalize_capture(capture_intermediates)
        if capture is not None:
            is_mutable = _with_intermediates(is_mutable)
        run = _Run(variables, is_mutable, rngs or {}, False, capture=capture)
        out = self._run(run, method, args, kwargs)
        if mutable is False and capture is None:
            return out
        return out, {c: t for c, t in run.variables.items() if is_mutable(c)}

    def bind(
        self,
        variables: Mapping[str, Any],
        *args: Any,
        rngs: Mapping[str, Any] | None = None,
        mutable: Any = False,
    ) -> Self:
        """A copy of the module bound to ``variables``, whose methods can be
        called directly (interactively, as Flax's ``bind``); the variables
        it changes are read back with ``.variables`` or :meth:`unbind`.

        Args:
          variables: as ``init`` returned them.
          *args: accepted as Flax's, unused.
          rngs: keys by stream.
          mutable: the collections its calls may change.

        Returns:
          The bound copy (the module itself stays unbound).

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Dense(2, kernel_init=nn.initializers.ones)
        >>> bound = layer.bind(layer.init(random.key(0), tnp.ones((1, 3))))
        >>> bound(tnp.ones((1, 3)))
        Array([[3., 3.]], dtype=float32)
        """
        del args
        run = _Run(variables, _normalize_mutable(mutable), rngs or {}, False)
        bound = dataclasses.replace(self)
        bound._bind(_Scope(run, ()))
        return bound

    def tabulate(
        self,
        rngs: Any,
        *args: Any,
        depth: int | None = None,
        show_repeated: bool = False,
        mutable: Any = _ALL_BUT_INTERMEDIATES,
        console_kwargs: Mapping[str, Any] | None = None,
        table_kwargs: Mapping[str, Any] | None = None,
        column_kwargs: Mapping[str, Any] | None = None,
        compute_flops: bool = False,
        compute_vjp_flops: bool = False,
        **kwargs: Any,
    ) -> str:
        """A summary of the model as a plain-text table, as Flax's
        ``tabulate``: one row per module (path, class, inputs, outputs, and
        per variable collection its variables with their count and bytes),
        a footer of totals per collection and the total of all. The model
        runs ``init`` abstractly (shapes only, no arithmetic).

        Args:
          rngs: as :meth:`init`.
          *args: the inputs, as for :meth:`init`.
          depth: the deepest module level shown; a module at that level
            counts its submodules' variables (None: every level).
          show_repeated: show every call of a module, not only its first.
          mutable: as :meth:`init`.
          console_kwargs, table_kwargs, column_kwargs: Flax's styling
            options of its ``rich`` rendering: accepted, unused (the table
            is plain text and never shortened to a width).
          compute_flops, compute_vjp_flops: not supported (False only).
          **kwargs: keyword arguments of :meth:`init` and of the method.

        Returns:
          The table.

        Raises:
          NotImplementedError: ``compute_flops`` or ``compute_vjp_flops``.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> class Mlp(nn.Module):
        ...     @nn.compact
        ...     def __call__(self, x):
        ...         h = nn.Dense(4)(x)
        ...         return nn.Dense(2)(nn.relu(h))
        >>> print(Mlp().tabulate(random.key(0), tnp.ones((16, 3))))
        <BLANKLINE>
                                        Mlp Summary
        ┏━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━┓
        ┃ path    ┃ module ┃ inputs        ┃ outputs       ┃ params               ┃
        ┡━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━┩
        │         │ Mlp    │ float32[16,3] │ float32[16,2] │                      │
        ├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤
        │ Dense_0 │ Dense  │ float32[16,3] │ float32[16,4] │ bias: float32[4]     │
        │         │        │               │               │ kernel: float32[3,4] │
        │         │        │               │               │                      │
        │         │        │               │               │ 16 (64 B)            │
        ├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤
        │ Dense_1 │ Dense  │ float32[16,4] │ float32[16,2] │ bias: float32[2]     │
        │         │        │               │               │ kernel: float32[4,2] │
        │         │        │               │               │                      │
        │         │        │               │               │ 10 (40 B)            │
        ├─────────┼────────┼───────────────┼───────────────┼──────────────────────┤
        │         │        │               │         Total │ 26 (104 B)           │
        └─────────┴────────┴───────────────┴───────────────┴──────────────────────┘
        <BLANKLINE>
                               Total Parameters: 26 (104 B)
        <BLANKLINE>
        <BLANKLINE>
        """
        # (rich's styling options have nothing to style in plain text)
        del console_kwargs, table_kwargs, column_kwargs
        if compute_flops or compute_vjp_flops:
            raise NotImplementedError(
                "tabulate(compute_flops=True) / compute_vjp_flops=True: "
                "typelattice has no compiler cost model to count FLOPs with; "
                "leave them False"
            )
        method = kwargs.pop("method", None)
        streams: dict[str, Any] = (
            dict(cast(Mapping[str, Any], rngs))
            if isinstance(rngs, Mapping)
            else {_PARAMS: rngs}
        )
        recorder = Recorder()
        # The arrays are traced (shapes only, no arithmetic); the other
        # leaves (flags such as train=False) stay Python values.
        leaves, treedef = tree.flatten((streams, args, kwargs))
        traced = [i for i, x in enumerate(leaves) if _is_traced_input(x)]

        def body(*arrays: Any) -> dict[str, Any]:
            full = list(leaves)
            for i, x in zip(traced, arrays, strict=True):
                full[i] = x
            keys, a, kw = tree.unflatten(treedef, full)
            run = _Run({}, _normalize_mutable(mutable), keys, initializing=True)
            run.observe = recorder
            self._run(run, method, a, kw)
            return {c: t for c, t in run.variables.items() if t}

        variables = eval_shape(body, *(leaves[i] for i in traced))
        return summary_table(
            type(self).__name__, recorder.calls, variables, depth, show_repeated
        )

    def unbind(self) -> tuple[Self, dict[str, Any]]:
        """The unbound module and its variables, from a module bound with
        :meth:`bind` (or a submodule of one).

        Returns:
          ``(module, variables)``.

        Raises:
          ValueError: the module is not bound.

        >>> from typelattice import nn, random
        >>> import typelattice.numpy as tnp
        >>> layer = nn.Dense(2)
        >>> module, v = layer.bind(layer.init(random.key(0), tnp.ones((1, 3)))).unbind()
        >>> module == layer, sorted(v['params'])
        (True, ['bias', 'kernel'])
        """
        variables = self.variables
        return _unbound_copy(self), variables


M = TypeVar("M", bound=Module)


def _map_modules(value: Any, fn: Callable[[Module], Module]) -> Any:
    """``value`` with ``fn`` applied to each module in it, through lists,
    tuples and dicts (a field's value that holds submodules)."""
    if isinstance(value, Module):
        return fn(value)
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        items = [_map_modules(v, fn) for v in seq]
        return items if isinstance(seq, list) else tuple(items)
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {k: _map_modules(v, fn) for k, v in mapping.items()}
    return value


def _unbound_copy(module: M) -> M:
    """A copy of ``module`` bound to no run, its submodule fields too."""
    changes = {
        f.name: _map_modules(getattr(module, f.name), _unbound_copy)
        for f in dataclasses.fields(module)
        if f.init and _has_module(getattr(module, f.name))
    }
    # (A module made while a @compact method runs would become its child:
    # the copy is made with no parent, to be bound afresh.)
    _STACK.append((module, False))
    try:
        return dataclasses.replace(module, **changes)
    finally:
        _STACK.pop()


def share_scope(module: Module, other: Module, /) -> None:
    """Make two bound modules keep their variables at one path, as Flax's
    ``nn.share_scope``: when ``other`` is a descendant of ``module`` it moves
    to ``module``'s path, else ``module`` moves to ``other``'s (with the
    submodules already bound under it). Call it in ``setup``.

    Args:
      module: a bound module (usually ``self``).
      other: another bound module (usually a submodule field).

    Raises:
      ValueError: either module is not bound (outside init, apply or bind).

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> class DenseLoRA(nn.Module):
    ...     base: nn.Dense
    ...     def setup(self):
    ...         nn.share_scope(self, self.base)
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         a = self.param('A', nn.initializers.zeros, (x.shape[-1], 1))
    ...         return self.base(x) + x @ a
    >>> class Model(nn.Module):
    ...     @nn.compact
    ...     def __call__(self, x):
    ...         return DenseLoRA(nn.Dense(2))(x)
    >>> v = Model().init(random.key(0), tnp.ones((1, 3)))
    >>> {k: sorted(p) for k, p in v['params'].items()}
    {'Dense_0': ['A', 'bias', 'kernel']}
    """
    mine, theirs = module._bound_scope(), other._bound_scope()
    if mine is None or theirs is None:
        raise ValueError(
            "nn.share_scope needs two modules running under init or apply: "
            "call it in setup, with bound modules (self and a submodule)"
        )
    if theirs.path[: len(mine.path)] == mine.path:
        moved, target = other, mine  # (other is module's descendant)
    else:
        moved, target = module, theirs
    old = moved._bound_scope()
    assert old is not None
    _move_scope(moved, old.path, target, set())


def _move_scope(
    module: Module, old: tuple[str, ...], target: _Scope, done: set[int]
) -> None:
    """Give ``module`` the path ``target.path`` in place of ``old``, and its
    bound submodules the paths below it."""
    if id(module) in done:
        return
    done.add(id(module))
    scope = module._bound_scope()
    if scope is None or scope.path[: len(old)] != old:
        return
    rest = scope.path[len(old) :]
    if rest:
        object.__setattr__(module, "_scope", _Scope(target.run, (*target.path, *rest)))
    else:
        object.__setattr__(
            module, "_scope", _Scope(target.run, target.path, target.counts)
        )

    def walk(value: Any) -> None:
        if isinstance(value, Module):
            _move_scope(value, old, target, done)
        elif isinstance(value, list | tuple):
            for v in cast(Sequence[Any], value):
                walk(v)
        elif isinstance(value, dict):
            for v in cast(Mapping[Any, Any], value).values():
                walk(v)

    for value in list(vars(module).values()):
        walk(value)


def apply(
    fn: Callable[..., Any],
    module: Module,
    mutable: Any = False,
    capture_intermediates: bool | Callable[[Module, str], bool] = False,
) -> Callable[..., Any]:
    """``fn(module, ...)`` as a function of the variables (Flax's functional
    ``nn.apply``): the result runs ``fn`` with ``module`` bound to them.

    Args:
      fn: a function taking the module first.
      module: the module.
      mutable: as :meth:`Module.apply`.
      capture_intermediates: as :meth:`Module.apply`.

    Returns:
      ``f(variables, *args, rngs=None, **kwargs)``.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> layer = nn.Dense(2, kernel_init=nn.initializers.ones)
    >>> v = layer.init(random.key(0), tnp.ones((1, 3)))
    >>> nn.apply(lambda m, x: m(x) * 2, layer)(v, tnp.ones((1, 3)))
    Array([[6., 6.]], dtype=float32)
    """

    def applied(
        variables: Mapping[str, Any],
        *args: Any,
        rngs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        return module.apply(
            variables,
            *args,
            rngs=rngs,
            method=fn,
            mutable=mutable,
            capture_intermediates=capture_intermediates,
            **kwargs,
        )

    return applied


def init_with_output(
    fn: Callable[..., Any],
    module: Module,
    mutable: Any = _ALL_BUT_INTERMEDIATES,
    capture_intermediates: bool | Callable[[Module, str], bool] = False,
) -> Callable[..., tuple[Any, dict[str, Any]]]:
    """``fn(module, ...)`` as a function of random keys returning its output
    and the variables it made (Flax's functional ``nn.init_with_output``).

    Args:
      fn: a function taking the module first.
      module: the module.
      mutable: as :meth:`Module.init`.
      capture_intermediates: as :meth:`Module.init`.

    Returns:
      ``f(rngs, *args, **kwargs) -> (output, variables)``.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> y, v = nn.init_with_output(lambda m, x: m(x), nn.Dense(2))(
    ...     random.key(0), tnp.ones((1, 3)))
    >>> y.shape, sorted(v['params'])
    ((1, 2), ['bias', 'kernel'])
    """

    def initialised(rngs: Any, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return module.init_with_output(
            rngs,
            *args,
            method=fn,
            mutable=mutable,
            capture_intermediates=capture_intermediates,
            **kwargs,
        )

    return initialised


def init(
    fn: Callable[..., Any],
    module: Module,
    mutable: Any = _ALL_BUT_INTERMEDIATES,
    capture_intermediates: bool | Callable[[Module, str], bool] = False,
) -> Callable[..., dict[str, Any]]:
    """``fn(module, ...)`` as a function of random keys returning the
    variables it made (Flax's functional ``nn.init``).

    Args:
      fn: a function taking the module first.
      module: the module.
      mutable: as :meth:`Module.init`.
      capture_intermediates: as :meth:`Module.init`.

    Returns:
      ``f(rngs, *args, **kwargs) -> variables``.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> v = nn.init(lambda m, x: m(x), nn.Dense(2))(random.key(0), tnp.ones((1, 3)))
    >>> v['params']['kernel'].shape
    (3, 2)
    """
    with_output = init_with_output(fn, module, mutable, capture_intermediates)

    def initialised(rngs: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return with_output(rngs, *args, **kwargs)[1]

    return initialised


def _setattr(self: Module, attr: str, value: Any) -> None:
    """Modules are frozen, except that setup() may assign (submodules are
    bound as children named after the attribute)."""
    if not self._in_setup:
        raise dataclasses.FrozenInstanceError(
            f"cannot assign to field {attr!r}: a {type(self).__name__} is "
            "frozen. Make a changed copy with dataclasses.replace(layer, "
            f"{attr}=...), or assign submodules inside setup()"
        )
    scope = self._bound_scope()
    assert scope is not None
    object.__setattr__(self, attr, _bind_tree(value, scope, attr))


# The assignment rule above in place of the frozen dataclass's.
Module.__setattr__ = _setattr  # type: ignore[assignment]


# The bound modules whose methods (or setup) are running, innermost last,
# with whether the method is @compact: a module made while a compact method
# runs is that module's child.
_STACK: list[tuple[Module, bool]] = []


def _current_parent() -> Module | None:
    """The module whose @compact method is running, if any."""
    if not _STACK:
        return None
    module, is_compact = _STACK[-1]
    return module if is_compact else None


def _has_module(value: Any) -> bool:
    if isinstance(value, Module):
        return True
    if isinstance(value, list | tuple):
        return any(_has_module(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return any(_has_module(v) for v in value.values())  # pyright: ignore[reportUnknownVariableType]
    return False


def _bind_tree(
    value: Any, scope: _Scope, name: str, adopted: dict[int, Module] | None = None
) -> Any:
    """Bind the modules in ``value`` (a module, or a list/tuple/dict of them)
    as children of ``scope`` named after ``name``: ``dense``, ``layers_0``,
    ``heads_q``. ``adopted``: the children already made from a module, by
    its id, so that a module given twice is bound once."""
    if adopted is None:
        adopted = {}
    if isinstance(value, Module):
        if value._bound_scope() is not None:
            return value  # already a child elsewhere: shared
        if id(value) in adopted:
            return adopted[id(value)]
        child = dataclasses.replace(value)
        adopted[id(value)] = child
        child._bind(_Scope(scope.run, (*scope.path, value.name or name)))
        return child
    if isinstance(value, list | tuple):
        seq: list[Any] | tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        items = [
            _bind_tree(v, scope, f"{name}_{i}", adopted) for i, v in enumerate(seq)
        ]
        return items if isinstance(seq, list) else tuple(items)
    if isinstance(value, dict):
        return {
            k: _bind_tree(v, scope, f"{name}_{k}", adopted)
            for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
        }
    return value


# -- checking a given parameter ------------------------------------------------------

# What init_fn(key, *init_args) gives, abstractly, by (init_fn, init_args,
# configuration), for the initialisers whose result follows from those alone
# (initializers.shaped_by_arguments): eval_shape traces the initialiser,
# which takes milliseconds where apply takes microseconds. The oldest
# entries go first beyond _REMEMBERED.
_EXPECTED: collections.OrderedDict[Any, Any] = collections.OrderedDict()
_REMEMBERED = 512


def _expected(init_fn: Callable[..., Any], init_args: tuple[Any, ...]) -> Any:
    """What ``init_fn(key, *init_args)`` gives, shapes and dtypes only
    (ShapeDtypeStruct leaves); None when it needs the key's value."""
    memo: Any = (init_fn, init_args, _config.current())
    try:
        return _EXPECTED[memo]
    except KeyError:
        pass
    except TypeError:  # unhashable arguments
        memo = None

    def init(key: Array) -> Any:
        return init_fn(key, *init_args)

    init.__name__ = getattr(init_fn, "__name__", "init")
    try:
        out = eval_shape(init, _key())
    except ConcretizationTypeError:
        return None  # (the initialiser reads the key's value)
    if memo is not None and shaped_by_arguments(init_fn):
        _EXPECTED[memo] = out
        if len(_EXPECTED) > _REMEMBERED:
            _EXPECTED.popitem(last=False)
    return out


@functools.cache
def _key() -> random.KeyArray:
    """The key the initialisers are evaluated with (abstractly: only its
    shape and dtype matter)."""
    return random.key(0)


def _given(
    value: Any,
    init_fn: Callable[..., Any],
    init_args: tuple[Any, ...],
    path: tuple[str, ...],
    layer: str,
) -> Any:
    """The parameter ``value`` given to apply at ``path``, checked against
    what ``init_fn`` makes: a ScopeParamShapeError for another shape; NumPy
    values, nested lists and Python numbers as Arrays (checked)."""
    expected = _expected(init_fn, init_args)
    boxed = box_of(expected)
    if boxed is not None:
        expected = boxed.unbox()
    if not _is_array_like(expected):
        return value  # (a tree of arrays, or unknown: taken as given)
    where = f"the parameter {'/'.join(path)!r}"
    if type(value) is not ArrayImpl and not isinstance(value, Array):
        numpy_value = from_python_or_numpy(value, where)
        if isinstance(value, np.ndarray | np.generic) and numpy_value is not None:
            value = numpy_value  # its own dtype, 64-bit values narrowed (checked)
        else:  # lists, tuples, Python numbers: the parameter's dtype
            _no_traced_numbers(value, where)
            value = convert_to(value, expected.dtype, where, use="param_dtype")
    shape, want = tuple(value.shape), tuple(expected.shape)
    if shape != want:  # (Flax compares shapes only: a parameter cast to
        # bfloat16 for mixed precision is given on purpose)
        raise ScopeParamShapeError(
            f"{where} has shape {shape}, but {layer} makes it {want} here, from "
            "its settings and its input's shape. Fix: pass the variables that "
            "init returned for this model and input shape (model.init(key, x)), "
            "or give the layer the settings the parameters were made with."
        )
    return value


def _no_traced_numbers(value: Any, where: str) -> None:
    """Refuse a list of traced numbers: jit and grad see each number of a
    list as an argument of its own, which no array is made of."""
    if any(isinstance(x, Tracer) for x in tree.leaves(value)):
        raise TypeError(
            f"{where} is a {type(value).__name__} of traced numbers: under jit "
            "and grad each number of a list is an argument of its own. Fix: "
            "convert the parameters to arrays once, before jit or grad (with "
            "typelattice.numpy.asarray on each list)."
        )


def _is_traced_input(x: Any) -> bool:
    """An array (traced by tabulate's abstract run), not a Python number."""
    return _is_array_like(x) and not isinstance(x, bool | int | float | complex)


def _is_array_like(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def merge_param(name: str, attribute: T | None, argument: T | None) -> T:
    """A setting given either as the module's attribute or as the call's
    argument (``deterministic``, ``use_running_average``), as Flax's
    ``nn.merge_param``: exactly one of them.

    Args:
      name: the setting's name (for the error).
      attribute: the module's value, None when not given.
      argument: the call's value, None when not given.

    Returns:
      The one given.

    Raises:
      ValueError: both are given, or neither.

    >>> from typelattice import nn
    >>> nn.merge_param('deterministic', None, True)
    True
    """
    if attribute is None and argument is None:
        raise ValueError(
            f"{name} is needed: give it to the module (Layer(..., {name}=True)) "
            f"or to the call (layer(x, {name}=True))"
        )
    if attribute is not None and argument is not None:
        raise ValueError(
            f"{name} was given both to the module ({attribute}) and to the "
            f"call ({argument}); give it in one place"
        )
    return attribute if attribute is not None else argument  # type: ignore[return-value]


def field(module: Module, name: str) -> Any:
    """The field ``name`` of ``module``: for code shared by layer classes
    that each declare it (``dtype``, ``param_dtype``...)."""
    return getattr(module, name)
