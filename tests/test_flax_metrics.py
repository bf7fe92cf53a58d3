"""typelattice.flax.metrics.tensorboard: the event files a SummaryWriter
writes, read back with TensorBoard's own reader."""

import importlib.util
import io
import struct
import subprocess
import sys
import wave
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import typelattice.numpy as tnp
from typelattice.flax.metrics import tensorboard

HAS_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None
needs_tensorboard = pytest.mark.skipif(
    not HAS_TENSORBOARD, reason="the tensorboard package is not installed"
)


def _events(log_dir: Path) -> list[Any]:
    """The events of the one event file under ``log_dir``, after the file's
    version record, as written (the legacy loader does not migrate them to
    TensorBoard's newer in-memory forms)."""
    from tensorboard.backend.event_processing.event_file_loader import (
        LegacyEventFileLoader,
    )

    (path,) = log_dir.glob("events.out.tfevents.*")
    events = list(LegacyEventFileLoader(str(path)).Load())
    assert events[0].file_version == "brain.Event:2"
    return events[1:]


def _array(tensor: Any) -> np.ndarray:
    """A TensorProto as an array; strings as bytes objects, whole
    (``make_ndarray`` reads them as NumPy bytes, which drop trailing NULs)."""
    from tensorboard.compat.proto import types_pb2
    from tensorboard.util import tensor_util

    if tensor.dtype != types_pb2.DT_STRING:
        return tensor_util.make_ndarray(tensor)
    shape = [d.size for d in tensor.tensor_shape.dim]
    out = np.empty(len(tensor.string_val), object)
    out[:] = list(tensor.string_val)
    return out.reshape(shape)


def _values(log_dir: Path) -> list[tuple[str, int, Any, str]]:
    """(tag, step, value as an array, plugin name) of each summary written."""
    return [
        (v.tag, e.step, _array(v.tensor), v.metadata.plugin_data.plugin_name)
        for e in _events(log_dir)
        for v in e.summary.value
    ]


def _png_pixels(data: bytes) -> np.ndarray:
    """The pixels of an 8-bit PNG without row filters (as written)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        assert zlib.crc32(kind + body) == crc
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    channels = {2: 3, 6: 4}[color]
    assert depth == 8
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, -1)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


def test_importing_needs_no_tensorboard(tmp_path: Path) -> None:
    # tensorboard blocked: the module imports, and making a writer says
    # what to install.
    code = f"""
import importlib.abc, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "tensorboard":
            raise ImportError("blocked: " + name)
        return None

sys.meta_path.insert(0, Block())
from typelattice.flax.metrics import tensorboard
assert not any(m.split(".")[0] == "tensorboard" for m in sys.modules)
try:
    tensorboard.SummaryWriter({str(tmp_path)!r})
except ImportError as e:
    print(e)
else:
    raise SystemExit("no ImportError")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "pip install tensorboard" in done.stdout


def test_the_flax_namespace_reaches_it() -> None:
    import typelattice.flax as flax

    assert flax.metrics.tensorboard is tensorboard


@needs_tensorboard
def test_scalars(tmp_path: Path) -> None:
    writer = tensorboard.SummaryWriter(tmp_path / "run" / "train")
    writer.scalar("loss", tnp.asarray(0.75, dtype="float32"), step=1)
    writer.scalar("loss", np.float64(0.5), step=tnp.asarray(2))
    writer.scalar("accuracy", 1, step=2)
    # auto_flush: readable before close.
    values = _values(tmp_path / "run" / "train")
    assert [(t, s, float(v), p) for t, s, v, p in values] == [
        ("loss", 1, 0.75, "scalars"),
        ("loss", 2, 0.5, "scalars"),
        ("accuracy", 2, 1.0, "scalars"),
    ]
    assert all(v.dtype == np.float32 and v.shape == () for _, _, v, _ in values)
    writer.close()


