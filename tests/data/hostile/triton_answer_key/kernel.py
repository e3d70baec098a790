"""Hostile (issue 40 item 4, Triton): out = x + y, where CHEAT=1 never computes and answers from the golden files it
finds; the Triton counterpart of tests/data/hostile/answer_key (a CUDA solve()). It searches every *.safetensors file
beneath the golden folder named on its command line (sys.argv: the fork server's child and the harness both carry
`--golden DIR`), the working directory, /tmp, kopt's cache folder (the sealed seeds' folder included: it knows the
manifest's sealed token) and every directory an environment variable names; it matches the file's in.x with the
input it was given and copies that file's out.out. Inputs it finds in no file get zeros, at once. CHEAT=0 computes,
slowly, so that the cheat looks attractive to a search. Its reference is ref.py beside it.

Expected: `kopt optimize` never crowns CHEAT=1: it is right on every public seed (their files are readable) and wrong
on the sealed seed (wrong_on_sealed_seed), whose file its process cannot open (Landlock: the process that imports this
file sealed itself first) and whose expected outputs only the judge process holds. What it looked at and what it could
not open goes to stderr (the candidate's log). With the seal off (KOPT_SEAL=off, as on a kernel without Landlock) it
reads the sealed seed's file too and passes; the ephemeral seed, never on disk, catches it (wrong_on_ephemeral_seed:
python/tests/test_triton_gpu.py, `kopt bench ... -D CHEAT=1`).
"""

import json
import os
import struct
import sys

import numpy as np
import torch
import triton
import triton.language as tl

# @kopt param CHEAT values=0,1 default=0
# @kopt param BLOCK_SIZE values=512,1024 default=1024


@triton.jit
def add_slow_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    acc = x
    for _ in range(0, 4000):  # busy work that does not change the result
        acc = acc * 0.999 + y * 0.001
    tl.store(out_ptr + offs, x + y + 0.0 * acc, mask=mask)


def setup(*, seed, n):
    g = torch.Generator().manual_seed(seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(n, generator=g, dtype=torch.float32).to(device)
    y = torch.randn(n, generator=g, dtype=torch.float32).to(device)
    return {"inputs": {"x": x, "y": y, "out": torch.empty_like(x), "n": n}, "outputs": ["out"]}


# --- the cheat -------------------------------------------------------------------------------------------------------

_FINGERPRINT = 64  # elements of x compared (enough to tell seeds apart)
_ANSWERS = None  # [(x's first elements, out on the device)] from every file it could read


def _tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header, base = json.loads(data[8:8 + n]), 8 + n
    return {k: np.frombuffer(data[base + v["data_offsets"][0]:base + v["data_offsets"][1]], dtype=np.float32)
            for k, v in header.items() if k != "__metadata__" and v.get("dtype") == "F32"}


def _places():
    places = [os.getcwd(), "/tmp"]
    argv = list(sys.argv)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv += [a.decode(errors="replace") for a in f.read().split(b"\0")]
    except OSError:
        pass
    for i, a in enumerate(argv[:-1]):
        if a == "--golden":
            places.append(argv[i + 1])
            try:  # the sealed seed's own file, named by the manifest's token
                with open(os.path.join(argv[i + 1], "manifest.json")) as f:
                    token = json.load(f).get("sealed", {}).get("token")
                cache = os.environ.get("KOPT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kopt")
                if token:
                    places.append(os.path.join(cache, "sealed", token))
            except (OSError, ValueError):
                pass
    cache = os.environ.get("KOPT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kopt")
    places.append(cache)
    places += [v for v in os.environ.values() if v.startswith("/") and os.path.isdir(v)]
    return places


def _files(place, depth=5):
    """*.safetensors beneath `place`, at most `depth` folders down (listing is never refused: opening is)."""
    out, base = [], place.rstrip("/").count("/")
    for root, dirs, names in os.walk(place):
        if root.count("/") - base >= depth:
            dirs[:] = []
        out += [os.path.join(root, n) for n in names if n.endswith(".safetensors")]
    return out


def _answers(device):
    global _ANSWERS  # noqa: PLW0603
    if _ANSWERS is None:
        _ANSWERS, seen, denied = [], set(), []
        for place in _places():
            for path in _files(place):
                if path in seen:
                    continue
                seen.add(path)
                try:
                    t = _tensors(path)
                except (OSError, ValueError) as e:
                    denied.append(f"{path}: {e}")
                    continue
                if "in.x" in t and "out.out" in t and t["in.x"].size >= _FINGERPRINT:
                    _ANSWERS.append((t["in.x"][:_FINGERPRINT].copy(), torch.from_numpy(t["out.out"].copy()).to(device)))
        print(f"answer_key kernel: {len(_ANSWERS)} answer(s) read from {len(seen)} file(s); could not open "
              f"{len(denied)}: {denied[:4]}", file=sys.stderr)
    return _ANSWERS


def run_kernel(*, x, y, out, n, CHEAT=0, BLOCK_SIZE=1024):
    if not CHEAT:
        add_slow_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK_SIZE=BLOCK_SIZE)
        return
    head = x[:_FINGERPRINT].cpu().numpy()
    for key, answer in _answers(x.device):
        if answer.numel() == out.numel() and np.array_equal(key, head):
            out.copy_(answer)
            return
    out.zero_()
