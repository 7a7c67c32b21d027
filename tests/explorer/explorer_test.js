/* explorer_test.js EXPECTED.json SHOT.png - drives build/explorer/index.html in headless
 * Chromium (Debian's /usr/bin/chromium) with playwright-core, for tests/test_explorer.sh.
 * EXPECTED.json: {"cases": [{"kind", "S", "M", "fwd", "map", "json"}], "badCsv", "badStep",
 * "refused": {"kind", "S", "M", "fwd", "map", "says"}, "kindCount", "mem": [{"sched", "S", "M",
 * "map", "act", "peaks"}], "cursorStep", "cursorCsv"} where json is `ipupipe-sched --format
 * json` for the same inputs, says is the library's refusal, peaks the tool's per-device stash
 * bytes and cursorCsv its CSV of 1f1b S=4 M=8. Prints `ok`/`FAIL` lines; exits 1 on a failure,
 * 3 when the browser cannot start. */
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const [expectedPath, shotPath] = process.argv.slice(2);
const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));
const page_url = "file://" + path.resolve("build/explorer/index.html");
let fails = 0;
function ok(name) { console.log("ok   " + name); }
function bad(name) { fails++; console.log("FAIL " + name); }

/* The lecture features, each checked against the tool's output or the page's own figures:
 * the labels of 0, the schedule menu, columns, memory over time, async timing, the cursor,
 * the URL, the downloads. Leaves three columns with the cursor on for the screenshot. */
