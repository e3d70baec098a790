"""The cubins Triton compiled for a candidate (`triton-run --dump-cubin DIR`; docs/TRITON.md).

Primary source: a fresh, per-run TRITON_CACHE_DIR. The runner points Triton's cache at an empty folder
before the kernel module (and so triton) is imported; every kernel the process then compiles lands there as
`<cache>/<hash>/<name>.cubin` beside `<name>.json` (its metadata: name, num_warps, num_stages, shared, ...).
This relies on one documented environment variable and a file extension, not on Triton's internals, and it
catches kernels defined in any module run_kernel reaches (helpers, autotuned variants).

Fallback, when the cache folder holds no cubin (a custom TRITON_CACHE_MANAGER, say): the JIT functions the
kernel module binds at top level (through autotune/heuristics wrappers, via `.fn`), and their in-memory
caches: `JITFunction.device_caches[device][0]` maps a specialisation key to a CompiledKernel whose
`asm["cubin"]` is the binary (triton 3.2 to 3.6). Both are read after warm-up, once run_kernel has run.
"""

import hashlib
import json
import os
import re

META_KEYS = ("name", "num_warps", "num_stages", "num_ctas", "shared", "cluster_dims", "maxnreg", "arch")


def _meta_subset(meta):
    out = {}
    for k in META_KEYS:
        if k in meta and isinstance(meta[k], (int, float, str, bool, list)):
            out[k] = meta[k]
    target = meta.get("target")
    if isinstance(target, dict) and "arch" in target:
        out["arch"] = target["arch"]
    return out


def from_cache_dir(cache_dir):
    """[{"name", "data", "metadata", "source"}] for every .cubin under a Triton cache folder, sorted by path."""
    found = []
    for root, _, files in os.walk(cache_dir):
        for f in sorted(files):
            if not f.endswith(".cubin"):
                continue
            stem = f[:-len(".cubin")]
            meta = {}
            meta_path = os.path.join(root, stem + ".json")
            if os.path.isfile(meta_path):
                try:
                    with open(meta_path, encoding="utf-8") as fh:
                        meta = json.load(fh)
                except (OSError, ValueError):
                    meta = {}
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read()
            found.append({"name": str(meta.get("name") or stem), "data": data, "metadata": _meta_subset(meta),
                          "source": "triton_cache_dir", "path": os.path.join(root, f)})
    found.sort(key=lambda e: e["path"])
    for e in found:
        del e["path"]
    return found


def _jit_functions(module):
    """JIT functions bound at the module's top level, unwrapping Autotuner/Heuristics (`.fn`)."""
    seen, out = set(), []
    for value in list(vars(module).values()):
        obj, depth = value, 0
        while obj is not None and depth < 8:
            if id(obj) in seen:
                break
            if hasattr(obj, "device_caches") or (hasattr(obj, "cache") and hasattr(obj, "run") and
                                                 hasattr(obj, "fn") and hasattr(obj, "arg_names")):
                seen.add(id(obj))
                out.append(obj)
                break
            obj, depth = getattr(obj, "fn", None), depth + 1
    return out


def _compiled_kernels(jit):
    caches = getattr(jit, "device_caches", None)
    if caches is not None:  # triton >= 3.2: device -> (kernel_cache, target, backend, binder)
        for entry in list(caches.values()):
            cache = entry[0] if isinstance(entry, tuple) else entry
            yield from list(cache.values())
        return
    cache = getattr(jit, "cache", None)  # older: device -> {key: CompiledKernel}
    if isinstance(cache, dict):
        for per_device in list(cache.values()):
            if isinstance(per_device, dict):
                yield from list(per_device.values())


def from_jit_caches(module):
    found = []
    for jit in _jit_functions(module):
        for k in _compiled_kernels(jit):
            asm = getattr(k, "asm", None) or {}
            data = asm.get("cubin") if hasattr(asm, "get") else None
            if not isinstance(data, (bytes, bytearray)):
                continue
            meta = getattr(k, "metadata", None)
            meta_dict = meta._asdict() if hasattr(meta, "_asdict") else (meta if isinstance(meta, dict) else {})
            name = getattr(k, "name", None) or meta_dict.get("name") or getattr(jit, "__name__", "kernel")
            found.append({"name": str(name), "data": bytes(data), "metadata": _meta_subset(meta_dict),
                          "source": "jit_cache"})
    return found


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "kernel"


def write(entries, out_dir):
    """Writes each distinct cubin as OUT/<name>.cubin (<name>-<sha8>.cubin when a name repeats) and returns
    [{"file", "kernel", "sha256", "bytes", "source", "metadata"}] (also written as OUT/cubins.json)."""
    os.makedirs(out_dir, exist_ok=True)
    listing, by_sha, used = [], set(), set()
    for e in entries:
        sha = hashlib.sha256(e["data"]).hexdigest()
        if sha in by_sha:
            continue
        by_sha.add(sha)
        base = _safe(e["name"])
        fname = base + ".cubin"
        if fname in used:
            fname = f"{base}-{sha[:8]}.cubin"
        used.add(fname)
        path = os.path.join(os.path.abspath(out_dir), fname)
        with open(path, "wb") as fh:
            fh.write(e["data"])
        listing.append({"file": path, "kernel": e["name"], "sha256": sha, "bytes": len(e["data"]),
                        "source": e["source"], "metadata": e["metadata"]})
    from .store import write_json_atomic  # noqa: PLC0415

    write_json_atomic(os.path.join(out_dir, "cubins.json"),
                      {"meta": {"kind": "triton_cubins", "producer": "kopt_harness"}, "cubins": listing})
    return listing


def collect(cache_dir, module):
    """Cubins from the per-run cache folder, else from the module's JIT caches."""
    entries = from_cache_dir(cache_dir) if cache_dir and os.path.isdir(cache_dir) else []
    return entries if entries else from_jit_caches(module)
