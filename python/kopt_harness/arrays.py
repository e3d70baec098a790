"""The array library ref.py works with: numpy, or torch (on CPU or CUDA).

Values are always drawn with numpy (so a seed gives the same inputs under both) and handed to the reference
as the backend's arrays. Stored copies are CPU and contiguous: numpy arrays, or CPU torch tensors.
"""

import importlib.util
import sys
import types

import numpy as np

from . import dtypes
from .errors import UsageError


def torch_available():
    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def import_torch():
    import torch  # noqa: PLC0415 (imported only where it is used: it takes seconds)

    return torch


def is_torch_tensor(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def is_array(x):
    return isinstance(x, np.ndarray) or is_torch_tensor(x)


def dtype_name(x):
    """Canonical dtype of a numpy array or torch tensor, or a description of why it has none."""
    if isinstance(x, np.ndarray):
        return dtypes.from_numpy_dtype(x.dtype) or f"numpy {x.dtype}"
    return dtypes.from_torch_dtype(x.dtype) or str(x.dtype)


def module_uses_torch(module):
    """True when ref.py binds torch, a torch submodule or something defined in torch at module level."""
    for value in vars(module).values():
        if isinstance(value, types.ModuleType):
            name = value.__name__
        else:
            name = getattr(value, "__module__", None) or ""
            if not isinstance(name, str):
                continue
        if name == "torch" or name.startswith("torch."):
            return True
    return False


class NumpyBackend:
    name = "numpy"

    def __init__(self):
        self.device = "cpu"

    def adopt(self, x):
        """A contiguous array of this backend holding x (a copy where x is not already one)."""
        if is_torch_tensor(x):
            x = x.detach().cpu().numpy()
        return np.ascontiguousarray(x)

    def from_draw(self, arr, d):
        """(the backend's array of drawn values, a host copy of its bytes that no reference call can reach, or None
        where there is none and stored() must make one)."""
        if d.name == "bfloat16":
            raise UsageError("bfloat16 needs torch (numpy has no bfloat16): install torch and use it in ref.py")
        return np.ascontiguousarray(arr), None  # the array itself goes to the reference

    def zeros(self, shape, d):
        npd = dtypes.numpy_dtype(d)
        if npd is None:
            raise UsageError(f"{d.name} needs torch (numpy has no {d.name}): install torch and use it in ref.py")
        return np.zeros(shape, dtype=npd)

    def stored(self, x):
        """A CPU, contiguous copy for the golden file."""
        return np.array(x, copy=True, order="C")

    def host(self, x):
        """x's values on the host, contiguous: x itself where it is already (to read, never to keep)."""
        return np.ascontiguousarray(x)

    def snapshot(self, x):
        """None: the numpy backend's inputs are compared on the host, where they already are (host(), same_bytes)."""
        return None

    def copy_into(self, dst, src):
        np.copyto(dst, np.asarray(src).reshape(dst.shape), casting="unsafe")

    def fill_zero(self, x):
        x.fill(0)

    def synchronize(self):
        pass


SNAPSHOT_MAX_BYTES = 4 << 30  # TorchBackend.snapshot(): larger inputs are compared on the host


class TorchBackend:
    name = "torch"

    def __init__(self, device):
        self.torch = import_torch()
        self.device = device  # "cpu" or "cuda"

    def tdtype(self, d):
        return getattr(self.torch, d.torch_name)

    def adopt(self, x):
        t = self.torch
        if isinstance(x, np.ndarray):
            x = t.from_numpy(np.ascontiguousarray(x))
        return x.detach().to(self.device).contiguous()

    def from_draw(self, arr, d):
        t = self.torch.from_numpy(np.ascontiguousarray(arr))
        if d.name == "bfloat16":
            t = t.to(self.torch.bfloat16)
        # on CUDA the host tensor is the stored copy as it is (the reference sees only the device's): no copy back
        return t.to(self.device), (t if self.device == "cuda" else None)

    def zeros(self, shape, d):
        return self.torch.zeros(shape, dtype=self.tdtype(d), device=self.device)

    def stored(self, x):
        return x.detach().to("cpu", copy=True).contiguous()

    def host(self, x):
        return x.detach().to("cpu").contiguous()

    def snapshot(self, x):
        """A device copy of input x taken before the reference runs, for same_as_snapshot() after it; None on the CPU
        (host() reads x where it is), or where the copy would take more than an eighth of the free device memory or
        SNAPSHOT_MAX_BYTES (the reference may need that memory: the host comparison instead). On CUDA the host way
        copies every input back into a fresh pageable buffer of its size and compares it there, within the seed's
        "store" phase (H100, 2026-12-06: "store" 1.09 s of 2.16 for vector_add's 3 seeds at 2^24)."""
        if self.device != "cuda":
            return None
        nbytes = x.numel() * x.element_size()
        free, _ = self.torch.cuda.mem_get_info()
        if nbytes > SNAPSHOT_MAX_BYTES or nbytes * 8 > free:
            return None
        return x.detach().clone()

    def same_as_snapshot(self, x, snap):
        """Whether x holds the bytes snapshot() copied, bit for bit (NaN payloads and the sign of zero too)."""
        u8 = self.torch.uint8
        return bool(self.torch.equal(x.detach().reshape(-1).view(u8), snap.reshape(-1).view(u8)))

    def copy_into(self, dst, src):
        if isinstance(src, np.ndarray):
            src = self.torch.from_numpy(np.ascontiguousarray(src))
        dst.copy_(src.reshape(dst.shape))

    def fill_zero(self, x):
        x.zero_()

    def synchronize(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()


def stored_bytes(x):
    """The raw bytes of a stored (CPU, contiguous) array, as a flat uint8 numpy array."""
    if isinstance(x, np.ndarray):
        return x.reshape(-1).view(np.uint8)
    torch = sys.modules["torch"]
    return x.reshape(-1).view(torch.uint8).numpy()


def same_bytes(a, b):
    """Whether two flat uint8 arrays (stored_bytes) hold the same bytes: compared 8 bytes at a time where both sizes
    allow (three times faster than byte by byte: 8 against 25 ms at 64 MiB)."""
    if a.size != b.size:
        return False
    if a.size % 8 == 0:
        try:
            return bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))
        except ValueError:  # a view the buffer's alignment refuses: byte by byte
            pass
    return bool(np.array_equal(a, b))


def numel(x):
    return int(x.size) if isinstance(x, np.ndarray) else int(x.numel())


def shape_of(x):
    return tuple(int(s) for s in x.shape)


def choose(module, setup_arrays, device_arg):
    """The backend for this ref.py: torch when it uses torch or setup returns torch tensors, else numpy.
    device_arg is "auto", "cpu" or "cuda"."""
    wants_torch = module_uses_torch(module) or any(is_torch_tensor(v) for v in setup_arrays.values())
    if not wants_torch:
        if device_arg == "cuda":
            raise UsageError("--device cuda needs a ref.py that uses torch; this one uses numpy (use --device auto)")
        return NumpyBackend()
    torch = import_torch()
    has_cuda = bool(torch.cuda.is_available())
    if device_arg == "cuda" and not has_cuda:
        raise UsageError("--device cuda: torch sees no CUDA device (use --device auto or cpu)")
    device = "cuda" if (device_arg in ("auto", "cuda") and has_cuda) else "cpu"
    return TorchBackend(device)