async function lecture(page, f, setCase) {
  const count = (sel) => page.locator(sel).count();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const check = (cond, name, detail) => { if (cond) ok(name); else bad(name + (detail ? ": " + detail : "")); };
  /* what 0 means, said on the form */
  const form = await page.textContent("#col0 .ctl");
  for (const say of ["0 = as many as the mapping needs", "0 = default", "0 = auto", "empty = count activations"])
    check(form.includes(say), `label says "${say}"`);
  /* the menu lists every kind of the header */
  const kinds = await page.$$eval(f(0, "sched") + " option", (o) => o.map((x) => x.value));
  check(kinds.length === expected.kindCount, `schedule menu lists all ${expected.kindCount} kinds`, kinds.join(","));
  /* columns: two added, side by side at 1600x900 with their charts inside them */
  await page.click("#add");
  await page.click("#add");
  const boxes = await page.$$eval(".col", (els) => els.map((e) => {
    const r = e.getBoundingClientRect(), s = e.querySelector(".chart svg").getBoundingClientRect();
    return { top: r.top, left: r.left, right: r.right, svgL: s.left, svgR: s.right };
  }));
  check(boxes.length === 3, "add column twice: three columns");
  check(boxes.every((b) => b.top === boxes[0].top) && boxes[0].right <= boxes[1].left && boxes[1].right <= boxes[2].left,
        "three columns side by side at 1600x900", JSON.stringify(boxes));
  check(boxes.every((b) => b.svgL >= b.left && b.svgR <= b.right), "each chart scales to its column", JSON.stringify(boxes));
  const wide = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  check(wide, "no horizontal scrolling");
  const scheds = async () => page.$$eval(".col [data-f=sched]", (s) => s.map((x) => x.value));
  check(same(await scheds(), [kinds[0], kinds[1], kinds[2]]), "a new column takes the next schedule", (await scheds()).join(","));
  await page.click("#col1 .rm");
  const url2 = new URL(page.url()).hash;
  check((await count(".col")) === 2 && same(await scheds(), [kinds[0], kinds[2]]) && url2.includes("c1=") && !url2.includes("c2="),
        "remove column 2: the others stay, the URL follows", url2);
  await page.click("#add");
  /* memory over time: each device's peak equals the tool's per-device stash bytes */
  for (const m of expected.mem) {
    await setCase({ sched: m.sched, S: m.S, M: m.M, map: m.map, act: m.act });
    const peaks = JSON.parse((await page.getAttribute("#col0 .mem", "data-peak")) || "null");
    const marks = await count("#col0 .mem circle.peak");
    check(same(peaks, m.peaks) && marks === m.peaks.length,
          `${m.sched} S=${m.S} M=${m.M}${m.map ? " map " + m.map : ""} act ${m.act}: peaks ${JSON.stringify(m.peaks)} marked`,
          `page ${JSON.stringify(peaks)}, ${marks} marks`);
  }
  check(!same(expected.mem[0].peaks, expected.mem[1].peaks), "activation bytes change the peak");
  await page.fill(f(0, "act"), "12,x");
  const actErr = (await count("#col0 .err")) ? await page.textContent("#col0 .err") : "";
  check(actErr.includes("activation bytes"), "bad activation bytes: the message names the field", actErr);
  /* async timing: the chart's last op ends at the figures' async_time */
  await setCase({ sched: "1f1b", S: 4, M: 8, act: "" });
  for (const [col, sched] of [[1, "gpipe"], [2, "1f1b"]]) {
    await setCase({ sched, S: 4, M: 8 }, col);
    await page.selectOption(f(col, "timing"), "async");
    const j = JSON.parse(await page.getAttribute(`#col${col}`, "data-json"));
    const ends = await page.$$eval(`#col${col} .chart rect[data-step] title`,
                                   (ts) => ts.map((t) => parseFloat(/ to ([0-9.e+]+)\)/.exec(t.textContent)[1])));
    const title = await page.textContent(`#col${col} .chart svg text`);
    check(ends.length === j.ops && Math.max(...ends) === j.async_time && /async timing/.test(await page.textContent(`#col${col} .chart svg`)),
          `${sched} async: ${j.ops} ops, the chart ends at async_time ${j.async_time}`, `${ends.length} ops, end ${Math.max(...ends)}, ${title}`);
  }
  check(/BSP timing/.test(await page.textContent("#col0 .chart svg text")), "the BSP chart's title says BSP timing");
  /* the cursor: arrow keys; each device's ops at the step are the tool's CSV column, the
     held activations those whose F ran and whose B has not yet */
  const k = expected.cursorStep, rows = expected.cursorCsv.trim().split("\n").map((l) => l.split(","));
  await page.click("h2");
  await page.keyboard.press("Home");
  for (let i = 0; i < k; i++) await page.keyboard.press("ArrowRight");
  const cur = await page.$$eval("#col0 .cur tr[data-dev]", (trs) => trs.map((t) => [t.getAttribute("data-runs"), +t.getAttribute("data-held")]));
  const want = rows.map((r) => {
    let held = 0;
    r.forEach((cell, c) => { if (/F/.test(cell) && c <= k - 1 && r.indexOf(cell.replace("F", "B")) >= k - 1) held++; });
    return [r[k - 1], held];
  });
  check((await page.inputValue("#cursor")) === String(k) && same(cur, want), `cursor at step ${k}: what each device runs and holds`,
        `page ${JSON.stringify(cur)}, tool's CSV ${JSON.stringify(want)}`);
  const at = await page.$$eval("#col0 .chart rect.at", (r) => r.map((x) => x.querySelector("title").textContent.split(" ")[0]));
  check(same(at.sort(), want.map((w) => w[0]).filter((x) => x).sort()), `cursor marks step ${k}'s ops on the chart`, at.join(","));
  await page.keyboard.press("ArrowLeft");
  check((await page.inputValue("#cursor")) === String(k - 1) && new URL(page.url()).hash.includes("step=" + (k - 1)),
        "ArrowLeft: one step back, in the URL");
  await page.keyboard.press("ArrowRight");
  /* the URL reproduces the view: a second page from the link */
  const snap = (p) => p.evaluate(() => ({
    cols: [...document.querySelectorAll(".col")].map((c) => ({
      json: c.getAttribute("data-json"), chart: c.querySelector(".chart").innerHTML, mem: c.querySelector(".mem").innerHTML,
      cur: c.querySelector(".cur").innerHTML,
      form: [...c.querySelectorAll("[data-f]")].map((i) => (i.type === "checkbox" ? i.checked : i.value)) })),
    step: document.getElementById("cursor").value }));
  await page.fill(f(2, "act"), "2048");
  await page.fill(f(1, "B"), "3");
  await page.dispatchEvent(f(1, "B"), "change");
  const link = page.url(), page2 = await page.context().newPage();
  await page2.goto(link);
  await page2.waitForSelector("body[data-ready='1']", { timeout: 15000 });
  const a = await snap(page), b = await snap(page2);
  const differs = (x, y) => Object.keys(x).filter((key) => !same(x[key], y[key]));
  check(a.cols.length === 3 && same(a, b) && /c2\.act=2048/.test(link) && /c1\.B=3/.test(link),
        `the link reproduces the view (3 columns, step ${a.step}, timing, costs, act bytes)`,
        link + " differs in " + (a.step !== b.step ? "step " : "") + a.cols.map((c, i) => i + ":" + differs(c, b.cols[i] || {})).join(" "));
  if (!same(a, b)) for (let c = 0; c < a.cols.length; c++) {
    const x = a.cols[c].chart, y = b.cols[c].chart;
    let i = 0;
    while (i < x.length && x[i] === y[i]) i++;
    if (i < x.length || x.length !== y.length) console.log(`    column ${c} chart: ...${x.slice(i - 60, i + 60)}... here ...${y.slice(i - 60, i + 60)}...`);
  }
  await page2.close();
  /* downloads: a valid SVG, and a PNG of it at twice its size with the chart's colours */
  const dl = async (what) => {
    const [d] = await Promise.all([page.waitForEvent("download"), page.click(`#col0 button[data-dl="${what}"]`)]);
    return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
  };
  const svg = await dl("chart.svg"), text = svg.bytes.toString("utf8");
  const parsed = await page.evaluate((t) => {
    const d = new DOMParser().parseFromString(t, "image/svg+xml"), r = d.documentElement;
    return { err: d.querySelector("parsererror") !== null, root: r.nodeName, w: +r.getAttribute("width"), h: +r.getAttribute("height"),
             ops: r.querySelectorAll("rect[data-step]").length };
  }, text);
  check(!parsed.err && parsed.root === "svg" && parsed.w > 0 && parsed.ops === 64 && /\.svg$/.test(svg.name),
        `chart SVG download ${svg.name}: parses, ${parsed.w}x${parsed.h}, 64 ops`, JSON.stringify(parsed));
  const png = await dl("chart.png"), sig = png.bytes.subarray(0, 8).toString("hex");
  const pw = png.bytes.readUInt32BE(16), ph = png.bytes.readUInt32BE(20);
  const ink = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = "data:image/png;base64," + b64;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width; c.height = img.height;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, c.width, c.height).data;
    let blue = 0;
    for (let i = 0; i < px.length; i += 4) if (Math.abs(px[i] - 0x4e) < 8 && Math.abs(px[i + 1] - 0x79) < 8 && Math.abs(px[i + 2] - 0xa7) < 8) blue++;
    return blue;
  }, png.bytes.toString("base64"));
  check(sig === "89504e470d0a1a0a" && pw === 2 * parsed.w && ph === 2 * parsed.h && ink > 1000,
        `chart PNG download ${png.name}: ${pw}x${ph}, the forward ops drawn (${ink} px)`, `${sig} ${pw}x${ph} ink ${ink}`);
  const msvg = await dl("mem.svg");
  check(/<svg[^>]*>/.test(msvg.bytes.toString("utf8")) && /memory/.test(msvg.name), `memory SVG download ${msvg.name}`);
}

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "ipup_chromium_"));
  let browser;
  try {
    /* a fresh profile: playwright passes it as --user-data-dir */
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      timeout: 30000,
      viewport: { width: 1600, height: 900 },
      acceptDownloads: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  } catch (e) {
    console.log("FAIL chromium does not start: " + String(e).split("\n")[0]);
    process.exit(3);
  }
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(page_url);
    await page.waitForSelector("body[data-ready='1']", { timeout: 15000 });
    ok("page loads from file:// and instantiates the WebAssembly");
    /* one table: schedule, S, M, forward only, map; the panel updates on the change event */
    const f = (col, key) => `#col${col} [data-f="${key}"]`;
    const setCase = async (c, col = 0) => {
      if (c.sched) await page.selectOption(f(col, "sched"), c.sched);
      else await page.selectOption(f(col, "sched"), { index: c.kind });
      await page.fill(f(col, "S"), String(c.S));
      await page.fill(f(col, "map"), c.map || "");
      await page.setChecked(f(col, "fwd"), !!c.fwd);
      await page.fill(f(col, "act"), c.act || "");
      await page.fill(f(col, "M"), String(c.M));
      await page.dispatchEvent(f(col, "M"), "change");
    };
    for (const c of expected.cases) {
      await setCase(c);
      const got = await page.getAttribute("#col0", "data-json");
      const name = `${c.name} S=${c.S} M=${c.M}${c.fwd ? " forward only" : ""}${c.map ? " map " + c.map : ""}`;
      if (got === c.json) ok(name + ": figures equal ipupipe-sched --format json");
      else { bad(name + ": figures differ"); console.log("    page: " + got + "\n    tool: " + c.json); }
      const svg = await page.locator("#col0 .chart svg").count();
      if (svg === 1) ok(name + ": SVG drawn"); else bad(name + ": no SVG");
    }
    /* a combination the library refuses: its message on the panel, no figures */
    {
      const r = expected.refused;
      await setCase(r);
      const err = (await page.locator("#col0 .err").count()) ? await page.textContent("#col0 .err") : "";
      const json = await page.getAttribute("#col0", "data-json");
      if (err.includes(r.says) && json === null) ok("forward only with map " + r.map + ": refused with the library's message");
      else bad("refusal: error '" + err + "', data-json " + (json === null ? "none" : "present"));
    }
    await setCase({ kind: 0, S: 4, M: 8, fwd: 0, map: "" });
    await lecture(page, f, setCase);
    /* a broken CSV: the failing step is marked */
    await page.fill("#csv", expected.badCsv);
    await page.click("#check");
    const verdict = await page.textContent("#verdict");
    if (/INVALID/.test(verdict)) ok("broken CSV: INVALID"); else bad("broken CSV verdict: " + verdict);
    const marker = page.locator("#checked .error-marker");
    if ((await marker.count()) === 1 && (await marker.textContent()).startsWith(expected.badStep)) ok("error marker on " + expected.badStep);
    else bad("error marker: " + ((await marker.count()) ? await marker.textContent() : "none"));
    await page.evaluate(() => window.scrollTo(0, 0)); /* the cursor bar is sticky: at the top */
    await page.screenshot({ path: shotPath, fullPage: true });
    ok("screenshot " + shotPath);
    if (errors.length === 0) ok("no page errors"); else bad("page errors: " + errors.join("; "));
  } catch (e) {
    bad("browser test: " + String(e).split("\n")[0]);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.exit(fails ? 1 : 0);
})();
