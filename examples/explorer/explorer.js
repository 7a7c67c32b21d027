/* explorer.js - the page's side of the schedule explorer: instantiates
 * ipupipe_sched.h's WebAssembly build (embedded as base64 by `make explorer` in
 * sched_wasm.js, so the page also works from file://) and shows any number of schedules
 * in columns, each with its own settings: figures (the tool's JSON), the chart (the
 * library's SVG under BSP timing; under async timing drawn here from the per-op times
 * sched_wasm.c computes by ipup_sched_measure's rule), the activations held per device
 * at each step (computed in sched_wasm.c), a step-through cursor, SVG and PNG downloads,
 * and the verifier's verdict on a pasted CSV. The settings live in the URL's hash, so a
 * link reproduces the view (docs/schedules.md, the explorer). */
"use strict";
(function () {
  var ex = null, kinds = [];
  var dec = new TextDecoder(), enc = new TextEncoder();
  var KIND = "FBIW", COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f"];
  var DEV_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"];
  /* a column's settings: URL key, default (the first column's schedule is the first kind) */
  var FIELDS = [["S", 4], ["M", 8], ["V", 0], ["P", 0], ["map", ""], ["strict", 0], ["fwd", 0], ["popxl", 0],
                ["F", 1], ["B", 2], ["I", 1], ["W", 1], ["x", 0], ["sync", 0], ["act", ""], ["timing", "bsp"]];
  var DEFAULT_COSTS = { F: 1, B: 2, I: 1, W: 1, x: 0, sync: 0 };
  var state = { cols: [], step: 0 }, data = [];

  function $(id) { return document.getElementById(id); }
  function str(ptr, len) {
    var m = new Uint8Array(ex.memory.buffer);
    if (len === undefined) { len = 0; while (m[ptr + len]) len++; }
    return dec.decode(m.subarray(ptr, ptr + len));
  }
  function putStr(ptr, cap, s) {
    var bytes = enc.encode(s);
    if (bytes.length > cap - 1) bytes = bytes.subarray(0, cap - 1);
    var m = new Uint8Array(ex.memory.buffer, ptr, bytes.length + 1);
    m.set(bytes);
    m[bytes.length] = 0;
  }
  function render(what, width) {
    var n = ex.ex_render(what, width || 0);
    return n < 0 ? null : str(ex.ex_out(), n);
  }
  function esc(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"); }
  function fmt(v) { return Math.abs(v) >= 1e6 ? v.toExponential(3) : String(+v.toFixed(3)); }
  function bytesText(v) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(2) : String(v)) + " " + u[i];
  }

  /* ---- the settings and the URL ---- */
  function defaultCol(sched) {
    var c = { sched: sched || kinds[0] };
    FIELDS.forEach(function (f) { c[f[0]] = f[1]; });
    return c;
  }
  /* "#c0=1f1b&c0.M=16&c1=zb-h1&c1.timing=async&step=5": each column's schedule, the settings
     that differ from the defaults, the cursor step (1-based, 0 = off) */
  function encodeState() {
    var q = new URLSearchParams();
    state.cols.forEach(function (c, i) {
      q.append("c" + i, c.sched);
      FIELDS.forEach(function (f) { if (String(c[f[0]]) !== String(f[1])) q.append("c" + i + "." + f[0], String(c[f[0]])); });
    });
    if (state.step) q.append("step", String(state.step));
    return q.toString();
  }
  function decodeState(text) {
    var q = new URLSearchParams(text.replace(/^[#?]/, "")), cols = [], i;
    for (i = 0; q.has("c" + i); i++) {
      var c = defaultCol(q.get("c" + i));
      FIELDS.forEach(function (f) {
        var v = q.get("c" + i + "." + f[0]);
        if (v !== null) c[f[0]] = typeof f[1] === "number" ? (isFinite(parseFloat(v)) ? parseFloat(v) : f[1]) : v;
      });
      cols.push(c);
    }
    if (!cols.length) return null;
    return { cols: cols, step: Math.max(0, parseInt(q.get("step") || "0", 10) || 0) };
  }
  function saveUrl() {
    var h = "#" + encodeState();
    if (location.hash === h) return;
    try { history.replaceState(null, "", h); } catch (e) { location.replace(h); }
    $("link").href = location.href;
  }

  /* ---- one column's form ---- */
  function field(key, label, hint, attrs) {
    return "<label" + (hint ? " title=\"" + esc(hint) + "\"" : "") + ">" + label + " <input data-f=\"" + key + "\" " + attrs + "></label>";
  }
  function colHtml(i) {
    var opts = kinds.map(function (k) { return "<option value=\"" + esc(k) + "\">" + esc(k) + "</option>"; }).join("");
    return "<div class=\"colhead\"><select data-f=\"sched\" title=\"the schedule (every kind the library has)\">" + opts + "</select>" +
      " <select data-f=\"timing\" title=\"BSP: every op of a step starts with the step (lock-step); async: each op starts when its inputs and its device are free\">" +
      "<option value=\"bsp\">BSP timing (lock-step)</option><option value=\"async\">async timing (as soon as ready)</option></select>" +
      " <button type=\"button\" class=\"rm\" title=\"remove this column\">remove</button></div>" +
      "<details class=\"set\" open><summary>settings</summary><form class=\"ctl\" onsubmit=\"return false\">" +
      field("S", "stages S", "", "type=\"number\" min=\"1\" max=\"32\"") +
      field("M", "micro-batches M", "", "type=\"number\" min=\"1\" max=\"256\"") +
      field("V", "V <small>(0 = auto)</small>", "stages per device for interleaved and V-shaped schedules; 0 = S/devices when devices is given, else the schedule's default", "type=\"number\" min=\"0\" max=\"32\"") +
      field("P", "devices <small>(0 = as many as the mapping needs)</small>", "", "type=\"number\" min=\"0\" max=\"32\"") +
      field("map", "map <small>(empty = stage s on device s)</small>", "the device of each stage; a bracket runs one stage on several devices (concurrent stages)", "class=\"map\" placeholder=\"0,1,0 or 0,[1,2],3\"") +
      "<br><label><input data-f=\"strict\" type=\"checkbox\"> strict</label>" +
      "<label title=\"the inference table: F ops only\"><input data-f=\"fwd\" type=\"checkbox\"> forward only</label>" +
      "<label><input data-f=\"popxl\" type=\"checkbox\"> PopXL stage numbers</label><br>" +
      "<span class=\"grp\">costs <small>(0 = default: F 1, B 2, I 1, W 1; exchange and sync 0 = none)</small></span> " +
      ["F", "B", "I", "W"].map(function (k) { return field(k, k, "", "type=\"number\" step=\"0.5\" min=\"0\" class=\"cost\""); }).join("") +
      field("x", "exchange", "BSP: added to a step when a value crosses devices; async: the delay of such a value", "type=\"number\" step=\"0.25\" min=\"0\" class=\"cost\"") +
      field("sync", "sync", "BSP: added to every step", "type=\"number\" step=\"0.25\" min=\"0\" class=\"cost\"") + "<br>" +
      field("act", "activation bytes <small>(per stage and micro-batch: one value, or a0,a1,... per stage; empty = count activations)</small>", "", "class=\"act\" placeholder=\"e.g. 1048576\"") +
      "</form></details><div class=\"out\"></div>";
  }
  function fillForm(el, c) {
    el.querySelectorAll("[data-f]").forEach(function (inp) {
      var k = inp.getAttribute("data-f");
      if (inp.type === "checkbox") inp.checked = !!+c[k];
      else inp.value = String(c[k]);
    });
  }
  function readForm(el, c) {
    el.querySelectorAll("[data-f]").forEach(function (inp) {
      var k = inp.getAttribute("data-f"), v;
      if (inp.type === "checkbox") v = inp.checked ? 1 : 0;
      else if (inp.type === "number") { v = parseFloat(inp.value); if (!isFinite(v)) v = 0; }
      else v = inp.value;
      c[k] = v;
    });
  }

  /* ---- generating a column's table and reading it back ---- */
  function cost(c, k) { var v = +c[k]; return v > 0 ? v : DEFAULT_COSTS[k]; }
  /* the act-bytes field into the module; "" when fine, else what is wrong */
  function setAct(c) {
    ex.ex_act_clear();
    var t = String(c.act).trim();
    if (!t) return "";
    var parts = t.split(/[\s,]+/), S = Math.round(+c.S), vals = parts.map(Number), s;
    if (vals.some(function (v) { return !(v >= 0) || v > 9e15 || Math.floor(v) !== v; }))
      return "activation bytes: give whole numbers of bytes >= 0 (one for all stages, or one per stage), not \"" + t + "\"";
    if (vals.length !== 1 && vals.length !== S)
      return "activation bytes: " + vals.length + " values for S = " + S + " stages; give one value for all stages, or one per stage";
    for (s = 0; s < S; s++) ex.ex_act_set(s, vals.length === 1 ? vals[0] : vals[s]);
    return "";
  }
  function readTable() {
    var n = ex.ex_n_ops(), T = ex.ex_steps(), P = ex.ex_devices(), i, d;
    var dv = new DataView(ex.memory.buffer, ex.ex_ops(), 16 * n);
    var tm = new Float64Array(ex.memory.buffer, ex.ex_tm(), 4 * n);
    var mrc = ex.ex_memory(), ops = [];
    var fr = new Int32Array(ex.memory.buffer, ex.ex_free(), n);
    for (i = 0; i < n; i++) {
      var o = { step: dv.getInt32(16 * i, true), mb: dv.getInt32(16 * i + 4, true), stage: dv.getInt16(16 * i + 8, true),
                dev: dv.getInt16(16 * i + 10, true), kind: dv.getInt8(16 * i + 12), br: dv.getInt8(16 * i + 14) - 1,
                bs: tm[4 * i], be: tm[4 * i + 1], as: tm[4 * i + 2], ae: tm[4 * i + 3], free: mrc === 0 ? fr[i] : -1 };
      o.tok = o.stage + KIND[o.kind - 1] + o.mb + (o.br >= 0 ? "." + o.br : "");
      ops.push(o);
    }
    var r = { ops: ops, T: T, P: P, memOk: mrc === 0, held: [], mem: [], peak: [], peakStep: [] };
    if (mrc === 0) {
      var held = new Int32Array(ex.memory.buffer, ex.ex_held(), T * P), mem = new Float64Array(ex.memory.buffer, ex.ex_mem(), T * P);
      for (d = 0; d < P; d++) {
        r.held.push(Array.from(held.subarray(d * T, d * T + T)));
        r.mem.push(Array.from(mem.subarray(d * T, d * T + T)));
        r.peak.push(ex.ex_peak(d));
        r.peakStep.push(ex.ex_peak_step(d));
      }
    }
    return r;
  }

  function figuresTable(j) {
    var rows = [
      ["steps T", j.steps], ["devices P", j.devices], ["BSP time", j.bsp_time + " (bubble " + j.bubble_fraction.toFixed(4) + ")"],
      ["async time", j.async_time + " (bubble " + j.bubble_fraction_async.toFixed(4) + ")"],
      ["peak in-flight", j.peak_inflight.join(",")], ["first micro-batch done", "step " + j.first_microbatch_done],
      ["phases (1-based)", phase("ramp-up", j.phases.ramp_up) + ", " + phase("main", j.phases.main) + ", " + phase("ramp-down", j.phases.ramp_down)],
      ["in-order accumulation", j.in_order ? "yes" : "no"]];
    if (j.forward_only) /* inference: no accumulation; latency and rate instead */
      rows.splice(rows.length - 1, 1, ["latency", j.latency + " (" + j.latency_steps + " steps)"], ["throughput", j.throughput + " micro-batches per step"]);
    if (j.stage_devices)
      rows.splice(2, 0, ["stage devices", j.stage_devices.map(function (d) { return d.length > 1 ? "[" + d.join(",") + "]" : String(d[0]); }).join(", ")]);
    return "<table class=\"fig\">" + rows.map(function (r) { return "<tr><td>" + r[0] + "</td><td class=\"v\">" + esc(String(r[1])) + "</td></tr>"; }).join("") + "</table>";
  }
  function phase(name, r) { return r[1] < r[0] ? name + " none" : name + " " + (r[0] + 1) + ".." + (r[1] + 1); }

  /* ---- the charts ---- */
  function colWidth(el) { return Math.max(300, Math.floor(el.clientWidth - 14)); }
  /* an SVG string made to scale with its column (a viewBox; width and height stay for the
     downloads) */
  function scalable(svgText) {
    var box = document.createElement("div");
    box.innerHTML = svgText;
    var svg = box.querySelector("svg");
    if (!svg) return null;
    if (!svg.getAttribute("viewBox")) svg.setAttribute("viewBox", "0 0 " + svg.getAttribute("width") + " " + svg.getAttribute("height"));
    svg.querySelectorAll("rect").forEach(function (r) {
      var t = r.querySelector("title"), m = t && / step (\d+)/.exec(t.textContent);
      if (m) r.setAttribute("data-step", m[1]);
    });
    return svg;
  }
  function svgEl(w, h, font) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
      "\" font-family=\"sans-serif\" font-size=\"" + (font || 13) + "\"><rect width=\"100%\" height=\"100%\" fill=\"white\"/>";
  }
  function ticks(max, px) {
    var want = Math.max(2, Math.floor(px / 70)), raw = max / want, p = Math.pow(10, Math.floor(Math.log10(raw || 1))), st = p;
    [1, 2, 5, 10].some(function (k) { st = k * p; return st >= raw; });
    var out = [], v;
    for (v = 0; v <= max + 1e-9; v += st) out.push(v);
    return out;
  }
  /* the async chart: each op at its async start and end (sched_wasm.c's ex_timing) */
  function asyncChart(c, r, j, W) {
    var left = 52, right = 12, top = 54, rowH = 24, P = r.P, end = 0;
    r.ops.forEach(function (o) { if (o.ae > end) end = o.ae; });
    var sc = (W - left - right) / (end || 1), H = top + P * rowH + 58, s = [];
    s.push(svgEl(W, H));
    s.push("<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" + esc(title(c, j)) + "</text>");
    s.push("<text x=\"8\" y=\"38\" font-size=\"12\" fill=\"#444\">async timing: each op starts when its inputs and its device are free; time " +
           fmt(end) + " (BSP " + fmt(j.bsp_time) + ")</text>");
    for (var d = 0; d < P; d++) {
      s.push("<text x=\"4\" y=\"" + (top + d * rowH + 16) + "\">IPU" + d + "</text>");
      s.push("<rect x=\"" + left + "\" y=\"" + (top + d * rowH) + "\" width=\"" + (end * sc).toFixed(1) + "\" height=\"" + (rowH - 2) + "\" fill=\"#dddddd\"/>");
    }
    r.ops.forEach(function (o) {
      var x = left + o.as * sc, w = (o.ae - o.as) * sc, y = top + o.dev * rowH;
      s.push("<rect x=\"" + x.toFixed(1) + "\" y=\"" + y + "\" width=\"" + w.toFixed(1) + "\" height=\"" + (rowH - 2) + "\" fill=\"" +
             COLOURS[o.kind - 1] + "\" stroke=\"white\" data-step=\"" + (o.step + 1) + "\"><title>" + o.tok + " step " + (o.step + 1) +
             " (" + fmt(o.as) + " to " + fmt(o.ae) + ")</title></rect>");
      if (w >= 12) s.push("<text x=\"" + (x + 2).toFixed(1) + "\" y=\"" + (y + 16) + "\" fill=\"white\" font-size=\"12\" pointer-events=\"none\">" + o.mb + "</text>");
    });
    var ay = top + P * rowH + 2;
    s.push("<line x1=\"" + left + "\" y1=\"" + ay + "\" x2=\"" + (left + end * sc).toFixed(1) + "\" y2=\"" + ay + "\" stroke=\"#555\"/>");
    ticks(end, W - left - right).forEach(function (v) {
      var x = (left + v * sc).toFixed(1);
      s.push("<line x1=\"" + x + "\" y1=\"" + ay + "\" x2=\"" + x + "\" y2=\"" + (ay + 4) + "\" stroke=\"#555\"/><text x=\"" + x + "\" y=\"" +
             (ay + 16) + "\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">" + fmt(v) + "</text>");
    });
    var lx = 8, ly = ay + 34, present = {};
    r.ops.forEach(function (o) { present[o.kind] = 1; });
    [1, 2, 3, 4].forEach(function (k) {
      if (!present[k]) return;
      var name = ["forward F", "backward B", "input grad I", "weight grad W"][k - 1];
      s.push("<rect x=\"" + lx + "\" y=\"" + (ly - 11) + "\" width=\"12\" height=\"12\" fill=\"" + COLOURS[k - 1] + "\"/><text x=\"" + (lx + 16) + "\" y=\"" + ly + "\">" + name + "</text>");
      lx += 30 + name.length * 7.5;
    });
    s.push("</svg>");
    return s.join("");
  }
  function title(c, j) {
    return c.sched + (+c.fwd ? " (forward only)" : "") + "  S=" + j.stages + " M=" + j.microbatches + " P=" + j.devices + " T=" + j.steps;
  }
  /* the memory-over-time chart: what each device holds at each step, its peak marked */
  function memoryChart(c, r, W) {
    var bytes = String(c.act).trim() !== "", T = r.T, P = r.P, left = 64, right = 12, top = 60, ph = 150;
    var max = 0, d, k;
    r.peak.forEach(function (v) { if (v > max) max = v; });
    var per = W >= 560 ? 3 : 2, H = top + ph + 40 + 18 * Math.ceil(P / per), sx = (W - left - right) / Math.max(1, T), sy = ph / (max || 1), s = [];
    s.push(svgEl(W, H));
    s.push("<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">" + esc(c.sched) + ": " +
           (bytes ? "activation bytes held per device" : "activations held per device") + " at each step</text>");
    var act = String(c.act).trim();
    if (act.length > 48) act = act.slice(0, 45) + "...";
    s.push("<text x=\"8\" y=\"34\" font-size=\"11\" fill=\"#444\">held from a stage's F to its B (or W), both steps counted; peak marked</text>");
    s.push("<text x=\"8\" y=\"48\" font-size=\"11\" fill=\"#444\">" +
           (bytes ? "bytes per stage and micro-batch: " + esc(act) : "no activation bytes given: activations counted") + "</text>");
    var yv = function (v) { return (top + ph - v * sy).toFixed(1); };
    /* bytes: ticks at round numbers of the unit the peak is counted in (KiB, MiB, ...) */
    var unit = 1;
    while (bytes && max / unit >= 1024) unit *= 1024;
    ticks(max / unit, ph * 2).map(function (v) { return v * unit; }).forEach(function (v) {
      s.push("<line x1=\"" + left + "\" y1=\"" + yv(v) + "\" x2=\"" + (W - right) + "\" y2=\"" + yv(v) + "\" stroke=\"#eee\"/>" +
             "<text x=\"" + (left - 4) + "\" y=\"" + (+yv(v) + 4) + "\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">" + (bytes ? bytesText(v) : fmt(v)) + "</text>");
    });
    for (d = 0; d < P; d++) {
      var col = DEV_COLOURS[d % DEV_COLOURS.length], pts = [], vals = bytes ? r.mem[d] : r.held[d];
      for (k = 0; k < T; k++) pts.push((left + k * sx).toFixed(1) + "," + yv(vals[k]), (left + (k + 1) * sx).toFixed(1) + "," + yv(vals[k]));
      s.push("<polyline fill=\"none\" stroke=\"" + col + "\" stroke-width=\"2\" points=\"" + pts.join(" ") + "\"><title>IPU" + d + "</title></polyline>");
      if (r.peakStep[d] >= 0) {
        var px = left + (r.peakStep[d] + 0.5) * sx;
        s.push("<circle cx=\"" + px.toFixed(1) + "\" cy=\"" + yv(r.peak[d]) + "\" r=\"4\" fill=\"" + col + "\" class=\"peak\"><title>IPU" + d + " peak " +
               (bytes ? bytesText(r.peak[d]) : r.peak[d]) + " at step " + (r.peakStep[d] + 1) + "</title></circle>");
      }
    }
    s.push("<line x1=\"" + left + "\" y1=\"" + (top + ph) + "\" x2=\"" + (W - right) + "\" y2=\"" + (top + ph) + "\" stroke=\"#555\"/>");
    ticks(T, W - left - right).forEach(function (v) {
      if (v < 1) return;
      var x = (left + (v - 0.5) * sx).toFixed(1);
      s.push("<text x=\"" + x + "\" y=\"" + (top + ph + 14) + "\" font-size=\"11\" fill=\"#555\" text-anchor=\"middle\">" + v + "</text>");
    });
    s.push("<text x=\"" + (W - right) + "\" y=\"" + (top + ph + 28) + "\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">step</text>");
    s.push("<line class=\"cursor-line\" x1=\"0\" y1=\"" + top + "\" x2=\"0\" y2=\"" + (top + ph) + "\" stroke=\"#000\" stroke-dasharray=\"3,2\" visibility=\"hidden\"/>");
    for (d = 0; d < P; d++) {
      var lx = 8 + (d % per) * Math.floor((W - 16) / per), ly = top + ph + 44 + 18 * Math.floor(d / per);
      s.push("<rect x=\"" + lx + "\" y=\"" + (ly - 10) + "\" width=\"12\" height=\"12\" fill=\"" + DEV_COLOURS[d % DEV_COLOURS.length] + "\"/><text x=\"" +
             (lx + 16) + "\" y=\"" + ly + "\" font-size=\"12\">IPU" + d + " peak " + (bytes ? bytesText(r.peak[d]) : r.peak[d]) +
             (r.peakStep[d] >= 0 ? " @ step " + (r.peakStep[d] + 1) : "") + "</text>");
    }
    s.push("</svg>");
    return { svg: s.join(""), left: left, sx: sx };
  }

  /* ---- a column ---- */
  function colEl(i) { return $("col" + i); }
  function showCol(i) {
    var c = state.cols[i], el = colEl(i), out = el.querySelector(".out"), kind = kinds.indexOf(c.sched), W = colWidth(el);
    data[i] = null;
    el.removeAttribute("data-json");
    var fail = function (msg) { out.innerHTML = "<h3>" + esc(c.sched) + "</h3><div class=\"err\">" + esc(msg) + "</div>"; cursorMax(); };
    if (kind < 0) return fail("unknown schedule \"" + c.sched + "\"; the library has " + kinds.join(", "));
    ex.ex_cost(cost(c, "F"), cost(c, "B"), cost(c, "I"), cost(c, "W"), cost(c, "x"), cost(c, "sync"));
    var actErr = setAct(c);
    if (actErr) return fail(actErr);
    putStr(ex.ex_maptext(), ex.ex_maptext_cap(), String(c.map));
    var rc = ex.ex_generate(kind, Math.round(c.S), Math.round(c.M), Math.round(c.V), Math.round(c.P), +c.strict ? 1 : 0, +c.fwd ? 1 : 0);
    if (rc !== 0) return fail(str(ex.ex_msg()));
    var json = render(0), j = JSON.parse(json), notes = j.warnings.slice();
    var popxl = +c.popxl && !j.forward_only && !j.stage_devices;
    if (+c.popxl && !popxl)
      notes.push("PopXL stage numbers: not drawn, they count the forward and backward stages of a plain training table");
    ex.ex_timing();
    var r = readTable(), chart;
    r.json = j;
    if (c.timing === "async") chart = asyncChart(c, r, j, W);
    else {
      putStr(ex.ex_title(), ex.ex_title_cap(), title(c, j) + "  F=" + cost(c, "F") + " B=" + cost(c, "B") + "  BSP timing (lock-step)");
      chart = render(2, W);
      putStr(ex.ex_title(), ex.ex_title_cap(), "");
    }
    var grid = render(popxl ? 5 : 1);
    out.innerHTML = "<h3>" + esc(c.sched) + (+c.fwd ? " (forward only)" : "") + " <span class=\"tm\">" +
      (c.timing === "async" ? "async timing" : "BSP timing") + "</span></h3>" + figuresTable(j) +
      (notes.length ? "<div class=\"warn\">" + esc(notes.join("\n")) + "</div>" : "") +
      "<div class=\"dl\">download: chart <button type=\"button\" data-dl=\"chart.svg\">SVG</button><button type=\"button\" data-dl=\"chart.png\">PNG</button>" +
      " memory <button type=\"button\" data-dl=\"mem.svg\">SVG</button><button type=\"button\" data-dl=\"mem.png\">PNG</button></div>" +
      "<div class=\"chart\"></div><div class=\"cur\"></div><div class=\"mem\"></div>" +
      "<details><summary>grid</summary><pre class=\"grid\">" + esc(grid) + "</pre></details>" +
      "<details><summary>JSON</summary><pre class=\"json\"></pre></details>";
    var svg = scalable(chart);
    if (svg) out.querySelector(".chart").appendChild(svg);
    if (j.forward_only) out.querySelector(".mem").innerHTML = "<div class=\"note\">memory over time: an inference table stashes no activations</div>";
    else if (r.memOk) {
      var m = memoryChart(c, r, W);
      r.memLeft = m.left; r.memSx = m.sx;
      out.querySelector(".mem").appendChild(scalable(m.svg));
      out.querySelector(".mem").setAttribute("data-peak", JSON.stringify(r.peak));
    } else out.querySelector(".mem").innerHTML = "<div class=\"warn\">memory view: this table is larger than the explorer's buffers</div>";
    out.querySelector(".json").textContent = json;
    el.setAttribute("data-json", json.trim());
    data[i] = r;
    cursorMax();
    showCursor(i);
  }

  /* ---- the step-through cursor ---- */
  function cursorMax() {
    var T = 0;
    data.forEach(function (r) { if (r && r.T > T) T = r.T; });
    $("cursor").max = String(T);
    if (state.step > T) state.step = T;
    $("cursor").value = String(state.step);
    $("cursor-label").textContent = state.step ? "step " + state.step + " of " + T : "off (0); 1.." + T + " steps through the table";
  }
  /* the class of an element on or off (none at all when off: a view drawn from a link is
     the same document) */
  function mark(e, cls, on) { if (on) e.setAttribute("class", cls); else e.removeAttribute("class"); }
  /* column i at the cursor step: its ops marked on the chart, the memory chart's line, and
     what each device runs and holds */
  function showCursor(i) {
    var r = data[i], el = colEl(i), k = state.step;
    if (!r) return;
    var svg = el.querySelector(".chart svg"), cur = el.querySelector(".cur"), line = el.querySelector(".mem .cursor-line");
    if (svg) {
      mark(svg, "cursor-on", k > 0);
      svg.querySelectorAll("rect[data-step]").forEach(function (rc) { mark(rc, "at", k > 0 && +rc.getAttribute("data-step") === k); });
    }
    if (line) {
      var x = (r.memLeft + (k - 0.5) * r.memSx).toFixed(1);
      line.setAttribute("x1", x); line.setAttribute("x2", x);
      line.setAttribute("visibility", k > 0 && k <= r.T ? "visible" : "hidden");
    }
    if (!k) { cur.innerHTML = ""; return; }
    if (k > r.T) { cur.innerHTML = "<div class=\"note\">step " + k + ": this table ends at step " + r.T + "</div>"; return; }
    var bytes = String(state.cols[i].act).trim() !== "", rows = [], d;
    for (d = 0; d < r.P; d++) {
      var runs = r.ops.filter(function (o) { return o.dev === d && o.step === k - 1; }).map(function (o) { return o.tok; });
      var holds = r.ops.filter(function (o) { return o.dev === d && o.kind === 1 && o.free >= 0 && o.step <= k - 1 && k - 1 <= o.free; })
        .map(function (o) { return o.stage + ":" + o.mb + (o.br >= 0 ? "." + o.br : ""); });
      var amount = r.memOk ? (bytes ? bytesText(r.mem[d][k - 1]) : String(r.held[d][k - 1])) : "";
      rows.push("<tr data-dev=\"" + d + "\" data-runs=\"" + esc(runs.join(" ")) + "\" data-held=\"" + (r.memOk ? r.held[d][k - 1] : "") + "\"><td>IPU" + d + "</td><td class=\"runs\">" +
                (runs.length ? esc(runs.join(" ")) : "<span class=\"idle\">idle</span>") + "</td><td>" + esc(amount) +
                "</td><td class=\"holds\">" + esc(holds.length > 16 ? holds.slice(0, 16).join(" ") + " ... (" + holds.length + ")" : holds.join(" ")) + "</td></tr>");
    }
    cur.innerHTML = "<table class=\"curtab\"><caption>step " + k + " of " + r.T + ": what each device runs and holds (stage:micro-batch)</caption>" +
      "<tr><th>device</th><th>runs</th><th>" + (bytes ? "bytes held" : "held") + "</th><th>activations held</th></tr>" + rows.join("") + "</table>";
  }
  function setStep(k) {
    var max = +$("cursor").max;
    state.step = Math.max(0, Math.min(max, k));
    cursorMax();
    state.cols.forEach(function (c, i) { showCursor(i); });
    saveUrl();
  }

  /* ---- downloads: the SVG as it is drawn, and a PNG of it (canvas drawImage, 2x) ---- */
  function download(name, blob) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  function svgText(svg) {
    var copy = svg.cloneNode(true);
    copy.removeAttribute("class");
    copy.querySelectorAll(".at").forEach(function (e) { e.removeAttribute("class"); });
    copy.querySelectorAll(".cursor-line").forEach(function (e) { e.remove(); });
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + new XMLSerializer().serializeToString(copy);
  }
  function downloadChart(i, what) {
    var el = colEl(i), which = what.split(".")[0] === "chart" ? ".chart svg" : ".mem svg", svg = el.querySelector(which), c = state.cols[i];
    if (!svg) return;
    var base = c.sched + "-S" + c.S + "-M" + c.M + "-" + c.timing + (which === ".mem svg" ? "-memory" : ""), text = svgText(svg);
    if (/svg$/.test(what)) { download(base + ".svg", new Blob([text], { type: "image/svg+xml" })); return; }
    var img = new Image(), w = +svg.getAttribute("width"), h = +svg.getAttribute("height");
    img.onload = function () {
      var cv = document.createElement("canvas");
      cv.width = 2 * w; cv.height = 2 * h;
      var g = cv.getContext("2d");
      g.scale(2, 2);
      g.drawImage(img, 0, 0, w, h);
      cv.toBlob(function (b) { download(base + ".png", b); }, "image/png");
    };
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
  }

  /* ---- the columns ---- */
  function layout() {
    var n = state.cols.length, per = Math.max(1, Math.min(n, Math.floor((window.innerWidth - 24) / 420)));
    $("cols").style.gridTemplateColumns = "repeat(" + per + ", minmax(0, 1fr))";
  }
  function build() {
    var box = $("cols");
    box.innerHTML = "";
    data = [];
    state.cols.forEach(function (c, i) {
      var el = document.createElement("div");
      el.className = "col";
      el.id = "col" + i;
      el.innerHTML = colHtml(i);
      box.appendChild(el);
      fillForm(el, c);
      var changed = function () { readForm(el, c); showCol(i); saveUrl(); };
      el.querySelector(".colhead").addEventListener("change", changed);
      el.querySelector(".ctl").addEventListener("input", changed);
      el.querySelector(".ctl").addEventListener("change", changed);
      el.querySelector(".rm").addEventListener("click", function () { removeCol(i); });
      el.querySelector(".out").addEventListener("click", function (e) {
        var w = e.target.getAttribute && e.target.getAttribute("data-dl");
        if (w) downloadChart(i, w);
      });
    });
    layout();
    state.cols.forEach(function (c, i) { showCol(i); });
    document.querySelectorAll(".rm").forEach(function (b) { b.disabled = state.cols.length < 2; });
    saveUrl();
  }
  function addCol() {
    var last = state.cols[state.cols.length - 1], c = JSON.parse(JSON.stringify(last));
    c.sched = kinds[(kinds.indexOf(last.sched) + 1) % kinds.length];
    state.cols.push(c);
    build();
  }
  function removeCol(i) {
    if (state.cols.length < 2) return;
    state.cols.splice(i, 1);
    build();
  }

  function check() {
    var bytes = enc.encode($("csv").value);
    var cap = ex.ex_in_cap();
    if (bytes.length > cap) bytes = bytes.subarray(0, cap);
    new Uint8Array(ex.memory.buffer, ex.ex_in(), bytes.length).set(bytes);
    var c = state.cols[0];
    ex.ex_cost(cost(c, "F"), cost(c, "B"), cost(c, "I"), cost(c, "W"), cost(c, "x"), cost(c, "sync"));
    ex.ex_act_clear();
    var rc = ex.ex_check(bytes.length, $("respace").checked ? 1 : 0), msg = str(ex.ex_msg());
    var v = $("verdict"), out = $("checked");
    out.innerHTML = "";
    if (rc === 2) { v.innerHTML = "<span class=\"invalid\">UNREADABLE</span> <span class=\"err\">" + esc(msg) + "</span>"; return; }
    if (rc === 0) {
      v.innerHTML = "<span class=\"valid\">VALID</span>";
      out.innerHTML = esc(render(1)) + "\n" + render(2, 1100);
      return;
    }
    v.innerHTML = "<span class=\"invalid\">INVALID</span> <span class=\"err\">" + esc(msg) + "</span>";
    var steps = render(3) || "", lines = steps.split("\n");
    out.innerHTML = lines.map(function (l) {
      return l.indexOf("<-- ERROR HERE") >= 0 ? "<span class=\"error-marker\">" + esc(l) + "</span>" : esc(l);
    }).join("\n");
  }

  function loadUrl() {
    var s = decodeState(location.hash) || decodeState(location.search);
    state = s || { cols: [defaultCol()], step: 0 };
  }
  function start(instance) {
    ex = instance.exports;
    var i, n = ex.ex_kind_count();
    for (i = 0; i < n; i++) kinds.push(str(ex.ex_kind_name(i)));
    loadUrl();
    var want = state.step;
    build();
    setStep(want);
    $("add").addEventListener("click", addCol);
    $("cursor").addEventListener("input", function () { setStep(+$("cursor").value); });
    document.addEventListener("keydown", function (e) {
      var t = e.target, tag = t && t.tagName;
      if (t !== $("cursor") && (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA")) return;
      if (t === $("cursor")) return; /* the slider moves itself; its input event follows */
      if (e.key === "ArrowRight") { setStep(state.step + 1); e.preventDefault(); }
      else if (e.key === "ArrowLeft") { setStep(state.step - 1); e.preventDefault(); }
      else if (e.key === "Home") { setStep(0); e.preventDefault(); }
      else if (e.key === "End") { setStep(+$("cursor").max); e.preventDefault(); }
    });
    window.addEventListener("hashchange", function () {
      if (location.hash === "#" + encodeState()) return;
      loadUrl();
      var k = state.step;
      build();
      setStep(k);
    });
    var timer = 0;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { layout(); state.cols.forEach(function (c, j) { showCol(j); }); }, 150);
    });
    $("check").addEventListener("click", check);
    document.body.setAttribute("data-ready", "1");
  }

  var bin = atob(window.SCHED_WASM_B64), buf = new Uint8Array(bin.length), k;
  for (k = 0; k < bin.length; k++) buf[k] = bin.charCodeAt(k);
  WebAssembly.instantiate(buf, {}).then(function (r) { start(r.instance); }, function (e) {
    document.body.insertAdjacentHTML("afterbegin", "<div class=\"err\">WebAssembly failed: " + esc(String(e)) + "</div>");
  });
})();
