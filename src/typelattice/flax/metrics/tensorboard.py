"""``typelattice.flax.metrics.tensorboard``: TensorBoard summaries, as Flax's
``flax.metrics.tensorboard``.

:class:`SummaryWriter` writes the event files that TensorBoard reads, in the
format TensorFlow 2's ``tf.summary`` writes, without TensorFlow: it uses the
``tensorboard`` package's own event-file writer and protocol buffers
(``pip install tensorboard``). Importing this module does not import
``tensorboard``; making a :class:`SummaryWriter` does, and raises
:class:`ImportError` when it is missing.

Values may be typelattice Arrays, NumPy arrays or Python numbers; they are
read with :func:`numpy.asarray`. ``hparams`` writes the hyperparameters
plugin's session-start record (the plugin's own protocol buffers ship with
``tensorboard``), so the HParams dashboard shows them as Flax's does.

>>> from typelattice.flax.metrics import tensorboard
>>> sorted(n for n in vars(tensorboard.SummaryWriter) if not n.startswith('_'))
['audio', 'close', 'flush', 'histogram', 'hparams', 'image', 'scalar', 'text', 'write']
"""

import importlib as _importlib
import io as _io
import os as _os
import struct as _struct
import time as _time
import wave as _wave
import zlib as _zlib
from collections.abc import Mapping as _Mapping
from types import ModuleType as _ModuleType
from typing import Any as _Any

import numpy as _np
import numpy.typing as _npt

__all__ = ["SummaryWriter"]

# The kinds of hyperparameter value the HParams plugin stores as they are;
# any other value is stored as its str() (as Flax does).
_HPARAM_TYPES: tuple[type, ...] = (
    bool,
    int,
    float,
    str,
    _np.bool_,
    _np.integer,
    _np.floating,
    _np.character,
)


def _flatten_dict(hparams: _Mapping[str, _Any], prefix: str = "") -> dict[str, _Any]:
    """Nested mappings flattened to dotted keys (``{'a': {'b': 1}}`` to
    ``{'a.b': 1}``), values the plugin cannot store turned into strings."""
    flat: dict[str, _Any] = {}
    for key, value in hparams.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, _Mapping):
            flat.update(_flatten_dict(value, name))  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(value, _HPARAM_TYPES):
            flat[name] = value
        else:
            flat[name] = str(value)
    return flat


def _load(module: str) -> _ModuleType:
    try:
        return _importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            "typelattice.flax.metrics.tensorboard.SummaryWriter writes event "
            "files with the tensorboard package, which is not installed: "
            "pip install tensorboard"
        ) from e


def _step(step: _Any) -> int:
    """The step as a Python int; a fractional or non-scalar step is an error
    (it would be truncated or lost)."""
    arr = _np.asarray(step)
    if arr.shape != () or not (
        _np.issubdtype(arr.dtype, _np.integer) or arr.dtype == _np.bool_
    ):
        raise TypeError(
            f"step={step!r} is not an integer scalar; pass the training step as an int"
        )
    return int(arr)


def _png(image: _npt.NDArray[_np.uint8]) -> bytes:
    """``image`` ([H, W, C], C 3 or 4) encoded as a PNG file."""
    height, width, channels = image.shape
    color = {3: 2, 4: 6}[channels]  # PNG colour types: RGB, RGBA
    rows = _np.concatenate(
        [_np.zeros((height, 1), _np.uint8), image.reshape(height, -1)], axis=1
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = _zlib.crc32(kind + data) & 0xFFFFFFFF
        return _struct.pack(">I", len(data)) + kind + data + _struct.pack(">I", crc)

    header = _struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", _zlib.compress(rows.tobytes()))
        + chunk(b"IEND", b"")
    )


def _wav(clip: _npt.NDArray[_np.float32], sample_rate: int) -> bytes:
    """``clip`` ([frames, channels], values in [-1, 1]) as a 16-bit WAV file.

    Samples scale by 2**15 and round, clamped to int16, as TensorFlow's
    ``encode_wav``."""
    pcm = _np.clip(_np.round(clip * 32768.0), -32768, 32767).astype("<i2")
    buffer = _io.BytesIO()
    with _wave.open(buffer, "wb") as out:
        out.setnchannels(clip.shape[1])
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


