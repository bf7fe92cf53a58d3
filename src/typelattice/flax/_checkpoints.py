"""Checkpoints in local files, one msgpack file per step, as Flax's
``flax.training.checkpoints`` writes them (the home of
``typelattice.flax.training.checkpoints``).

A checkpoint is ``{ckpt_dir}/{prefix}{step}``, the bytes of
``serialization.to_bytes(target)``: Flax's ``restore_checkpoint`` reads
ours and ours reads Flax's (those it writes without Orbax). A file is
written beside its final name and renamed onto it, so that an interrupted
save leaves the earlier checkpoints whole. Restoring into a target checks
the saved structure, shapes and dtypes (``serialization.from_state_dict``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from typing import Any

from typelattice.flax import _serialization as serialization

__all__ = [
    "InvalidCheckpointError",
    "available_steps",
    "latest_checkpoint",
    "natural_sort",
    "restore_checkpoint",
    "save_checkpoint",
]

# A number in a file name (a sign, digits, a fraction, an exponent), as
# Flax's natural sort reads it.
_NUMBER = re.compile(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")


class InvalidCheckpointError(ValueError):
    """A checkpoint would be saved at a step that is not the newest in its
    directory (Flax's ``flax.errors.InvalidCheckpointError``).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = save_checkpoint(d, {'w': 1}, step=5)
    ...     save_checkpoint(d, {'w': 2}, step=4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    typelattice.flax._checkpoints.InvalidCheckpointError: a checkpoint of step 4 ...
    """


def natural_sort(file_list: Iterable[str]) -> list[str]:
    """File names sorted with their numbers compared as numbers
    (``ckpt_2`` before ``ckpt_10``, ``ckpt_-0.5`` before ``ckpt_0.1``).

    Args:
      file_list: the names.

    Returns:
      The sorted list.

    >>> natural_sort(['c_10', 'c_2', 'c_1'])
    ['c_1', 'c_2', 'c_10']
    """

    def key(name: str) -> list[tuple[int, float, str]]:
        # (numbers and text in separate slots: they never compare)
        return [
            (0, float(part), "") if _NUMBER.fullmatch(part) else (1, 0.0, part)
            for part in _NUMBER.split(name)
        ]

    return sorted(file_list, key=key)


def _checkpoints(ckpt_dir: str, prefix: str) -> list[str]:
    """The checkpoint files of ``ckpt_dir``, oldest first (our temporary
    files, named ``{prefix}tmp...``, left out)."""
    try:
        names = os.listdir(ckpt_dir)
    except FileNotFoundError:
        return []
    found = [
        os.path.join(ckpt_dir, n)
        for n in names
        if n.startswith(prefix) and not n.startswith(f"{prefix}tmp")
    ]
    return natural_sort(found)


def latest_checkpoint(
    ckpt_dir: str | os.PathLike[str], prefix: str = "checkpoint_"
) -> str | None:
    """The path of the newest checkpoint in ``ckpt_dir``.

    Args:
      ckpt_dir: the directory.
      prefix: the checkpoints' file name prefix.

    Returns:
      The path, or None if there is none (or no directory).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     print(latest_checkpoint(d))
    None
    """
    found = _checkpoints(os.fspath(ckpt_dir), prefix)
    return found[-1] if found else None


def available_steps(
    ckpt_dir: str | os.PathLike[str],
    prefix: str = "checkpoint_",
    step_type: type[int] | type[float] = int,
) -> list[int | float]:
    """The steps of the checkpoints in ``ckpt_dir``, oldest first.

    Args:
      ckpt_dir: the directory.
      prefix: the checkpoints' file name prefix.
      step_type: ``int`` or ``float``.

    Returns:
      The steps.

    Raises:
      ValueError: a file named with the prefix has no step of that type.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for step in (1, 3, 20):
    ...         _ = save_checkpoint(d, {'w': step}, step=step, keep=3)
    ...     print(available_steps(d))  # (in numeric order: 3 before 20)
    [1, 3, 20]
    """
    steps: list[int | float] = []
    for path in _checkpoints(os.fspath(ckpt_dir), prefix):
        steps.append(step_type(os.path.basename(path)[len(prefix) :]))
    return steps


def _remove_old(
    path: str,
    found: list[str],
    keep: int,
    overwrite: bool,
    keep_every_n_steps: int | None,
    prefix: str,
) -> None:
    """Remove the checkpoints newer than ``path`` (with ``overwrite``) and
    all but the newest ``keep`` (and one each ``keep_every_n_steps``)."""
    if overwrite and path in found:
        at = found.index(path) + 1
        for newer in found[at:]:
            os.remove(newer)
        found = found[:at]
    last_kept = -float("inf")
    for old in found[: max(0, len(found) - keep)]:
        if keep_every_n_steps:
            step = _step_of(old, prefix)
            if step is not None and step - last_kept >= keep_every_n_steps:
                last_kept = step
                continue
        os.remove(old)


def _step_of(path: str, prefix: str) -> float | None:
    rest = os.path.basename(path)[len(prefix) :]
    return float(rest) if _NUMBER.fullmatch(rest) else None


def save_checkpoint(
    ckpt_dir: str | os.PathLike[str],
    target: Any,
    step: int | float,
    prefix: str = "checkpoint_",
    keep: int = 1,
    overwrite: bool = False,
    keep_every_n_steps: int | None = None,
) -> str:
    """Save ``target`` as the checkpoint of ``step`` in ``ckpt_dir``.

    The file ``{ckpt_dir}/{prefix}{step}`` holds
    ``serialization.to_bytes(target)``; it is written under a temporary
    name and renamed, then the older checkpoints beyond ``keep`` are
    removed.

    Args:
      ckpt_dir: the directory (made if missing).
      target: the tree to save (a TrainState, a dict of parameters).
      step: the step, in the file name.
      prefix: the file name prefix.
      keep: how many checkpoints to keep (the newest).
      overwrite: replace a checkpoint of this step, and remove those of
        later steps; otherwise saving at a step that is not the newest
        raises.
      keep_every_n_steps: also keep one checkpoint each this many steps.

    Returns:
      The path of the checkpoint.

    Raises:
      InvalidCheckpointError: a checkpoint of this or a later step exists
        and ``overwrite`` is False.
      ValueError: ``keep`` is less than 1.

    >>> import tempfile
    >>> import typelattice.numpy as tnp
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = save_checkpoint(d, {'w': tnp.arange(3)}, step=10)
    ...     restored = restore_checkpoint(d, target={'w': tnp.zeros(3, 'int32')})
    >>> os.path.basename(path), restored
    ('checkpoint_10', {'w': Array([0, 1, 2], dtype=int32)})
    """
    if keep < 1:
        raise ValueError(f"save_checkpoint: keep={keep}; keep at least 1 checkpoint")
    ckpt_dir = os.path.normpath(os.fspath(ckpt_dir))
    path = os.path.join(ckpt_dir, f"{prefix}{step}")
    found = _checkpoints(ckpt_dir, prefix)
    if not overwrite:
        newest = natural_sort([*found, path])[-1] if path not in found else None
        if newest != path:
            raise InvalidCheckpointError(
                f"a checkpoint of step {step} or a later one is in {ckpt_dir} "
                f"(newest: {found[-1]}); pass overwrite=True to replace it and "
                "remove the later ones, or save at a later step"
            )
    data = serialization.to_bytes(target)
    os.makedirs(ckpt_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=ckpt_dir, prefix=f"{prefix}tmp.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    found = _checkpoints(ckpt_dir, prefix)
    _remove_old(path, found, keep, overwrite, keep_every_n_steps, prefix)
    return path


def restore_checkpoint(
    ckpt_dir: str | os.PathLike[str],
    target: Any,
    step: int | float | None = None,
    prefix: str = "checkpoint_",
    parallel: bool = True,
) -> Any:
    """Restore a checkpoint into ``target``, as Flax's
    ``restore_checkpoint``: the newest in ``ckpt_dir``, or that of ``step``,
    or the file ``ckpt_dir`` itself.

    Args:
      ckpt_dir: a checkpoint file, or the directory of checkpoints.
      target: a value of the saved structure (its arrays give the shapes
        and dtypes); None returns the saved state dict.
      step: the step to restore (``ckpt_dir`` then is the directory); None
        for the newest.
      prefix: the checkpoints' file name prefix.
      parallel: taken for Flax's signature (Flax reads large files in
        parallel chunks; a local file is read here at once).

    Returns:
      The restored value; ``target`` itself when ``step`` is None and there
      is no checkpoint (or no directory), as in Flax.

    Raises:
      ValueError: no checkpoint of ``step``, or the saved state does not
        fit ``target`` (the key path and the fix are named).

    >>> import tempfile
    >>> import typelattice.numpy as tnp
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = save_checkpoint(d, {'w': tnp.ones(2)}, step=1)
    ...     print(restore_checkpoint(d, target=None))
    {'w': Array([1., 1.], dtype=float32)}
    """
    del parallel  # (see Args)
    ckpt_dir = os.path.normpath(os.fspath(ckpt_dir))
    if step is not None:
        path = os.path.join(ckpt_dir, f"{prefix}{step}")
        if not os.path.exists(path):
            steps = available_steps(ckpt_dir, prefix, float)
            raise ValueError(
                f"no checkpoint of step {step} in {ckpt_dir} ({path}); the "
                f"steps saved there: {steps or 'none'}"
            )
    elif not os.path.exists(ckpt_dir):
        return target
    elif os.path.isdir(ckpt_dir):
        latest = latest_checkpoint(ckpt_dir, prefix)
        if latest is None:
            return target
        path = latest
    else:
        path = ckpt_dir
    with open(path, "rb") as f:
        data = f.read()
    if target is None:
        return serialization.msgpack_restore(data)
    return serialization.from_bytes(target, data)
