// kopt's summary.html: renders the run's data (the JSON in #kopt-data, schema kopt.report_data/1) with Chart.js.
// Everything is inline: the page fetches nothing. When rendering finishes, <body data-kopt-rendered="1">.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("kopt-data").textContent);
  const $ = (id) => document.getElementById(id);
  const COLORS = { baseline: "#2d6cdf", champion: "#1e8e3e", finalist: "#f29900", candidate: "#8a93a5",
                   failed: "#c0392b", best: "#1e8e3e", ablation: "#b07cc6" };
  const VERDICT_COLORS = { effective: "#1e8e3e", ineffective: "#8a93a5", implementation_failed: "#c0392b",
                           unverified: "#f29900", not_ablatable: "#c9ced8" };
  const isNum = (v) => typeof v === "number" && isFinite(v);
  const ms = (v) => (isNum(v) ? v.toFixed(v >= 100 ? 2 : 4) : "n/a");
  const pct = (v) => (isNum(v) ? (100 * v).toFixed(1) + "%" : "n/a");
  const text = (v) => (v === null || v === undefined || v === "" ? "—" : String(v));

  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 12;

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children || []) e.append(c);
    return e;
  }

  // A table from column specs {key, label, num, value(row) -> sortable value, cell(row) -> text or Node}.
  function fillTable(table, columns, rows, rowClass) {
    table.replaceChildren();
    const head = el("tr", {}, columns.map((c) => el("th", { text: c.label, scope: "col", class: c.num ? "num" : "" })));
    const body = el("tbody");
    rows.forEach((r) => {
      const tr = el("tr", { class: rowClass ? rowClass(r) : "" });
      columns.forEach((c) => {
        const v = c.value ? c.value(r) : r[c.key];
        const shown = c.cell ? c.cell(r) : c.num ? (isNum(v) ? String(v) : "n/a") : text(v);
        const td = el("td", { class: (c.num ? "num" : c.wrap ? "wrap" : "") + (c.cls ? " " + c.cls : "") });
        td.dataset.sort = isNum(v) ? String(v) : v === null || v === undefined ? "" : String(v);
        td.append(shown instanceof Node ? shown : document.createTextNode(shown));
        tr.append(td);
      });
      body.append(tr);
    });
    table.append(el("thead", {}, [head]), body);
    if (table.classList.contains("sortable")) makeSortable(table, columns);
  }

  function makeSortable(table, columns) {
    const ths = table.querySelectorAll("thead th");
    ths.forEach((th, i) => {
      th.addEventListener("click", () => {
        const asc = th.getAttribute("aria-sort") !== "ascending";
        ths.forEach((o) => o.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (tr) => tr.cells[i].dataset.sort;
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === "" && y !== "") return 1;  // unknowns last, either way
          if (y === "" && x !== "") return -1;
          const c = columns[i].num ? Number(x) - Number(y) : x.localeCompare(y, undefined, { numeric: true });
          return asc ? c : -c;
        });
        body.append(...rows);
      });
    });
  }

  function tag(value, prefix) {
    return el("span", { class: "tag " + prefix + value, text: text(value) });
  }

  // ---- header ----
  function header() {
    const r = D.run || {};
    const kernel = (r.kernel || "").split("/").pop() || "kernel";
    document.title = "kopt: " + kernel + (r.dims_text ? " [" + r.dims_text + "]" : "");
    $("title").textContent = "kopt run: " + kernel;
    const facts = [["dims", r.dims_text], ["GPU", r.gpu], ["numerics", r.numerics_mode], ["generator", r.generator],
                   ["started", r.started_at], ["stopped", r.stop_reason ? r.stop_reason + (r.stop_detail ? ": " + r.stop_detail : "") : "not finished"]];
    $("run-facts").replaceChildren(...facts.filter((f) => f[1]).map((f) => el("span", { text: f[0] + ": " + f[1] })));
    const h = D.headline || {};
    const rs = D.roofline_summary || {};
    const cards = [["baseline", ms(h.baseline_ms) + " ms"], ["champion " + text(h.champion_id), ms(h.champion_ms) + " ms"],
                   ["speedup vs baseline", isNum(h.speedup_vs_baseline) ? h.speedup_vs_baseline.toFixed(2) + "x" : "n/a"],
                   ["reference (ref.py)", isNum(h.reference_ms) ? ms(h.reference_ms) + " ms" : "n/a"],
                   ["roofline efficiency", pct(rs.efficiency)], ["evaluations", String((D.candidates || []).filter((c) => isNum(c.eval)).length)]];
    // Whole wall as the user waited for it (state.json "wall"; issue 36): only where the run recorded it.
    const w = D.wall || {};
    if (isNum(w.whole_s)) cards.push(["whole wall", w.whole_s.toFixed(1) + " s"]);
    if (isNum(w.gates_s)) cards.push(["gates passed at", w.gates_s.toFixed(1) + " s"]);
    if (isNum(w.first_candidate_s)) cards.push(["first candidate at", w.first_candidate_s.toFixed(1) + " s"]);
    if (isNum(w.champion_s)) cards.push(["champion found at", w.champion_s.toFixed(1) + " s"]);
    $("headline").replaceChildren(...cards.map(([k, v]) => el("div", { class: "card" }, [el("div", { class: "v", text: v }), el("div", { class: "k", text: k })])));
  }


  // ---- the champion: links, reproduce command, diff, source ----
  function champion() {
    const c = D.champion || {};
    const notes = [];
    const links = [];
    if (c.file) links.push(el("a", { href: relHref(c.file), text: "champion: " + c.file }));
    if (c.baseline_file) links.push(el("a", { href: relHref(c.baseline_file), text: "baseline: " + c.baseline_file }));
    $("champion-links").replaceChildren(...links);
    $("reproduce").textContent = c.reproduce ? "# from " + (c.reproduce_cwd || "the run directory") + "\n" + c.reproduce : "";
    if (!c.reproduce) $("reproduce").hidden = true;
    const diff = $("champion-diff");
    diff.replaceChildren();
    if (typeof c.diff === "string" && c.diff) {
      for (const line of c.diff.replace(/\n$/, "").split("\n")) {
        const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
                  : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
        diff.append(cls ? el("span", { class: cls, text: line }) : document.createTextNode(line), document.createTextNode("\n"));
      }
      $("diff-title").textContent = "Diff against the baseline (" + (c.diff_added || 0) + " line(s) added, " + (c.diff_removed || 0) + " removed)";
    } else {
      diff.hidden = true;
    }
    if (typeof c.source === "string") $("champion-source").textContent = c.source;
    else $("champion-source-box").hidden = true;
    for (const k of ["note", "baseline_note", "diff_note", "source_note"]) if (c[k]) notes.push(c[k]);
    $("champion-note").textContent = notes.join(" ");
  }

  // A run directory's file as a link relative to the page (summary.html sits in the run directory).
  function relHref(path) {
    return String(path).split("/").map(encodeURIComponent).join("/");
  }

  const okRows = () => (D.candidates || []).filter((c) => c.status === "ok" && isNum(c.median_ms) && c.role !== "ablation");

  // ---- roofline ----
  // Log axes bounded by what is drawn (the roofs' ridge points, the kernels' intensity and rates) with a margin, so no
  // point sits on an edge and no empty decades are shown.
  const MARGIN = 2;
  function logBounds(values) {
    const v = values.filter((x) => isNum(x) && x > 0);
    return v.length ? [Math.min(...v) / MARGIN, Math.max(...v) * MARGIN] : [1, 10];
  }
  function roofline() {
    const ceil = D.ceilings, w = D.workload;
    const notes = [];
    if (!ceil || !ceil.roofs || !ceil.roofs.length) {
      $("roofline-note").textContent = "No ceilings in this run directory: the roofline cannot be drawn.";
      return;
    }
    const roofs = ceil.roofs;
    const byName = Object.fromEntries(roofs.map((r) => [r.name, r]));
    const dram = byName[(w && w.dram_roof) || ceil.dram_roof];
    let compute = roofs.filter((r) => r.kind === "compute" && r.unit === "TFLOP/s");
    if (w && w.compute_roofs && w.compute_roofs.length) {
      const want = new Set(w.compute_roofs.concat(["fp32_fma"]));
      compute = compute.filter((r) => want.has(r.name));
    }
    const bandwidth = [dram, byName.l2_read].filter(Boolean);
    const ai = w ? (isNum(w.arithmetic_intensity) ? w.arithmetic_intensity : (isNum(w.flops) && w.bytes_min > 0 ? w.flops / w.bytes_min : null)) : null;
    const peak = Math.max(...compute.map((r) => r.value), 1);
    const ridges = [];
    for (const b of bandwidth) for (const c of compute) ridges.push((c.value * 1000) / b.value);
    const tflops = (c) => w.flops / (c.median_ms * 1e-3) / 1e12;
    const placed = ai && isNum(w.flops) ? okRows() : [];
    const [xmin, xmax] = logBounds(ridges.concat(ai ? [ai] : []));
    // y: the kernels' rates, the compute roofs, and the bandwidth roofs where the kernels sit
    const yData = placed.map(tflops).concat(compute.map((c) => c.value));
    if (ai) for (const b of bandwidth) yData.push(Math.min(peak, (b.value * ai) / 1000));
    const [ymin, ymax] = logBounds(yData);
    const datasets = [];
    const palette = ["#37474f", "#6d4c41", "#00838f", "#5e35b1", "#ad1457", "#2e7d32", "#ef6c00"];
    let k = 0;
    for (const b of bandwidth) {
      const x0 = Math.max(xmin, (ymin * 1000) / b.value), top = Math.min(xmax, (peak * 1000) / b.value);
      if (x0 >= top) continue;
      datasets.push({ type: "line", label: b.label + " " + b.value.toFixed(0) + " GB/s (" + b.source + ")",
                      data: [{ x: x0, y: (b.value * x0) / 1000 }, { x: top, y: (b.value * top) / 1000 }], borderColor: palette[k++ % palette.length],
                      borderDash: b.source === "datasheet" ? [6, 4] : [], borderWidth: 2, pointRadius: 0, fill: false });
    }
    for (const c of compute) {
      const start = Math.max(xmin, dram ? (c.value * 1000) / dram.value : xmin);
      if (start >= xmax) continue;
      datasets.push({ type: "line", label: c.label + " " + c.value.toFixed(1) + " TFLOP/s (" + c.source + ")",
                      data: [{ x: start, y: c.value }, { x: xmax, y: c.value }], borderColor: palette[k++ % palette.length],
                      borderDash: c.source === "datasheet" ? [6, 4] : [], borderWidth: 2, pointRadius: 0, fill: false });
    }
    if (placed.length) {
      const groups = [["baseline", (c) => c.role === "baseline", 7, "rectRot"], ["champion", (c) => c.role === "champion", 9, "star"],
                      ["finalist", (c) => c.role === "finalist", 5, "triangle"], ["candidate", (c) => c.role === "candidate", 4, "circle"]];
      for (const [name, pick, radius, style] of groups) {
        const pts = placed.filter(pick).map((c) => ({ x: ai, y: tflops(c), id: c.id, ms: c.median_ms }));
        if (pts.length)
          datasets.push({ type: "scatter", label: name === "candidate" ? "other candidates" : name + (name === "finalist" ? "s" : ""), data: pts,
                          backgroundColor: COLORS[name], borderColor: COLORS[name], pointRadius: radius, pointStyle: style });
      }
    } else {
      notes.push("No workload model: the kernels cannot be placed (ref.py has no workload_model).");
    }
    if (ceil.origin === "datasheet") notes.push("Ceilings from the datasheet: this run directory has no measured ceilings.json.");
    $("roofline-note").textContent = notes.join(" ");
    new Chart($("chart-roofline"), {
      type: "scatter", data: { datasets },
      options: {
        scales: { x: { type: "logarithmic", min: xmin, max: xmax, title: { display: true, text: "arithmetic intensity (FLOP/byte of bytes_min)" } },
                  y: { type: "logarithmic", min: ymin, max: ymax, title: { display: true, text: "TFLOP/s" } } },
        plugins: { tooltip: { callbacks: { label: (c) => (c.raw.id ? c.raw.id + ": " + ms(c.raw.ms) + " ms, " : c.dataset.label + ": ") + c.raw.y.toFixed(2) + " TFLOP/s" } },
                   legend: { position: "right" } } } });
  }

  // ---- convergence ----
  function convergence() {
    const conv = D.convergence || [];
    const base = (D.candidates || []).find((c) => c.role === "baseline");
    const make = (canvas, xKey, xLabel) => {
      const pts = conv.filter((p) => isNum(p[xKey]));
      const measured = pts.filter((p) => isNum(p.median_ms)).map((p) => ({ x: p[xKey], y: p.median_ms, id: p.id }));
      const failed = pts.filter((p) => !isNum(p.median_ms)).map((p) => ({ x: p[xKey], y: null, id: p.id }));
      const best = pts.filter((p) => isNum(p.best_ms)).map((p) => ({ x: p[xKey], y: p.best_ms, id: p.best_id }));
      const datasets = [{ type: "line", label: "best so far", data: best, stepped: "after", borderColor: COLORS.best, borderWidth: 2, pointRadius: 0 },
                        { type: "scatter", label: "measured (median)", data: measured, backgroundColor: COLORS.candidate, pointRadius: 4 }];
      if (base && isNum(base.median_ms) && best.length)
        datasets.push({ type: "line", label: "baseline", data: [{ x: best[0].x, y: base.median_ms }, { x: best[best.length - 1].x, y: base.median_ms }],
                        borderColor: COLORS.baseline, borderDash: [4, 4], borderWidth: 1, pointRadius: 0 });
      new Chart($(canvas), {
        type: "scatter", data: { datasets },
        options: { scales: { x: { type: "linear", title: { display: true, text: xLabel } }, y: { title: { display: true, text: "median ms (lower is better)" } } },
                   plugins: { title: { display: true, text: "best so far against " + xLabel },
                              tooltip: { callbacks: { label: (c) => (c.raw.id || "") + ": " + ms(c.raw.y) + " ms" } } } } });
      return { measured: measured.length, failed: failed.length };
    };
    const a = make("chart-conv-evals", "eval", "evaluations");
    const withTime = conv.filter((p) => isNum(p.time_s)).length;
    make("chart-conv-time", "time_s", "seconds since the run started");
    const notes = [];
    if (a.failed) notes.push(a.failed + " evaluation(s) failed (not plotted; see the candidates table).");
    if (withTime < conv.length) notes.push((conv.length - withTime) + " evaluation(s) have no timestamp and are left out of the wall-time chart.");
    $("convergence-note").textContent = notes.join(" ");
  }

  // ---- candidates ----
  function candidates() {
    const rows = D.candidates || [];
    const base = rows.find((c) => c.role === "baseline");
    const params = Array.from(new Set(rows.flatMap((c) => Object.keys(c.params || {})))).sort();
    const rates = !!(D.rates && D.rates.available);
    // What a kernel engineer reads first comes first (time, rate, resources, why it lost); methods and parameters follow.
    const cols = [
      { key: "id", label: "id", wrap: true }, { key: "iteration", label: "iter", num: true }, { key: "eval", label: "eval", num: true },
      { key: "role", label: "role" }, { key: "status", label: "status" },
      { key: "median_ms", label: "median ms", num: true, cell: (r) => ms(r.median_ms) },
      { key: "ci", label: "95% CI (ms)", value: (r) => (isNum(r.ci95_high_ms) && isNum(r.ci95_low_ms) ? r.ci95_high_ms - r.ci95_low_ms : null),
        num: true, cell: (r) => (isNum(r.ci95_low_ms) ? "[" + ms(r.ci95_low_ms) + ", " + ms(r.ci95_high_ms) + "]" : "n/a") },
      { key: "speedup", label: "vs baseline", num: true,
        value: (r) => (base && isNum(base.median_ms) && isNum(r.median_ms) && r.status === "ok" ? base.median_ms / r.median_ms : null),
        cell: (r) => (base && isNum(base.median_ms) && isNum(r.median_ms) && r.status === "ok" ? (base.median_ms / r.median_ms).toFixed(2) + "x" : "n/a") },
    ].concat(rates ? [{ key: "achieved_tflops", label: "TFLOP/s", num: true, cell: (r) => (isNum(r.achieved_tflops) ? r.achieved_tflops.toFixed(2) : "n/a") },
                      { key: "achieved_gbps", label: "GB/s", num: true, cell: (r) => (isNum(r.achieved_gbps) ? r.achieved_gbps.toFixed(1) : "n/a") }] : [])
     .concat([{ key: "registers", label: "regs per thread", num: true },
              { key: "shared_bytes", label: "smem KiB", num: true, cell: (r) => (isNum(r.shared_bytes) ? (r.shared_bytes / 1024).toFixed(1) : "n/a") },
              { key: "spill_bytes", label: "spill B", num: true, value: (r) => (r.resources_recorded ? r.spill_bytes : null),
                cell: (r) => (r.resources_recorded ? (r.spill_store_bytes || 0) + "/" + (r.spill_load_bytes || 0) : "n/a") },
              { key: "occupancy_pct", label: "occupancy", wrap: true, value: (r) => (isNum(r.occupancy_pct) ? r.occupancy_pct : null),
                cell: (r) => r.occupancy || "n/a" },
              { key: "reason", label: "why not the champion", wrap: true, cls: "reason" },
              { key: "methods", label: "methods", wrap: true, value: (r) => (r.methods || []).join(", ") }])
     .concat(params.map((p) => ({ key: "p_" + p, label: p, num: true, value: (r) => (r.params || {})[p] })));
    const notes = [];
    if (!rates) notes.push("Achieved FLOP/s and B/s are omitted: " + ((D.rates || {}).note || "this run has no workload model") + ".");
    if (!rows.some((r) => r.resources_recorded)) notes.push("No build recorded ptxas resources: registers, shared memory and spills are n/a.");
    notes.push("spill B: bytes of spill stores / loads per thread (ptxas).");
    notes.push("occupancy: theoretical, from the registers, static shared memory and the block size, with the tightest limit named; " +
               "unknown where the configuration does not name the block size.");
    $("candidates-note").textContent = notes.join(" ");
    fillTable($("table-candidates"), cols, rows,
              (r) => (r.role === "champion" ? "champion" : r.role === "baseline" ? "baseline" : r.role === "ablation" ? "ablation" : r.status !== "ok" ? "failed" : ""));
  }

  // ---- ablation ----
  function ablation() {
    const rows = D.ablation || [];
    const timed = rows.filter((a) => a.attribution_ms && isNum(a.attribution_ms.ci95_low));
    const labels = timed.map((a) => a.method + " (iter " + a.iteration + ")");
    new Chart($("chart-ablation"), {
      type: "bar",
      data: { labels, datasets: [
        { type: "bar", label: "95% CI of the time saved (ms)", data: timed.map((a) => [a.attribution_ms.ci95_low, a.attribution_ms.ci95_high]),
          backgroundColor: timed.map((a) => VERDICT_COLORS[a.verdict] || "#8a93a5"), barPercentage: 0.5 },
        { type: "line", indexAxis: "y", label: "median saved (ms)", data: timed.map((a, i) => ({ x: a.attribution_ms.median, y: labels[i] })),
          showLine: false, order: -1, pointStyle: "line", rotation: 90, pointRadius: 14, borderWidth: 3, borderColor: "#1d2433",
          backgroundColor: "#1d2433" }] },
      options: { indexAxis: "y",
                 scales: { x: { grace: "5%", title: { display: true, text: "time the method saves (ms; > 0: it helps)" },
                                grid: { color: (c) => (c.tick && c.tick.value === 0 ? "#1d2433" : "#e3e6ec") } } },
                 plugins: { title: { display: true, text: timed.length ? "measured contribution of each method" : "no method could be ablated in this run" } } } });
    fillTable($("table-ablation"), [
      { key: "iteration", label: "iter", num: true }, { key: "champion_id", label: "champion" }, { key: "method", label: "method" },
      { key: "verdict", label: "verdict", cell: (r) => tag(r.verdict, "v-") }, { key: "sass", label: "SASS", cell: (r) => tag(r.sass, "s-") },
      { key: "saved", label: "saved ms (median)", num: true, value: (r) => (r.attribution_ms ? r.attribution_ms.median : null), cell: (r) => (r.attribution_ms ? ms(r.attribution_ms.median) : "n/a") },
      { key: "ci", label: "95% CI (ms)", value: (r) => (r.attribution_ms ? r.attribution_ms.ci95_low : null), num: true,
        cell: (r) => (r.attribution_ms ? "[" + ms(r.attribution_ms.ci95_low) + ", " + ms(r.attribution_ms.ci95_high) + "]" : "n/a") },
      { key: "ratio", label: "time ratio without / with", num: true, value: (r) => (r.comparison ? r.comparison.median_ratio : null),
        cell: (r) => (r.comparison ? r.comparison.median_ratio.toFixed(3) + " [" + r.comparison.ci95_low.toFixed(3) + ", " + r.comparison.ci95_high.toFixed(3) + "]" : "n/a") },
      { key: "note", label: "note", wrap: true, value: (r) => (r.ablated_status ? r.ablated_status + ": " + (r.ablated_note || "") : "") }], rows);
    paramAblation();
    lostMethods();
  }

  const EFFECT_COLORS = { helps: "#1e8e3e", no_effect: "#8a93a5", hurts: "#c0392b", not_measured: "#c9ced8", invalid: "#c9ced8" };
  const ciText = (a) => (a && isNum(a.ci95_low) ? "[" + ms(a.ci95_low) + ", " + ms(a.ci95_high) + "]" : "n/a");

  function paramAblation() {
    const rows = D.param_ablation || [];
    const timed = rows.filter((a) => a.saved_ms && isNum(a.saved_ms.ci95_low));
    const labels = timed.map((a) => a.param + " " + a.champion_value + "\u2192" + a.baseline_value + " (" + a.champion_id + ")");
    new Chart($("chart-param-ablation"), {
      type: "bar",
      data: { labels, datasets: [
        { type: "bar", label: "95% CI of the time the change saves (ms)", data: timed.map((a) => [a.saved_ms.ci95_low, a.saved_ms.ci95_high]),
          backgroundColor: timed.map((a) => EFFECT_COLORS[a.effect] || "#8a93a5"), barPercentage: 0.5 },
        { type: "line", indexAxis: "y", label: "median saved (ms)", data: timed.map((a, i) => ({ x: a.saved_ms.median, y: labels[i] })),
          showLine: false, order: -1, pointStyle: "line", rotation: 90, pointRadius: 14, borderWidth: 3, borderColor: "#1d2433",
          backgroundColor: "#1d2433" }] },
      options: { indexAxis: "y",
                 scales: { x: { grace: "5%", title: { display: true, text: "time the change saves (ms; < 0: the baseline's value is faster)" },
                                grid: { color: (c) => (c.tick && c.tick.value === 0 ? "#1d2433" : "#e3e6ec") } } },
                 plugins: { title: { display: true, text: timed.length ? "measured contribution of each parameter change" : "no parameter change was measured in this run" } } } });
    fillTable($("table-param-ablation"), [
      { key: "iteration", label: "iter", num: true }, { key: "champion_id", label: "champion" }, { key: "param", label: "parameter" },
      { key: "champion_value", label: "champion's value", num: true }, { key: "baseline_value", label: "baseline's value", num: true },
      { key: "effect", label: "effect", cell: (r) => tag(r.effect, "e-") },
      { key: "saved", label: "saved ms (median)", num: true, value: (r) => (r.saved_ms ? r.saved_ms.median : null), cell: (r) => (r.saved_ms ? ms(r.saved_ms.median) : "n/a") },
      { key: "ci", label: "95% CI (ms)", num: true, value: (r) => (r.saved_ms ? r.saved_ms.ci95_low : null), cell: (r) => ciText(r.saved_ms) },
      { key: "note", label: "note", wrap: true, value: (r) => r.note || r.effect_text || "" }], rows);
    $("param-ablation-note").textContent = rows.length ? "" : "No parameter ablation in this run: no champion changed a parameter, or the run was made before kopt ablated parameters.";
  }

  function lostMethods() {
    const rows = D.lost_methods || [];
    fillTable($("table-lost-methods"), [
      { key: "method", label: "method" }, { key: "candidates", label: "candidates", num: true }, { key: "correct", label: "correct", num: true },
      { key: "best_id", label: "fastest with it" }, { key: "best_ms", label: "its median ms", num: true, cell: (r) => ms(r.best_ms) },
      { key: "vs_champion", label: "time vs champion", num: true, cell: (r) => (isNum(r.vs_champion) ? r.vs_champion.toFixed(3) + "x" : "n/a") },
      { key: "ablation", label: "last ablation: saved ms [95% CI]", wrap: true, value: (r) => (r.last_ablation && r.last_ablation.attribution_ms ? r.last_ablation.attribution_ms.median : null),
        cell: (r) => (r.last_ablation ? (r.last_ablation.attribution_ms ? ms(r.last_ablation.attribution_ms.median) + " " + ciText(r.last_ablation.attribution_ms) : "not timed") +
                                       " on " + r.last_ablation.champion_id + " (iter " + r.last_ablation.iteration + ", " + r.last_ablation.verdict + ")" : "never ablated") }], rows);
    $("lost-methods-note").textContent = rows.length ? "" : "Every method the candidates tried is in the champion.";
  }

  // ---- instruction mix ----
  function mix() {
    const m = D.mix || {};
    const b = m.baseline || null, c = m.champion || null;
    const classes = Array.from(new Set(Object.keys(b || {}).concat(Object.keys(c || {})))).filter((k) => k !== "total")
      .filter((k) => ((b || {})[k] || 0) + ((c || {})[k] || 0) > 0).sort();
    const notes = [];
    if (!b) notes.push("The baseline's instruction mix was not recorded in this run directory.");
    if (!c) notes.push("The champion's instruction mix was not recorded in this run directory.");
    const datasets = [];
    if (b) datasets.push({ label: "baseline", data: classes.map((k) => b[k] || 0), backgroundColor: COLORS.baseline });
    if (c) datasets.push({ label: "champion " + (m.champion_id || ""), data: classes.map((k) => c[k] || 0), backgroundColor: COLORS.champion });
    new Chart($("chart-mix"), { type: "bar", data: { labels: classes, datasets },
                                options: { indexAxis: "y", scales: { x: { title: { display: true, text: "static SASS instructions" } } } } });
    const rows = classes.concat(["total"]).map((k) => ({ cls: k, base: b ? b[k] || 0 : null, champ: c ? c[k] || 0 : null }));
    rows.forEach((r) => { r.delta = isNum(r.base) && isNum(r.champ) ? r.champ - r.base : null; });
    fillTable($("table-mix"), [{ key: "cls", label: "class" }, { key: "base", label: "baseline", num: true }, { key: "champ", label: "champion", num: true },
                               { key: "delta", label: "change", num: true, cell: (r) => (isNum(r.delta) ? (r.delta > 0 ? "+" : "") + r.delta : "n/a") }], rows);
    $("mix-note").textContent = notes.join(" ");
  }

  // ---- profile ----
  function profile() {
    const P = D.profile || {};
    const places = D.placements || [];
    const basePlace = places.find((p) => p.iteration === 0);
    const champPlace = places.slice().reverse().find((p) => p.kernel === D.champion_id) || null;
    const fields = ["compute", "memory", "dram", "issue", "occupancy"];
    const datasets = [];
    if (basePlace) datasets.push({ label: "baseline", data: fields.map((f) => basePlace.utilisation[f]), backgroundColor: COLORS.baseline });
    if (champPlace && champPlace !== basePlace)
      datasets.push({ label: "champion " + champPlace.kernel, data: fields.map((f) => champPlace.utilisation[f]), backgroundColor: COLORS.champion });
    new Chart($("chart-utilisation"), { type: "bar", data: { labels: fields, datasets },
      options: { scales: { y: { min: 0, max: 1, title: { display: true, text: "fraction of peak" } } },
                 plugins: { title: { display: true, text: "utilisation (Nsight Compute)" }, tooltip: { callbacks: { label: (c) => c.dataset.label + ": " + pct(c.raw) } } } } });
    const holder = $("profile-tables");
    holder.replaceChildren();
    let tables = 0;
    for (const who of ["champion", "baseline"]) {
      const p = P[who];
      if (!p || !p.top_metrics) continue;
      for (const [axis, list] of Object.entries(p.top_metrics)) {
        const t = el("table", { class: "sortable", id: "table-profile-" + who + "-" + axis });
        holder.append(el("h3", { text: who + (who === "champion" ? " " + (P.champion_id || "") : "") + ": " + axis + " axis" }), el("div", { class: "scroll" }, [t]));
        fillTable(t, [{ key: "metric", label: "metric" }, { key: "value", label: "value", num: true, cell: (r) => (isNum(r.value) ? r.value.toPrecision(4) : "n/a") },
                      { key: "unit", label: "unit" }, { key: "ideal", label: "ideal", num: true },
                      { key: "distance", label: "distance", num: true, cell: (r) => (isNum(r.distance) ? r.distance.toFixed(2) : "n/a") },
                      { key: "description", label: "what it means" }], list);
        if (!list.length) t.tBodies[0].append(el("tr", {}, [el("td", { colspan: "6", text: "no metric away from its ideal, or none collected" })]));
        tables++;
      }
    }
    $("profile-note").textContent = tables ? "" : "No Nsight Compute metrics were recorded in this run directory.";
  }

  // A section the run has nothing for, and its link in the navigation, hidden.
  function hideSection(id) {
    $(id).hidden = true;
    document.querySelector('nav a[href="#' + id + '"]').hidden = true;
  }

  // ---- per-shape results (when the run measured several shapes) and the held-out shapes ----
  const dimsText = (d) => (d && typeof d === "object" ? Object.entries(d).map(([k, v]) => k + "=" + v).join(" ") : text(d));
  function cases() {
    const rows = Array.isArray(D.cases) ? D.cases : [];
    if (!rows.length) return hideSection("cases");
    fillTable($("table-cases"), [
      { key: "name", label: "case" }, { key: "realised", label: "dims", value: (r) => dimsText(r.realised),
        cell: (r) => dimsText(r.realised) + (r.fitted ? " (asked " + dimsText(r.requested) + ")" : "") },
      { key: "weight", label: "weight", num: true }, { key: "baseline_ms", label: "baseline ms", num: true, cell: (r) => ms(r.baseline_ms) },
      { key: "champion_ms", label: "champion ms", num: true, cell: (r) => ms(r.champion_ms) },
      { key: "speedup", label: "speedup", num: true, cell: (r) => (isNum(r.speedup) ? r.speedup.toFixed(2) + "x" : "n/a") },
      { key: "ratio_ci95", label: "time ratio 95% CI", value: (r) => (Array.isArray(r.ratio_ci95) ? r.ratio_ci95[0] : null), num: true,
        cell: (r) => (Array.isArray(r.ratio_ci95) ? "[" + r.ratio_ci95[0].toFixed(3) + ", " + r.ratio_ci95[1].toFixed(3) + "]" : "n/a") },
      { key: "efficiency", label: "roofline eff.", num: true, cell: (r) => pct(r.efficiency) },
      { key: "verdict", label: "verdict" }, { key: "note", label: "note", wrap: true }], rows);
    const g = D.cases_geomean;
    $("cases-note").textContent = g && isNum(g.speedup) ? "Weighted geometric mean over " + g.cases + " case(s): " + g.speedup.toFixed(2) + "x faster than the baseline." : "";
  }

  function holdout() {
    const h = D.holdout;
    const rows = h && Array.isArray(h.cases) ? h.cases : [];
    if (!h) return hideSection("holdout");
    $("holdout-summary").textContent = "passed " + (h.passed || 0) + " · outside the reference's domain " + (h.outside_domain || 0) +
      " · champion fails " + (h.champion_fails || 0) + " · not run " + (h.not_run || 0);
    const med = (x) => (x && isNum(x.median_ms) ? x.median_ms : null);
    fillTable($("table-holdout"), [
      { key: "name", label: "shape", value: (r) => (r.case || {}).name }, { key: "dims", label: "dims", value: (r) => dimsText((r.case || {}).realised) },
      { key: "verdict", label: "verdict" }, { key: "baseline", label: "baseline ms", num: true, value: (r) => med(r.baseline), cell: (r) => (isNum(med(r.baseline)) ? ms(med(r.baseline)) : text(r.baseline && r.baseline.status)) },
      { key: "champion", label: "champion ms", num: true, value: (r) => med(r.champion), cell: (r) => (isNum(med(r.champion)) ? ms(med(r.champion)) : text(r.champion && r.champion.status)) },
      { key: "speedup", label: "speedup", num: true, value: (r) => (isNum(med(r.baseline)) && isNum(med(r.champion)) ? med(r.baseline) / med(r.champion) : null),
        cell: (r) => (isNum(med(r.baseline)) && isNum(med(r.champion)) ? (med(r.baseline) / med(r.champion)).toFixed(2) + "x" : "n/a") },
      { key: "text", label: "what happened", wrap: true }], rows,
      (r) => (r.verdict === "champion_fails" ? "failed" : ""));
    const notes = [];
    if (h.warning) notes.push("WARNING: " + h.warning);
    if (h.note) notes.push(h.note);
    $("holdout-note").textContent = notes.join(" ");
  }

  // ---- per-GPU figures (when the run measured on several) ----
  function gpus() {
    const rows = Array.isArray(D.gpus) ? D.gpus : [];
    if (!rows.length) return hideSection("gpus");
    fillTable($("table-gpus"), [{ key: "slot", label: "GPU" }, { key: "candidates", label: "candidates", num: true },
      { key: "worker_lost", label: "worker lost", num: true }, { key: "busy_s", label: "busy s", num: true, cell: (r) => r.busy_s.toFixed(1) },
      { key: "utilisation", label: "utilisation", num: true, cell: (r) => (100 * r.utilisation).toFixed(0) + "%" }], rows);
  }

  // ---- timeline, phases, notes ----
  function timeline() {
    fillTable($("table-timeline"), [{ key: "iteration", label: "iter", num: true }, { key: "champion_id", label: "champion" },
      { key: "champion_ms", label: "median ms", num: true, cell: (r) => ms(r.champion_ms) }, { key: "improved", label: "improved" },
      { key: "candidates", label: "candidates", num: true }, { key: "correct", label: "correct", num: true }, { key: "note", label: "note" }], D.timeline || []);
    const ph = Object.entries(D.phase_seconds || {}).sort((a, b) => b[1] - a[1]);
    new Chart($("chart-phases"), { type: "bar", data: { labels: ph.map((p) => p[0]), datasets: [{ label: "seconds", data: ph.map((p) => p[1]), backgroundColor: COLORS.candidate }] },
      options: { indexAxis: "y", plugins: { title: { display: true, text: "where the wall time went (s)" }, legend: { display: false } } } });
    const notes = D.notes || [];
    $("notes-list").replaceChildren(...(notes.length ? notes : ["nothing missing"]).map((n) => el("li", { text: n })));
    const r = D.run || {};
    $("footer").textContent = "kopt " + text(r.kopt_version) + " · run directory " + text(r.dir) + " · charts: Chart.js " + Chart.version +
      " (embedded; this page loads nothing from the network)";
  }

  try {
    header();
    champion();
    roofline();
    convergence();
    candidates();
    ablation();
    mix();
    profile();
    cases();
    holdout();
    gpus();
    timeline();
    document.body.dataset.koptRendered = "1";
  } catch (e) {
    const box = $("page-error");
    box.hidden = false;
    box.textContent = "This page could not be fully rendered: " + e;
    throw e;
  }
})();
