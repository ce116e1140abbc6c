"""SummaryWriter: TensorBoard event files written without tensorflow or the tensorboard package.

Each writer appends TFRecord-framed tensorflow.Event messages (a file_version event first) to
log_dir/events.out.tfevents.<time>.<host>.<pid>.<n><suffix>, buffering up to max_queue events or
flush_secs seconds. Scalars, histograms, images and text are written as TensorBoard reads them;
add_scalars gives each curve a writer in its own subdirectory, as torch does."""
import os
import socket
import time
import warnings
from datetime import datetime

import numpy as np

import ember
from ember.utils.tensorboard import _protobuf as pb
from ember.utils.tensorboard._png import encode_png
from ember.utils.tensorboard._records import record

__all__ = ["SummaryWriter"]

_COUNTER = [0]  # event files opened by this process: part of each file name, so names never collide


def _to_numpy(value, what):
    if isinstance(value, ember.Tensor):
        value = value.detach().cpu()
        if value.dtype in (ember.float16, ember.bfloat16):
            value = value.float()
        return value.numpy()
    if isinstance(value, (int, float, bool, np.generic, np.ndarray, list, tuple)):
        return np.asarray(value)
    raise TypeError(f"SummaryWriter.{what}: expected a number, a numpy array or an ember.Tensor, got "
                    f"{type(value).__name__}")


def _scalar(value, what):
    array = _to_numpy(value, what)
    if array.size != 1:
        raise ValueError(f"SummaryWriter.{what}: expected a single value, got an array of shape {array.shape}")
    return float(array.reshape(-1)[0])


class _EventFile:
    def __init__(self, log_dir, filename_suffix, max_queue, flush_secs):
        os.makedirs(log_dir, exist_ok=True)
        _COUNTER[0] += 1
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{_COUNTER[0]}{filename_suffix}")
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")
        self._pending = []
        self._max_queue, self._flush_secs = max_queue, flush_secs
        self._last_flush = time.time()
        self.write(pb.event(time.time(), 0, file_version="brain.Event:2"))
        self.flush()

    def write(self, event_bytes):
        self._pending.append(record(event_bytes))
        if len(self._pending) >= self._max_queue or time.time() - self._last_flush >= self._flush_secs:
            self.flush()

    def flush(self):
        if self._file.closed:
            return
        self._file.write(b"".join(self._pending))
        self._pending.clear()
        self._file.flush()
        self._last_flush = time.time()

    def close(self):
        self.flush()
        self._file.close()


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter's interface for scalars, histograms, images and text."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self._file = _EventFile(self.log_dir, filename_suffix, max_queue, flush_secs)
        self._children = {}

    def get_logdir(self):
        return self.log_dir

    def _add(self, value, global_step, walltime):
        step = 0 if global_step is None else int(global_step)
        self._file.write(pb.event(time.time() if walltime is None else walltime, step,
                                  summary=pb.summary([value])))

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(pb.scalar_value(tag, _scalar(scalar_value, "add_scalar")), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each entry as a curve named main_tag, written by a writer in log_dir/main_tag_tag (torch's layout)."""
        for tag, value in tag_scalar_dict.items():
            directory = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            child = self._children.get(directory)
            if child is None:
                child = _EventFile(directory, self.filename_suffix, self.max_queue, self.flush_secs)
                self._children[directory] = child
            step = 0 if global_step is None else int(global_step)
            child.write(pb.event(time.time() if walltime is None else walltime, step,
                                 summary=pb.summary([pb.scalar_value(main_tag, _scalar(value, "add_scalars"))])))

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        data = _to_numpy(values, "add_histogram").astype(np.float64).reshape(-1)
        if data.size == 0:
            raise ValueError("SummaryWriter.add_histogram: the input has no values")
        if isinstance(bins, str) and bins == "tensorflow":
            bins = "auto"
        counts, edges = np.histogram(data, bins=bins)
        if max_bins is not None and len(counts) > max_bins:
            counts, edges = np.histogram(data, bins=int(max_bins))
        value = pb.histogram_value(tag, data.min(), data.max(), data.size, data.sum(), np.dot(data, data),
                                   edges[1:], counts)
        self._add(value, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """A float image in [0, 1] or a uint8 image in [0, 255], laid out as dataformats (CHW, HWC, HW)."""
        pixels = _to_numpy(img_tensor, "add_image")
        layout = dataformats.upper()
        if sorted(layout) not in (sorted("CHW"), sorted("HW")) or pixels.ndim != len(layout):
            raise ValueError(f"SummaryWriter.add_image: dataformats {dataformats!r} does not describe an image of "
                             f"shape {pixels.shape} (use CHW, HWC or HW)")
        if layout == "HW" or layout == "WH":
            pixels = pixels[None] if layout == "HW" else pixels.T[None]
            layout = "CHW"
        pixels = np.transpose(pixels, [layout.index(c) for c in "HWC"])
        if pixels.shape[2] not in (1, 3, 4):
            raise ValueError(f"SummaryWriter.add_image: expected 1, 3 or 4 channels, got {pixels.shape[2]}")
        if pixels.dtype != np.uint8:
            pixels = (np.clip(pixels.astype(np.float64), 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        height, width, channels = pixels.shape
        self._add(pb.image_value(tag, height, width, channels, encode_png(pixels)), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images (NCHW or NHWC) logged as one image: a grid of up to 8 per row, as torch
        (single-channel images become gray RGB; the unused cells of the last row stay black)."""
        batch = _to_numpy(img_tensor, "add_images")
        layout = dataformats.upper()
        if sorted(layout) != sorted("NCHW") or batch.ndim != 4:
            raise ValueError(f"SummaryWriter.add_images: dataformats {dataformats!r} does not describe a batch of "
                             f"shape {batch.shape} (use NCHW or NHWC)")
        batch = np.transpose(batch, [layout.index(c) for c in "NCHW"])
        if batch.shape[1] == 1:
            batch = np.repeat(batch, 3, axis=1)
        n, c, h, w = batch.shape
        cols = max(1, min(n, 8))
        rows = -(-n // cols)
        cells = np.zeros((rows * cols, c, h, w), dtype=batch.dtype)
        cells[:n] = batch
        grid = cells.reshape(rows, cols, c, h, w).transpose(2, 0, 3, 1, 4).reshape(c, rows * h, cols * w)
        self.add_image(tag, grid, global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(pb.text_value(f"{tag}/text_summary", text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        # A training script logging its graph should keep training: say so, write nothing.
        warnings.warn("SummaryWriter.add_graph: ember has no graph tracer to export a model graph, so none is "
                      "written; scalars, histograms, images and text are", stacklevel=2)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        raise NotImplementedError("SummaryWriter.add_hparams is not implemented by ember; log the metrics with "
                                  "add_scalar and the hyper-parameters with add_text")

    def flush(self):
        self._file.flush()
        for child in self._children.values():
            child.flush()

    def close(self):
        self._file.close()
        for child in self._children.values():
            child.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
