"""Files: atomic writes, a safetensors writer that copies no tensor, and a numpy-only safetensors reader (bfloat16
included) for `inspect` and tests."""

import hashlib
import json
import mmap
import os
import struct
import tempfile

import numpy as np

# safetensors dtype tags -> canonical names (https://github.com/huggingface/safetensors, format.md)
ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
             "I32": "int32", "I16": "int16", "I8": "int8", "U64": "uint64", "U32": "uint32", "U16": "uint16",
             "U8": "uint8", "BOOL": "bool"}
ST_TAGS = {canon: tag for tag, canon in ST_DTYPES.items()}
# safetensors' own serialize() lays tensors out by dtype, the last of this order first (its Rust `Dtype` enum, which
# derives Ord; 0.4 to 0.8 agree on these), then by name: the writer below does the same, so that its files are byte for
# byte the library's (test_store checks it against safetensors.numpy.save).
_ST_ORDER = {tag: i for i, tag in enumerate(
    ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"])}


class Pieces:
    """A file's bytes as a list of buffers (bytes or flat uint8 arrays), written one after the other."""

    def __init__(self, parts):
        self.parts = parts

    def __len__(self):
        return sum(len(memoryview(p).cast("B")) for p in self.parts)

    def views(self):
        return [memoryview(p).cast("B") for p in self.parts]

    def join(self):
        return b"".join(self.views())


def safetensors_pieces(tensors, metadata):
    """A safetensors file of `tensors` (name -> (canonical dtype, shape, flat uint8 array of its bytes)) with
    `metadata` (str -> str), as Pieces: its header, then each tensor's own bytes, none copied. A golden seed file is
    192 MB at 2^24 floats: the library's serialize() copied each tensor twice (into its buffer, then into a Python
    bytes object) with the interpreter held, and safetensors.torch once more before it (tobytes)."""
    order = sorted(tensors, key=lambda n: (-_ST_ORDER[ST_TAGS[tensors[n][0]]], n))
    header, offset = {"__metadata__": dict(metadata)} if metadata else {}, 0
    for name in order:
        canon, shape, raw = tensors[name]
        header[name] = {"dtype": ST_TAGS[canon], "shape": [int(s) for s in shape],
                        "data_offsets": [offset, offset + int(raw.size)]}
        offset += int(raw.size)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the library pads it
    return Pieces([struct.pack("<Q", len(text)) + text] + [tensors[n][2] for n in order])


def write_atomic(path, data):
    """Writes bytes (or Pieces) to path via a temporary file in the same folder and os.replace (never half a file)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            for view in (data.views() if isinstance(data, Pieces) else [data]):
                f.write(view)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def sha256_hex(data):
    """The sha256 of bytes or Pieces (hashlib lets other threads run while it hashes a large buffer)."""
    h = hashlib.sha256()
    for view in (data.views() if isinstance(data, Pieces) else [data]):
        h.update(view)
    return h.hexdigest()


def write_json_atomic(path, obj):
    write_atomic(path, (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode("utf-8"))


def read_header(path):
    """(header dict without __metadata__, metadata dict, data offset) of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (too short)")
        (n,) = struct.unpack("<Q", raw)
        header = json.loads(f.read(n).decode("utf-8"))
    meta = header.pop("__metadata__", None) or {}
    return header, meta, 8 + n


def read_tensors(path):
    """name -> numpy array; bfloat16 tensors come back as float32 (exact: bfloat16 is float32's top half)."""
    out = {}
    for name, (canon, shape, raw) in read_raw(path).items():
        if canon == "bfloat16":
            arr = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            arr = raw.view(np.dtype(canon).newbyteorder("<"))
        out[name] = arr.reshape(shape)
    return out


def read_raw(path):
    """name -> (canonical dtype, shape, flat uint8 numpy array of the tensor's bytes), no conversion.

    The arrays are read-only views of the file mapped into memory (MAP_POPULATE: read ahead in one go where the
    platform has it), not a copy: a Triton child binds a seed file for each seed, the first again for its timing, and
    each other case's, and read() copied each from the page cache into a new buffer first (400 MB: 190-570 ms a file
    against 60-120 ms mapped, on the CPU machine). A
    golden file is never rewritten in place (write_atomic: a new file, then a rename), so a mapping cannot change
    under its reader; a write through the views raises (read-only)."""
    header, _, offset = read_header(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        for name, info in header.items():
            begin, end = info["data_offsets"]
            if not 0 <= begin <= end or offset + end > size:
                raise ValueError(f"{path}: tensor {name} lies outside the file ({offset + end} > {size} bytes)")
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        blob = mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ) if size > 0 else b""
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        out[name] = (ST_DTYPES[info["dtype"]], tuple(info["shape"]),
                     np.frombuffer(blob, dtype=np.uint8, count=end - begin, offset=offset + begin))
    return out
