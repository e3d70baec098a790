#!/usr/bin/env bash
# Call 6 (session 19): why gcc aborts in the sealed Triton child when kopt's cache lies under /tmp (diagnostic).
set -u
export OUT=${OUT:-$PWD/check_out}
R=$PWD
B=$(mktemp -d /tmp/sealdiag.XXXX)
cat > $B/run.py <<'PY'
import os, subprocess, sys, json, sysconfig, glob
from kopt_harness import sealed
B = sys.argv[1]; mode = sys.argv[2]
import triton.backends.nvidia as nv
d = os.path.dirname(nv.__file__)
src = os.path.join(d, "driver.c")
env = {"TMPDIR": "/tmp", "KOPT_CACHE_DIR": B + "/cache"}
root = B + "/cache/sealed"
alt = sealed._prepare_tmpdir(env, root)
if mode != "plain":
    os.environ["TMPDIR"] = alt
    st = sealed.seal_away(root)
else:
    st = {"sealed": False}
out = os.path.join(alt, "cu_%s.so" % mode)
cmd = ["/opt/gcc/bin/gcc" if os.path.exists("/opt/gcc/bin/gcc") else "gcc", src, "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", out,
       "-l:libcuda.so.1", "-L" + os.path.join(d, "lib"), "-L/usr/local/nvidia/lib64", "-L/lib", "-I" + os.path.join(d, "include"),
       "-I" + sysconfig.get_paths()["include"]]
r = subprocess.run(cmd, capture_output=True, text=True)
r2 = subprocess.run(["strace", "-f", "-e", "trace=%file,%process", "-o", os.path.join(alt, "strace.txt")] + cmd, capture_output=True, text=True) if r.returncode != 0 and os.path.exists("/usr/bin/strace") else None
tail = open(os.path.join(alt, "strace.txt")).read()[-3000:] if r2 is not None else ""
print(json.dumps({"mode": mode, "sealed": st.get("sealed"), "rc": r.returncode, "err": r.stderr[-1500:], "strace_tail": tail}))
PY
cd $B
for m in plain sealed; do PYTHONPATH=$R/python timeout 60 python3 $B/run.py $B $m 2>&1 | tail -5; done
