/* explorer_test.js EXPECTED.json SHOT.png - drives build/explorer/index.html in headless
 * Chromium (Debian's /usr/bin/chromium) with playwright-core, for tests/test_explorer.sh.
 * EXPECTED.json: {"cases": [{"kind", "S", "M", "fwd", "map", "json"}], "badCsv", "badStep",
 * "refused": {"kind", "S", "M", "fwd", "map", "says"}} where json is `ipupipe-sched --format
 * json` for the same inputs and says is the library's refusal. Prints `ok`/`FAIL` lines; exits 1
 * on a failure, 3 when the browser cannot start. */
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

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "ipup_chromium_"));
  let browser;
  try {
    /* a fresh profile: playwright passes it as --user-data-dir */
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      timeout: 30000,
      viewport: { width: 1280, height: 900 },
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
    const setCase = async (c) => {
      await page.selectOption("#schedule", String(c.kind));
      await page.fill("#stages", String(c.S));
      await page.fill("#map", c.map || "");
      await page.setChecked("#fwd", !!c.fwd);
      await page.fill("#micro", String(c.M));
      await page.dispatchEvent("#micro", "change");
    };
    for (const c of expected.cases) {
      await setCase(c);
      const got = await page.getAttribute("#panel0", "data-json");
      const name = `${c.name} S=${c.S} M=${c.M}${c.fwd ? " forward only" : ""}${c.map ? " map " + c.map : ""}`;
      if (got === c.json) ok(name + ": figures equal ipupipe-sched --format json");
      else { bad(name + ": figures differ"); console.log("    page: " + got + "\n    tool: " + c.json); }
      const svg = await page.locator("#panel0 .svg svg").count();
      if (svg === 1) ok(name + ": SVG drawn"); else bad(name + ": no SVG");
    }
    /* a combination the library refuses: its message on the panel, no figures */
    {
      const r = expected.refused;
      await setCase(r);
      const err = (await page.locator("#panel0 .err").count()) ? await page.textContent("#panel0 .err") : "";
      const json = await page.getAttribute("#panel0", "data-json");
      if (err.includes(r.says) && json === null) ok("forward only with map " + r.map + ": refused with the library's message");
      else bad("refusal: error '" + err + "', data-json " + (json === null ? "none" : "present"));
    }
    /* a concurrent table for the screenshot: the guide's example, forward and backward */
    await setCase({ kind: 0, S: 4, M: 8, fwd: 0, map: "0,[1,2],2,3" });
    /* side by side */
    await page.selectOption("#schedule2", "1");
    const shown = await page.isVisible("#panel1");
    const j2 = shown ? JSON.parse(await page.getAttribute("#panel1", "data-json")) : null;
    if (j2 && j2.schedule === "interleaved") ok("second panel compares interleaved"); else bad("second panel");
    /* a broken CSV: the failing step is marked */
    await page.fill("#csv", expected.badCsv);
    await page.click("#check");
    const verdict = await page.textContent("#verdict");
    if (/INVALID/.test(verdict)) ok("broken CSV: INVALID"); else bad("broken CSV verdict: " + verdict);
    const marker = page.locator("#checked .error-marker");
    if ((await marker.count()) === 1 && (await marker.textContent()).startsWith(expected.badStep)) ok("error marker on " + expected.badStep);
    else bad("error marker: " + ((await marker.count()) ? await marker.textContent() : "none"));
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
