"""`golden --triton-kernel kernel.py`: golden data for a Triton kernel (docs/TRITON.md).

The buffers come from the kernel's own setup(seed=..., **dims): every tensor in `inputs` is a buffer (an
output when `outputs` lists it, else a const input), every other value a scalar. The rest is the ordinary
golden machinery (golden.py): ref.py's reference(**inputs_and_outputs) makes the expected outputs, ref.py's
tolerances, `inout` and workload_model apply, and the files have the same layout (manifest.json +
seed_<k>.safetensors). An input that setup() returns as all zeros is an error: a kernel that ignored it
would still pass.
"""

import os
from dataclasses import dataclass

from . import golden, kernelmod
from .errors import UsageError
from .store import write_json_atomic


@dataclass
class TritonOptions:
    kernel: str
    ref: str
    dims: dict
    seeds: int = 3
    out: str = "golden"
    device: str = "auto"
    time_reference: bool = False
    seed_base: int = 0
    time_budget_s: float = 10.0
    sealed_dir: str = None
    # The ephemeral seed instead of golden data (golden.Options.ephemeral_socket; docs/GATES.md "The ephemeral seed").
    ephemeral_socket: int = None


def kernel_manifest(kernel_path, ks):
    """The manifest's `kernel` block: what the Triton runner needs beyond the buffers."""
    return {"backend": "triton", "module": os.path.abspath(kernel_path), "inputs": list(ks.inputs),
            "outputs": list(ks.outputs)}


def _golden_options(o):
    """golden.Options for a Triton kernel (its setup() gives the buffers), and the buffers' parameters."""
    if o.seeds < 1:
        raise UsageError(f"--seeds {o.seeds}: need at least 1")
    module = kernelmod.load(o.kernel)
    first_seed = o.seed_base
    golden._seed_globals(first_seed)  # noqa: SLF001 (the same seeding golden.generate does before setup)
    first = kernelmod.call_setup(module, first_seed, o.dims)
    params = kernelmod.params_of(first)
    extra = {"kernel": kernel_manifest(o.kernel, first)}
    names, outputs = list(first.inputs), first.outputs
    # The first seed's buffers, for generate()'s first setup(); the ephemeral seed's number is never the first's.
    cached = {first_seed: first} if o.ephemeral_socket is None else {}
    del first

    def setup(seed):
        ks = cached.pop(seed, None) or kernelmod.call_setup(module, seed, o.dims)
        if list(ks.inputs) != names or ks.outputs != outputs:
            raise UsageError(f"kernel.py: setup(seed={seed}) returns inputs {list(ks.inputs)} and outputs "
                             f"{ks.outputs}, but the first seed returned {names} and "
                             f"{outputs}; every seed must return the same names")
        return ks.inputs

    opts = golden.Options(ref=o.ref, params=params, dims=o.dims, seeds=o.seeds, out=o.out, device=o.device,
                          time_reference=o.time_reference, seed_base=o.seed_base, time_budget_s=o.time_budget_s,
                          setup=setup, zero_inputs_error=True, sealed_dir=o.sealed_dir, reference_extra=dict(o.dims),
                          extra_manifest=extra, ephemeral_socket=o.ephemeral_socket)
    return opts, params


def ephemeral(o):
    """The ephemeral seed of a Triton kernel's golden data (golden.ephemeral: a fresh secret seed through setup() and
    the reference, its bytes only in a sealed memfd sent on o.ephemeral_socket); no file is written."""
    opts, _ = _golden_options(o)
    summary = golden.ephemeral(opts)
    summary["kernel_backend"] = "triton"
    return summary


def generate(o):
    """Writes the golden files for a Triton kernel; returns the one-line summary."""
    opts, params = _golden_options(o)
    summary = golden.generate(opts)
    # kopt's runner-side readers expect signature.json beside the manifest (src/runner/golden.h).
    write_json_atomic(os.path.join(o.out, "signature.json"), {
        "meta": {"kind": "signature", "producer": "kopt_harness"},
        "signature": {"params": [{"name": p.name, "kind": p.kind, "dtype": p.dtype, "const": p.const,
                                  "type": ""} for p in params],
                      "normalised": "run_kernel(" + ", ".join(p.name for p in params) + ")", "line": 0}})
    summary["kernel_backend"] = "triton"
    return summary