class SummaryWriter:
    """Writes summaries for TensorBoard into event files under ``log_dir``.

    Args:
      log_dir: the directory of the event files (made, with its parents, if
        missing).
      auto_flush: write each summary to disk at once (else at :meth:`flush`,
        :meth:`close` or every two minutes).

    Raises:
      ImportError: if the ``tensorboard`` package is not installed.

    >>> import tempfile
    >>> from typelattice.flax.metrics import tensorboard
    >>> writer = tensorboard.SummaryWriter(tempfile.mkdtemp())
    >>> writer.scalar('loss', 0.25, step=1)
    >>> writer.close()
    """

    def __init__(self, log_dir: str | _os.PathLike[str], auto_flush: bool = True):
        writer_module = _load("tensorboard.summary.writer.event_file_writer")
        self._event_pb2 = _load("tensorboard.compat.proto.event_pb2")
        self._summary_pb2 = _load("tensorboard.compat.proto.summary_pb2")
        self._tensor_util = _load("tensorboard.util.tensor_util")
        log_dir = _os.fspath(log_dir)
        _os.makedirs(log_dir, exist_ok=True)
        self._writer: _Any = writer_module.EventFileWriter(log_dir)
        self._auto_flush = auto_flush
        self._closed = False

    # -- writing -------------------------------------------------------------

    def _add(self, summary: _Any, step: _Any) -> None:
        if self._closed:
            raise ValueError(
                "this SummaryWriter is closed; make a new SummaryWriter(log_dir)"
            )
        event = self._event_pb2.Event(
            wall_time=_time.time(), step=_step(step), summary=summary
        )
        self._writer.add_event(event)
        if self._auto_flush:
            self._writer.flush()

    def _tensor_summary(
        self, tag: str, tensor: _Any, metadata: _Any, step: _Any
    ) -> None:
        summary = self._summary_pb2.Summary()
        summary.value.add(
            tag=tag,
            metadata=metadata,
            tensor=self._tensor_util.make_tensor_proto(tensor),
        )
        self._add(summary, step)

    def close(self) -> None:
        """Write what is pending and close the event file; later writes
        raise :class:`ValueError`. Closing twice does nothing.
        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.close()
        >>> writer.scalar('loss', 0.5, step=1)
        Traceback (most recent call last):
        ValueError: this SummaryWriter is closed; make a new SummaryWriter(log_dir)
        """
        if not self._closed:
            self._writer.close()
            self._closed = True

    def flush(self) -> None:
        """Write pending summaries to disk.
        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp(), auto_flush=False)
        >>> writer.scalar('loss', 0.5, step=1)
        >>> writer.flush()
        >>> writer.close()
        """
        if not self._closed:
            self._writer.flush()

    def scalar(self, tag: str, value: _Any, step: _Any) -> None:
        """Save a scalar (stored as float32, as ``tf.summary.scalar``).

        Args:
          tag: the summary's name.
          value: a number, or an array of one element.
          step: the training step (an int).

        Raises:
          ValueError: if the writer is closed.
          TypeError: if ``step`` is not an integer.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> import typelattice.numpy as tnp
        >>> writer.scalar('loss', tnp.asarray(0.25), step=10)
        >>> writer.close()
        """
        value = float(_np.asarray(value))
        summary = _load("tensorboard.plugins.scalar.summary_v2").scalar_pb(tag, value)
        self._add(summary, step)

    def text(self, tag: str, textdata: str | bytes, step: _Any) -> None:
        """Save a text summary (TensorBoard renders it as Markdown).

        Args:
          tag: the summary's name.
          textdata: the text.
          step: the training step (an int).

        Raises:
          ValueError: if ``textdata`` is not ``str`` or ``bytes``.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.text('notes', '**lr** = 0.1', step=0)
        >>> writer.text('notes', 0.1, step=0)
        Traceback (most recent call last):
        ValueError: `textdata` should be str or bytes, not float; pass str(textdata)
        >>> writer.close()
        """
        if not isinstance(textdata, (str, bytes)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"`textdata` should be str or bytes, not "
                f"{type(textdata).__name__}; pass str(textdata)"
            )
        summary = _load("tensorboard.plugins.text.summary_v2").text_pb(tag, textdata)
        self._add(summary, step)

    def histogram(
        self, tag: str, values: _Any, step: _Any, bins: int | None = None
    ) -> None:
        """Save a histogram of ``values`` (flattened), with ``bins`` buckets
        (30 when None, as ``tf.summary.histogram``).

        Args:
          tag: the summary's name.
          values: an array of numbers.
          step: the training step (an int).
          bins: the number of buckets.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> import numpy as np
        >>> writer.histogram('weights', np.linspace(-1.0, 1.0, 100), step=3, bins=10)
        >>> writer.close()
        """
        data = _np.asarray(values).reshape(-1)
        module = _load("tensorboard.plugins.histogram.summary_v2")
        self._add(module.histogram_pb(tag, data, buckets=bins), step)

    def image(self, tag: str, image: _Any, step: _Any, max_outputs: int = 3) -> None:
        """Save images as PNG, as Flax's ``SummaryWriter.image``.

        Args:
          tag: the summary's name.
          image: [H, W], [H, W, 1], [H, W, 3], [K, H, W], [K, H, W, 1] or
            [K, H, W, 3] (also 4 channels: RGBA); uint8, or floats in [0, 1]
            (scaled by 255.5 and clipped, as TensorFlow converts them).
          step: the training step (an int).
          max_outputs: at most this many of the K images are written.

        Raises:
          TypeError: if the images are neither uint8 nor floating.
          ValueError: if their shape is none of the above.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> import numpy as np
        >>> writer.image('samples', np.zeros((2, 8, 8, 3)), step=1)
        >>> writer.close()
        """
        data = _np.asarray(image)
        # As Flax: [H, W] is one grey image; [.., .., 1 or 3] is one image
        # with channels, another rank-3 array is K grey images.
        if data.ndim == 2:
            data = data[_np.newaxis, :, :, _np.newaxis]
        elif data.ndim == 3:
            if data.shape[-1] in (1, 3):
                data = data[_np.newaxis]
            else:
                data = data[..., _np.newaxis]
        if data.ndim != 4 or data.shape[-1] not in (1, 3, 4):
            raise ValueError(
                f"image of shape {_np.asarray(image).shape} is not [H, W], "
                "[H, W, C] or [K, H, W, C] with C in 1, 3, 4"
            )
        if data.shape[-1] == 1:
            data = _np.repeat(data, 3, axis=-1)
        if _np.issubdtype(data.dtype, _np.floating):
            pixels = _np.clip(data.astype(_np.float64) * 255.5, 0, 255)
            data = _np.trunc(pixels).astype(_np.uint8)
        elif data.dtype != _np.uint8:
            raise TypeError(
                f"image of dtype {data.dtype} is neither uint8 nor floating; "
                "pass image.astype('uint8') (0..255) or floats in [0, 1]"
            )
        pngs = [_png(frame) for frame in data[:max_outputs]]
        height, width = data.shape[1:3]
        tensor = _np.array([str(width).encode(), str(height).encode(), *pngs], object)
        metadata = _load("tensorboard.plugins.image.metadata").create_summary_metadata(
            display_name=None, description=None
        )
        self._tensor_summary(tag, tensor, metadata, step)

    def audio(
        self,
        tag: str,
        audiodata: _Any,
        step: _Any,
        sample_rate: int = 44100,
        max_outputs: int = 3,
    ) -> None:
        """Save audio clips as 16-bit WAV, as Flax's ``SummaryWriter.audio``.

        Args:
          tag: the summary's name.
          audiodata: [K, frames, channels] samples, clipped to [-1, 1].
          step: the training step (an int).
          sample_rate: samples per second.
          max_outputs: at most this many of the K clips are written.

        Raises:
          ValueError: if ``audiodata`` is not of rank 3.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> import numpy as np
        >>> clip = np.sin(np.linspace(0.0, 100.0, 8000))[None, :, None]
        >>> writer.audio('tone', clip, step=1, sample_rate=8000)
        >>> writer.close()
        """
        data = _np.clip(_np.asarray(audiodata, _np.float32), -1, 1)
        if data.ndim != 3:
            raise ValueError(
                f"audiodata of shape {data.shape} is not [K, frames, channels]; "
                "for one mono clip pass clip[None, :, None]"
            )
        clips = [[_wav(clip, sample_rate), b""] for clip in data[:max_outputs]]
        tensor = _np.array(clips, object).reshape(len(clips), 2)
        module = _load("tensorboard.plugins.audio.metadata")
        metadata = module.create_summary_metadata(
            display_name=None,
            description=None,
            encoding=module.Encoding.Value("WAV"),
        )
        self._tensor_summary(tag, tensor, metadata, step)

    def write(self, tag: str, tensor: _Any, step: _Any, metadata: _Any = None) -> None:
        """Save an arbitrary tensor summary (for custom plugins).

        Args:
          tag: the summary's name.
          tensor: an array.
          step: the training step (an int).
          metadata: a ``SummaryMetadata`` proto, or its serialized bytes.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.write('counts', [1, 2, 3], step=1)
        >>> writer.close()
        """
        if isinstance(metadata, bytes):
            metadata = self._summary_pb2.SummaryMetadata.FromString(metadata)
        elif metadata is None:
            metadata = self._summary_pb2.SummaryMetadata()
        self._tensor_summary(tag, _np.asarray(tensor), metadata, step)

    def hparams(self, hparams: _Mapping[str, _Any]) -> None:
        """Save hyperparameters for TensorBoard's HParams dashboard (nested
        mappings flattened to dotted names, other values stored as strings).

        Args:
          hparams: a mapping from hyperparameter name to value.

        >>> import tempfile
        >>> from typelattice.flax.metrics.tensorboard import SummaryWriter
        >>> writer = SummaryWriter(tempfile.mkdtemp())
        >>> writer.hparams({'learning_rate': 0.1, 'model': {'depth': 4}})
        >>> writer.close()
        """
        module = _load("tensorboard.plugins.hparams.summary_v2")
        self._add(module.hparams_pb(_flatten_dict(hparams)), 0)
