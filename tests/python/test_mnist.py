"""read_idx and ember.datasets.MNIST on the MNIST files bundled in data/mnist."""
import gzip
import os
import struct

import numpy as np
import pytest

import ember
from ember.datasets import BUNDLED_MNIST_DIR, MNIST
from ember.utils.data import DataLoader, read_idx

IMAGES = os.path.join(BUNDLED_MNIST_DIR, "t10k-images-idx3-ubyte.gz")
LABELS = os.path.join(BUNDLED_MNIST_DIR, "t10k-labels-idx1-ubyte.gz")


def write_idx(path, arr, code, compress=False):
    raw = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    raw += arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(raw)
    return raw


def test_bundled_files():
    images = read_idx(IMAGES)
    labels = read_idx(LABELS)
    assert list(images.shape) == [10000, 28, 28] and images.dtype == ember.uint8
    assert list(labels.shape) == [10000] and labels.dtype == ember.uint8
    lab = labels.numpy()
    assert lab.min() == 0 and lab.max() == 9 and len(np.unique(lab)) == 10
    assert lab[:5].tolist() == [7, 2, 1, 0, 4]  # the well-known first test labels
    img = images.numpy()
    assert img.max() == 255 and img.min() == 0 and 20 < img.mean() < 45


def test_bundled_split():
    train, test = MNIST.bundled("train"), MNIST.bundled("test")
    assert len(train) == 8000 and len(test) == 2000
    x, y = train[0]
    assert list(x.shape) == [28, 28] and x.dtype == ember.uint8 and y == 7
    full = read_idx(IMAGES, as_numpy=True)
    np.testing.assert_array_equal(test[0][0].numpy(), full[8000])
    np.testing.assert_array_equal(train.data.numpy(), full[:8000])
    assert train.targets.dtype == ember.int64 and list(test.targets.shape) == [2000]
    with pytest.raises(ValueError, match="split"):
        MNIST.bundled("val")


def test_transforms_and_loader():
    ds = MNIST.bundled("test", transform=lambda img: img.float() / 255,
                       target_transform=lambda y: y + 100)
    x, y = ds[1]
    assert x.dtype == ember.float32 and float(x.max()) <= 1.0 and y >= 100
    xb, yb = next(iter(DataLoader(ds, batch_size=16)))
    assert list(xb.shape) == [16, 28, 28] and yb.dtype == ember.int64


def test_mnist_from_directory(tmp_path):
    imgs = np.random.randint(0, 256, (5, 28, 28)).astype(np.uint8)
    labs = np.array([3, 1, 4, 1, 5], np.uint8)
    write_idx(tmp_path / "train-images-idx3-ubyte", imgs, 0x08)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", labs, 0x08, compress=True)
    ds = MNIST(tmp_path, train=True)
    assert len(ds) == 5 and ds[2][1] == 4
    np.testing.assert_array_equal(ds[4][0].numpy(), imgs[4])
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        MNIST(tmp_path, train=False)


@pytest.mark.parametrize("code,dtype", [(0x08, np.uint8), (0x09, np.int8), (0x0B, np.int16),
                                        (0x0C, np.int32), (0x0D, np.float32),
                                        (0x0E, np.float64)])
def test_read_idx_types(tmp_path, code, dtype):
    arr = (np.arange(24).reshape(2, 3, 4) * 3 - 20).astype(dtype)
    if dtype == np.uint8:
        arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    for compress in (False, True):
        write_idx(tmp_path / "f", arr, code, compress)
        got = read_idx(tmp_path / "f", as_numpy=True)
        assert got.dtype == np.dtype(dtype).newbyteorder("=")
        np.testing.assert_array_equal(got, arr)
    np.testing.assert_array_equal(read_idx(tmp_path / "f").numpy(), arr)


def test_truncated_and_foreign_files(tmp_path):
    raw = write_idx(tmp_path / "ok", np.arange(100, dtype=np.uint8).reshape(10, 10), 0x08)
    (tmp_path / "cut").write_bytes(raw[:-3])
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "cut")
    (tmp_path / "cuthead").write_bytes(raw[:6])
    with pytest.raises(ValueError, match="truncated header"):
        read_idx(tmp_path / "cuthead")
    (tmp_path / "long").write_bytes(raw + b"x")
    with pytest.raises(ValueError, match="unexpected bytes"):
        read_idx(tmp_path / "long")
    (tmp_path / "png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 30)
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "png")
    (tmp_path / "tiny").write_bytes(b"\0\0")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "tiny")
    gz = open(IMAGES, "rb").read()
    (tmp_path / "cut.gz").write_bytes(gz[: len(gz) // 2])
    with pytest.raises(ValueError, match="cut.gz"):
        read_idx(tmp_path / "cut.gz")
