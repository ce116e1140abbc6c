"""TFRecord framing of an event file: each record is its length (uint64), the masked CRC-32C of the
length, the data, and the masked CRC-32C of the data, all little-endian."""
import struct

_POLY = 0x82F63B78  # CRC-32C (Castagnoli), reflected


def _table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def read_records(blob):
    """The data of every record in blob, checking both checksums (for tests and tools)."""
    out, pos = [], 0
    while pos < len(blob):
        (n,) = struct.unpack_from("<Q", blob, pos)
        (length_crc,) = struct.unpack_from("<I", blob, pos + 8)
        if length_crc != masked_crc(blob[pos:pos + 8]):
            raise ValueError(f"event file: bad length checksum at byte {pos}")
        data = blob[pos + 12:pos + 12 + n]
        (data_crc,) = struct.unpack_from("<I", blob, pos + 12 + n)
        if data_crc != masked_crc(data):
            raise ValueError(f"event file: bad data checksum at byte {pos}")
        out.append(bytes(data))
        pos += 16 + n
    return out
