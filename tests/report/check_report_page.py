#!/usr/bin/env python3
"""Opens kopt's summary.html in headless Chromium and checks it as a person would see it.

Writes the page with `kopt report --html` into a copy of a recorded run directory, loads it in Chromium (the
Debian package) driven through the Chrome DevTools Protocol over a pipe (--remote-debugging-pipe: no port, no
network, only the standard library), and fails on: any console error or warning, any uncaught exception, any
request other than the page itself (it must be self-contained), a chart that is missing, empty or not drawn,
a table with the wrong number of rows, or a sortable column that does not sort. Expected counts come from the
run directory's own files (state.json, ablation.json), not from the page. Saves a full-page screenshot.

Exit status: 0 passed, 1 failed (each failure on stderr), 77 skipped (no chromium on this machine).
Usage: check_report_page.py --kopt build/kopt --run tests/data/report/run_sgemm_h200 --screenshot out.png
"""
import argparse
import base64
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
    return {"candidates": len(history) + len(ablation_dirs), "ok": len(ok), "timeline": len(state["timeline"]),
            "ablation": len(ablation), "ablation_timed": sum(1 for a in ablation if "attribution_ms" in a),
            "champion": champion, "mix": mix}


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
  return JSON.stringify({ rendered: document.body.dataset.koptRendered || "", error: err.hidden ? "" : err.textContent,
                          charts, tables, title: document.title, mix_note: document.getElementById("mix-note").textContent });
})()"""

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
        r = subprocess.run([a.kopt, "report", "--html", str(run)], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(f"FAIL: kopt report --html exited {r.returncode}: {r.stderr}", file=sys.stderr)
            return 1
        page = run / "summary.html"
        want = expected_from_run(run)
        cdp = Cdp(chromium, pathlib.Path(tmp) / "profile")
        try:
            target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            s = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                cdp.send(domain + ".enable", session=s)
            cdp.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}, session=s)
            url = page.resolve().as_uri()
            cdp.send("Page.navigate", {"url": url}, session=s)
            cdp.wait_event("Page.loadEventFired", timeout=60)
            probe = json.loads(cdp.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True}, session=s)["result"]["value"])
            sort = json.loads(cdp.send("Runtime.evaluate", {"expression": SORT, "returnByValue": True, "userGesture": True}, session=s)["result"]["value"])
            # The full page, as tall as its content.
            height = int(cdp.send("Page.getLayoutMetrics", session=s)["cssContentSize"]["height"])
            cdp.send("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=s)
            shot = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=s, timeout=60)
            pathlib.Path(a.screenshot).write_bytes(base64.b64decode(shot["data"]))
            cdp.send("Runtime.evaluate", {"expression": "1"}, session=s)  # drain events raised by the resize
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
            elif m == "Network.requestWillBeSent" and p["request"]["url"] != url:
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
