"""ember.datasets: MNIST read from IDX files, and the copy bundled with ember.

MNIST(root, train=True) reads the standard files from `root` (or from
root/MNIST/raw, torchvision's layout), plain or gzipped:
  train-images-idx3-ubyte, train-labels-idx1-ubyte   (60,000 training images)
  t10k-images-idx3-ubyte,  t10k-labels-idx1-ubyte    (10,000 test images)

The repository ships only the 10,000 test images (data/mnist/). MNIST.bundled()
splits them into a fixed default used by the examples and tests:
  MNIST.bundled("train")  the first 8,000 images
  MNIST.bundled("test")   the last 2,000 images
"""
import os

import ember
from ember.utils.data import Dataset, read_idx

__all__ = ["MNIST", "BUNDLED_MNIST_DIR"]

# <repo>/data/mnist, next to python/ember in a checkout or an editable install.
BUNDLED_MNIST_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "mnist"))

_BUNDLED_TRAIN = 8000  # images 0..7999 train, 8000..9999 test


def _find(root, stem):
    for folder in (root, os.path.join(root, "MNIST", "raw")):
        for name in (stem, stem + ".gz"):
            path = os.path.join(folder, name)
            if os.path.exists(path):
                return path
    raise FileNotFoundError(f"MNIST: no {stem} or {stem}.gz in {root} (or {root}/MNIST/raw); "
                            f"put the IDX files there, or use MNIST.bundled()")


class MNIST(Dataset):
    """Handwritten digits: item i is (image, label) with a 28x28 uint8 image tensor
    and an int label, each passed through transform / target_transform when given.

    `data` holds all images as an N x 28 x 28 uint8 tensor and `targets` the labels
    as an int64 tensor, for code that wants whole batches without the item loop.
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        if download:
            raise RuntimeError("MNIST: ember does not download data; put the IDX files in "
                               f"{root} or use MNIST.bundled()")
        self.root = os.fspath(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        prefix = "train" if train else "t10k"
        images = read_idx(_find(self.root, f"{prefix}-images-idx3-ubyte"), as_numpy=True)
        labels = read_idx(_find(self.root, f"{prefix}-labels-idx1-ubyte"), as_numpy=True)
        if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
            raise ValueError(f"MNIST: images of shape {list(images.shape)} and labels of "
                             f"shape {list(labels.shape)} in {self.root} do not match")
        self._set(images, labels)

    def _set(self, images, labels):
        self.data = ember.from_numpy(images)
        self.targets = ember.from_numpy(labels.astype("int64"))
        self._labels = labels.astype("int64").tolist()

    @classmethod
    def bundled(cls, split="train", transform=None, target_transform=None):
        """The MNIST test images shipped in data/mnist, split 8,000 (train) / 2,000 (test)."""
        if split not in ("train", "test"):
            raise ValueError(f"MNIST.bundled: split must be 'train' or 'test', got {split!r}")
        ds = cls(BUNDLED_MNIST_DIR, train=False, transform=transform,
                 target_transform=target_transform)
        images = ds.data.numpy()
        labels = ds.targets.numpy()
        part = slice(0, _BUNDLED_TRAIN) if split == "train" else slice(_BUNDLED_TRAIN, None)
        ds._set(images[part].copy(), labels[part].copy())
        ds.split = split
        return ds

    def __len__(self):
        return len(self._labels)

    def __getitem__(self, index):
        img, target = self.data[index], self._labels[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
