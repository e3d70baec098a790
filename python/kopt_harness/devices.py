"""Where the Triton runner keeps its buffers and how it times: torch on CUDA (the real thing), and, for tests
on machines without a GPU, torch on the CPU or plain numpy. Every operation the runner needs is here, so the
runner's protocol (poison, upload, download, compare, sample) is the same code on all three.

CUDA specifics:
* `synchronize()` is torch.cuda.synchronize(), i.e. cudaDeviceSynchronize: device-wide, so work the kernel
  put on any stream is finished before anything is read.
* The timer records CUDA events on torch's current stream, which is the stream Triton launches on.
* `flush(i)` fills a 256 MiB buffer (more than 4x the H200's 60 MiB L2) on that stream.
* `sleep(cycles)` (torch.cuda._sleep) holds the stream while a sample is queued behind it (sampling.py).
"""

import time
import warnings

import numpy as np

from . import dtypes
from .compare import TorchBackend

compare_torch_supports = TorchBackend.supports
from .runresult import CUDA_ERROR, LOAD_ERROR, Fatal

FLUSH_BYTES = 256 << 20


class HostTimer:
    """perf_counter around the call (CPU devices): the stop is taken after the call returned."""

    def __init__(self, ops):
        self.ops = ops
        self.t0 = self.t1 = 0.0

    def start(self):
        self.t0 = time.perf_counter()

    def stop(self):
        self.ops.synchronize()
        self.t1 = time.perf_counter()

    def wait_stop(self):
        pass

    def elapsed_ms(self):
        return (self.t1 - self.t0) * 1e3


class CudaTimer:
    def __init__(self, torch):
        self.start_ev = torch.cuda.Event(enable_timing=True)
        self.stop_ev = torch.cuda.Event(enable_timing=True)

    def start(self):
        self.start_ev.record()

    def stop(self):
        self.stop_ev.record()

    def wait_stop(self):
        """Waits for the stop event only (not for other streams): used to detect work outside the stream."""
        self.stop_ev.synchronize()

    def elapsed_ms(self):
        return float(self.start_ev.elapsed_time(self.stop_ev))


class NumpyOps:
    """CPU buffers as numpy arrays; for tests of the runner protocol without torch or a GPU."""

    name = "numpy"
    is_cuda = False

    def __init__(self):
        self.flush_buf = None

    def empty(self, shape, dtype_name):
        d = dtypes.lookup(dtype_name)
        if not d.numpy_name:
            raise Fatal(LOAD_ERROR, f"{dtype_name} buffers need torch (numpy has no {dtype_name})")
        return np.empty(tuple(shape), dtype=np.dtype(d.numpy_name))

    @staticmethod
    def _bytes(a):
        return a.reshape(-1).view(np.uint8)

    def upload(self, a, raw):
        self._bytes(a)[:] = raw

    def fill_byte(self, a, byte):
        self._bytes(a).fill(byte)

    def download(self, a):
        return self._bytes(a).copy()

    def comparable(self, a, dtype_name):
        """A's bytes in the form compare.py takes, where comparing is cheapest: here a host copy."""
        del dtype_name
        return self.download(a)

    @staticmethod
    def like(got, raw):
        """Host bytes `raw` beside `got` (a comparable()), for compare.py."""
        del got
        return raw

    def adopt(self, v):
        return np.array(v, copy=True) if isinstance(v, np.ndarray) else np.asarray(v.detach().cpu().numpy())

    def spacer(self, nbytes):
        return np.empty(nbytes, dtype=np.uint8)

    def synchronize(self):
        pass

    def alloc_flush(self, nbytes=FLUSH_BYTES):
        self.flush_buf = np.empty(nbytes, dtype=np.uint8)
        return nbytes

    def flush(self, i):
        self.flush_buf.fill(i & 0xFF)

    def timer(self):
        return HostTimer(self)

    def sleep_available(self):
        """Whether samples can be queued behind a GPU sleep (sampling.py: events_behind_sleep)."""
        return False

    def profiler_start(self):
        pass

    def profiler_stop(self):
        pass

    def describe(self):
        return "cpu (numpy)"


