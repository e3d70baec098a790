"""kopt_harness.store's safetensors reader: the tensors' bytes as read-only views of the mapped file."""

import json
import struct

import numpy as np
import pytest
from conftest import PYTHON_DIR  # noqa: F401 (puts kopt_harness on sys.path)

from kopt_harness import store


def write_file(path, tensors, header_extra=None):
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        raw = arr.tobytes()
        header[name] = {"dtype": {"float32": "F32", "int32": "I32"}[arr.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header.update(header_extra or {})
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def test_each_tensor_reads_back_byte_for_byte_and_cannot_be_written(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.integers(-9, 9, 7).astype(np.int32)
    p = tmp_path / "seed_1.safetensors"
    write_file(p, {"in.a": a, "out.b": b, "in.empty": np.zeros(0, np.float32)})
    t = store.read_raw(str(p))
    assert t["in.a"][:2] == ("float32", (3, 5)) and t["in.a"][2].tobytes() == a.tobytes()
    assert t["out.b"][:2] == ("int32", (7,)) and t["out.b"][2].tobytes() == b.tobytes()
    assert t["in.empty"][2].size == 0
    with pytest.raises(ValueError):  # a view of the mapped file: read-only
        t["in.a"][2][0] = 1
    np.testing.assert_array_equal(store.read_tensors(str(p))["in.a"], a)


def test_a_file_rewritten_atomically_leaves_a_reader_its_own_bytes(tmp_path):
    p = tmp_path / "seed_1.safetensors"
    write_file(p, {"in.a": np.arange(4, dtype=np.float32)})
    before = store.read_raw(str(p))
    tmp = tmp_path / "next.safetensors"
    write_file(tmp, {"in.a": np.arange(4, 8, dtype=np.float32)})
    tmp.replace(p)  # as store.write_atomic does: a new file renamed over the old
    assert before["in.a"][2].view(np.float32).tolist() == [0, 1, 2, 3]
    assert store.read_raw(str(p))["in.a"][2].view(np.float32).tolist() == [4, 5, 6, 7]


def test_a_tensor_past_the_end_of_a_truncated_file_is_an_input_error(tmp_path):
    p = tmp_path / "seed_1.safetensors"
    write_file(p, {"in.a": np.arange(64, dtype=np.float32)})
    p.write_bytes(p.read_bytes()[:-16])
    with pytest.raises(ValueError, match="outside the file"):
        store.read_raw(str(p))


def _pieces_of(tensors, metadata):
    return store.safetensors_pieces(
        {n: (a.dtype.name, a.shape, a.reshape(-1).view(np.uint8)) for n, a in tensors.items()}, metadata)


@pytest.mark.parametrize("metadata", [{"kopt_harness": "seed 3"}, None])
def test_the_writer_makes_the_librarys_bytes_without_copying_a_tensor(tmp_path, metadata):
    """safetensors_pieces lays tensors out as safetensors' serialize() does (by dtype, then name; the header padded
    to 8 bytes): the same bytes, so a seed file's sha256 (the golden data's identity) did not move; its tensors are
    the arrays' own memory, not copies."""
    from safetensors.numpy import load, save  # noqa: PLC0415

    rng = np.random.default_rng(11)
    tensors = {
        "out.y": rng.standard_normal(37).astype(np.float32),
        "in.x": rng.standard_normal((3, 5)).astype(np.float32),
        "in.h": rng.standard_normal(9).astype(np.float16),
        "in.d": rng.standard_normal(4),
        "in.i8": rng.integers(-5, 5, 13).astype(np.int8),
        "in.u8": rng.integers(0, 5, 3).astype(np.uint8),
        "in.i16": rng.integers(-5, 5, 6).astype(np.int16),
        "in.u16": rng.integers(0, 5, 6).astype(np.uint16),
        "in.i32": rng.integers(-5, 5, 2).astype(np.int32),
        "in.u32": rng.integers(0, 5, 2).astype(np.uint32),
        "in.i64": rng.integers(-5, 5, 5),
        "in.u64": rng.integers(0, 5, 5).astype(np.uint64),
        "in.mask": rng.random(11) < 0.5,
        "in.empty": np.zeros(0, dtype=np.float32),
    }
    pieces = _pieces_of(tensors, metadata)
    want = save(tensors, metadata=metadata)
    assert pieces.join() == want and len(pieces) == len(want)
    assert store.sha256_hex(pieces) == store.sha256_hex(want)
    # no tensor is copied: each piece after the header is the array's own memory
    for view in (v for v in pieces.views()[1:] if len(v)):
        assert any(np.shares_memory(np.frombuffer(view, np.uint8), a) for a in tensors.values() if a.size)
    path = tmp_path / "seed_3.safetensors"
    store.write_atomic(str(path), pieces)
    assert path.read_bytes() == want
    back = load(path.read_bytes())
    assert back.keys() == tensors.keys() and all(np.array_equal(back[n], tensors[n]) for n in tensors)
