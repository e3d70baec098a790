#!/usr/bin/env python3
"""Fetch the third-party kernel sources that examples/corpus/ wraps (issue 35).

Nothing of these projects is committed to kopt: each corpus kernel is a wrapper of ours (kernel.cu with our
own `extern "C" void solve(...)`, or a Triton kernel.py with our own setup()/run_kernel()) that includes or
imports the project's kernel from examples/corpus/_fetched/ (git-ignored), which this script fills.

The sources come from PyPI wheels, fetched by pip (`pip download --no-deps --only-binary :all:
--require-hashes`), pinned by version and sha256, kept in a cache folder, and unpacked (only the members the
wrappers need, and each project's licence files) into examples/corpus/_fetched/<name>-<version>/.

Usage:
  python3 scripts/corpus/fetch.py             # download what is missing (about 15 MB), unpack; idempotent
  python3 scripts/corpus/fetch.py --offline   # unpack from the cache only; a missing archive is an error
  python3 scripts/corpus/fetch.py --check     # exit 0 when every package is unpacked, else 1 (no network)
  python3 scripts/corpus/fetch.py --list      # the pinned packages, one a line
Options: --only NAME (repeatable), --cache DIR, --dest DIR.
Cache: $KOPT_CORPUS_CACHE, else $KOPT_CACHE_DIR/corpus, else $XDG_CACHE_HOME/kopt/corpus, else ~/.cache/kopt/corpus.
Exit codes: 0 done, 1 a download or an unpack failed (the message says which), 4 bad usage.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEST = REPO / "examples" / "corpus" / "_fetched"

# name, version, wheel file, sha256, licence, members: (prefix in the wheel, where it goes under DEST/<name>-<version>/)
PACKAGES = [
    {
        "name": "nvidia-cutlass",
        "version": "4.2.0.0",
        "file": "nvidia_cutlass-4.2.0.0-py3-none-any.whl",
        "sha256": "f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6",
        "licence": "BSD-3-Clause",
        "members": [
            ("cutlass_library/source/examples/cute/tutorial/", "examples/cute/tutorial/"),
            ("cutlass_library/source/examples/00_basic_gemm/", "examples/00_basic_gemm/"),
            ("cutlass_library/source/examples/common/", "examples/common/"),
            ("cutlass_library/source/tools/util/include/", "tools/util/include/"),
            ("nvidia_cutlass-4.2.0.0.dist-info/", "dist-info/"),
        ],
    },
    {
        "name": "flashinfer-python",
        "version": "0.5.3",
        "file": "flashinfer_python-0.5.3-py3-none-any.whl",
        "sha256": "b601293b72f9138bad173edc28df84b9f239a013be974e2e79d4ba98aeb38cf5",
        "licence": "Apache-2.0",
        "members": [
            ("flashinfer/data/include/", "include/"),
            ("flashinfer_python-0.5.3.dist-info/", "dist-info/"),
        ],
    },
    {
        "name": "liger-kernel",
        "version": "0.8.5",
        "file": "liger_kernel-0.8.5-py3-none-any.whl",
        "sha256": "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9",
        "licence": "BSD-2-Clause",
        "members": [
            ("liger_kernel/", "liger_kernel/"),
            ("liger_kernel-0.8.5.dist-info/", "dist-info/"),
        ],
    },
    {
        "name": "fla-core",
        "version": "0.6.0",
        "file": "fla_core-0.6.0-py3-none-any.whl",
        "sha256": "b0708b70e0b119cd58a0a5146ea56cb175cef6ed969d8ac60267e3e077ce3ebd",
        "licence": "MIT",
        "members": [
            ("fla/", "fla/"),
            ("fla_core-0.6.0.dist-info/", "dist-info/"),
        ],
    },
]


def cache_dir(arg):
    if arg:
        return Path(arg)
    if os.environ.get("KOPT_CORPUS_CACHE"):
        return Path(os.environ["KOPT_CORPUS_CACHE"])
    if os.environ.get("KOPT_CACHE_DIR"):
        return Path(os.environ["KOPT_CACHE_DIR"]) / "corpus"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kopt" / "corpus"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def unpacked_dir(dest, pkg):
    return dest / f"{pkg['name']}-{pkg['version']}"


def is_unpacked(dest, pkg):
    stamp = unpacked_dir(dest, pkg) / ".fetched.json"
    try:
        return json.loads(stamp.read_text()).get("sha256") == pkg["sha256"]
    except (OSError, ValueError):
        return False


def download(pkg, archives):
    """The wheel in the cache, downloaded by pip when it is missing or its hash is wrong."""
    path = archives / pkg["file"]
    if path.is_file() and sha256_of(path) == pkg["sha256"]:
        return path, False
    archives.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kopt-corpus-") as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(f"{pkg['name']}=={pkg['version']} --hash=sha256:{pkg['sha256']}\n")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes",
               "--disable-pip-version-check", "-q", "-r", str(req), "-d", tmp]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        got = Path(tmp) / pkg["file"]
        if r.returncode != 0 or not got.is_file():
            raise RuntimeError(f"pip download {pkg['name']}=={pkg['version']} failed:\n{r.stdout.strip()}")
        if sha256_of(got) != pkg["sha256"]:
            raise RuntimeError(f"{pkg['file']}: sha256 differs from the pinned one")
        shutil.move(str(got), str(path))
    return path, True


def unpack(pkg, archive, dest):
    out = unpacked_dir(dest, pkg)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    n = 0
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            for prefix, target in pkg["members"]:
                if info.filename == prefix or (prefix.endswith("/") and info.filename.startswith(prefix)):
                    rel = target + info.filename[len(prefix):] if prefix.endswith("/") else target
                    p = tmp / rel
                    if ".." in Path(rel).parts:
                        raise RuntimeError(f"{archive.name}: member {info.filename} leaves the folder")
                    p.parent.mkdir(parents=True, exist_ok=True)
                    with z.open(info) as src, open(p, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    n += 1
                    break
    (tmp / ".fetched.json").write_text(json.dumps({"name": pkg["name"], "version": pkg["version"],
                                                    "file": pkg["file"], "sha256": pkg["sha256"],
                                                    "licence": pkg["licence"], "files": n}, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--cache")
    ap.add_argument("--dest")
    a = ap.parse_args(argv)
    names = {p["name"] for p in PACKAGES}
    for o in a.only:
        if o not in names:
            print(f"fetch.py: unknown package {o!r} (known: {', '.join(sorted(names))})", file=sys.stderr)
            return 4
    pkgs = [p for p in PACKAGES if not a.only or p["name"] in a.only]
    dest = Path(a.dest) if a.dest else DEST
    if a.list:
        for p in pkgs:
            print(f"{p['name']}=={p['version']}  {p['licence']}  {p['file']}  sha256:{p['sha256']}")
        return 0
    if a.check:
        missing = [p["name"] for p in pkgs if not is_unpacked(dest, p)]
        if missing:
            print("fetch.py: not fetched: " + ", ".join(missing) + " (run python3 scripts/corpus/fetch.py)")
            return 1
        print(f"fetch.py: all {len(pkgs)} packages are unpacked in {dest}")
        return 0
    archives = cache_dir(a.cache) / "archives"
    failed = 0
    t0 = time.monotonic()
    for p in pkgs:
        if is_unpacked(dest, p):
            print(f"fetch.py: {p['name']}=={p['version']}: already unpacked")
            continue
        try:
            path = archives / p["file"]
            if a.offline:
                if not (path.is_file() and sha256_of(path) == p["sha256"]):
                    raise RuntimeError(f"{path} is missing or differs from the pinned sha256 (--offline)")
                fresh = False
            else:
                path, fresh = download(p, archives)
            n = unpack(p, path, dest)
            size = path.stat().st_size / 1e6
            print(f"fetch.py: {p['name']}=={p['version']}: {'downloaded' if fresh else 'from the cache'} "
                  f"({size:.1f} MB), {n} files unpacked into {unpacked_dir(dest, p)}")
        except (RuntimeError, OSError, zipfile.BadZipFile) as e:
            print(f"fetch.py: {p['name']}=={p['version']}: {e}", file=sys.stderr)
            failed += 1
    print(f"fetch.py: done in {time.monotonic() - t0:.1f} s" + (f", {failed} failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