class TorchOps(NumpyOps):
    """torch tensors on "cuda" (events, device-wide synchronisation) or "cpu" (perf_counter)."""

    def __init__(self, device):
        super().__init__()
        try:
            import torch  # noqa: PLC0415
        except ImportError as e:
            raise Fatal(LOAD_ERROR, f"the Triton runner needs torch ({e})") from None
        self.torch = torch
        self.device = device
        self.is_cuda = device == "cuda"
        self.name = f"torch-{device}"
        if self.is_cuda and not torch.cuda.is_available():
            raise Fatal(CUDA_ERROR, "torch sees no CUDA device (torch.cuda.is_available() is False)")

    def empty(self, shape, dtype_name):
        d = dtypes.lookup(dtype_name)
        return self.torch.empty(tuple(shape), dtype=getattr(self.torch, d.torch_name), device=self.device)

    def _bytes(self, t):
        return t.reshape(-1).view(self.torch.uint8)

    def upload(self, t, raw):
        # raw is read-only (a mapped golden file, the judge's bytes): torch only copies from it, so no host copy first
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            src = self.torch.from_numpy(np.ascontiguousarray(raw, dtype=np.uint8))
        self._bytes(t).copy_(src)

    def fill_byte(self, t, byte):
        self._bytes(t).fill_(byte)

    def download(self, t):
        return self._bytes(t).detach().to("cpu", copy=True).numpy()

    def comparable(self, t, dtype_name):
        """On the GPU the bytes stay there (a view, no copy) for the dtypes compare.py's torch backend widens
        exactly; elsewhere a host copy."""
        if self.is_cuda and compare_torch_supports(dtype_name):
            return self._bytes(t).detach()
        return self.download(t)

    def like(self, got, raw):
        if isinstance(got, np.ndarray):
            return raw
        with warnings.catch_warnings():  # golden bytes are read-only; the tensor is only copied to the device
            warnings.simplefilter("ignore", UserWarning)
            host = self.torch.from_numpy(np.ascontiguousarray(raw, dtype=np.uint8))
        return host.to(got.device)

    def adopt(self, v):
        if isinstance(v, np.ndarray):
            v = self.torch.from_numpy(np.ascontiguousarray(v))
        return v.detach().to(self.device).contiguous()

    def spacer(self, nbytes):
        return self.torch.empty(nbytes, dtype=self.torch.uint8, device=self.device)

    def synchronize(self):
        if self.is_cuda:
            self.torch.cuda.synchronize()

    def alloc_flush(self, nbytes=FLUSH_BYTES):
        self.flush_buf = self.torch.empty(nbytes, dtype=self.torch.uint8, device=self.device)
        return nbytes

    def flush(self, i):
        self.flush_buf.fill_(i & 0xFF)

    def timer(self):
        return CudaTimer(self.torch) if self.is_cuda else HostTimer(self)

    def sleep_available(self):
        return self.is_cuda and hasattr(self.torch.cuda, "_sleep")

    def sleep(self, cycles):
        """torch.cuda._sleep: a one-thread kernel that spins `cycles` GPU clock cycles on the current stream."""
        self.torch.cuda._sleep(int(cycles))

    def guard_event(self):
        """An event without timing: recorded after the sleep, queried once everything is queued."""
        return self.torch.cuda.Event()

    def sleep_cycles_per_ms(self, cycles=2_000_000):
        """GPU cycles torch.cuda._sleep spins per millisecond here: events around a sleep of `cycles`."""
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        start.record()
        torch.cuda._sleep(int(cycles))
        stop.record()
        stop.synchronize()
        return cycles / max(float(start.elapsed_time(stop)), 1e-6)

    def profiler_start(self):
        if self.is_cuda:
            self.torch.cuda.profiler.start()  # cudaProfilerStart

    def profiler_stop(self):
        if self.is_cuda:
            self.torch.cuda.profiler.stop()  # cudaProfilerStop

    def describe(self):
        if self.is_cuda:
            return f"cuda:{self.torch.cuda.get_device_name(0)}"
        return "cpu (torch)"


def make(device):
    """device: "cuda" (torch on the GPU, the default), "cpu" (torch on the CPU) or "numpy" (tests)."""
    if device == "numpy":
        return NumpyOps()
    if device in ("cuda", "cpu"):
        return TorchOps(device)
    raise ValueError(f"unknown device {device!r}")
