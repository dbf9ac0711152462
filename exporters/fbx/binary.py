"""Binary FBX 7.4 encoding and decoding of a node tree.

Layout (public descriptions: the Blender Foundation's "FBX binary file format
specification", 2013, and the fbx-book notes), all little-endian:

* header: ``b"Kaydara FBX Binary  \\x00"``, bytes ``0x1A 0x00``, uint32 version;
* node records: uint32 end offset (absolute), uint32 property count, uint32
  property-list length in bytes, uint8 name length, name, properties, then the
  children followed by a 13-byte zero record when there are children (and for
  nodes without properties, and object nodes marked ``block``);
* the top level ends with a 13-byte zero record, then the footer: a 16-byte
  footer id, 1 to 16 zero bytes up to a 16-byte boundary, 4 zero bytes, the
  version again, 120 zero bytes and a fixed 16-byte end mark.

The footer id is a hash the Autodesk SDK derives from the file's
``CreationTime`` and ``FileId``, and the SDK (inside Maya, Unity, Unreal) refuses
files where the three disagree. How it is computed is not public, so writers
outside Autodesk use the one published, known-working triple (Blender's FBX
exporter introduced it; assimp's exporter and others use it too):
:data:`FILE_ID`, :data:`CREATION_TIME` and the matching footer id.

Arrays larger than :data:`COMPRESS_MIN_BYTES` are stored zlib-compressed
(encoding 1), smaller ones raw (encoding 0).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from choreo.errors import ExportError
from exporters.fbx.nodes import ARRAY_DTYPES, FbxNode, Prop

__all__ = [
    "COMPRESS_MIN_BYTES",
    "CREATION_TIME",
    "FBX_VERSION",
    "FILE_ID",
    "decode_fbx",
    "encode_fbx",
    "read_fbx",
]

FBX_VERSION = 7400
COMPRESS_MIN_BYTES = 128
"""Arrays whose raw size is at least this many bytes are zlib-compressed."""

_MAGIC = b"Kaydara FBX Binary  \x00\x1a\x00"
_NULL_RECORD = b"\x00" * 13
_END_MARK = bytes.fromhex("f85a8c6adef5d97eece90ce3758f290b")
FILE_ID = bytes.fromhex("28b32aebb624ccc2bfc8b02aa92bfcf1")
"""``FileId`` of the known-working (FileId, CreationTime, footer id) triple."""
CREATION_TIME = "1970-01-01 10:00:00:000"
"""``CreationTime`` of the known-working triple."""
_FOOTER_ID = bytes.fromhex("fabcab09d0c8d466b176fb831cf7267e")
_SCALAR = {"Y": "<h", "C": "<?", "I": "<i", "F": "<f", "D": "<d", "L": "<q"}


def _encode_prop(prop: Prop, out: bytearray, compress_level: int, cache: dict[int, tuple]) -> None:
    code = prop.code
    out += code.encode("ascii")
    if code in _SCALAR:
        out += struct.pack(_SCALAR[code], prop.value)
    elif code in ("S", "R"):
        data = prop.value.encode("utf-8") if code == "S" else prop.value
        out += struct.pack("<I", len(data))
        out += data
    elif code in ARRAY_DTYPES:
        # One array object shared by many properties (the key times of every
        # curve) is converted and compressed once.
        key = id(prop.value)
        if key not in cache:
            arr = np.ascontiguousarray(prop.value, dtype=ARRAY_DTYPES[code])
            data = arr.tobytes()
            encoding = 1 if len(data) >= COMPRESS_MIN_BYTES else 0
            if encoding:
                data = zlib.compress(data, compress_level)
            cache[key] = (prop.value, struct.pack("<III", arr.size, encoding, len(data)) + data)
        out += cache[key][1]
    else:
        raise ExportError(f"unknown FBX property type code {code!r}")


def _encode_node(node: FbxNode, out: bytearray, compress_level: int, cache: dict[int, tuple]) -> None:
    start = len(out)
    name = node.name.encode("ascii")
    if len(name) > 255:
        raise ExportError(f"FBX node name too long: {node.name[:40]!r}...")
    out += b"\x00" * 12
    out += struct.pack("<B", len(name))
    out += name
    props_start = len(out)
    for prop in node.props:
        _encode_prop(prop, out, compress_level, cache)
    props_len = len(out) - props_start
    for child in node.children:
        _encode_node(child, out, compress_level, cache)
    if node.children or node.block or not node.props:
        out += _NULL_RECORD
    if len(out) >= 2**32:
        raise ExportError("FBX 7.4 files cannot exceed 4 GiB")
    struct.pack_into("<III", out, start, len(out), len(node.props), props_len)


def encode_fbx(nodes: list[FbxNode], *, version: int = FBX_VERSION, compress_level: int = 1) -> bytes:
    """Encode top-level ``nodes`` as a complete binary FBX file (header, nodes, footer).

    Parameters
    ----------
    nodes : the top-level nodes in file order
    version : FBX version number written in header and footer; only 7.x
        versions below 7500 (32-bit offsets) are supported
    compress_level : zlib level for large arrays (1 fastest, 9 smallest)
    """
    if not 7000 <= version < 7500:
        raise ExportError(f"only FBX 7.0-7.4 binary encoding is supported, not {version}")
    out = bytearray(_MAGIC)
    out += struct.pack("<I", version)
    cache: dict[int, tuple] = {}
    for node in nodes:
        _encode_node(node, out, compress_level, cache)
    out += _NULL_RECORD
    out += _FOOTER_ID
    out += b"\x00" * (16 - len(out) % 16)  # at least one zero byte, as the SDK writes it
    out += b"\x00" * 4 + struct.pack("<I", version) + b"\x00" * 120 + _END_MARK
    return bytes(out)


class _Cursor:
    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.pos = 0
        self.source = source

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ExportError(f"{self.source}: truncated FBX data at byte {self.pos}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))


def _decode_prop(cur: _Cursor) -> Prop:
    code = cur.take(1).decode("ascii")
    if code in _SCALAR:
        return Prop(code, cur.unpack(_SCALAR[code])[0])
    if code in ("S", "R"):
        (n,) = cur.unpack("<I")
        data = cur.take(n)
        return Prop(code, data.decode("utf-8", errors="surrogateescape") if code == "S" else data)
    if code in ARRAY_DTYPES:
        count, encoding, n = cur.unpack("<III")
        data = cur.take(n)
        if encoding == 1:
            data = zlib.decompress(data)
        elif encoding != 0:
            raise ExportError(f"{cur.source}: unknown FBX array encoding {encoding}")
        arr = np.frombuffer(data, dtype=ARRAY_DTYPES[code])
        if arr.size != count:
            raise ExportError(f"{cur.source}: FBX array holds {arr.size} values, header says {count}")
        return Prop(code, arr)
    raise ExportError(f"{cur.source}: unknown FBX property type {code!r} at byte {cur.pos - 1}")


def _decode_node(cur: _Cursor, wide: bool) -> FbxNode | None:
    head = "<QQQB" if wide else "<IIIB"
    end, n_props, _props_len, name_len = cur.unpack(head)
    if end == 0:
        return None
    node = FbxNode(cur.take(name_len).decode("ascii", errors="replace"))
    node.props = [_decode_prop(cur) for _ in range(n_props)]
    while cur.pos < end:
        node.block = True
        child = _decode_node(cur, wide)
        if child is None:
            break
        node.children.append(child)
    if cur.pos != end:
        raise ExportError(f"{cur.source}: FBX node {node.name!r} ends at {cur.pos}, header says {end}")
    return node


def decode_fbx(data: bytes, *, source: str = "<bytes>", strict: bool = False) -> tuple[int, list[FbxNode]]:
    """Decode a binary FBX file into ``(version, top-level nodes)``.

    Checks the header, every node's end offset and the footer's version and
    end mark, so it doubles as a structural validator for files we write.
    ``strict`` also requires the file length to be a multiple of 16, as the
    Autodesk SDK writes it (Blender's files are not always padded so).
    """
    if not data.startswith(_MAGIC):
        raise ExportError(f"{source}: not a binary FBX file (bad header)")
    cur = _Cursor(data, source)
    cur.pos = len(_MAGIC)
    (version,) = cur.unpack("<I")
    wide = version >= 7500
    nodes = []
    while True:
        node = _decode_node(cur, wide)
        if node is None:
            break
        nodes.append(node)
    footer = data[cur.pos :]
    if len(footer) < 16 + 4 + 4 + 120 + 16 or not footer.endswith(_END_MARK):
        raise ExportError(f"{source}: FBX footer missing or malformed")
    footer_version = struct.unpack("<I", footer[-140:-136])[0]
    if footer_version != version:
        raise ExportError(f"{source}: FBX footer version {footer_version} differs from header {version}")
    if strict and len(data) % 16:
        raise ExportError(f"{source}: FBX file length {len(data)} is not a multiple of 16")
    return version, nodes


def read_fbx(path: str | Path, *, strict: bool = False) -> tuple[int, list[FbxNode]]:
    """Read and decode the binary FBX file at ``path``; see :func:`decode_fbx`."""
    p = Path(path)
    return decode_fbx(p.read_bytes(), source=str(p), strict=strict)
