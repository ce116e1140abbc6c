"""The few protocol-buffer messages a TensorBoard event file holds, encoded by hand (tensorflow's
event.proto, summary.proto, tensor.proto): varints, length-delimited fields, fixed64 doubles and fixed32
floats. Field numbers are those of the .proto files, so TensorBoard and tensorflow read the bytes."""
import struct

# wire types
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


def _varint(n):
    n &= (1 << 64) - 1  # negative int64 values as two's complement, as protobuf does
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def varint_field(field, n):
    return _key(field, _VARINT) + _varint(int(n))


def double_field(field, x):
    return _key(field, _FIXED64) + struct.pack("<d", float(x))


def float_field(field, x):
    return _key(field, _FIXED32) + struct.pack("<f", float(x))


def bytes_field(field, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, _BYTES) + _varint(len(data)) + data


def packed_doubles(field, values):
    return bytes_field(field, b"".join(struct.pack("<d", float(v)) for v in values))


# ---- tensorflow.Event / Summary / HistogramProto / Image / TensorProto

def event(wall_time, step, *, file_version=None, summary=None):
    out = double_field(1, wall_time) + varint_field(2, step)
    if file_version is not None:
        out += bytes_field(3, file_version)
    if summary is not None:
        out += bytes_field(5, summary)
    return out


def summary(values):
    """Summary{repeated Value value = 1}."""
    return b"".join(bytes_field(1, v) for v in values)


def plugin_metadata(plugin_name, content=b""):
    """SummaryMetadata{PluginData plugin_data = 1 {plugin_name = 1, content = 2}}."""
    return bytes_field(1, bytes_field(1, plugin_name) + (bytes_field(2, content) if content else b""))


def scalar_value(tag, x):
    """Value{tag = 1, simple_value = 2} (float32, as tensorboard's SummaryWriter writes by default)."""
    return bytes_field(1, tag) + float_field(2, x)


def histogram_value(tag, lo, hi, num, total, total_sq, limits, counts):
    histo = (double_field(1, lo) + double_field(2, hi) + double_field(3, num) + double_field(4, total)
             + double_field(5, total_sq) + packed_doubles(6, limits) + packed_doubles(7, counts))
    return bytes_field(1, tag) + bytes_field(5, histo)


def image_value(tag, height, width, channels, png):
    image = varint_field(1, height) + varint_field(2, width) + varint_field(3, channels) + bytes_field(4, png)
    return bytes_field(1, tag) + bytes_field(4, image)


def text_value(tag, text):
    """A string tensor under the text plugin: TensorProto{dtype = 1 (DT_STRING = 7), tensor_shape = 2
    {dim = 2 {size = 1}}, string_val = 8}."""
    tensor = varint_field(1, 7) + bytes_field(2, bytes_field(2, varint_field(1, 1))) + bytes_field(8, text)
    return bytes_field(1, tag) + bytes_field(8, tensor) + bytes_field(9, plugin_metadata("text"))
