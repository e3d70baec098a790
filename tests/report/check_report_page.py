#!/usr/bin/env python3
"""Opens kopt's summary.html in headless Chromium and checks it as a person would see it.

Writes the page with `kopt report --html` into a copy of a recorded run directory, loads it in Chromium (the
Debian package) driven through the Chrome DevTools Protocol over a pipe (--remote-debugging-pipe: no port, no
network, only the standard library), and fails on: any console error or warning, any uncaught exception, any
request other than the page itself (it must be self-contained), a chart that is missing, empty or not drawn,
a table with the wrong number of rows, or a sortable column that does not sort; and, for what a kernel engineer looks
at first (issue 37): the champion's source, its diff against the baseline and the reproduce command; each
candidate's achieved TFLOP/s and GB/s and ptxas resources; the parameter ablation and the methods that lost; the
per-shape and held-out tables; a roofline whose axes fit the data; no horizontal overflow at 1280 px; only relative
links. Expected values come from the run directory's own files (state.json, ablation.json, champion/, build.json,
roofline.json), not from the page. Saves a full-page screenshot at 1280 px.

Exit status: 0 passed, 1 failed (each failure on stderr), 77 skipped (no chromium on this machine).
Usage: check_report_page.py --kopt build/kopt --run tests/data/report/run_sgemm_h200 --screenshot out.png
"""
import argparse
import base64
import difflib
import glob
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
WIDTH = 1280  # the page must be readable at this width: no horizontal overflow


