"""`inspect DIR`: the manifest, then each seed file's tensors (dtype, shape, min/max/mean)."""

import json
import os

import numpy as np

from . import store
from .errors import UsageError


def summarize_file(path):
    """[{name, dtype, shape, nbytes, min, max, mean}] for one safetensors file (numpy only)."""
    header, meta, _ = store.read_header(path)
    tensors = store.read_tensors(path)
    rows = []
    for name in sorted(header):
        info, arr = header[name], tensors[name]
        row = {"name": name, "dtype": store.ST_DTYPES.get(info["dtype"], info["dtype"]), "shape": info["shape"],
               "nbytes": info["data_offsets"][1] - info["data_offsets"][0]}
        if arr.size:
            a = arr.astype(np.float64)
            row.update({"min": float(a.min()), "max": float(a.max()), "mean": float(a.mean())})
        rows.append(row)
    return {"file": os.path.basename(path), "metadata": meta, "tensors": rows}


def run(folder, as_json=False):
    mpath = os.path.join(folder, "manifest.json")
    try:
        with open(mpath, encoding="utf-8") as f:
            manifest = json.load(f)
    except OSError as e:
        raise UsageError(f"{mpath}: cannot read it ({e.strerror}); is {folder} a golden folder?") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{mpath}: not valid JSON ({e})") from None
    files = [f["file"] for f in manifest.get("files", [])]
    summaries = []
    for name in files:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            raise UsageError(f"{path}: listed in the manifest but missing")
        summaries.append(summarize_file(path))
    if as_json:
        print(json.dumps({"manifest": manifest, "files": summaries}, indent=2))
        return
    print(json.dumps(manifest, indent=2))
    for s in summaries:
        print(f"\n{s['file']}  {s['metadata']}")
        for r in s["tensors"]:
            stats = (f"  min {r['min']:.6g}  max {r['max']:.6g}  mean {r['mean']:.6g}" if "min" in r else "")
            print(f"  {r['name']:<24} {r['dtype']:<9} {str(r['shape']):<20} {r['nbytes']:>12} B{stats}")
