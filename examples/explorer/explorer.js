/* explorer.js - the page's side of the schedule explorer: instantiates
 * ipupipe_sched.h's WebAssembly build (embedded as base64 by `make explorer` in
 * sched_wasm.js, so the page also works from file://), writes the form's values into
 * it, and shows the documents it writes: figures (its JSON), grid, SVG, and the
 * verifier's verdict on a pasted CSV with the failing step marked. */
"use strict";
(function () {
  var ex = null, mem8 = null;
  var dec = new TextDecoder(), enc = new TextEncoder();
  function $(id) { return document.getElementById(id); }
  function str(ptr, len) {
    mem8 = new Uint8Array(ex.memory.buffer);
    if (len === undefined) { len = 0; while (mem8[ptr + len]) len++; }
    return dec.decode(mem8.subarray(ptr, ptr + len));
  }
  function render(what, width) {
    var n = ex.ex_render(what, width || 0);
    return n < 0 ? null : str(ex.ex_out(), n);
  }
  function num(id, def) { var v = parseFloat($(id).value); return isFinite(v) ? v : def; }
  function esc(s) { return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function setCost() { ex.ex_cost(num("cf", 1), num("cb", 2), num("ci", 1), num("cw", 1), num("cx", 0), num("cs", 0)); }

  /* the map field's text into the module (it parses it: plain "0,1,0" or concurrent
     "0,[1,2],3"); an empty field is the default mapping */
  function setMap() {
    var bytes = enc.encode($("map").value), cap = ex.ex_maptext_cap() - 1;
    if (bytes.length > cap) bytes = bytes.subarray(0, cap);
    var m = new Uint8Array(ex.memory.buffer, ex.ex_maptext(), bytes.length + 1);
    m.set(bytes);
    m[bytes.length] = 0;
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

  function showPanel(panel, kind) {
    var S = Math.round(num("stages", 4)), M = Math.round(num("micro", 8)), fwd = $("fwd").checked;
    setCost();
    setMap();
    var rc = ex.ex_generate(kind, S, M, Math.round(num("virt", 0)), Math.round(num("devices", 0)), $("strict").checked ? 1 : 0, fwd ? 1 : 0);
    var name = str(ex.ex_kind_name(kind)) + (fwd ? " (forward only)" : "");
    if (rc !== 0) {
      panel.innerHTML = "<h3>" + esc(name) + "</h3><div class=\"err\">" + esc(str(ex.ex_msg())) + "</div>";
      panel.removeAttribute("data-json");
      return;
    }
    var json = render(0), j = JSON.parse(json), notes = j.warnings.slice();
    /* PopXL numbers count forward and backward stages of a plain training table */
    var popxl = $("popxl").checked && !j.forward_only && !j.stage_devices;
    if ($("popxl").checked && !popxl)
      notes.push("PopXL stage numbers: not drawn, they count the forward and backward stages of a plain training table");
    panel.innerHTML = "<h3>" + esc(name) + "</h3>" + figuresTable(j) +
      (notes.length ? "<div class=\"warn\">" + esc(notes.join("\n")) + "</div>" : "") +
      "<pre class=\"grid\">" + esc(render(popxl ? 5 : 1)) + "</pre>" +
      "<div class=\"svg\">" + render(2, 1100) + "</div>" +
      "<details><summary>JSON</summary><pre class=\"json\"></pre></details>";
    panel.querySelector(".json").textContent = json;
    panel.setAttribute("data-json", json.trim());
  }

  function update() {
    showPanel($("panel0"), parseInt($("schedule").value, 10));
    var k2 = parseInt($("schedule2").value, 10);
    $("panel1").style.display = k2 >= 0 ? "" : "none";
    if (k2 >= 0) showPanel($("panel1"), k2);
  }

  function check() {
    var bytes = enc.encode($("csv").value);
    var cap = ex.ex_in_cap();
    if (bytes.length > cap) bytes = bytes.subarray(0, cap);
    new Uint8Array(ex.memory.buffer, ex.ex_in(), bytes.length).set(bytes);
    setCost();
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

  function start(instance) {
    ex = instance.exports;
    var i, n = ex.ex_kind_count();
    for (i = 0; i < n; i++) {
      var name = str(ex.ex_kind_name(i));
      $("schedule").add(new Option(name, String(i)));
      $("schedule2").add(new Option(name, String(i)));
    }
    $("controls").addEventListener("input", update);
    $("controls").addEventListener("change", update);
    $("check").addEventListener("click", check);
    update();
    document.body.setAttribute("data-ready", "1");
  }

  var bin = atob(window.SCHED_WASM_B64), buf = new Uint8Array(bin.length), k;
  for (k = 0; k < bin.length; k++) buf[k] = bin.charCodeAt(k);
  WebAssembly.instantiate(buf, {}).then(function (r) { start(r.instance); }, function (e) {
    document.body.insertAdjacentHTML("afterbegin", "<div class=\"err\">WebAssembly failed: " + esc(String(e)) + "</div>");
  });
})();