class Cdp:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages separated by NUL bytes on fds 3 and 4."""

    def __init__(self, chromium, profile_dir):
        to_browser_r, self._w = os.pipe()
        self._r, from_browser_w = os.pipe()

        def wire_fds():  # in the child: the browser reads commands on fd 3 and writes replies on fd 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)  # dup2 leaves the new descriptor inheritable; Python's own (close-on-exec) close at exec
            os.dup2(b, 4)

        args = [chromium, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={profile_dir}", "about:blank"]
        self._log = open(pathlib.Path(profile_dir).parent / "chromium.log", "w+b")
        self.proc = subprocess.Popen(args, preexec_fn=wire_fds, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next = 0
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe: " + self.stderr_tail())
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=30):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def stderr_tail(self):
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-1500:]

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def expected_from_run(run):
    """What the page must show, counted from the run directory's files (independently of kopt's loader)."""
    state = json.loads((run / "state.json").read_text())
    history = state["history"]
    ok = [h for h in history if h["status"] == "ok"]
    ablation_dirs = glob.glob(str(run / "iter_*/ablation/candidates/*"))
    ablation = []
    for f in sorted(run.glob("iter_*/ablation.json")):
        ablation += json.loads(f.read_text())["methods"]
    champion = state["champion"]["candidate"]["id"]
    mix = (run / "iter_00_baseline/sass.json").exists() and bool(glob.glob(str(run / f"iter_*/candidates/{champion}/sass.json")))
    params = []
    for f in sorted(run.glob("iter_*/ablation.json")):
        params += json.loads(f.read_text()).get("params", [])
    # methods tried that the champion lacks
    champ_methods = set(state["champion"]["candidate"]["methods"])
    lost = sorted({m for h in history if h["candidate"]["id"] != "baseline" for m in h["candidate"]["methods"]} - champ_methods)
    # the champion's build: ptxas registers and shared memory; the workload model: its TFLOP/s
    champ_build = glob.glob(str(run / f"iter_*/candidates/{champion}/build.json"))
    resources = json.loads(pathlib.Path(champ_build[0]).read_text())["resources"] if champ_build else []
    floor = json.loads((run / "iter_00_baseline/roofline.json").read_text())["floor"]
    champ_ms = state["champion"]["median_ms"]
    summary = json.loads((run / "summary.json").read_text())
    roofs = json.loads((run / "ceilings.json").read_text())["roofs"]
    compute = [roofs[t["roof"]]["value"] for t in floor["compute_terms"]] + [roofs["fp32_fma"]["value"]]
    bandwidth = [roofs[n]["value"] for n in (floor["dram_roof"], "l2_read") if n in roofs]
    ai = floor["arithmetic_intensity"]
    ridges = [c * 1000 / b for c in compute for b in bandwidth]
    return {"roof_bounds_x": ridges + [ai], "roof_bounds_y": compute + [min(max(compute), b * ai / 1000) for b in bandwidth],
            "candidates": len(history) + len(ablation_dirs), "ok": len(ok), "timeline": len(state["timeline"]),
            "ablation": len(ablation), "ablation_timed": sum(1 for a in ablation if "attribution_ms" in a),
            "champion": champion, "champion_params": state["champion"]["candidate"].get("params", {}), "mix": mix, "params": params, "lost": lost,
            "registers": max((r["registers"] for r in resources), default=None),
            "smem_kib": max((r["shared_bytes"] for r in resources), default=None),
            "tflops": floor["flops"] / (champ_ms * 1e-3) / 1e12, "gbps": floor["bytes_min"] / (champ_ms * 1e-3) / 1e9,
            "ai": floor["arithmetic_intensity"], "options": json.loads((run / "options.json").read_text()),
            "recorded_dir": summary.get("run_dir", ""),
            "cases": len(summary.get("cases", {}).get("cases", [])), "holdout": len(summary.get("holdout", {}).get("cases", []))}


def add_shapes(run):
    """As a run over a workload matrix with held-out shapes records them in summary.json (loop/multi_case.cpp
    case_table_json, loop/holdout.cpp to_json): the page's per-shape and held-out tables. Figures of the fixture's
    baseline and champion; the second case and the shapes are made up in those formats."""
    s = json.loads((run / "summary.json").read_text())
    b, c = s["headline"]["baseline_ms"], s["headline"]["champion_ms"]
    dims = {"M": 4096, "N": 4096, "K": 4096}
    small = {"M": 1024, "N": 1024, "K": 1024}
    s["cases"] = {"cases": [
        {"name": "user", "requested": dims, "realised": dims, "fitted": False, "weight": 1.0, "baseline_ms": b, "champion_ms": c,
         "ratio": c / b, "speedup": b / c, "floor_ms": 2.087, "efficiency": 2.087 / c, "note": "",
         "ratio_ci95": [c / b * 0.995, c / b * 1.005], "verdict": "faster"},
        {"name": "m1024", "requested": small, "realised": small, "fitted": False, "weight": 0.5, "baseline_ms": 0.0921,
         "champion_ms": 0.0603, "ratio": 0.0603 / 0.0921, "speedup": 0.0921 / 0.0603, "floor_ms": 0.0326, "efficiency": 0.0326 / 0.0603,
         "note": "", "ratio_ci95": [0.65, 0.66], "verdict": "faster"}],
        "geomean": {"cases": 2, "ratio": 0.62, "speedup": 1 / 0.62}}
    odd = {"M": 4095, "N": 4097, "K": 4093}
    case = lambda n, d: {"name": n, "requested": d, "realised": d, "weight": 1.0, "origin": "holdout_derived", "line": 0, "note": "", "fitted": False}
    s["holdout"] = {"passed": 1, "outside_domain": 0, "champion_fails": 1, "not_run": 0,
                    "warning": "the champion fails at 1 held-out shape(s) where the baseline passes; do not use it at such shapes without a fix:\n  odd_n",
                    "note": "", "cases": [
        {"case": case("odd", odd), "verdict": "pass", "baseline": {"status": "ok", "message": "", "median_ms": 5.19},
         "champion": {"status": "ok", "message": "", "median_ms": 3.05}, "text": "odd: both correct"},
        {"case": case("odd_n", {"M": 4096, "N": 4095, "K": 4096}), "verdict": "champion_fails",
         "baseline": {"status": "ok", "message": "", "median_ms": 5.18},
         "champion": {"status": "wrong_result", "message": "C[0, 4094] = 0 but the reference has 12.5", "median_ms": None},
         "text": "odd_n: the champion fails where the baseline passes"}]}
    # The whole wall as the loop records it (state.json "wall", issue 36): figures of a live H200 run.
    s["wall"] = {"whole_s": 84.1, "gates_s": 27.6, "first_candidate_s": 29.9, "champion_s": 50.9}
    (run / "summary.json").write_text(json.dumps(s))


# Runs in the page: what Chart.js drew and what the tables hold.
PROBE = r"""(() => {
  const charts = {};
  for (const c of document.querySelectorAll("canvas")) {
    const ch = Chart.getChart(c);
    let painted = 0;
    if (c.width && c.height) {
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < px.length; i += 16) if (px[i] !== 0) painted++;
    }
    charts[c.id] = ch ? { type: ch.config.type, painted,
      datasets: ch.data.datasets.map((d) => ({ label: d.label, type: d.type || ch.config.type,
                                              points: d.data.filter((v) => v !== null && v !== undefined && !(typeof v === "object" && !Array.isArray(v) && v.y === null)).length })),
      labels: (ch.data.labels || []).length } : null;
  }
  const tables = {};
  for (const t of document.querySelectorAll("table")) tables[t.id] = t.tBodies.length ? t.tBodies[0].rows.length : 0;
  const err = document.getElementById("page-error");
  const rf = Chart.getChart(document.getElementById("chart-roofline"));
  const scale = (k) => (rf ? { min: rf.scales[k].min, max: rf.scales[k].max } : null);
  const roofPoints = rf ? rf.data.datasets.filter((d) => d.type === "scatter").flatMap((d) => d.data.map((p) => [p.x, p.y])) : [];
  const cand = document.getElementById("table-candidates");
  const heads = Array.from(cand.tHead.rows[0].cells).map((th) => th.textContent);
  const champRow = Array.from(cand.tBodies[0].rows).find((r) => r.classList.contains("champion"));
  const champCells = champRow ? Object.fromEntries(heads.map((h, i) => [h, champRow.cells[i].textContent])) : {};
  const box = cand.parentElement;
  const rows = (id) => Array.from(document.getElementById(id).tBodies[0].rows).map((r) => Array.from(r.cells).map((c) => c.textContent));
  const visible = (id) => { const e = document.getElementById(id); return !!e && !e.hidden && e.offsetParent !== null; };
  return JSON.stringify({ rendered: document.body.dataset.koptRendered || "", error: err.hidden ? "" : err.textContent,
                          charts, tables, title: document.title, mix_note: document.getElementById("mix-note").textContent,
                          reproduce: document.getElementById("reproduce").textContent,
                          headline: document.getElementById("headline").textContent,
                          diff: document.getElementById("champion-diff").textContent,
                          source: document.getElementById("champion-source").textContent,
                          hrefs: Array.from(document.querySelectorAll("a[href]")).map((a) => a.getAttribute("href")),
                          roof_x: scale("x"), roof_y: scale("y"), roof_points: roofPoints,
                          heads, champ_cells: champCells, candidates_note: document.getElementById("candidates-note").textContent,
                          param_rows: rows("table-param-ablation"), lost_rows: rows("table-lost-methods"),
                          cases_rows: rows("table-cases"), holdout_rows: rows("table-holdout"),
                          holdout_note: document.getElementById("holdout-note").textContent,
                          sections: Object.fromEntries(["champion", "cases", "holdout", "param-ablation", "lost-methods"].map((id) => [id, visible(id)])),
                          width: { viewport: window.innerWidth, page: document.documentElement.scrollWidth, body: document.body.scrollWidth,
                                   box_client: box.clientWidth, box_right: box.getBoundingClientRect().right,
                                   box_overflow: getComputedStyle(box).overflowX } });
})()"""

NO_MODEL = r"""(() => {
  const t = document.getElementById("table-candidates");
  const heads = Array.from(t.tHead.rows[0].cells).map((th) => th.textContent);
  const champ = Array.from(t.tBodies[0].rows).find((r) => r.classList.contains("champion"));
  return JSON.stringify({ rendered: document.body.dataset.koptRendered || "", heads,
    champ_cells: champ ? Object.fromEntries(heads.map((h, i) => [h, champ.cells[i].textContent])) : {},
    note: document.getElementById("candidates-note").textContent }); })()"""


def occupancy_sm90(registers, shared_bytes, threads):
    """The CUDA occupancy calculator's theoretical occupancy on sm_90, written again here (independently of kopt's
    compile/occupancy.cpp): 64 warps, 32 blocks, 64K registers in 256-register units per warp over 4 sub-partitions,
    228 KiB shared memory in 128-byte units with 1 KiB reserved per block. Returns (percent, limiter)."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    limits = [(min(64 // warps, 2048 // threads), "threads"),
              ((16384 // per_warp) * 4 // warps if per_warp else 1 << 30, "registers"),
              (233472 // (-(-(shared_bytes + 1024) // 128) * 128), "shared memory"), (32, "blocks per SM")]
    blocks, why = min(limits, key=lambda x: x[0])
    return blocks * warps * 100 / 64, why

SORT = r"""(() => {
  const t = document.getElementById("table-candidates");
  const ths = Array.from(t.tHead.rows[0].cells);
  const i = ths.findIndex((th) => th.textContent === "median ms");
  ths[i].click();
  const asc = Array.from(t.tBodies[0].rows).map((r) => r.cells[i].dataset.sort);
  ths[i].click();
  const desc = Array.from(t.tBodies[0].rows).map((r) => r.cells[i].dataset.sort);
  return JSON.stringify({ asc, desc, aria: ths[i].getAttribute("aria-sort") });
})()"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kopt", required=True)
    ap.add_argument("--run", required=True, help="a recorded run directory (copied; never written)")
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--chromium", default=None)
    a = ap.parse_args()
    chromium = a.chromium or find_chromium()
    if not chromium:
        print("SKIP: no chromium on this machine (scripts/setup.sh installs the Debian package)")
        return SKIP

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run = pathlib.Path(tmp) / "run"
        shutil.copytree(a.run, run)
        # As a run on two GPUs records it (state.json's `measuring`, docs/MULTI_GPU.md): the page's GPUs table.
        state = json.loads((run / "state.json").read_text())
        state["measuring"] = {"wall_s": 20.0, "per_slot": [
            {"slot": 0, "name": "GPU 0 (NVIDIA H200)", "runs": 7, "lost": 0, "busy_s": 17.5},
            {"slot": 1, "name": "GPU 1 (NVIDIA H200)", "runs": 6, "lost": 1, "busy_s": 15.0}]}
        (run / "state.json").write_text(json.dumps(state))
        add_shapes(run)
        r = subprocess.run([a.kopt, "report", "--html", str(run)], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(f"FAIL: kopt report --html exited {r.returncode}: {r.stderr}", file=sys.stderr)
            return 1
        page = run / "summary.html"
        want = expected_from_run(run)
        url = url2 = ""
        cdp = Cdp(chromium, pathlib.Path(tmp) / "profile")
        try:
            target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            s = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                cdp.send(domain + ".enable", session=s)
            cdp.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=s)
            url = page.resolve().as_uri()
            cdp.send("Page.navigate", {"url": url}, session=s)
            cdp.wait_event("Page.loadEventFired", timeout=60)
            probe = json.loads(cdp.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True}, session=s)["result"]["value"])
            sort = json.loads(cdp.send("Runtime.evaluate", {"expression": SORT, "returnByValue": True, "userGesture": True}, session=s)["result"]["value"])
            # The full page, as tall as its content.
            height = int(cdp.send("Page.getLayoutMetrics", session=s)["cssContentSize"]["height"])
            cdp.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=s)
            shot = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=s, timeout=60)
            pathlib.Path(a.screenshot).write_bytes(base64.b64decode(shot["data"]))
            cdp.send("Runtime.evaluate", {"expression": "1"}, session=s)  # drain events raised by the resize
            # The same run without a workload model: no achieved rates, and the page says why.
            plain = pathlib.Path(tmp) / "plain"
            shutil.copytree(run, plain)
            for f in plain.glob("iter_*/roofline.json"):
                f.unlink()
            # Its candidates as a derived space names sgemm_tunable's block ((BM/TM)*(BN/TN) threads): each candidate's
            # occupancy is then known (kopt annotate's KERNEL_BLOCK naming, docs/ANNOTATIONS.md).
            for f in plain.glob("iter_*/candidates/*/candidate.json"):
                c = json.loads(f.read_text())
                pr = c.get("params", {})
                if all(k in pr for k in ("BM", "BN", "TM", "TN")):
                    pr["SGEMM_TUNABLE_BLOCK"] = (pr["BM"] // pr["TM"]) * (pr["BN"] // pr["TN"])
                    f.write_text(json.dumps(c))
            r2 = subprocess.run([a.kopt, "report", "--html", str(plain)], capture_output=True, text=True, timeout=60)
            url2 = (plain / "summary.html").resolve().as_uri()
            cdp.send("Page.navigate", {"url": url2}, session=s)
            cdp.wait_event("Page.loadEventFired", timeout=60)
            no_model = json.loads(cdp.send("Runtime.evaluate", {"expression": NO_MODEL, "returnByValue": True}, session=s)["result"]["value"])
        finally:
            cdp.close()

        # ---- what the browser reported ----
        for e in cdp.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                failures.append("uncaught exception: " + d.get("exception", {}).get("description", d.get("text", "")))
            elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "warning", "assert"):
                failures.append(f"console.{p['type']}: " + " ".join(str(x.get("value", x.get("description", ""))) for x in p["args"]))
            elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                failures.append(f"browser log {p['entry']['level']}: {p['entry']['text']} {p['entry'].get('url', '')}")
            elif m == "Network.requestWillBeSent" and p["request"]["url"] not in (url, url2):
                failures.append("the page requested " + p["request"]["url"] + " (it must be self-contained)")
            elif m == "Network.loadingFailed":
                failures.append("a load failed: " + p.get("errorText", ""))

        # ---- what the page shows ----
        if probe["rendered"] != "1":
            failures.append("the page's script did not finish (body lacks data-kopt-rendered=1)")
        if probe["error"]:
            failures.append("the page shows an error: " + probe["error"])
        charts = probe["charts"]
        for cid in ("chart-roofline", "chart-conv-evals", "chart-conv-time", "chart-ablation", "chart-utilisation",
                    "chart-phases") + (("chart-mix",) if want["mix"] else ()):
            c = charts.get(cid)
            if not c:
                failures.append(f"{cid}: no Chart.js chart")
                continue
            if sum(d["points"] for d in c["datasets"]) == 0:
                failures.append(f"{cid}: no data")
            if c["painted"] < 50:
                failures.append(f"{cid}: the canvas is (nearly) blank ({c['painted']} painted samples)")

        def points(cid, label_part):
            return sum(d["points"] for d in charts.get(cid, {}).get("datasets", []) if label_part in (d["label"] or ""))

        roof = charts.get("chart-roofline") or {"datasets": []}
        kernels = sum(d["points"] for d in roof["datasets"] if d["type"] == "scatter")
        roofs = [d for d in roof["datasets"] if d["type"] == "line"]
        if kernels != want["ok"]:
            failures.append(f"roofline: {kernels} kernel points, expected {want['ok']} (every correct evaluation)")
        if len(roofs) < 3:
            failures.append(f"roofline: {len(roofs)} roofs drawn, expected at least 3 (DRAM, L2, FP32)")
        if points("chart-roofline", "champion") != 1:
            failures.append("roofline: the champion is not drawn once")
        if points("chart-conv-evals", "measured") != want["ok"]:
            failures.append(f"convergence: {points('chart-conv-evals', 'measured')} measured points, expected {want['ok']}")
        if points("chart-conv-time", "measured") != want["ok"]:
            failures.append(f"convergence (wall time): {points('chart-conv-time', 'measured')} points, expected {want['ok']}")
        if points("chart-ablation", "95% CI") != want["ablation_timed"]:
            failures.append(f"ablation chart: {points('chart-ablation', '95% CI')} bars, expected {want['ablation_timed']}")
        mix = charts.get("chart-mix") or {"datasets": [], "labels": 0}
        if want["mix"] and (len(mix["datasets"]) != 2 or mix["labels"] < 3):
            failures.append(f"instruction mix: {len(mix['datasets'])} series over {mix['labels']} classes, expected baseline and champion")
        if not want["mix"] and "not recorded" not in probe["mix_note"]:
            failures.append("instruction mix: the run has no SASS captures and the page does not say so")
        tables = probe["tables"]
        for tid, n in (("table-candidates", want["candidates"]), ("table-ablation", want["ablation"]), ("table-timeline", want["timeline"]),
                       ("table-gpus", 2)):
            if tables.get(tid) != n:
                failures.append(f"{tid}: {tables.get(tid)} rows, expected {n}")
        if tables.get("table-mix", 0) < (3 if want["mix"] else 1):
            failures.append(f"table-mix: {tables.get('table-mix')} rows")
        profile_tables = [t for t in tables if t.startswith("table-profile-")]
        if len(profile_tables) < 3 or any(tables[t] == 0 for t in profile_tables):
            failures.append(f"profile: {len(profile_tables)} metric tables ({tables}), expected one per axis, each with rows")
        if want["champion"] not in probe["title"] and "kopt" not in probe["title"]:
            failures.append("title: " + probe["title"])

        # ---- the champion: source, diff against the baseline, reproduce command (issue 37) ----
        champ_file = run / "champion" / pathlib.Path(want["options"]["kernel"]).name
        base_file = champ_file.parent / ("baseline_" + champ_file.name)
        if not probe["sections"]["champion"]:
            failures.append("the champion section is not shown")
        if probe["source"] != champ_file.read_text():
            failures.append("the champion's source on the page differs from " + str(champ_file.relative_to(run)))
        page_diff = [l for l in probe["diff"].splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
        want_diff = [l for l in difflib.unified_diff(base_file.read_text().splitlines(), champ_file.read_text().splitlines(), lineterm="", n=3)
                     if l[:1] in "+-" and not l.startswith(("+++", "---"))]
        if not want_diff or page_diff != want_diff:
            failures.append(f"the diff's changed lines differ from difflib's over champion/: page {page_diff[:6]}, expected {want_diff[:6]}")
        words = probe["reproduce"].split("\n")[-1].split()
        opts = want["options"]
        expect_words = ["kopt", "bench", f"champion/{champ_file.name}", "--arch", opts["arch"]] + [f"{k}={v}" for k, v in opts["dims"].items()]
        missing = [w for w in expect_words if w not in words]
        if missing or words[:3] != ["kopt", "bench", f"champion/{champ_file.name}"]:
            failures.append(f"reproduce command {probe['reproduce']!r} lacks {missing}")
        if "--ref" in words:
            ref = words[words.index("--ref") + 1]
            resolved = os.path.normpath(os.path.join(want["recorded_dir"], ref)) if not ref.startswith("/") else ref
            if resolved != opts["ref"]:
                failures.append(f"the reproduce command's --ref {ref} is not the run's ref.py {opts['ref']} from the run directory")
        else:
            failures.append("the reproduce command has no --ref")
        if sum(w == "--dim" for w in words) != len(opts["dims"]):
            failures.append("the reproduce command does not give every dim as --dim NAME=VALUE")

        # ---- per-candidate achieved rate and ptxas resources ----
        cells = probe["champ_cells"]
        for head in ("TFLOP/s", "GB/s", "regs per thread", "smem KiB", "spill B"):
            if head not in probe["heads"]:
                failures.append(f"candidates table: no '{head}' column")
        if abs(float(cells.get("TFLOP/s", "nan")) - want["tflops"]) > 0.01:
            failures.append(f"champion TFLOP/s {cells.get('TFLOP/s')}, expected {want['tflops']:.2f} (workload FLOPs / median)")
        if abs(float(cells.get("GB/s", "nan")) - want["gbps"]) > 0.1:
            failures.append(f"champion GB/s {cells.get('GB/s')}, expected {want['gbps']:.1f}")
        if want["registers"] is not None and cells.get("regs per thread") != str(want["registers"]):
            failures.append(f"champion registers {cells.get('regs/thread')}, build.json says {want['registers']}")
        if want["smem_kib"] is not None and cells.get("smem KiB") != f"{want['smem_kib'] / 1024:.1f}":
            failures.append(f"champion shared memory {cells.get('smem KiB')} KiB, build.json says {want['smem_kib']} bytes")

        # ---- occupancy per candidate: unknown where the block size is not named, the calculator's figure where it is ----
        if "occupancy" not in probe["heads"]:
            failures.append("candidates table: no 'occupancy' column")
        elif want["registers"] is not None and cells.get("occupancy") != "unknown (block size not known)":
            failures.append(f"champion occupancy {cells.get('occupancy')!r}: sgemm_tunable's block size is not in its "
                            f"configuration, so it must say 'unknown (block size not known)'")
        champ_params = want["champion_params"]
        if want["registers"] is not None and all(k in champ_params for k in ("BM", "BN", "TM", "TN")):
            threads = (champ_params["BM"] // champ_params["TM"]) * (champ_params["BN"] // champ_params["TN"])
            pct, why = occupancy_sm90(want["registers"], want["smem_kib"] or 0, threads)
            expect = f"{pct:.0f}% ({why})"
            print(f"check_report_page: champion occupancy with its block named: {no_model['champ_cells'].get('occupancy')} (expected {expect})")
            got = no_model["champ_cells"].get("occupancy")
            if got != expect:
                failures.append(f"champion occupancy with its block named ({threads} threads, {want['registers']} registers, "
                                f"{want['smem_kib']} B shared): {got!r}, the occupancy calculator says {expect!r}")

        # ---- parameter ablation and the methods that lost ----
        if len(probe["param_rows"]) != len(want["params"]) or not want["params"]:
            failures.append(f"parameter ablation: {len(probe['param_rows'])} rows, ablation.json has {len(want['params'])}")
        for row, p in zip(probe["param_rows"], want["params"]):
            if row[2] != p["param"] or row[5] != p["effect"] or row[3] != str(p["champion_value"]) or row[4] != str(p["baseline_value"]):
                failures.append(f"parameter ablation row {row[:6]} is not {p['param']} {p['champion_value']}->{p['baseline_value']} {p['effect']}")
            if "saved_ms" in p and f"{p['saved_ms']['median']:.4f}" != row[6]:
                failures.append(f"parameter ablation of {p['param']}: saved {row[6]}, ablation.json {p['saved_ms']['median']:.4f}")
        timed_params = sum(1 for p in want["params"] if "saved_ms" in p)
        if points("chart-param-ablation", "95% CI") != timed_params:
            failures.append(f"parameter ablation chart: {points('chart-param-ablation', '95% CI')} bars, expected {timed_params}")
        if sorted(r[0] for r in probe["lost_rows"]) != want["lost"]:
            failures.append(f"methods that lost: {[r[0] for r in probe['lost_rows']]}, expected {want['lost']}")
        if any(r[4] in ("", "n/a") for r in probe["lost_rows"] if r[2] != "0"):
            failures.append("a lost method tried by a correct candidate has no figure")

        if r2.returncode != 0 or no_model["rendered"] != "1":
            failures.append(f"the run without a workload model: kopt report exited {r2.returncode}, rendered {no_model['rendered']!r}")
        if "TFLOP/s" in no_model["heads"] or "GB/s" in no_model["heads"] or "omitted" not in no_model["note"]:
            failures.append(f"without a workload model the rates must be omitted and said: {no_model}")

        # ---- per-shape and held-out tables ----
        if not probe["sections"]["cases"] or len(probe["cases_rows"]) != want["cases"]:
            failures.append(f"per-shape table: {len(probe['cases_rows'])} rows, summary.json has {want['cases']}")
        for card in ("84.1 swhole wall", "27.6 sgates passed at", "29.9 sfirst candidate at", "50.9 schampion found at"):
            if card not in probe["headline"]:
                failures.append(f"headline: no '{card}' card (the run's wall): {probe['headline']}")
        if not probe["sections"]["holdout"] or len(probe["holdout_rows"]) != want["holdout"]:
            failures.append(f"held-out table: {len(probe['holdout_rows'])} rows, summary.json has {want['holdout']}")
        if "WARNING" not in probe["holdout_note"]:
            failures.append("the held-out shapes' warning is not shown")

        # ---- the roofline's axes fit the data: every point inside, bounded by the data and the roofs with a margin ----
        xs = [p[0] for p in probe["roof_points"]]
        ys = [p[1] for p in probe["roof_points"]]
        rx, ry = probe["roof_x"], probe["roof_y"]
        if not xs or not rx or not ry:
            failures.append("roofline: no kernel points or no axes")
        else:
            if not (rx["min"] < min(xs) and max(xs) < rx["max"]):
                failures.append(f"roofline: kernel intensity {xs[0]} on or outside the x axis [{rx['min']}, {rx['max']}]")
            if not (ry["min"] < min(ys) and max(ys) < ry["max"]):
                failures.append(f"roofline: kernel rates [{min(ys)}, {max(ys)}] on or outside the y axis [{ry['min']}, {ry['max']}]")
            if rx["max"] / rx["min"] > 1e4:
                failures.append(f"roofline: the x axis spans {rx['max'] / rx['min']:.0f}x, more than the data and roofs need")
            if ry["max"] / ry["min"] > 1e3:
                failures.append(f"roofline: the y axis spans {ry['max'] / ry['min']:.0f}x, more than the data and roofs need")
            # bounded by the data: the ridge points and the kernels' intensity (x), the kernels' rates, the compute
            # roofs and the bandwidth roofs at that intensity (y), each with the page's factor-2 margin
            xb, yb = want["roof_bounds_x"], want["roof_bounds_y"]
            ys_all = ys + yb
            if rx["min"] < min(xb) / 2.01 or rx["max"] > max(xb) * 2.01:
                failures.append(f"roofline: x axis [{rx['min']:.3g}, {rx['max']:.3g}] is not bounded by the data and roofs [{min(xb):.3g}, {max(xb):.3g}]")
            if ry["min"] < min(ys_all) / 2.01 or ry["max"] > max(ys_all) * 2.01:
                failures.append(f"roofline: y axis [{ry['min']:.3g}, {ry['max']:.3g}] is not bounded by the data and roofs [{min(ys_all):.3g}, {max(ys_all):.3g}]")

        # ---- readable at 1280 px, links relative ----
        w = probe["width"]
        if w["page"] > w["viewport"] or w["body"] > w["viewport"]:
            failures.append(f"the page overflows {WIDTH} px horizontally ({w})")
        if w["box_right"] > w["viewport"] or w["box_overflow"] not in ("auto", "scroll"):
            failures.append(f"the candidates table's container is not a scroll container inside the page ({w})")
        for href in probe["hrefs"]:
            if href.startswith(("/", "file:", "http:", "https:")) or ":" in href.split("/")[0] or "\\" in href:
                failures.append(f"a link is not relative: {href}")
            elif not href.startswith("#") and not (run / href).exists():
                failures.append(f"a relative link points at nothing in the run directory: {href}")
        if not any(h.startswith("champion/") for h in probe["hrefs"]):
            failures.append("no link to the champion's file")

        # ---- sorting, as a click does it ----
        def numbers(keys):
            return [float(k) for k in keys if k != ""]
        asc, desc = numbers(sort["asc"]), numbers(sort["desc"])
        if asc != sorted(asc) or len(asc) < want["ok"]:
            failures.append(f"sorting by median ms (ascending) gave {asc}")
        if desc != sorted(desc, reverse=True):
            failures.append(f"sorting by median ms (descending) gave {desc}")
        if sort["asc"][len(asc):] != [""] * (len(sort["asc"]) - len(asc)):
            failures.append("rows without a median are not last after sorting")
        if sort["aria"] != "descending":
            failures.append("the sorted column heading is not marked (aria-sort)")

    size = os.path.getsize(a.screenshot) if os.path.exists(a.screenshot) else 0
    if size < 20_000:
        failures.append(f"the screenshot is {size} bytes")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        return 1
    print(f"passed: {len(charts)} charts, tables {tables}; screenshot {a.screenshot} ({size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
