"""SummaryWriter.add_images (missing: vision scripts log a batch of samples with it) lays the batch out as
torch does, a grid of up to 8 images per row; add_graph warns instead of raising, so a script that logs
its graph (as PyTorch's TensorBoard tutorial does) keeps training."""
import zlib

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from test_tensorboard import events, parse, summary_values


def _logged_pixels(log_dir):
    image = parse(summary_values(events(log_dir)[1])[0][4][0])
    h, w, c = image[1][0], image[2][0], image[3][0]
    png = image[4][0]
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    return rows[:, 1:].reshape(h, w, c)


def _batch(n=10, h=2, w=3):
    return (np.arange(n * h * w, dtype=np.float32).reshape(n, 1, h, w) % 251) / 250.0


def test_add_images_is_a_grid_of_eight_per_row(tmp_path):
    batch = _batch()
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_images("samples", ember.tensor(batch), 0)
    pixels = _logged_pixels(str(tmp_path))
    assert pixels.shape == (4, 24, 3)  # 2 rows of 8 cells of 2x3, gray as RGB
    expected = (np.clip(batch[:, 0], 0, 1) * 255 + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(pixels[0:2, 0:3, 1], expected[0])
    np.testing.assert_array_equal(pixels[0:2, 21:24, 0], expected[7])
    np.testing.assert_array_equal(pixels[2:4, 3:6, 2], expected[9])
    assert (pixels[2:4, 6:] == 0).all()  # the cells after the last image


def test_add_images_nhwc_matches_nchw(tmp_path):
    batch = np.random.default_rng(0).random((3, 3, 4, 5)).astype(np.float32)
    with SummaryWriter(str(tmp_path / "a")) as writer:
        writer.add_images("x", batch, 1)
    with SummaryWriter(str(tmp_path / "b")) as writer:
        writer.add_images("x", ember.tensor(batch.transpose(0, 2, 3, 1)), 1, dataformats="NHWC")
    a, b = _logged_pixels(str(tmp_path / "a")), _logged_pixels(str(tmp_path / "b"))
    assert a.shape == (4, 15, 3)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="add_images"):
        SummaryWriter(str(tmp_path / "c")).add_images("x", batch[0])


def test_add_graph_warns_and_training_goes_on(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.warns(UserWarning, match="add_graph"):
            writer.add_graph(ember.nn.Linear(2, 2), ember.ones(1, 2))
        writer.add_scalar("loss", 1.0, 0)
    assert len(events(str(tmp_path))) == 2  # file version + the scalar: no graph event
