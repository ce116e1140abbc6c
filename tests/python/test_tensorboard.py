"""ember.utils.tensorboard.SummaryWriter: the event files parsed back field by field (a small protobuf
reader written here, independent of the writer), the record checksums (CRC-32C's check value), the PNG an
image becomes, and, where the tensorboard package is importable, TensorBoard's own reader."""
import glob
import os
import struct
import zlib

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard._records import crc32c, read_records

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except Exception:  # the package is optional
    EventAccumulator = None

CASES = []  # no OpCase rows: a file format


def parse(message):
    """{field number: [values]} of a protobuf message: ints for varints, floats for fixed32/64, bytes."""
    fields, pos = {}, 0
    while pos < len(message):
        key, pos = _varint(message, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(message, pos)
        elif wire == 1:
            value, pos = struct.unpack_from("<d", message, pos)[0], pos + 8
        elif wire == 5:
            value, pos = struct.unpack_from("<f", message, pos)[0], pos + 4
        elif wire == 2:
            n, pos = _varint(message, pos)
            value, pos = message[pos:pos + n], pos + n
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        fields.setdefault(field, []).append(value)
    return fields


def _varint(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def events(log_dir):
    (path,) = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    return [parse(r) for r in read_records(open(path, "rb").read())]


def summary_values(event):
    return [parse(v) for v in parse(event[5][0])[1]]


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_scalars_histograms_and_text(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss/train", ember.tensor(0.5 * step), step)
        w.add_histogram("w", np.array([1.0, 2.0, 2.0, 5.0]), 7, bins=2)
        w.add_text("note", "hi", 1)
    evs = events(str(tmp_path))
    assert evs[0][3] == [b"brain.Event:2"]  # the file_version event comes first
    scalars = [(e[2][0] if 2 in e else 0, summary_values(e)[0]) for e in evs[1:4]]
    assert [(step, v[1][0], v[2][0]) for step, v in scalars] == [(0, b"loss/train", 0.0), (1, b"loss/train", 0.5),
                                                                (2, b"loss/train", 1.0)]
    histo = parse(summary_values(evs[4])[0][5][0])
    assert (histo[1][0], histo[2][0], histo[3][0], histo[4][0], histo[5][0]) == (1.0, 5.0, 4.0, 10.0, 34.0)
    assert struct.unpack("<2d", histo[7][0]) == (3.0, 1.0)  # counts of [1, 3) and [3, 5]
    assert struct.unpack("<2d", histo[6][0]) == (3.0, 5.0)  # the buckets' right edges
    text = summary_values(evs[5])[0]
    assert text[1] == [b"note/text_summary"] and parse(text[8][0])[8] == [b"hi"]
    assert parse(parse(text[9][0])[1][0])[1] == [b"text"]  # the text plugin's metadata


def test_image_is_a_png_of_the_pixels(tmp_path):
    img = np.zeros((3, 2, 4), dtype=np.float32)
    img[0, 0, 0], img[2, 1, 3] = 1.0, 0.5
    with SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", ember.tensor(img), 3)
    image = parse(summary_values(events(str(tmp_path))[1])[0][4][0])
    assert (image[1][0], image[2][0], image[3][0]) == (2, 4, 3)
    png = image[4][0]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(2, 1 + 4 * 3)
    assert (rows[:, 0] == 0).all()  # filter byte: none
    pixels = rows[:, 1:].reshape(2, 4, 3)
    assert pixels[0, 0, 0] == 255 and pixels[1, 3, 2] == 128 and pixels.sum() == 255 + 128


def test_add_scalars_writes_one_run_per_curve(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalars("acc", {"train": 0.9, "val": 0.8}, 2)
    for name, value in (("train", 0.9), ("val", 0.8)):
        evs = events(str(tmp_path / f"acc_{name}"))
        (v,) = summary_values(evs[1])
        assert v[1] == [b"acc"] and abs(v[2][0] - value) < 1e-6 and evs[1][2] == [2]


def test_default_log_dir_and_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs") and w.get_logdir().endswith("_lr0.1")
    with pytest.raises(ValueError, match="single value"):
        w.add_scalar("x", ember.ones(2))
    with pytest.raises(ValueError, match="dataformats"):
        w.add_image("x", np.zeros((3, 4)), dataformats="CHW")
    with pytest.warns(UserWarning, match="graph"):
        w.add_graph(ember.nn.Linear(2, 2))  # warns and writes nothing: the training script goes on
    w.close()


@pytest.mark.skipif(EventAccumulator is None, reason="the tensorboard package is not importable")
def test_tensorboard_reads_the_files(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for step in range(4):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_histogram("w", ember.randn(100), 1)
        w.add_image("img", ember.rand(3, 5, 6), 1)
        w.add_text("note", "hello", 0)
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0, "images": 0, "histograms": 0})
    acc.Reload()
    assert [round(e.value, 4) for e in acc.Scalars("loss")] == [1.0, 0.5, 0.3333, 0.25]
    assert acc.Histograms("w")[0].histogram_value.num == 100
    assert (acc.Images("img")[0].width, acc.Images("img")[0].height) == (6, 5)
    assert acc.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello"]