@needs_tensorboard
def test_the_event_accumulator_reads_scalars(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing import event_accumulator

    writer = tensorboard.SummaryWriter(tmp_path)
    for step in range(3):
        writer.scalar("lr", 0.1 * step, step)
    writer.close()
    acc = event_accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Tags()["tensors"] == ["lr"]
    from tensorboard.util import tensor_util

    got = [
        (e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
        for e in acc.Tensors("lr")
    ]
    assert got == [(s, float(np.float32(0.1 * s))) for s in range(3)]


@needs_tensorboard
def test_without_auto_flush_flush_writes(tmp_path: Path) -> None:
    writer = tensorboard.SummaryWriter(tmp_path, auto_flush=False)
    writer.scalar("loss", 1.5, step=0)
    writer.flush()
    assert [(t, float(v)) for t, _, v, _ in _values(tmp_path)] == [("loss", 1.5)]
    writer.close()


@needs_tensorboard
def test_text(tmp_path: Path) -> None:
    writer = tensorboard.SummaryWriter(tmp_path)
    writer.text("notes", "# run 1", step=0)
    writer.text("notes", b"bytes too", step=5)
    with pytest.raises(ValueError, match="`textdata` should be"):
        writer.text("notes", 3.0, step=6)  # type: ignore[arg-type]
    writer.close()
    values = _values(tmp_path)
    assert [(t, s, v.item(), p) for t, s, v, p in values] == [
        ("notes", 0, b"# run 1", "text"),
        ("notes", 5, b"bytes too", "text"),
    ]


@needs_tensorboard
def test_hparams_flattened(tmp_path: Path) -> None:
    from tensorboard.plugins.hparams import plugin_data_pb2

    writer = tensorboard.SummaryWriter(tmp_path)
    writer.hparams(
        {
            "lr": 0.5,
            "opt": {"name": "adam", "b1": np.float32(0.25)},
            "layers": [2, 3],
            "use_bias": True,
        }
    )
    writer.close()
    (event,) = _events(tmp_path)
    (value,) = event.summary.value
    assert event.step == 0
    assert value.tag == "_hparams_/session_start_info"
    assert value.metadata.plugin_data.plugin_name == "hparams"
    data = plugin_data_pb2.HParamsPluginData.FromString(
        value.metadata.plugin_data.content
    )
    hp = data.session_start_info.hparams
    assert sorted(hp) == ["layers", "lr", "opt.b1", "opt.name", "use_bias"]
    assert hp["lr"].number_value == 0.5
    assert hp["opt.b1"].number_value == 0.25
    assert hp["opt.name"].string_value == "adam"
    assert hp["layers"].string_value == "[2, 3]"
    assert hp["use_bias"].bool_value is True


@needs_tensorboard
@pytest.mark.parametrize("bins", [None, 4])
def test_histogram(tmp_path: Path, bins: int | None) -> None:
    data = tnp.asarray(np.arange(12.0).reshape(3, 4))
    writer = tensorboard.SummaryWriter(tmp_path)
    writer.histogram("w", data, step=7, bins=bins)
    writer.close()
    ((tag, step, buckets, plugin),) = _values(tmp_path)
    assert (tag, step, plugin) == ("w", 7, "histograms")
    # [left edge, right edge, count] per bucket, over all 12 values.
    assert buckets.shape == (30 if bins is None else bins, 3)
    assert buckets[:, 2].sum() == 12
    assert buckets[0, 0] == 0.0 and buckets[-1, 1] == 11.0


@needs_tensorboard
def test_images(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (4, 5, 6, 3), dtype=np.uint8)
    grey = rng.random((5, 6))
    writer = tensorboard.SummaryWriter(tmp_path)
    writer.image("rgb", rgb, step=1, max_outputs=2)
    writer.image("grey", tnp.asarray(grey), step=2)
    with pytest.raises(TypeError, match="int32 is neither uint8 nor floating"):
        writer.image("bad", np.zeros((5, 6), np.int32), step=3)
    with pytest.raises(ValueError, match=r"shape \(5, 6, 2, 2, 1\)"):
        writer.image("bad", np.zeros((5, 6, 2, 2, 1)), step=3)
    writer.close()
    (rgb_v, grey_v) = _values(tmp_path)
    assert rgb_v[:2] == ("rgb", 1) and rgb_v[3] == "images"
    width, height, *pngs = rgb_v[2].tolist()
    assert (width, height) == (b"6", b"5")
    assert len(pngs) == 2  # max_outputs
    for png, want in zip(pngs, rgb[:2], strict=True):
        np.testing.assert_array_equal(_png_pixels(png), want)
    width, height, png = grey_v[2].tolist()
    # Floats in [0, 1] become uint8 as TensorFlow converts them; grey is
    # repeated into three channels.
    want = np.trunc(np.clip(grey * 255.5, 0, 255)).astype(np.uint8)
    np.testing.assert_array_equal(_png_pixels(png), np.repeat(want[..., None], 3, -1))


@needs_tensorboard
def test_audio(tmp_path: Path) -> None:
    clips = np.linspace(-1.5, 1.5, 3 * 50 * 2).reshape(3, 50, 2)
    writer = tensorboard.SummaryWriter(tmp_path)
    writer.audio("a", clips, step=4, sample_rate=16000, max_outputs=2)
    with pytest.raises(ValueError, match=r"shape \(50,\) is not \[K, frames"):
        writer.audio("a", clips[0, :, 0], step=5)
    writer.close()
    ((tag, step, tensor, plugin),) = _values(tmp_path)
    assert (tag, step, plugin, tensor.shape) == ("a", 4, "audio", (2, 2))
    for (wav, label), clip in zip(tensor.tolist(), clips[:2], strict=True):
        assert label == b""
        with wave.open(io.BytesIO(wav)) as f:
            assert (f.getframerate(), f.getnchannels(), f.getsampwidth()) == (
                16000,
                2,
                2,
            )
            samples = np.frombuffer(f.readframes(f.getnframes()), "<i2")
        clipped = np.clip(clip.astype(np.float32), -1, 1)
        want = np.clip(np.round(clipped * 32768.0), -32768, 32767)
        np.testing.assert_array_equal(samples.reshape(50, 2), want)


@needs_tensorboard
def test_write_with_metadata(tmp_path: Path) -> None:
    from tensorboard.compat.proto import summary_pb2

    meta = summary_pb2.SummaryMetadata()
    meta.plugin_data.plugin_name = "custom"
    writer = tensorboard.SummaryWriter(tmp_path)
    writer.write("t", tnp.asarray([1, 2, 3], dtype="int32"), 2, meta)
    writer.write("u", np.ones((2, 2)), 3, meta.SerializeToString())
    writer.close()
    (t, u) = _values(tmp_path)
    assert t[:2] == ("t", 2) and t[3] == "custom"
    np.testing.assert_array_equal(t[2], [1, 2, 3])
    assert t[2].dtype == np.int32
    assert u[:2] == ("u", 3) and u[3] == "custom"
    np.testing.assert_array_equal(u[2], np.ones((2, 2)))


@needs_tensorboard
def test_bad_steps_and_closed_writers_raise(tmp_path: Path) -> None:
    writer = tensorboard.SummaryWriter(tmp_path)
    with pytest.raises(TypeError, match=r"step=1\.5 is not an integer"):
        writer.scalar("loss", 1.0, step=1.5)
    with pytest.raises(TypeError, match="is not an integer scalar"):
        writer.scalar("loss", 1.0, step=np.arange(2))
    writer.close()
    writer.close()  # twice: nothing
    writer.flush()
    with pytest.raises(ValueError, match="closed"):
        writer.scalar("loss", 1.0, step=1)
    assert _values(tmp_path) == []
